"""Say what the number rests on: `crowdopt select` reports coverage (held-out
items labelled by the selected workers / items evaluated) beside every accuracy, in text and
JSON, warns on stderr below 90 %, and says how many workers could not be scored and why."""

from __future__ import annotations

import json

from crowdopt.cli import main


def test_rte_coverage_in_json_text_and_stderr(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("CROWDOPT_DATA", str(data_dir))
    assert main(["select", "dataset:rte", "--max-workers", "20", "--json"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    cov = doc["coverage"]
    assert cov["evaluated"] == doc["evaluation_items"] == 790
    assert 0 < cov["labelled"] < cov["evaluated"]
    assert cov["fraction"] == cov["labelled"] / cov["evaluated"] < 0.9
    # the accuracy on the labelled items alone is beside the overall one
    assert set(doc["accuracies_labelled"]) == set(doc["accuracies"])
    assert doc["accuracies_labelled"]["mv"] > doc["accuracies"]["mv"]
    # every worker is either scored or counted with a reason
    un = doc["unscored_workers"]
    assert doc["eligible_workers"] + un["count"] == doc["workers"] == 164
    assert sum(un["reasons"].values()) == un["count"] > 0
    assert any("fewer than 2 control items" in k for k in un["reasons"])
    warn = [ln for ln in cap.err.splitlines() if "coverage" in ln]
    assert len(warn) == 1 and f"{cov['labelled']}/{cov['evaluated']}" in warn[0]

    assert main(["select", "dataset:rte", "--max-workers", "20"]) == 0
    text = capsys.readouterr().out
    acc_line = next(ln for ln in text.splitlines() if ln.startswith("accuracy on 790"))
    assert f"coverage {cov['labelled']}/790" in acc_line
    assert "not scored:" in text
    assert all(f"{v} {k}" in text for k, v in un["reasons"].items())


def test_full_coverage_gives_no_warning(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("CROWDOPT_DATA", str(data_dir))
    d = data_dir / "bluebirds"
    assert main(["select", str(d / "answer.csv"), "--gold", str(d / "truth.csv"),
                 "--max-workers", "39", "--json"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc["coverage"]["fraction"] == 1.0 and "coverage" not in cap.err
    assert doc["unscored_workers"] == {"count": 0, "reasons": {}}


def test_replay_optkg_reports_coverage_of_its_budget(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("CROWDOPT_DATA", str(data_dir))
    assert main(["replay", "optkg", "rte", "--budget", "400", "--reps", "2", "--json"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    # 400 labels on 800 items: at most 400 items can have a label (Opt-KG spreads them)
    assert doc["coverage"]["evaluated"] == 800 and 0 < doc["coverage"]["labelled"] <= 400
    assert all(r["coverage"] == r["gold_items_labelled"] / 800 for r in doc["runs"])
    assert len([ln for ln in cap.err.splitlines() if "coverage" in ln]) == 1
    assert main(["replay", "optkg", "rte", "--budget", "4000"]) == 0
    cap = capsys.readouterr()
    assert "coverage" not in cap.err and "coverage" in cap.out


def test_replay_lsol_reports_coverage(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("CROWDOPT_DATA", str(data_dir))
    assert main(["replay", "lsol", "bluebirds", "--runs", "2", "--json"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc["coverage"]["evaluated"] == 108
    assert doc["coverage"]["labelled"] == sum(
        r["gold_tasks_labelled"] for r in doc["per_run"]) / 2
    assert main(["replay", "lsol", "bluebirds", "--runs", "2"]) == 0
    assert "coverage" in capsys.readouterr().out.splitlines()[1]
