"""JSON Schemas (draft 2020-12) of every document the CLI writes, shipped as package data.

`crowdopt schema NAME` prints one, `crowdopt schema --list` names them. COMMAND_SCHEMAS maps
each `--json` command to the schema of its stdout (the stdout contract test validates every
command's output against it); INPUT_SCHEMAS names the schemas of what crowdopt reads (the
solution forms, `solution-PROBLEM`: each problem's solution reader is tested against it). Schemas refer to each other by relative `$ref`
("certificate.json"); `validator(name)` resolves them from this folder, offline.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from ..errors import InputError

BASE_URI = "https://crowdopt.invalid/schemas/"

# command path -> schema name (the document that command prints with --json)
COMMAND_SCHEMAS: dict[tuple[str, ...], str] = {
    ("demo",): "demo",
    ("solve",): "result",
    ("compare",): "comparison",
    ("certify",): "certify",
    ("select",): "selection",
    ("aggregate",): "aggregation",
    ("estimate",): "reliability",
    ("replay", "lsol"): "replay-lsol",
    ("replay", "optkg"): "replay-optkg",
    ("simulate", "lsol"): "simulation-lsol",
    ("simulate", "optkg"): "simulation-optkg",
    ("simulate", "olas"): "simulation-olas",
    ("olas", "estimate-noise"): "olas-noise",
    ("olas", "tune-beta"): "olas-beta",
    ("sweep",): "sweep",
    ("campaign", "init"): "campaign-init",
    ("campaign", "next"): "campaign-next",
    ("campaign", "record"): "campaign-record",
    ("campaign", "status"): "campaign-status",
    ("datasets", "list"): "datasets",
    ("datasets", "info"): "datasets",
    ("datasets", "fetch"): "datasets",
    ("datasets", "verify"): "datasets",
    ("campaign", "token"): "campaign-token",
    ("campaign", "events"): "campaign-events",
    ("campaign", "release"): "campaign-release",
    ("campaign", "webhook", "add"): "campaign-webhook",
    ("campaign", "webhook", "remove"): "campaign-webhook",
    ("reproduce", "lsol"): "reproduction",
    ("reproduce", "optkg"): "reproduction",
    ("reproduce", "selection"): "reproduction",
    ("reproduce", "olas"): "reproduction",
    ("reproduce", "cltap"): "reproduction",
}


# schemas of what crowdopt reads (not a command's stdout): name -> where it is read
INPUT_SCHEMAS: dict[str, str] = {
    **{f"solution-{p}": "certify --solution, crowdopt.read_solution"
       for p in ("cltap", "labeler-set", "olas-assign", "olas-select", "worker-select")},
    "solution": "certify --solution (the solution inside a result, certificate, comparison)",
}


def schema_names() -> list[str]:
    """Every shipped schema (file stem), sorted."""
    return sorted(p.name[:-5] for p in resources.files(__name__).iterdir()
                  if p.name.endswith(".json"))


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The schema NAME as a dict; an unknown name is a one-line InputError."""
    if name not in schema_names():
        raise InputError("NAME", "one of " + ", ".join(schema_names()), name)
    return json.loads(resources.files(__name__).joinpath(f"{name}.json").read_text("utf-8"))


def validator(name: str):
    """A jsonschema Draft202012Validator for NAME with the other shipped schemas resolvable
    (needs the `jsonschema` package: the `test` extra)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    registry = Registry().with_resources(
        (BASE_URI + f"{n}.json", Resource.from_contents(load_schema(n))) for n in schema_names())
    return Draft202012Validator(load_schema(name), registry=registry)
