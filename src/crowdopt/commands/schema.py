"""`crowdopt schema NAME`: print the JSON Schema (draft 2020-12) of a document the CLI writes;
`crowdopt schema --list`: every schema with the commands whose `--json` output it describes."""

from __future__ import annotations

import argparse
from typing import Any


def cmd_schema(args: argparse.Namespace) -> int:
    """`crowdopt schema`: the JSON schema of a command's --json output."""
    import json

    from ..errors import InputError
    from ..schemas import COMMAND_SCHEMAS, INPUT_SCHEMAS, load_schema, schema_names

    if args.list:
        if args.name:  # `--list NAME` would print the list and ignore NAME
            raise InputError("NAME", "no schema name with --list (the list is of every schema)",
                             args.name)
        for name in schema_names():
            cmds = [" ".join(p) for p, n in COMMAND_SCHEMAS.items() if n == name]
            print(f"{name:<23} {load_schema(name)['title']}"
                  + (f" (--json of: {', '.join(cmds)})" if cmds else "")
                  + (f" (read by: {INPUT_SCHEMAS[name]})" if name in INPUT_SCHEMAS else ""))
        return 0
    if not args.name:
        raise InputError("NAME", "a schema name (crowdopt schema --list)", "nothing")
    print(json.dumps(load_schema(args.name), indent=1))
    return 0


def register(cli: Any) -> None:
    """Add `crowdopt schema` to the CLI."""
    p = cli.top.add_parser(
        "schema", help="print the JSON Schema of a document the CLI writes",
        description="JSON Schemas (draft 2020-12) of every --json document (certificate, "
        "result, comparison, aggregation, simulation records, ...) and of the solution files "
        "crowdopt reads (solution-PROBLEM), shipped with the package. "
        "Validate with any JSON Schema tool, e.g. `crowdopt certify inst.json --json > c.json` "
        "then check c.json against `crowdopt schema certify`. Schemas refer to each other by "
        "relative $ref (certificate.json): save them side by side.")
    p.add_argument("name", nargs="?", metavar="NAME", help="schema name (see --list)")
    p.add_argument("--list", action="store_true",
                   help="list the schemas and the commands whose --json output each describes")
    p.set_defaults(func=cmd_schema)
