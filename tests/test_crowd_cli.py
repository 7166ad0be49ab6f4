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


@pytest.mark.parametrize("method", ["mv", "wmv", "wawa", "zbs", "one-coin", "dawid-skene",
                                    "glad", "mace", "kos", "mmsr", "ebcc", "auto"])
def test_aggregate_json_has_accuracy(files, capsys, method):
    tmp, lab, gold = files
    out = run_json(capsys, ["aggregate", lab, "--gold", gold, "--method", method, "--json",
                            "-o", str(tmp / "out.csv")])
    assert out["method"] == (out["auto"]["picked"] if method == "auto" else method)
    assert out["n_tasks"] == 3 and out["gold_tasks"] == 3
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


@pytest.mark.parametrize("method", ["dawid-skene", "mv", "glad"])
def test_estimate_without_gold_has_no_correct_count(files, capsys, method):
    """A model fit counts no correct gold answers: `correct` is null in JSON, '-' in the text
    and empty in the CSV, never a count such as -1."""
    tmp, lab, _ = files
    out_csv = tmp / "em.csv"
    em = run_json(capsys, ["estimate", lab, "--method", method, "--json", "-o", str(out_csv)])
    assert [r["correct"] for r in em["workers"]] == [None] * 3
    assert all(r["n"] == 3 and 0 <= r["accuracy"] <= 1 for r in em["workers"])
    rows = out_csv.read_text().splitlines()
    assert all(row.split(",")[2] == "" for row in rows[1:]) and len(rows) == 4
    assert main(["estimate", lab, "--method", method]) == 0
    text = capsys.readouterr().out
    table = text.splitlines()[1:]  # the first line names the file (its path may hold "-1")
    assert "-1" not in "\n".join(table) and all(line.split()[2] == "-" for line in table[2:])


@pytest.mark.parametrize("cmd,method", [
    ("aggregate", m) for m in ["mv", "wmv", "wawa", "zbs", "one-coin", "dawid-skene", "glad",
                               "mace", "kos", "mmsr", "ebcc", "auto"]] + [
    ("estimate", m) for m in ["gold", "mv", "wawa", "zbs", "one-coin", "dawid-skene", "glad",
                              "mace", "kos", "mmsr", "ebcc"]])
