"""Types a program can trust: the CLI's JSON has booleans, not the strings
"True"/"False"; a value with no JSON form is an error, never its text; the shipped schemas
(`crowdopt schema`) say so and reject the old output."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pytest

from crowdopt import cli
from crowdopt.cli import emit_json, json_text, main
from crowdopt.schemas import load_schema, schema_names, validator


def test_emit_json_writes_numpy_booleans_as_booleans():
    buf = io.StringIO()
    with redirect_stdout(buf):
        emit_json({"proven_optimal": np.bool_(False), "n": np.int64(3), "x": np.float32(0.5),
                   "nan": float("nan"), "v": np.array([True, False])})
    assert json.loads(buf.getvalue()) == {"proven_optimal": False, "n": 3, "x": 0.5,
                                          "nan": None, "v": [True, False]}


def test_emit_json_refuses_a_value_without_json_form():
    with pytest.raises(TypeError, match="no JSON form"):
        emit_json({"x": object()}, stdout=False)


def test_certify_json_booleans_are_booleans(tmp_path, capsys):
    inst = tmp_path / "inst.json"
    assert main(["generate", "worker-select", "-o", str(inst)]) == 0
    assert main(["certify", str(inst), "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    for key in ("proven_optimal", "certified", "feasible"):
        assert isinstance(cert[key], bool), key
    pytest.importorskip("jsonschema", reason="the test extra validates against the schema")
    assert not list(validator("certify").iter_errors(cert))
    bad = {**cert, "proven_optimal": str(cert["proven_optimal"])}  # what 0.1 wrote
    assert [e.validator for e in validator("certify").iter_errors(bad)]


def test_schema_command_prints_every_shipped_schema(capsys):
    assert main(["schema", "--list"]) == 0
    listed = [ln.split()[0] for ln in capsys.readouterr().out.splitlines()]
    assert listed == schema_names() and {"certificate", "result", "comparison", "aggregation",
                                         "simulation-lsol"} <= set(listed)
    for name in listed:
        assert main(["schema", name]) == 0
        assert json.loads(capsys.readouterr().out) == load_schema(name)
    assert main(["schema", "no-such"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "certificate" in err


@pytest.mark.parametrize("indent_max", [1 << 18, 0])
def test_json_text_is_the_same_document_indented_or_on_one_line(indent_max, monkeypatch):
    """Small documents are indented, long ones stay on one line (the C encoder): the same
    values either way, numpy and non-finite numbers included."""
    monkeypatch.setattr(cli, "JSON_INDENT_MAX", indent_max)
    doc = {"labels": [{"item": f"i{k}", "p": np.float64(k / 7), "n": np.int64(k),
                       "ok": np.bool_(k % 2)} for k in range(50)],
           "nan": float("nan"), "inf": np.float64("inf"), 3: "int key", "path": None}
    text = json_text(doc)
    assert ("\n" in text) == bool(indent_max)
    back = json.loads(text)
    assert back["labels"][3] == {"item": "i3", "p": 3 / 7, "n": 3, "ok": True}
    assert back["nan"] is None and back["inf"] is None and back["3"] == "int key"
    assert json.loads(json_text({"big": list(range(100_000))}))["big"][-1] == 99_999
    # without a non-finite number the C encoder takes the document, numpy values by `default`
    assert json.loads(json_text(doc["labels"]))[5] == {"item": "i5", "p": 5 / 7, "n": 5,
                                                       "ok": True}
