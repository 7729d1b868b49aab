import Foundation
import KizunaCore

extension ConsoleDataPages {
    /// The live schema: its models with their fields, linked to their records, the SDL, and the schema's history.
    static func overview(
        _ frame: ConsolePages.Frame, app: AppRecord, live: PublishedDocument, schema: DataSchema, history: [DocumentVersionInfo]
    ) -> String {
        let text = frame.text
        let models =
            schema.models.isEmpty
            ? #"<p>\#(escape(text[.noSchema]))</p>"#
            : "<table><thead><tr><th scope=\"col\">\(escape(text[.modelColumn]))</th><th scope=\"col\">\(escape(text[.fieldsColumn]))</th></tr></thead><tbody>"
                + schema.models.map { model in
                    let fields = model.fields.map { "<code>\(escape($0.name))</code> <span class=\"hint\">\(escape($0.typeDescription))</span>" }
                    return
                        #"<tr><th scope="row"><a href="\#(modelPath(app, model))">\#(escape(model.name))</a></th><td>\#(fields.joined(separator: ", "))</td></tr>"#
                }.joined() + "</tbody></table>"
        let rows = history.map { version in
            """
            <tr><td>\(version.version)\(version.version == live.version ? " <strong>(\(escape(text[.liveMarker])))</strong>" : "")</td>\
            <td>\(escape(version.author))</td><td>\(escape(version.message ?? ""))</td><td>\(ConsoleAppPages.time(version.publishedAt))</td></tr>
            """
        }.joined(separator: "\n")
        let sdl = (try? SchemaDocument.sdl(in: live.document)) ?? ""
        let body = """
            \(ConsoleAppPages.tabs(text, app: app, current: .data))
            <p>\(escape(text[.liveVersion])): \(live.version)</p>
            <h2>\(escape(text[.modelsTitle]))</h2>
            \(models)
            <h2>\(escape(text[.schemaTitle]))</h2>
            <p class="hint">\(escape(text[.schemaHint]))</p>
            <pre class="panel"><code>\(escape(sdl))</code></pre>
            <h2>\(escape(text[.historyTitle]))</h2>
            <table><thead><tr><th scope="col">\(escape(text[.versionColumn]))</th><th scope="col">\(escape(text[.authorColumn]))</th>\
            <th scope="col">\(escape(text[.messageColumn]))</th><th scope="col">\(escape(text[.createdColumn]))</th></tr></thead>
            <tbody>\(rows)</tbody></table>
            """
        return ConsolePages.page(frame, title: "\(text[.dataTitle]): \(app.name)", body: body)
    }

