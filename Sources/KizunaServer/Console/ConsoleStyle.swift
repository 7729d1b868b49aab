/// The console's stylesheet, served at `/console/console.css`: system fonts, light and dark colours through
/// `prefers-color-scheme` (each pair of text and background colours at 4.5:1 or more), a visible focus ring, and a
/// layout that reflows down to a phone's width.
enum ConsoleStyle {
    static let css = """
        :root{color-scheme:light dark;--bg:#f5f5f7;--panel:#fff;--text:#1c1c1e;--muted:#48484a;--line:#c7c7cc;--accent:#0a58c2;\
        --accent-text:#fff;--danger:#b3261e;--ok:#1b6b35;--focus:#0a58c2}
        @media (prefers-color-scheme:dark){:root{--bg:#1c1c1e;--panel:#2c2c2e;--text:#f2f2f7;--muted:#c7c7cc;--line:#48484a;\
        --accent:#7cb6ff;--accent-text:#0b1a2e;--danger:#ff8a80;--ok:#7ee2a0;--focus:#7cb6ff}}
        *{box-sizing:border-box}
        body{margin:0;font:16px/1.5 system-ui,-apple-system,"Hiragino Sans","Noto Sans JP",sans-serif;background:var(--bg);color:var(--text)}
        a{color:var(--accent)}
        a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,main:focus-visible{\
        outline:3px solid var(--focus);outline-offset:2px}
        .skip{position:absolute;left:-999px;top:0;background:var(--panel);padding:.5rem 1rem}.skip:focus{left:1rem}
        header{display:flex;flex-wrap:wrap;align-items:center;gap:1rem;padding:.75rem 1.5rem;background:var(--panel);\
        border-bottom:1px solid var(--line)}
        header form{margin:0}
        .brand{font-weight:700;color:var(--text);text-decoration:none}
        header nav{display:flex;flex-wrap:wrap;gap:.5rem 1rem;flex:1}
        header nav a[aria-current=page]{font-weight:700;text-decoration-thickness:3px}
        .languages{flex:0;white-space:nowrap}.languages a[aria-current]{font-weight:700;color:var(--text);text-decoration:none}
        main{max-width:64rem;margin:2rem auto;padding:0 1.5rem}
        h1{font-size:1.6rem;margin:0 0 1rem}h2{font-size:1.2rem;margin:2rem 0 .75rem}
        .panel{background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:1.25rem;margin-top:1rem}
        .narrow{max-width:30rem}
        .field{margin-bottom:1rem}
        label{display:block;font-weight:600;margin-bottom:.25rem}
        input,select,textarea{width:100%;max-width:32rem;padding:.55rem .65rem;font:inherit;color:var(--text);background:var(--panel);\
        border:1px solid var(--muted);border-radius:8px}
        input[aria-invalid=true],select[aria-invalid=true]{border:2px solid var(--danger)}
        button{padding:.6rem 1.1rem;font:inherit;font-weight:600;color:var(--accent-text);background:var(--accent);border:0;\
        border-radius:8px;cursor:pointer}
        button.secondary{color:var(--accent);background:transparent;border:1px solid var(--accent)}
        button.danger{color:#fff;background:var(--danger)}
        @media (prefers-color-scheme:dark){button.danger{color:#2c0b0a}}
        .hint{color:var(--muted);font-size:.875rem;margin:.25rem 0}
        .errors{color:var(--danger);margin:.25rem 0;padding-left:1.25rem}
        .summary,.problem{color:var(--danger);border:2px solid var(--danger);border-radius:8px;padding:.5rem 1rem;margin-bottom:1rem}
        .summary a{color:var(--danger)}
        .notice{color:var(--ok);border:1px solid var(--ok);border-radius:8px;padding:.5rem 1rem}
        table{width:100%;border-collapse:collapse;background:var(--panel)}
        th,td{text-align:left;padding:.5rem .75rem;border-bottom:1px solid var(--line);vertical-align:top}
        th{font-size:.875rem;color:var(--muted)}
        td.actions{white-space:nowrap}td.actions a{margin-right:.75rem}
        code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em}
        .row{display:flex;gap:1rem;align-items:center;flex-wrap:wrap}.row label{margin:0}.row select{width:auto}
        .tabs{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;margin-bottom:1rem;border-bottom:1px solid var(--line);padding-bottom:.5rem}
        .tabs a[aria-current=page]{font-weight:700;color:var(--text);text-decoration:none}
        textarea{max-width:none;min-height:6rem}pre{overflow:auto;max-height:32rem;margin:0}meter{width:16rem;margin:0 .75rem}
        td ul{margin:0;padding-left:1rem}td form{margin:0}
        table.diff tr.added th{border-left:4px solid var(--ok)}table.diff tr.removed th{border-left:4px solid var(--danger)}
        table.diff tr.changed th{border-left:4px solid var(--accent)}
        .summary table{color:var(--text);margin-top:.5rem}
        table.form td{padding:.25rem}table.form textarea{min-height:2.5rem}table.form input[type=checkbox]{width:auto}\
        table.form select{min-width:7.5rem}div.rule{display:flex;gap:.25rem;margin-bottom:.25rem}div.rule select{width:auto}\
        fieldset.days{border:0;padding:0;margin:0 0 .75rem;gap:.25rem 1rem}fieldset.days label{font-weight:400;display:flex;gap:.25rem}\
        fieldset.days input{width:auto}
        fieldset{border:1px solid var(--line);border-radius:8px;margin:0 0 1rem;padding:.75rem 1rem}legend{font-weight:700;padding:0 .25rem}
        strong.bad{color:var(--danger)}table.facts th{width:14rem}li.row{margin-bottom:.5rem}

        """
}
