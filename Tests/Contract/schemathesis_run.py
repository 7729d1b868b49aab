#!/usr/bin/env python3
"""Fuzz a running Kizuna server against openapi.yaml with Schemathesis, and fail on any contract break.

Usage:
    python3 schemathesis_run.py --base-url http://127.0.0.1:PORT --admin-token kza_… --user-token kzs_… \
        --app APP_ID --spec /path/to/openapi.yaml [options]

Required:
    --base-url URL        The server, e.g. http://127.0.0.1:18081 (nothing else is contacted).
    --admin-token TOKEN   An admin token (kza_…). Nothing in the API revokes admin tokens, so it stays valid.
    --user-token TOKEN    An app session's access token (kzs_…) of an account made for this run. The run ends by
                          signing this session out, and the admin run may disable or delete its account: give it a
                          session nothing else needs.
    --app APP_ID          A registered app (an Apple app with a team id is best: it shows in apple-app-site-association).
                          Every {app} path parameter is this app, except DELETE /v1/admin/apps/{app}, which gets an
                          id that does not exist so the app survives the run.
    --spec PATH           The openapi.yaml to check against.

Options:
    --max-examples N      Fuzzing cases per operation (default 20); the coverage phase adds its own boundary cases.
    --seed N              Seed recorded in the reports (default 19). Generation is derandomized
                          (--generation-deterministic), so the same spec against the same server state draws the
                          same cases whatever the seed.
    --workers N           Concurrent workers (default 2).
    --request-timeout S   Seconds per request (default 10); the event stream is read for at most one event.
    --report-dir DIR      Also write JUnit and NDJSON reports of each run there.
    --run-timeout S       Give up on one Schemathesis run after this many seconds (default 600; exit status 2).
    --schemathesis CMD    How to start Schemathesis (default: the CLI in this Python, see BOOTSTRAP).

Runs, in this order (each a separate Schemathesis invocation, phases coverage and fuzzing, checks
not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance):
    1. session   /v1/me and /v1/me/… with the user's session, but DELETE /v1/me/sessions/{session}. DELETE /v1/me is
                 included: it needs the password, which the fuzzer does not know, so it is answered 401 (then 429 as
                 the session's guesses are throttled).
    2. sign-out  DELETE /v1/me/sessions/{session} ({session} is the session itself) and POST /v1/auth/sign-out, with
                 the same session, last of the session's runs: the first success signs the session out and every
                 later case is answered 401, which the contract allows.
    3. admin     every operation with the admin token (user routes then answer 401). {user} is the session's
                 account, so disabling or deleting it is exercised; that is why this run comes last.

The server should run with generous limits so that throttling does not hide everything else behind 429:
`--device-rate-limit 1000000` (config:fetch and gate:check). Sign-in throttling (per identifier and address) has no
flag; its 429 answers are part of the contract.

Exit status: 0 when every run passes, 1 when any check failed, 2 when the runs could not be made.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
MISSING_APP = "schemathesis-no-such-app"

# Starts the Schemathesis CLI in this interpreter. On CPython 3.11 `ast.parse` can fail with "SystemError: AST
# constructor recursion depth mismatch" when Hypothesis parses a module's source to describe one of its lambdas (only
# for a strategy's repr); the description falls back to "<unknown>" instead of failing the operation.
BOOTSTRAP = """
import sys
try:
    from hypothesis.internal import lambda_sources
    _describe = lambda_sources._lambda_description
    def _tolerant(f, *args, **kwargs):
        try:
            return _describe(f, *args, **kwargs)
        except (SystemError, RecursionError):
            return "lambda: <unknown>"
    lambda_sources._lambda_description = _tolerant
except (ImportError, AttributeError):
    pass
# anyio (4.12 and later) parses its own source when first imported. Schemathesis first imports it lazily, deep in a
# worker thread generating a case, where that parse hits the same CPython 3.11 bug and failed a whole run; imported
# here, at the top of the main thread's stack, it parses once and is cached.
try:
    import anyio  # noqa: F401
except ImportError:
    pass
from schemathesis.cli import schemathesis
sys.argv[0] = "schemathesis"
schemathesis()
"""


def toml_string(value):
    # A JSON string of printable ASCII is a valid TOML basic string.
    return json.dumps(value, ensure_ascii=True)


def write_config(path, app, user, session, request_timeout):
    """The Schemathesis configuration shared by every run: fixed path parameters and per-operation settings."""
    lines = [
        # The event stream never ends: read its first event (or until the request timeout), then check it.
        "max-stream-events = 1",
        "",
        "[parameters]",
        f'"path.app" = {toml_string(app)}',
    ]
    if user:
        lines.append(f'"path.user" = {toml_string(user)}')
    if session:
        lines.append(f'"path.session" = {toml_string(session)}')
    lines += [
        "",
        "[[operations]]",
        'include-operation-id = "deleteApp"',
        f'parameters = {{ "path.app" = {toml_string(MISSING_APP)} }}',
        "",
        "[[operations]]",
        'include-operation-id = "streamEvents"',
        # A stream resumed with nothing to replay sends no event until the next publish: stop reading it after 1 s
        # (the first event of a stream that has one comes at once).
        f"request-timeout = {min(request_timeout, 1)}",
        "",
    ]
    with open(path, "w") as file:
        file.write("\n".join(lines))


def get_json(base_url, path, token):
    """GET `path` with the token; the JSON answer, or None (the parameter it was for is then left to the fuzzer)."""
    request = urllib.request.Request(base_url.rstrip("/") + path, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)
    except (urllib.error.URLError, ValueError, OSError) as error:
        print(f"warning: GET {path} with the user token failed ({error})", file=sys.stderr)
        return None


def account_and_session(base_url, token):
    """The id of the account the session belongs to, and the session's own id."""
    account = get_json(base_url, "/v1/me", token) or {}
    sessions = (get_json(base_url, "/v1/me/sessions", token) or {}).get("sessions", [])
    current = next((item.get("id") for item in sessions if item.get("current")), None)
    return account.get("id"), current


