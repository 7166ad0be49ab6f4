"""Replicates that replicate: `replay lsol --runs N` gives N distinct seeded
arrival orders by default; the file's order is one run, and `--runs > 1` with it is refused."""

from __future__ import annotations

import json

import pytest

from crowdopt.cli import main


@pytest.fixture(scope="module")
def labels(tmp_path_factory):
    import numpy as np

    d = tmp_path_factory.mktemp("replay")
    rng = np.random.default_rng(0)
    rows, truth = ["task,worker,label"], ["task,label"]
    for t in range(80):
        y = int(rng.integers(2))
        truth.append(f"t{t},{y}")
        for w, p in enumerate((0.9, 0.85, 0.8, 0.65, 0.55, 0.45)):
            rows.append(f"t{t},w{w},{y if rng.random() < p else 1 - y}")
    (d / "labels.csv").write_text("\n".join(rows) + "\n")
    (d / "gold.csv").write_text("\n".join(truth) + "\n")
    return str(d / "labels.csv"), str(d / "gold.csv")


def _replay(capsys, labels, *extra):
    code = main(["replay", "lsol", labels[0], "--gold", labels[1], "--json", *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_runs_differ_by_default(labels, capsys):
    code, out, err = _replay(capsys, labels, "--runs", "3", "--seed", "5")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["runs"] == 3 and doc["seeds"] == [5, 6, 7] and doc["params"]["order"] == "shuffle"
    runs = [json.dumps(r, sort_keys=True) for r in doc["per_run"]]
    assert len(set(runs)) > 1  # the seeded arrival orders give different trajectories
    assert doc["accuracy_sd"] is not None


@pytest.mark.parametrize("flag", [["--order", "file"], ["--file-order"]])
def test_file_order_is_one_run_and_refuses_more(labels, capsys, flag):
    code, out, err = _replay(capsys, labels, *flag)
    assert code == 0, err
    assert json.loads(out)["runs"] == 1 and json.loads(out)["params"]["order"] == "file"
    code, out, err = _replay(capsys, labels, *flag, "--runs", "3")
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "--runs" in err and "identical" in err


def test_replay_optkg_replicates_differ(data_dir, capsys, monkeypatch):
    """Opt-KG replay draws which stored label a query reveals from seed + r: replicates
    differ even for a deterministic-tie policy."""
    monkeypatch.setenv("CROWDOPT_DATA", str(data_dir))
    for policy in ("optkg", "optkg-det"):
        assert main(["replay", "optkg", "rte", "--budget", "300", "--reps", "3", "--policy",
                     policy, "--json"]) == 0
        runs = json.loads(capsys.readouterr().out)["runs"]
        assert [r["seed"] for r in runs] == [0, 1, 2]
        assert len({r["accuracy"] for r in runs}) > 1, policy
