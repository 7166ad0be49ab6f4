"""`crowdopt simulate|replay|reproduce lsol`: JSON contract, exit codes, report files."""

from __future__ import annotations

import json

import pytest

from crowdopt.cli import main


@pytest.mark.slow
def test_simulate_json_and_report(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="report plots need the plot extra")
    out = tmp_path / "sim"
    assert main(["simulate", "lsol", "--runs", "2", "--T", "500", "--rule", "both", "--json",
                 "-o", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["results"]) == {"mv", "wmv"}
    assert doc["results"]["mv"]["checkpoints"][-1] == 500
    assert (out / "regret.png").exists() and (out / "report.md").exists()


def test_simulate_bad_input_exit_2(capsys):
    assert main(["simulate", "lsol", "--p", "0.5,1.5"]) == 2
    assert "--p[1]" in capsys.readouterr().err
    assert main(["replay", "lsol", "no-such-table"]) == 2
    capsys.readouterr()
    assert main(["simulate", "lsol", "--estimator", "pooled", "--em-labels", "all"]) == 2
    assert "--em-labels" in capsys.readouterr().err


def test_replay_file_json_has_accuracy(tmp_path, capsys):
    labels = tmp_path / "labels.csv"
    gold = tmp_path / "gold.csv"
    rows = ["task,worker,label"]
    truth = ["task,label"]
    rng = __import__("numpy").random.default_rng(0)
    for t in range(60):
        y = int(rng.integers(2))
        truth.append(f"t{t},{y}")
        for w, p in enumerate((0.9, 0.85, 0.8, 0.6, 0.4)):
            rows.append(f"t{t},w{w},{y if rng.random() < p else 1 - y}")
    labels.write_text("\n".join(rows) + "\n")
    gold.write_text("\n".join(truth) + "\n")
    assert main(["replay", "lsol", str(labels), "--gold", str(gold), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert 0.0 <= doc["accuracy"] <= 1.0 and doc["workers"] == 5
    assert doc["mv_all"]["labels"] == 300
    assert doc["params"]["exploit"] == "sequential" and doc["params"]["estimator"] == "answers"
    assert doc["budget"] == pytest.approx(5 / 3)  # the default: a third of the labels per task
    assert doc["labels_per_task"] <= doc["budget"]  # the testers alone stay within it
    assert main(["replay", "lsol", str(labels), "--gold", str(gold), "--exploit", "set",
                 "--estimator", "pooled", "--runs", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["params"]["exploit"] == "set" and doc["budget"] is None
    assert main(["replay", "lsol", str(labels), "--confidence", "1.5"]) == 2
    assert "--confidence" in capsys.readouterr().err
    assert main(["replay", "lsol", str(labels), "--exploit", "set", "--budget", "2"]) == 2
    assert "--budget" in capsys.readouterr().err  # the set S_t has no running budget
    for flag, value in (("--confidence", "0.9"), ("--min-labels", "2")):
        assert main(["replay", "lsol", str(labels), "--exploit", "set", flag, value]) == 2
        assert flag in capsys.readouterr().err  # sequential's own flags are not ignored


@pytest.mark.slow
def test_reproduce_fig2_part(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="report plots need the plot extra")
    out = tmp_path / "rep"
    assert main(["reproduce", "lsol", "--parts", "fig2", "--quiet", "-o", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert "Fig. 2" in text and (out / "fig2_regret_table1.png").exists()


def test_simulate_json_has_the_run_diagnostics(capsys):
    assert main(["simulate", "lsol", "--runs", "2", "--T", "300", "--estimator", "em",
                 "--quiet", "--json"]) == 0
    mv = json.loads(capsys.readouterr().out)["results"]["mv"]
    assert 0.5 < mv["final_pi"] <= 1 and 0 <= mv["final_is_opt"] <= 1
    assert mv["explore_loss"] + mv["exploit_loss"] == pytest.approx(mv["u_star"]
                                                                    - mv["avg_reward"])
    assert mv["reversed"] == 0 and mv["final_pi_ceiling"] <= mv["u_star"] + 1e-12
