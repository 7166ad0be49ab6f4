"""Issue 19 item 5: `select` says what its accuracy rests on - coverage of the held-out items
by the selected workers (text, JSON, stderr when below 90 %) and why workers went unscored."""

from __future__ import annotations

import json

from crowdopt.cli import main


def test_select_reports_coverage_and_unscored_workers(capsys, data_dir):
    assert main(["select", "dataset:rte", "--max-workers", "20", "--json"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert doc["evaluation_items"] == 790
    assert doc["coverage"] == doc["evaluation_items_labelled"] / 790 < 0.9
    u = doc["unscored_workers"]
    assert u["total"] == doc["workers"] - doc["eligible_workers"]
    assert u["total"] == u["no_control_answer"] + u["fewer_than_2_control_answers"]
    warn = [ln for ln in out.err.splitlines() if "warning" in ln]
    assert len(warn) == 1 and "336 of 790" in warn[0]


def test_select_text_names_coverage(capsys, data_dir):
    assert main(["select", "dataset:rte", "--max-workers", "20"]) == 0
    text = capsys.readouterr().out
    assert "coverage 336/790" in text and "answered no control item" in text


def test_full_coverage_no_warning(capsys, data_dir):
    assert main(["select", "dataset:bluebirds", "--max-workers", "5", "--json"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert doc["coverage"] >= 0.9 and "warning" not in out.err
