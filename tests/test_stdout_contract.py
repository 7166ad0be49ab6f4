"""Issue 12 item 4: the stdout contract. Every command that takes `--json` runs in a subprocess
and its whole stdout is one JSON document (`json.loads`); logs and progress go to stderr.

The commands are discovered from the argparse tree, so a new `--json` command without a case
here fails `test_every_json_command_has_a_case`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from cli_tree import leaves, options

from crowdopt.datapath import data_root

ITEMS = "item,max_labels\na,2\nb,2\nc,2\n"
GOLDEN = ("sample,labeler,labeler_accuracy,given_label,true_label,entropy\n"
          + "".join(f"s{i},L{i % 3},{0.6 + 0.1 * (i % 3):.1f},{(i * 7) % 2},{(i * 5) % 2},"
                    f"{(i % 10) / 10:.1f}\n" for i in range(60)))
FEATURES = "sample,f1,f2\n" + "".join(f"s{i},{(i * 3) % 7 / 7:.3f},{(i * 5) % 11 / 11:.3f}\n"
                                      for i in range(60))
SWEEP = ('function = "crowdopt.experiments.executor:busy_task"\nseeds = [0]\n'
         "[grid]\nwork = [10]\n")

# command -> (argv after `crowdopt`, needs the real data); {t} is the test's tmp_path and
# {inst} a generated olas-assign instance, {db} an initialised campaign, {ans} its answers
CASES: dict[str, tuple[list[str], bool]] = {
    "demo": (["demo", "--json"], False),
    "solve": (["solve", "{inst}", "--json"], False),
    "compare": (["compare", "{inst}", "--json"], False),
    "certify": (["certify", "{inst}", "--json"], False),
    "certify DIR": (["certify", "{t}/instances", "--json", "--quiet"], False),
    "simulate lsol": (["simulate", "lsol", "--runs", "2", "--T", "200", "--json", "--quiet"],
                      False),
    "simulate olas": (["simulate", "olas", "--preset", "heart", "--runs", "1", "--cycles", "1",
                       "--json", "--quiet"], True),
    "simulate optkg": (["simulate", "optkg", "--K", "5", "--budgets", "10", "--runs", "1",
                        "--json", "--quiet"], False),
    "replay lsol": (["replay", "lsol", "bluebirds", "--json", "--quiet"], True),
    "replay optkg": (["replay", "optkg", "bluebirds", "--budget", "200", "--json"], True),
    "reproduce cltap": (["reproduce", "cltap", "--scale", "check", "-o", "{t}/rc", "--json",
                         "--quiet"], False),
    "reproduce lsol": (["reproduce", "lsol", "--parts", "fig2", "-o", "{t}/rl", "--json",
                        "--quiet"], False),
    "reproduce olas": (["reproduce", "olas", "--datasets", "heart", "--noises", "linear",
                        "--runs", "1", "--cycles", "1", "-o", "{t}/ro", "--json", "--quiet"],
                       True),
    "reproduce optkg": (["reproduce", "optkg", "--only", "dp", "-o", "{t}/rk", "--json",
                         "--quiet"], True),
    "reproduce selection": (["reproduce", "selection", "--sources", "fig2a", "--runs", "1",
                             "-o", "{t}/rs", "--json", "--quiet"], False),
    "campaign init": (["campaign", "init", "{t}/new.db", "--policy", "optkg", "--items",
                       "{t}/items.csv", "--budget", "4", "--json"], False),
    "campaign next": (["campaign", "next", "{db}", "--n", "2", "--json"], False),
    "campaign record": (["campaign", "record", "{db}", "{ans}", "--json"], False),
    "campaign status": (["campaign", "status", "{db}", "--json"], False),
    "aggregate": (["aggregate", "dataset:bluebirds", "--method", "dawid-skene", "--json"], True),
    "estimate": (["estimate", "dataset:bluebirds", "--json"], True),
    "select": (["select", "dataset:bluebirds", "--max-workers", "5", "--json"], True),
    "olas estimate-noise": (["olas", "estimate-noise", "--golden", "{t}/golden.csv", "--json"],
                            False),
    "olas tune-beta": (["olas", "tune-beta", "--golden", "{t}/golden.csv", "--features",
                        "{t}/features.csv", "--grid", "0.2,1", "--splits", "2", "--classifier",
                        "logreg", "--json"], False),
    "sweep": (["sweep", "{t}/s.toml", "-o", "{t}/sw", "--json", "--quiet"], False),
}
SLOW = {"reproduce cltap", "reproduce olas", "reproduce optkg", "simulate olas"}


def _crowdopt(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    p = subprocess.run([sys.executable, "-m", "crowdopt", *argv], capture_output=True,
                       text=True, env=env, timeout=600)
    if check:
        assert p.returncode == 0, (argv, p.stderr[-2000:])
    return p


def json_commands() -> set[str]:
    names = set()
    for path, p, _ in leaves():
        if "--json" in {s for a in options(p) for s in a.option_strings}:
            names.add(" ".join(path))
    return names


def test_every_json_command_has_a_case():
    missing = json_commands() - {c.removesuffix(" DIR") for c in CASES}
    assert not missing, f"--json commands without a stdout-contract case: {sorted(missing)}"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    t = tmp_path_factory.mktemp("contract")
    (t / "instances").mkdir()
    _crowdopt("generate", "olas-assign", "-o", str(t / "inst.json"))
    for p in ("cltap", "worker-select"):
        _crowdopt("generate", p, "-o", str(t / "instances" / f"{p}.json"))
    (t / "items.csv").write_text(ITEMS)
    (t / "golden.csv").write_text(GOLDEN)
    (t / "features.csv").write_text(FEATURES)
    (t / "s.toml").write_text(SWEEP)
    db = t / "c.db"
    _crowdopt("campaign", "init", str(db), "--policy", "optkg", "--items", str(t / "items.csv"),
              "--budget", "6")
    qs = json.loads(_crowdopt("campaign", "next", str(db), "--n", "2", "--json").stdout)
    (t / "ans.csv").write_text("item,worker,label\n" + "".join(
        f"{q['item']},w{i},1\n" for i, q in enumerate(qs["queries"])))
    return {"t": str(t), "inst": str(t / "inst.json"), "db": str(db), "ans": str(t / "ans.csv")}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in CASES])
def test_stdout_is_one_json_document(name, files):
    argv, needs_data = CASES[name]
    if needs_data and data_root(required=False) is None:
        pytest.skip("real data sets not found: set CROWDOPT_DATA (default ../shared/data)")
    p = _crowdopt(*(a.format(**files) for a in argv), check=False)
    assert p.returncode in (0, 4), (name, p.returncode, p.stderr[-2000:])
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError as exc:
        pytest.fail(f"{name}: stdout is not one JSON document ({exc}): {p.stdout[:300]!r}")
    assert isinstance(doc, dict | list)
    assert "Running HiGHS" not in p.stdout and "Traceback" not in p.stderr
