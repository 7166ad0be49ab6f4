"""The stdout contract: every command that takes `--json`
runs in a subprocess on a small input; its whole stdout is one strict JSON document (no NaN or
Infinity), valid against the JSON Schema `crowdopt schema NAME` prints for it; stderr may carry
logs. The commands are found by walking the argparse tree, so a new `--json` command without a
case here fails `test_every_json_command_has_a_case`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from crowdopt.cli import build_parser
from crowdopt.schemas import COMMAND_SCHEMAS, load_schema, schema_names

CMD = [sys.executable, "-m", "crowdopt"]


def json_commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple]:
    """Every leaf command path (e.g. ('replay', 'lsol')) whose parser takes --json."""
    out = []
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for action in subs:
        for name, sub in action.choices.items():
            out += json_commands(sub, (*path, name))
    if not subs and any("--json" in a.option_strings for a in parser._actions):
        out.append(path)
    return out


# --------------------------------------------------------------------------- inputs
def _golden(d: Path) -> tuple[Path, Path]:
    """A small OLAS golden table (with entropies) and its features (120 samples x 4 labelers)."""
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    ent = rng.uniform(0, 1, 120)
    rows = ["sample,labeler,labeler_accuracy,given_label,true_label,entropy"]
    for k in range(120):
        for i, a in enumerate((0.55, 0.7, 0.85, 0.95)):
            wrong = rng.random() < (1 - a) * (0.5 + ent[k])
            rows.append(f"s{k},L{i},{a},{y[k] ^ int(wrong)},{y[k]},{ent[k]:.4f}")
    golden, feats = d / "golden.csv", d / "features.csv"
    golden.write_text("\n".join(rows) + "\n")
    feats.write_text("sample,f1,f2,f3\n" + "".join(
        f"s{k}," + ",".join(f"{v:.5f}" for v in X[k]) + "\n" for k in range(120)))
    return golden, feats


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, data_dir):
    d = tmp_path_factory.mktemp("contract")
    env = {**os.environ, "CROWDOPT_DATA": str(data_dir)}
    for p in ("labeler-set", "worker-select"):
        subprocess.run([*CMD, "generate", p, "--seed", "3", "-o", str(d / f"{p}.json")],
                       check=True, env=env, timeout=60)
    (d / "folder").mkdir()
    for p in ("labeler-set", "worker-select"):
        (d / "folder" / f"{p}.json").write_text((d / f"{p}.json").read_text())
    golden, feats = _golden(d)
    (d / "sweep.toml").write_text(
        'name = "tiny"\nfunction = "crowdopt.sim.lsol_sim:run_task"\nseeds = 2\n'
        '[grid]\nT = [30, 60]\n[params]\nM = 3\nrules = ["mv"]\n'
        '[summary]\nmetrics = ["mv.final_regret"]\n')
    (d / "answers.csv").write_text("item,worker,label\n")
    # next/record/status run on their own campaign, so each case also runs alone (-k)
    subprocess.run([*CMD, "campaign", "init", str(d / "live.db"), "--policy", "optkg",
                    "--items", "dataset:bluebirds", "--budget", "30"], check=True, env=env,
                   capture_output=True, timeout=60)
    return {"dir": d, "env": env, "inst": str(d / "labeler-set.json"),
            "folder": str(d / "folder"), "golden": str(golden), "features": str(feats),
            "toml": str(d / "sweep.toml"), "db": str(d / "camp.db"),
            "answers": str(d / "answers.csv"), "live": str(d / "live.db")}


# (command path, argv after the path with {placeholders} from `inputs`). Sizes are the smallest that exercise the command.
CASES: list[tuple[tuple[str, ...], list[str]]] = [
    (("demo",), ["--time-limit", "20"]),
    (("solve",), ["{inst}"]),
    (("solve",), ["{inst}", "--method", "exact"]),
    (("compare",), ["{inst}"]),
    (("certify",), ["{inst}"]),
    (("certify",), ["{folder}", "--quiet"]),
    (("select",), ["dataset:bluebirds", "--max-workers", "5"]),
    (("aggregate",), ["dataset:bluebirds", "--method", "dawid-skene"]),
    (("estimate",), ["dataset:bluebirds"]),
    (("replay", "lsol"), ["bluebirds", "--runs", "2"]),
    (("replay", "optkg"), ["rte", "--budget", "200", "--runs", "2"]),
    (("simulate", "lsol"), ["--runs", "2", "--T", "60", "--quiet"]),
    (("simulate", "optkg"), ["--K", "5", "--budgets", "10,20", "--runs", "2", "--quiet"]),
    (("simulate", "olas"), ["--preset", "heart", "--runs", "1", "--cycles", "1",
                            "--strategies", "OLAS,RS+RLA", "--quiet"]),
    (("olas", "estimate-noise"), ["--golden", "{golden}"]),
    (("olas", "tune-beta"), ["--golden", "{golden}", "--features", "{features}", "--grid",
                             "0.1,0.3", "--splits", "1", "--classifier", "logreg"]),
    (("sweep",), ["{toml}", "-o", "{dir}/sweep", "--quiet"]),
    (("campaign", "init"), ["{db}", "--policy", "optkg", "--items", "dataset:bluebirds",
                            "--budget", "30"]),
    (("campaign", "next"), ["{live}", "--n", "3"]),
    (("campaign", "record"), ["{live}", "{answers}"]),
    (("campaign", "status"), ["{live}"]),
    (("datasets", "list"), []),
    (("datasets", "info"), ["rte"]),
    (("datasets", "fetch"), ["rte", "bluebirds"]),
    (("datasets", "verify"), ["bluebirds"]),
    (("campaign", "token"), ["{live}", "--role", "read", "-o", "{dir}/live.read"]),
    (("campaign", "events"), ["{live}"]),
    (("campaign", "release"), ["{live}", "--worker", "w1"]),
    (("campaign", "webhook", "add"), ["{live}", "http://127.0.0.1:9/hook"]),
    (("campaign", "webhook", "remove"), ["{live}", "http://127.0.0.1:9/hook"]),
    (("reproduce", "selection"), ["--sources", "fig2a", "--runs", "1", "--quiet",
                                  "-o", "{dir}/rep-selection"]),
    (("reproduce", "optkg"), ["--only", "dp", "--quiet", "-o", "{dir}/rep-optkg"]),
    (("reproduce", "olas"), ["--datasets", "heart", "--noises", "linear", "--runs", "1",
                             "--cycles", "1", "--quiet", "-o", "{dir}/rep-olas"]),
    (("reproduce", "lsol"), ["--parts", "fig2", "--quiet", "-o", "{dir}/rep-lsol"]),
    (("reproduce", "cltap"), ["--scale", "check", "--quiet", "-o", "{dir}/rep-cltap"]),
]
def _id(case) -> str:
    path, argv = case
    return " ".join(path) + (" DIR" if "{folder}" in argv else "") + (
        " exact" if "exact" in argv else "")


def test_every_json_command_has_a_case_and_a_schema():
    found = set(json_commands(build_parser()))
    covered = {path for path, _ in CASES}
    assert found - covered == set(), "--json commands without a stdout contract case"
    assert covered - found == set(), "cases of commands that no longer take --json"
    assert found <= set(COMMAND_SCHEMAS), "--json commands without a JSON Schema"
    for name in schema_names():
        schema = load_schema(name)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def _check(case, inputs) -> None:
    path, argv = case
    args = [a.format(**inputs) for a in argv]
    r = subprocess.run([*CMD, *path, *args, "--json"], capture_output=True, text=True,
                       env=inputs["env"], cwd=inputs["dir"], timeout=600)
    assert r.returncode in (0, 4), f"exit {r.returncode}: {r.stderr[-2000:]}"

    def no_constant(name: str):
        raise AssertionError(f"non-standard JSON constant {name} on stdout")

    doc = json.loads(r.stdout, parse_constant=no_constant)  # the WHOLE stdout, strict
    from crowdopt.schemas import validator

    try:
        check = validator(COMMAND_SCHEMAS[path])
    except ImportError:  # pragma: no cover - the test extra (in the lock) installs jsonschema
        pytest.skip("jsonschema not installed: stdout parsed, schema not checked")
    errors = list(check.iter_errors(doc))
    assert not errors, "; ".join(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5])


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_stdout_is_one_json_document_valid_against_its_schema(case, inputs):
    _check(case, inputs)
