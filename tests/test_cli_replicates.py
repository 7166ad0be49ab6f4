"""Issue 19 item 4: replicates replicate - `replay lsol --runs N` runs N distinct arrival
orders; a fixed file order is one run, and asking for more is refused."""

from __future__ import annotations

import json

import pytest

from crowdopt.cli import main
from crowdopt.commands.lsol import replay_runs


def test_replay_runs_rule():
    assert replay_runs(None, None) == (1, "file")
    assert replay_runs(3, None) == (3, "shuffle")
    assert replay_runs(None, "shuffle") == (10, "shuffle")
    assert replay_runs(1, "file") == (1, "file")


@pytest.mark.parametrize("runs, order", [(3, "file"), (0, None), (-1, "shuffle")])
def test_replay_runs_refused(runs, order, capsys, data_dir):
    args = ["replay", "lsol", "bluebirds", "--runs", str(runs)]
    args += ["--order", order] if order else []
    code = main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--runs" in err[0]


def test_replay_lsol_runs_are_distinct(capsys, data_dir):
    assert main(["replay", "lsol", "bluebirds", "--runs", "3", "--json", "--quiet"]) == 0
    doc = json.loads(capsys.readouterr().out)
    per_run = [json.dumps(r, sort_keys=True) for r in doc["per_run"]]
    assert doc["runs"] == 3 and doc["params"]["order"] == "shuffle"
    assert len(set(per_run)) == 3 and len(set(doc["seeds"])) == 3
