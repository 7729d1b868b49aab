#!/usr/bin/env python3
"""Introspect a running Kizuna data API with graphql-core, as an app team's tooling (Apollo's codegen, gql) does.

Usage: graphql_introspect_check.py GRAPHQL_URL EXPECTED_ROOT_FIELD...

Posts graphql-core's standard introspection query, builds the client schema from the answer with
build_client_schema, and checks that every expected `Type.field` exists. Exits 77 when graphql-core is missing.
"""
import json
import sys
import urllib.request

try:
    import graphql
except ImportError:
    print("graphql-core is not installed (pip install graphql-core)")
    sys.exit(77)


def main() -> int:
    body = json.dumps({"query": graphql.get_introspection_query(descriptions=True)}).encode()
    request = urllib.request.Request(sys.argv[1], data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.load(response)
    if answer.get("errors"):
        print("introspection failed:", answer["errors"])
        return 1
    schema = graphql.build_client_schema(answer["data"])
    errors = graphql.validate_schema(schema)
    if errors:
        print("invalid schema:", *errors, sep="\n  ")
        return 1
    missing = [e for e in sys.argv[2:] if (t := schema.get_type(e.split(".")[0])) is None or e.split(".")[1] not in getattr(t, "fields", {})]
    if missing:
        print("missing:", ", ".join(missing))
        return 1
    print(f"ok: {len(schema.type_map)} types")
    return 0


if __name__ == "__main__":
    sys.exit(main())
