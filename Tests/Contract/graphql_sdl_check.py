#!/usr/bin/env python3
"""Check Kizuna's generated client SDL with graphql-core, as an app team's tooling would read it.

Usage: graphql_sdl_check.py SDL_FILE EXPECTED_ROOT_FIELD...

Builds the schema with graphql-core (the reference implementation's Python port), validates it, round-trips it
through introspection (what build_client_schema consumes), and checks that every expected `Type.field` exists.
Exits 77 when graphql-core is not installed, so the caller can report the test as skipped.
"""
import sys

try:
    import graphql
except ImportError:
    print("graphql-core is not installed (pip install graphql-core)")
    sys.exit(77)


def main() -> int:
    sdl = open(sys.argv[1], encoding="utf-8").read()
    schema = graphql.build_schema(sdl)
    errors = graphql.validate_schema(schema)
    if errors:
        print("invalid schema:", *errors, sep="\n  ")
        return 1
    client = graphql.build_client_schema(graphql.introspection_from_schema(schema))
    missing = []
    for expected in sys.argv[2:]:
        type_name, field = expected.split(".")
        named = client.get_type(type_name)
        if named is None or field not in getattr(named, "fields", {}):
            missing.append(expected)
    if missing:
        print("missing:", ", ".join(missing))
        return 1
    print(f"ok: {len(client.type_map)} types")
    return 0


if __name__ == "__main__":
    sys.exit(main())
