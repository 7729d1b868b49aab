#!/usr/bin/env python3
"""Read Kizuna's data API with graphql-core, as an app team's tooling (Apollo's codegen, gql) does.

Usage:
    graphql_check.py sdl SDL_FILE EXPECTED...          the SDL GET /v1/admin/apps/{app}/schema.graphql serves
    graphql_check.py introspect GRAPHQL_URL EXPECTED... the live endpoint, through the standard introspection query

Either way the schema is built by graphql-core (build_schema, or build_client_schema from the introspection answer),
validated, and every expected `Type.field` must exist. Exits 77 when graphql-core is missing, so the caller can
report the test as skipped.
"""
import json
import sys
import urllib.request

try:
    import graphql
except ImportError:
    print("graphql-core is not installed (pip install graphql-core)")
    sys.exit(77)


def from_sdl(path):
    with open(path, encoding="utf-8") as file:
        schema = graphql.build_schema(file.read())
    # Round-trip through introspection: what build_client_schema, and so codegen, consumes.
    return graphql.build_client_schema(graphql.introspection_from_schema(schema))


def from_endpoint(url):
    body = json.dumps({"query": graphql.get_introspection_query(descriptions=True)}).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.load(response)
    if answer.get("errors"):
        raise SystemExit(f"introspection failed: {answer['errors']}")
    return graphql.build_client_schema(answer["data"])


def main() -> int:
    mode, source, expected = sys.argv[1], sys.argv[2], sys.argv[3:]
    schema = from_sdl(source) if mode == "sdl" else from_endpoint(source)
    errors = graphql.validate_schema(schema)
    if errors:
        print("invalid schema:", *errors, sep="\n  ")
        return 1
    missing = []
    for name in expected:
        type_name, field = name.split(".")
        named = schema.get_type(type_name)
        if named is None or field not in getattr(named, "fields", {}):
            missing.append(name)
    if missing:
        print("missing:", ", ".join(missing))
        return 1
    print(f"ok: {len(schema.type_map)} types")
    return 0


if __name__ == "__main__":
    sys.exit(main())
