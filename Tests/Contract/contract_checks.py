"""What the outside-client scripts (gql_client.py, gql_ws_client.py) share: checks that print what held and end the
run with what did not, and reading the run's CONFIG_JSON."""
import json
import sys

_NOTHING = object()


class CheckFailed(Exception):
    """A check that did not hold: the message says what was expected and what came back."""


def show(value):
    return json.dumps(value, sort_keys=True, default=str)


def step(title):
    print(f"\n== {title}", flush=True)


def check(holds, what, got=_NOTHING):
    """Prints `what` when it holds; otherwise ends the run with it and, when given, what came back instead."""
    if not holds:
        raise CheckFailed(what if got is _NOTHING else f"{what}\n    got: {show(got)}")
    print(f"   ok  {what}", flush=True)


def tampered(token):
    """`token` with one character in its middle changed: a signed token must no longer hold."""
    middle = len(token) // 2
    return token[:middle] + ("B" if token[middle] == "A" else "A") + token[middle + 1 :]


def load_config(argument, users, validate, usage):
    """The run's configuration from the file `argument` names (`-`: standard input), with `users` (names) each holding
    string `id` and `token`, and whatever `validate` checks (it raises); on anything else, exits 2 with `usage`."""
    try:
        if argument == "-":
            config = json.load(sys.stdin)
        else:
            with open(argument, encoding="utf-8") as file:
                config = json.load(file)
        for name in users:
            user = config["users"][name]
            if not (isinstance(user["id"], str) and isinstance(user["token"], str)):
                raise TypeError(f"users.{name}.id and users.{name}.token must be strings")
        validate(config)
        return config
    except (OSError, ValueError, LookupError, TypeError) as problem:
        print(f"bad CONFIG_JSON {argument}: {type(problem).__name__}: {problem}\n\n{usage}")
        sys.exit(2)
