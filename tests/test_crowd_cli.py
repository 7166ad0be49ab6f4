"""`crowdopt aggregate` / `crowdopt estimate`: outputs, JSON, exit codes, one-line errors."""

from __future__ import annotations

import json

import pytest

from crowdopt.cli import main

LABELS = "question,worker,answer\r\nt1,w1,a\r\nt1,w2,a\r\nt1,w3,b\r\nt2,w1,b\r\nt2,w2,b\r\n" \
         "t2,w3,b\r\nt3,w1,a\r\nt3,w2,b\r\nt3,w3,a\r\n"
GOLD = "question,truth\nt1,a\nt2,b\nt3,a\n"


@pytest.fixture
def files(tmp_path):
    lab = tmp_path / "labels.csv"
    lab.write_bytes(LABELS.encode())
    gold = tmp_path / "gold.csv"
    gold.write_text(GOLD)
    return tmp_path, str(lab), str(gold)


def run_json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("method", ["mv", "wmv", "one-coin", "dawid-skene"])
def test_aggregate_json_has_accuracy(files, capsys, method):
    tmp, lab, gold = files
    out = run_json(capsys, ["aggregate", lab, "--gold", gold, "--method", method, "--json",
                            "-o", str(tmp / "out.csv")])
    assert out["method"] == method and out["n_tasks"] == 3 and out["gold_tasks"] == 3
    assert 0.0 <= out["accuracy"] <= 1.0
    rows = (tmp / "out.csv").read_text().splitlines()
    assert rows[0] == "task,label,confidence" and len(rows) == 4


def test_aggregate_mv_value_and_text_output(files, capsys):
    _, lab, gold = files
    out = run_json(capsys, ["aggregate", lab, "--gold", gold, "--method", "mv", "--json"])
    assert out["accuracy"] == 1.0          # t1 a (2:1), t2 b (3:0), t3 a (2:1)
    assert main(["aggregate", lab, "--gold", gold, "--method", "mv"]) == 0
    text = capsys.readouterr().out
    assert "accuracy" in text and "mv" in text


def test_estimate_writes_reliability_table(files, capsys):
    tmp, lab, gold = files
    out_csv = tmp / "rel.csv"
    out = run_json(capsys, ["estimate", lab, "--gold", gold, "--json", "-o", str(out_csv)])
    by = {r["worker"]: r for r in out["workers"]}
    assert by["w1"]["correct"] == 3 and by["w2"]["correct"] == 2 and by["w3"]["correct"] == 2
    assert by["w1"]["accuracy"] == 1.0 and by["w1"]["variance"] == 0.0
    assert out_csv.read_text().startswith("worker,n,correct,accuracy,variance,score,source")
    # the export feeds weighted majority vote
    res = run_json(capsys, ["aggregate", lab, "--method", "wmv", "--weights", str(out_csv),
                            "--json"])
    assert res["n_tasks"] == 3
    em = run_json(capsys, ["estimate", lab, "--json"])
    assert em["source"] == "dawid-skene" and len(em["workers"]) == 3


@pytest.mark.parametrize("argv,match", [
    (["aggregate", "{tmp}/missing.csv"], "existing file"),
    (["aggregate", "{tmp}/empty.csv"], "empty file"),
    (["aggregate", "{tmp}/nocol.csv"], "column label"),
    (["aggregate", "{lab}", "--gold", "{tmp}/badgold.csv"], "label"),
    (["aggregate", "{lab}", "--gold", "{tmp}/unknown.csv"], "task"),
    (["aggregate", "{lab}", "--method", "wmv"], "--weights FILE or gold"),
    (["aggregate", "{tmp}/dup.csv"], "repeated rows"),
    (["aggregate", "dataset:nope"], "dataset"),
    (["estimate", "{lab}", "--method", "gold"], "gold"),
    (["aggregate", "{lab}", "--columns", "task"], "--columns"),
])
def test_bad_input_exits_2_with_one_line(files, capsys, argv, match):
    tmp, lab, _ = files
    (tmp / "empty.csv").write_text("")
    (tmp / "nocol.csv").write_text("task,worker\nt1,w1\n")
    (tmp / "badgold.csv").write_text("task,label\nt1,zzz\n")
    (tmp / "unknown.csv").write_text("task,label\nt9,a\n")
    (tmp / "dup.csv").write_text("task,worker,label\nt1,w1,a\nt1,w1,b\n")
    argv = [a.format(tmp=tmp, lab=lab) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and match in err, err


def test_dataset_input(data_dir, capsys):
    out = run_json(capsys, ["aggregate", "dataset:bluebirds", "--method", "mv", "--json"])
    assert round(out["accuracy"], 4) == 0.7593