    /// A model's records, a page at a time, with the filter form.
    static func browse(
        _ frame: ConsolePages.Frame, app: AppRecord, schema: DataSchema, model: DataModel, query: Browse, records: [JSONValue], next: String?,
        problems: [Problem]
    ) -> String {
        let text = frame.text
        let path = modelPath(app, model)
        let filterable = model.fields.filter { !operators($0).isEmpty }
        let fieldOptions = [(value: "", text: "—")] + filterable.map { (value: $0.name, text: $0.name) }
        let allOperators = ["eq", "ne", "beginsWith", "contains", "notContains", "gt", "ge", "lt", "le"]
        let orders = [(value: "newest", text: text[.newestFirst]), (value: "oldest", text: text[.oldestFirst])]
        let form = """
            <form method="get" action="\(path)" class="panel row" role="search" aria-label="\(escape(text[.filterTitle]))">
            \(ConsolePages.select("field", label: text[.filterFieldLabel], options: fieldOptions, selected: query.field ?? "", problems: problems))
            \(ConsolePages.select("op", label: text[.filterOperatorLabel], options: allOperators.map { (value: $0, text: $0) }, selected: query.op, problems: problems))
            \(ConsolePages.field("value", label: text[.filterValueLabel], value: query.value, problems: problems, extra: #"autocapitalize="none" spellcheck="false""#))
            \(ConsolePages.select("order", label: text[.orderLabel], options: orders, selected: query.newestFirst ? "newest" : "oldest", problems: problems))
            <button type="submit">\(escape(text[.filterButton]))</button>
            </form>
            """
        let shown = model.fields.filter { $0.name != "_version" }.prefix(8)
        let table: String
        if records.isEmpty {
            table = problems.isEmpty ? #"<p>\#(escape(text[.noRecords]))</p>"# : ""
        } else {
            let head = shown.map { #"<th scope="col">\#(escape($0.name))</th>"# }.joined() + #"<th scope="col">_version</th>"#
            let rows = records.map { record in
                let id = record["id"]?.stringValue ?? ""
                let cells = shown.map { field in
                    let value = cell(ConsoleDataPages.text(record[field.name], field: field))
                    return field.name == "id" ? #"<td class="mono"><a href="\#(recordPath(app, model, id))">\#(value)</a></td>"# : "<td>\(value)</td>"
                }.joined()
                return "<tr>\(cells)<td>\(ConsoleDataPages.text(record["_version"], field: DataField.version))</td></tr>"
            }.joined(separator: "\n")
            table = "<table><thead><tr>\(head)</tr></thead><tbody>\n\(rows)\n</tbody></table>"
        }
        var links = [#"<a href="\#(path)?\#(escape(ConsoleController.query(query.filterQuery)))">\#(escape(text[.firstPage]))</a>"#]
        if let next {
            let href = ConsoleController.query(query.filterQuery + [URLQueryItem(name: "next", value: next)])
            links.insert(#"<a href="\#(path)?\#(escape(href))" rel="next">\#(escape(text[.nextPage]))</a>"#, at: 0)
        }
        let body = """
            \(ConsoleAppPages.tabs(text, app: app, current: .data))
            <p><a href="\(ConsoleAppPages.Tab.data.path(app))">\(escape(text[.modelsTitle]))</a></p>
            \(form)
            \(ConsolePages.summary(text, problems))
            \(table)
            <nav class="row" aria-label="\(escape(text[.pagesNavigation]))">\(links.joined())</nav>
            """
        return ConsolePages.page(frame, title: "\(model.name): \(app.name)", body: body)
    }

    /// A record's form; with `conflict`, the stored record that moved on, shown field by field beside the form's.
    static func record(
        _ frame: ConsolePages.Frame, app: AppRecord, schema: DataSchema, model: DataModel, stored: JSONValue, form: RecordForm,
        problems: [Problem] = [], conflict: JSONValue? = nil, notice: String? = nil
    ) -> String {
        let text = frame.text
        let id = stored["id"]?.stringValue ?? ""
        let facts = model.fields.filter(\.isAutomatic).map { field in
            #"<tr><th scope="row">\#(escape(field.name))</th><td class="mono">\#(escape(ConsoleDataPages.text(stored[field.name], field: field)))</td></tr>"#
        }.joined()
        let fields = editable(model).map { field in input(field, value: form.values[field.name] ?? "", schema: schema, problems: problems) }
        var conflictPanel = ""
        if let conflict {
            let rows = editable(model).map { field in
                let mine = form.values[field.name] ?? "", theirs = ConsoleDataPages.text(conflict[field.name], field: field)
                let changed = mine != theirs ? #" class="changed""# : ""
                return #"<tr\#(changed)><th scope="row">\#(escape(field.name))</th><td>\#(cell(mine))</td><td>\#(cell(theirs))</td></tr>"#
            }.joined()
            conflictPanel = """
                <div class="summary" role="alert"><p>\(escape(text[.recordConflict]))</p>
                <table class="diff"><thead><tr><th scope="col">\(escape(text[.fieldsColumn]))</th><th scope="col">\(escape(text[.yourValue]))</th>\
                <th scope="col">\(escape(text[.storedValue]))</th></tr></thead><tbody>\(rows)</tbody></table></div>
                """
        }
        let body = """
            \(ConsoleAppPages.tabs(text, app: app, current: .data))
            <p><a href="\(modelPath(app, model))">\(escape(model.name))</a></p>
            \(conflictPanel)
            <table class="facts">\(facts)</table>
            <form method="post" action="\(recordPath(app, model, id))" class="panel">
            \(ConsolePages.csrfField(frame.csrf))<input type="hidden" name="_version" value="\(form.version)">
            \(ConsolePages.summary(text, problems))
            \(fields.joined(separator: "\n"))
            <button type="submit">\(escape(text[.saveButton]))</button>
            </form>
            """
        return ConsolePages.page(frame, title: "\(model.name) \(id)", notice: notice, body: body)
    }

    /// The form control for `field`: a number, a choice for a Boolean or an enum, JSON text for a list or JSON.
    private static func input(_ field: DataField, value: String, schema: DataSchema, problems: [Problem]) -> String {
        let name = "field-\(field.name)"
        let label = "\(field.name) (\(field.typeDescription))"
        let optional = field.isRequired ? [] : [(value: "", text: "null")]
        if field.isList || field.type == .scalar(.json) {
            return ConsolePages.textArea(name, label: label, value: value, problems: problems, rows: 4, extra: #"spellcheck="false""#)
        }
        switch field.type {
        case .scalar(.boolean):
            return ConsolePages.select(
                name, label: label, options: optional + [(value: "true", text: "true"), (value: "false", text: "false")], selected: value,
                problems: problems)
        case .enumeration(let type):
            let values = schema.enums.first { $0.name == type }?.values ?? []
            return ConsolePages.select(
                name, label: label, options: optional + values.map { (value: $0, text: $0) }, selected: value, problems: problems)
        case .scalar(.int):
            return ConsolePages.field(name, label: label, type: "number", value: value, problems: problems, extra: #"step="1""#)
        case .scalar(.float):
            return ConsolePages.field(name, label: label, type: "number", value: value, problems: problems, extra: #"step="any""#)
        default:
            let required = field.isRequired && field.type != .scalar(.string) ? " required" : ""
            return ConsolePages.field(name, label: label, value: value, problems: problems, extra: #"spellcheck="false"\#(required)"#)
        }
    }

    /// A value in a table cell: escaped, and cut to 120 characters.
    private static func cell(_ value: String) -> String {
        escape(value.count > 120 ? String(value.prefix(119)) + "…" : value)
    }
}
