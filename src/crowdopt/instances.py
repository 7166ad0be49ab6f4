"""Instance files: JSON with `problem` and `schema_version`, validated field by field.

`load_instance` accepts a path, '-' (standard input), JSON text or a dict, and raises only
`InputError` (empty file, malformed JSON, unknown problem, any bad field).
"""

from __future__ import annotations

import json
from typing import Any

from .errors import InputError
from .files import read_input
from .registry import SCHEMA_VERSION, ProblemSpec, get_problem, instance_document
from .validate import (
    integer,
    json_int,
    json_loads,
    require_key,
    require_mapping,
    stdin_text,
    utf8_text,
)


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object whose keys are unique: a repeated key is an error, never the last value."""
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def read_json(source: Any, what: str = "instance") -> Any:
    """Parse JSON from a path, '-', or an already-parsed object; one clean error on failure."""
    if isinstance(source, dict | list):
        return source
    name = str(source)
    if name == "-":
        text = stdin_text(what)
        name = "<stdin>"
    else:
        text = utf8_text(read_input(source, what), what, name)
    if not text.strip():
        raise InputError(what, "a JSON object", f"an empty file ({name})")
    try:  # a number out of range is named by its path: `p[0][1]`, `solution.assignment[1]`
        return json_loads(text, "" if what == "instance" else what,
                          object_pairs_hook=_unique_keys, parse_int=json_int)
    except json.JSONDecodeError as exc:
        raise InputError(what, "valid JSON", f"{exc.msg} at line {exc.lineno} column {exc.colno} of {name}") from None
    except _DuplicateKey as exc:
        raise InputError(what, "a JSON object with unique keys", f"key {exc.args[0]!r} twice in "
                         f"{name}") from None
    except RecursionError:
        raise InputError(what, "valid JSON", f"nesting too deep in {name}") from None


def parse_instance(data: Any) -> tuple[ProblemSpec, Any]:
    """Validate a parsed instance document; return (spec, typed instance)."""
    obj = require_mapping(data, "instance")
    spec = get_problem(require_key(obj, "problem"))
    version = integer(obj.get("schema_version", SCHEMA_VERSION), "schema_version", lo=1)
    if version != SCHEMA_VERSION:
        raise InputError("schema_version", str(SCHEMA_VERSION), version)
    body = {k: v for k, v in obj.items() if k not in ("problem", "schema_version")}
    return spec, spec.from_dict(body)


def load_instance(source: Any) -> tuple[ProblemSpec, Any]:
    """Read and validate an instance file (path, '-', or parsed document): (spec, instance)."""
    return parse_instance(read_json(source, "instance"))


def dump_instance(spec: ProblemSpec, instance: Any) -> str:
    """The instance file text of `instance` (what `load_instance` reads back)."""
    return json.dumps(instance_document(spec, instance), indent=1)
