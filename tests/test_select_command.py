"""`crowdopt select` end to end: gold -> reliabilities -> selection -> aggregation -> accuracy."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crowdopt.cli import main
from crowdopt.experiments.selection_repro import simulate_table


@pytest.fixture()
def crowd_files(tmp_path):
    """A small one-coin crowd (12 workers x 80 items) written as label and gold CSVs."""
    table, gold, w = simulate_table(np.random.default_rng(4), 12, 80, 2, 2.3, 2.0)
    labels = tmp_path / "labels.csv"
    labels.write_text("task,worker,label\n" + "".join(
        f"t{t},w{k},{lab}\n" for t, k, lab in zip(table.task, table.worker, table.label)))
    truth = tmp_path / "gold.csv"
    truth.write_text("task,label\n" + "".join(f"t{t},{y}\n" for t, y in zip(gold.task, gold.label)))
    costs = tmp_path / "costs.csv"
    costs.write_text("worker,cost\n" + "".join(f"w{k},{1 + k % 3}\n" for k in range(12)))
    return labels, truth, costs


def run_json(capsys, argv):
    rc = main(argv + ["--json"])
    return rc, json.loads(capsys.readouterr().out)


def test_select_reports_accuracy_and_a_certified_selection(crowd_files, capsys):
    labels, truth, _ = crowd_files
    rc, out = run_json(capsys, ["select", str(labels), "--gold", str(truth), "--max-workers", "5",
                                "--seed", "3"])
    assert rc == 0 and 1 <= out["size"] <= 5 and len(out["selected"]) == out["size"]
    assert out["control_items"] == 10 and out["evaluation_items"] == 70
    assert 0.0 <= out["accuracy"] <= 1.0 and set(out["accuracies"]) == {"wmv-linear", "wmv-log", "mv"}
    assert out["accuracy"] == out["accuracies"]["wmv-linear"]
    rc, exact = run_json(capsys, ["select", str(labels), "--gold", str(truth), "--max-workers",
                                  "5", "--seed", "3", "--method", "exact"])
    assert rc == 0 and exact["certificate"]["proven_optimal"]
    assert exact["objective"] == pytest.approx(out["objective"], abs=1e-7)
    assert exact["size"] == out["size"]


def test_select_with_costs_and_budget(crowd_files, capsys):
    labels, truth, costs = crowd_files
    rc, out = run_json(capsys, ["select", str(labels), "--gold", str(truth), "--max-workers", "6",
                                "--costs", str(costs), "--budget", "4"])
    assert rc == 0 and out["cost"] <= 4
    assert sum(w["cost"] for w in out["selected"]) == out["cost"]
    rc, none = run_json(capsys, ["select", str(labels), "--gold", str(truth), "--max-workers",
                                 "6", "--costs", str(costs), "--budget", "0"])
    assert rc == 3 and none["status"] == "infeasible" and none["accuracy"] is None


def test_all_gold_as_control_gives_no_accuracy(crowd_files, capsys):
    labels, truth, _ = crowd_files
    rc, out = run_json(capsys, ["select", str(labels), "--gold", str(truth), "--max-workers", "3",
                                "--n-control", "all"])
    assert rc == 0 and out["control_items"] == 80 and out["accuracy"] is None


@pytest.mark.parametrize("extra, message", [
    (["--budget", "3"], "--costs / --budget"),
    (["--max-workers", "0"], "--max-workers"),
    (["--n-control", "ten"], "--n-control"),
])
def test_bad_arguments_exit_2_with_one_line(crowd_files, capsys, extra, message):
    labels, truth, _ = crowd_files
    argv = ["select", str(labels), "--gold", str(truth), "--max-workers", "3"] + extra
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_cost_file_must_cover_every_worker(crowd_files, tmp_path, capsys):
    labels, truth, _ = crowd_files
    partial = tmp_path / "partial.csv"
    partial.write_text("worker,cost\nw0,1\n")
    assert main(["select", str(labels), "--gold", str(truth), "--max-workers", "3",
                 "--costs", str(partial), "--budget", "3"]) == 2
    assert "no cost for worker" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("worker,cost\n" + "".join(f"w{k},1.5\n" for k in range(12)))
    assert main(["select", str(labels), "--gold", str(truth), "--max-workers", "3",
                 "--costs", str(bad), "--budget", "3"]) == 2


def test_select_on_bluebirds(data_dir, capsys):
    d = data_dir / "bluebirds"
    rc, out = run_json(capsys, ["select", str(d / "answer.csv"), "--gold", str(d / "truth.csv"),
                                "--max-workers", "39", "--seed", "1"])
    assert rc == 0 and out["workers"] == 39 and out["evaluation_items"] == 98
    assert out["size"] < 39 and out["accuracy"] > 0.5
