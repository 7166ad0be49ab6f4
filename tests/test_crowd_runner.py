"""`crowdopt.crowd.run_method`, the one door to aggregation: its report is the CLI's
`aggregate --json`, the weighted vote has one weight rule for the CLI and the estimator, auto
passes each candidate only the options it takes, and bad combinations are one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_crowd_methods import planted

from crowdopt.cli import main
from crowdopt.crowd import (
    AggregationReport,
    WeightedMajorityVote,
    read_gold,
    read_labels,
    run_method,
    to_dataframe,
    weighted_majority_vote,
    weights_from_accuracy,
)
from crowdopt.errors import InputError


@pytest.fixture
def files(tmp_path):
    tb, truth = planted(3, n_t=40, n_w=5)
    lab = tmp_path / "labels.csv"
    lab.write_text("task,worker,label\n" + "".join(
        f"{tb.task_ids[t]},{tb.worker_ids[w]},c{tb.classes[k]}\n"
        for t, w, k in zip(tb.task, tb.worker, tb.label, strict=True)))
    gold = tmp_path / "gold.csv"
    gold.write_text("task,label\n" + "".join(
        f"{tb.task_ids[t]},c{tb.classes[k]}\n" for t, k in zip(truth.task, truth.label,
                                                               strict=True)))
    acc = tmp_path / "acc.csv"
    acc.write_text("worker,accuracy\nw0,0.9\nw1,0.55\nw2,0.7\nw4,0.8\n")  # w3 unknown
    table = read_labels(lab)
    return tmp_path, table, read_gold(gold, table)


def cli_json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def without_time(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "time_s"}


@pytest.mark.parametrize("argv, kw", [
    (["--method", "mv"], {"method": "mv"}),
    (["--method", "wmv", "--folds", "3"], {"method": "wmv", "folds": 3}),
    (["--method", "wmv", "--weights", "{acc}", "--weighting", "linear"],
     {"method": "wmv", "accuracies": "{acc}", "weighting": "linear"}),
    (["--method", "dawid-skene", "--use-gold", "--smoothing", "0.5"],
     {"method": "dawid-skene", "use_gold": True, "smoothing": 0.5}),
    (["--method", "one-coin", "--init", "gold", "--ties", "first"],
     {"method": "one-coin", "init": "gold", "ties": "first"}),
])
def test_the_report_is_the_aggregate_json_document(files, capsys, argv, kw):
    tmp, table, gold = files
    from crowdopt.crowd import read_accuracies

    argv = [a.format(acc=tmp / "acc.csv") for a in argv]
    cli = cli_json(capsys, ["aggregate", str(tmp / "labels.csv"), "--gold",
                            str(tmp / "gold.csv"), "--seed", "4", "--json", *argv])
    if "accuracies" in kw:
        kw["accuracies"] = read_accuracies(tmp / "acc.csv")
    report = run_method(table, gold=gold, seed=4, source=str(tmp / "labels.csv"), **kw)
    assert isinstance(report, AggregationReport)
    assert without_time(report.to_dict()) == without_time(cli)
    assert report.labels.shape == (table.n_tasks,)  # it is the method's result too


def test_one_weight_rule_for_the_cli_and_the_estimator(files, capsys):
    tmp, table, gold = files
    accs = {"w0": 0.9, "w1": 0.55, "w2": 0.7, "w4": 0.8}
    known = np.array([accs.get(w, np.nan) for w in table.worker_ids.tolist()])
    expected = weighted_majority_vote(table, weights_from_accuracy(known, table.n_classes),
                                      ties="first")
    door = run_method(table, "wmv", accuracies=accs, ties="first")
    cli = cli_json(capsys, ["aggregate", str(tmp / "labels.csv"), "--method", "wmv",
                            "--weights", str(tmp / "acc.csv"), "--ties", "first", "--json",
                            "--posteriors", str(tmp / "post.csv")])
    np.testing.assert_array_equal(door.labels, expected.labels)
    assert cli["posteriors"] == str(tmp / "post.csv")
    # the same accuracies as a vector in the table's worker order: the same vote
    np.testing.assert_allclose(run_method(table, "wmv", accuracies=known).posteriors,
                               door.posteriors)
    # given weights: a worker without one gets the mean weight
    w = {"w0": 2.0, "w1": 0.0, "w2": 1.0, "w4": 1.0}
    mean = np.array([w.get(x, 1.0) for x in table.worker_ids.tolist()])
    np.testing.assert_allclose(run_method(table, "wmv", weights=w).posteriors,
                               weighted_majority_vote(table, mean).posteriors)


@pytest.mark.slow  # pandas loads here
def test_the_estimator_votes_by_the_same_rule(files):
    _, table, gold = files
    accs = {"w0": 0.9, "w1": 0.55, "w2": 0.7, "w4": 0.8}
    df = to_dataframe(table)
    est = WeightedMajorityVote(accuracies=accs, ties="first").fit(df)
    np.testing.assert_array_equal(est.result_.labels,
                                  run_method(table, "wmv", accuracies=accs, ties="first").labels)
    truth = dict(zip(table.task_ids[gold.task].tolist(), table.classes[gold.label].tolist(),
                     strict=True))
    crossed = WeightedMajorityVote(folds=3, seed=2).fit(df, true_labels=truth)
    np.testing.assert_array_equal(crossed.result_.posteriors, run_method(
        table, "wmv", gold=gold, folds=3, seed=2).posteriors)


def test_auto_passes_each_candidate_only_its_options(files):
    _, table, _ = files
    with pytest.raises(InputError, match="--smoothing: expected a method that uses it"):
        run_method(table, "mv", smoothing=0.5)
    report = run_method(table, "auto", smoothing=0.5, candidates=("mv", "dawid-skene"))
    assert report.choice is not None and report.name == report.choice.method
    assert report.to_dict()["auto"]["picked"] == report.name


@pytest.mark.parametrize("kw, match", [
    ({"method": "dawid-skene", "use_gold": True}, "--use-gold: expected a gold table"),
    ({"method": "one-coin", "init": "gold"}, "--init gold: expected a gold table"),
    ({"method": "mv", "weights": {"w0": 1.0}}, "--weights: expected --method wmv"),
    ({"method": "auto", "accuracies": {"w0": 0.9}}, "--weights: expected --method wmv"),
    ({"method": "wmv"}, "--method wmv: expected --weights FILE or gold"),
    ({"method": "wmv", "weights": [1.0], "accuracies": [0.9]}, "wmv: expected weights or"),
    ({"method": "wmv", "weights": [1.0, 2.0]}, "weights: expected a mapping worker -> value"),
    ({"method": "wmv", "weights": {"nobody": 1.0}}, "weights: expected a weight for at least"),
    ({"method": "nope"}, "method: expected one of"),
])
def test_bad_combinations_are_one_line_errors(files, kw, match):
    _, table, _ = files
    with pytest.raises(InputError, match=match) as err:
        run_method(table, **kw)
    assert "\n" not in str(err.value)