def run(name, args, config, token, filters, workers=None):
    command = shlex.split(args.schemathesis) if args.schemathesis else [sys.executable, "-c", BOOTSTRAP]
    command += ["--config-file", config, "run", args.spec]
    command += [
        "--url", args.base_url,
        "--checks", CHECKS,
        "--phases", "coverage,fuzzing",
        "--max-examples", str(args.max_examples),
        "--seed", str(args.seed),
        "--generation-deterministic",
        "--workers", str(workers or args.workers),
        "--request-timeout", str(args.request_timeout),
        "--max-redirects", "0",
        "--no-color",
        "--header", f"Authorization: Bearer {token}",
    ]
    command += filters
    if args.report_dir:
        os.makedirs(args.report_dir, exist_ok=True)
        command += [
            "--report", "junit,ndjson",
            "--report-junit-path", os.path.join(args.report_dir, f"{name}.junit.xml"),
            "--report-ndjson-path", os.path.join(args.report_dir, f"{name}.ndjson"),
        ]
    started = time.monotonic()
    print(f"=== schemathesis run '{name}'", flush=True)
    try:
        completed = subprocess.run(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=args.run_timeout)
    except FileNotFoundError as error:
        print(f"cannot start Schemathesis: {error}", file=sys.stderr)
        return name, 2, 0.0
    except subprocess.TimeoutExpired as error:
        output = error.stdout.decode(errors="replace") if isinstance(error.stdout, bytes) else (error.stdout or "")
        print(output.replace(token, "<token>"), flush=True)
        print(f"run '{name}' took longer than {args.run_timeout:.0f} s and was stopped", file=sys.stderr)
        return name, 2, time.monotonic() - started
    output = completed.stdout.replace(token, "<token>")
    print(output, flush=True)
    return name, completed.returncode, time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--admin-token", required=True)
    parser.add_argument("--user-token", required=True)
    parser.add_argument("--app", required=True)
    parser.add_argument("--spec", required=True)
    parser.add_argument("--max-examples", type=int, default=20)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--request-timeout", type=float, default=10)
    parser.add_argument("--report-dir")
    parser.add_argument("--run-timeout", type=float, default=600)
    parser.add_argument("--schemathesis")
    args = parser.parse_args()
    # The runs start in a scratch directory; paths given relative to the caller's must still work.
    args.spec = os.path.abspath(args.spec)
    if args.report_dir:
        args.report_dir = os.path.abspath(args.report_dir)

    if not args.schemathesis:
        try:
            import schemathesis  # noqa: F401
        except ImportError:
            print("Schemathesis is not installed: pip install schemathesis", file=sys.stderr)
            return 2
    if not os.path.isfile(args.spec):
        print(f"no such spec: {args.spec}", file=sys.stderr)
        return 2

    user, session = account_and_session(args.base_url, args.user_token)
    results = []
    with tempfile.TemporaryDirectory(prefix="kizuna-schemathesis-") as directory:
        config = os.path.join(directory, "schemathesis.toml")
        write_config(config, args.app, user, session, args.request_timeout)
        # Deterministic generation keeps no example database; any scratch files Hypothesis writes stay out of the tree.
        os.chdir(directory)
        results.append(
            run("session", args, config, args.user_token,
                ["--include-path-regex", "^/v1/me(/|$)", "--exclude-operation-id", "deleteSession"]))
        # One worker: the order of the two, and so which one signs the session out, is the same every run.
        results.append(
            run("sign-out", args, config, args.user_token,
                ["--include-operation-id", "deleteSession", "--include-operation-id", "signOut"], workers=1))
        results.append(run("admin", args, config, args.admin_token, []))

    print("=== summary")
    worst = 0
    for name, code, seconds in results:
        verdict = "passed" if code == 0 else ("FAILED" if code == 1 else f"could not run (exit {code})")
        print(f"  {name:9} {verdict} in {seconds:.0f} s")
        worst = max(worst, 0 if code == 0 else (1 if code == 1 else 2))
    print(f"  total     {sum(seconds for _, _, seconds in results):.0f} s")
    return worst


if __name__ == "__main__":
    sys.exit(main())