def test_every_output_reports_iterations_and_converged(files, capsys, cmd, method):
    _, lab, gold = files
    argv = [cmd, lab, "--gold", gold, "--method", method]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)          # stdout is one JSON document
    assert isinstance(out["iterations"], int) and isinstance(out["converged"], bool)
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "converged" in text and "iteration" in text


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
    (["aggregate", "{lab}", "--method", "mv", "--smoothing", "0.1"], "--smoothing: expected a "
     "method that uses it (one-coin, dawid-skene), found 'mv'"),
    (["aggregate", "{lab}", "--method", "kos", "--priors", "learn"], "--priors"),
    (["aggregate", "{lab}", "--method", "glad", "--restarts", "3"], "--restarts"),
    (["aggregate", "{lab}", "--init", "gold"], "--init gold"),
    (["aggregate", "{lab}", "--gold", "{gold}", "--use-gold", "--init", "gold"], "both"),
    (["aggregate", "{lab}", "--gold", "{gold}", "--method", "ebcc", "--init", "gold"],
     "--init: expected a method that uses it"),   # not --use-gold, which was not given
    (["aggregate", "{lab}", "--method", "mv", "--weights", "{gold}"], "--weights"),
    (["aggregate", "{lab}", "--tol", "-1"], "tol"),
    (["aggregate", "{lab}", "--max-iter", "-2"], "max-iter"),
    (["estimate", "{lab}", "--gold", "{gold}", "--smoothing", "1"], "--smoothing"),
    (["aggregate", "{lab}", "--columns", "task"], "--columns"),
])
def test_bad_input_exits_2_with_one_line(files, capsys, argv, match):
    tmp, lab, _ = files
    (tmp / "empty.csv").write_text("")
    (tmp / "nocol.csv").write_text("task,worker\nt1,w1\n")
    (tmp / "badgold.csv").write_text("task,label\nt1,zzz\n")
    (tmp / "unknown.csv").write_text("task,label\nt9,a\n")
    (tmp / "dup.csv").write_text("task,worker,label\nt1,w1,a\nt1,w1,b\n")
    argv = [a.format(tmp=tmp, lab=lab, gold=_) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and match in err, err


def test_dataset_input(data_dir, capsys):
    out = run_json(capsys, ["aggregate", "dataset:bluebirds", "--method", "mv", "--json"])
    assert round(out["accuracy"], 4) == 0.7593


def test_model_flags_reach_the_model_and_json_reports_convergence(files, capsys):
    _, lab, gold = files
    base = run_json(capsys, ["aggregate", lab, "--json"])
    assert base["converged"] is True and base["iterations"] >= 1
    obj = base["objective"]
    assert obj["non_decreasing"] and obj["final"] == obj["trace"][-1]
    assert "log prior" in obj["name"]
    capped = run_json(capsys, ["aggregate", lab, "--json", "--max-iter", "1", "--tol", "0"])
    assert capped["iterations"] == 1 and capped["converged"] is False
    s0 = run_json(capsys, ["aggregate", lab, "--json", "--smoothing", "0", "--priors",
                           "uniform", "--tol", "1e-12"])
    s5 = run_json(capsys, ["aggregate", lab, "--json", "--smoothing", "5"])
    assert s0["objective"]["final"] != s5["objective"]["final"]
    g = run_json(capsys, ["aggregate", lab, "--gold", gold, "--init", "gold", "--json"])
    assert g["gold_init"] is True and g["gold_clamped"] is False
    m = run_json(capsys, ["aggregate", lab, "--method", "mace", "--restarts", "0", "--json"])
    assert m["converged"] and "evidence lower bound" in m["objective"]["name"]
    k = run_json(capsys, ["aggregate", lab, "--method", "kos", "--json"])
    assert k["objective"] is None and isinstance(k["converged"], bool)


def test_posteriors_and_confusion_exports_read_back_with_pandas(files, capsys):
    pd = pytest.importorskip("pandas")
    tmp, lab, gold = files
    post, conf = tmp / "post.csv", tmp / "conf.csv"
    out = run_json(capsys, ["aggregate", lab, "--posteriors", str(post), "--json"])
    assert out["posteriors"] == str(post)
    p = pd.read_csv(post)
    assert list(p.columns) == ["task", "label", "probability"] and len(p) == 3 * 2
    assert p.pivot(index="task", columns="label", values="probability").sum(axis=1).round(9) \
        .eq(1).all()
    est = run_json(capsys, ["estimate", lab, "--confusion", str(conf), "--json"])
    assert est["iterations"] >= 1 and est["converged"] is True
    assert est["confusion_source"] == "model"
    c = pd.read_csv(conf)
    assert list(c.columns) == ["worker", "true_label", "label", "probability"]
    assert len(c) == 3 * 2 * 2
    assert c.groupby(["worker", "true_label"])["probability"].sum().round(9).eq(1).all()
    gc = run_json(capsys, ["estimate", lab, "--gold", gold, "--confusion", str(conf), "--json",
                           "--force"])  # conf.csv exists: replaced only with --force
    assert gc["confusion_source"] == "gold answer counts"
    g = pd.read_csv(conf)
    w1 = g[(g.worker == "w1")].set_index(["true_label", "label"])["probability"]
    assert w1[("a", "a")] == 1.0 and w1[("b", "b")] == 1.0      # w1 is always right
    mv = run_json(capsys, ["estimate", lab, "--method", "mv", "--confusion", str(conf),
                           "--json", "--force"])
    assert mv["confusion_source"] == "posterior-weighted counts" and mv["iterations"] == 0


def test_auto_says_what_it_picked_and_why(files, capsys):
    _, lab, gold = files
    assert main(["aggregate", lab, "--method", "auto", "--gold", gold, "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)                 # stdout is the JSON document only
    auto = out["auto"]
    assert out["method"] == auto["picked"] and auto["picked"] in auto["scores"]
    assert auto["baseline"] == auto["default"] == "dawid-skene" and auto["z"] == 2.0
    beaten = {m for m, g in auto["gains"].items()   # std_error null: one hidden label, no error
              if g["std_error"] is not None and g["gain"] > auto["z"] * g["std_error"]}
    if auto["picked"] == auto["baseline"]:      # kept: nothing beats it by z standard errors
        assert not beaten
    else:                                       # switched to the largest clear gain
        assert auto["picked"] == max(beaten, key=lambda m: auto["gains"][m]["gain"])
    assert "held-out" in auto["reason"] and "picked" in captured.err
    assert main(["aggregate", lab, "--method", "auto"]) == 0
    assert "auto: picked" in capsys.readouterr().out


def test_aggregate_json_on_every_shared_set_and_method_is_pure(data_dir, capsys):
    out = run_json(capsys, ["aggregate", "dataset:gal_toy", "--method", "glad", "--json"])
    assert out["converged"] and out["n_tasks"] == 5
