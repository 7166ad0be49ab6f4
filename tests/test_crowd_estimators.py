"""crowd-kit-style estimator classes: crowd-kit's README usage pattern, DataFrame and LabelTable
input, opaque ids, fitted attributes, gold, errors, and equality with the CLI on rte."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crowdopt.crowd import (
    EBCC,
    GLAD,
    KOS,
    MACE,
    MMSR,
    DawidSkene,
    MajorityVote,
    OneCoinDawidSkene,
    Wawa,
    WeightedMajorityVote,
    ZeroBasedSkill,
    dawid_skene,
    from_arrays,
    from_dataframe,
    to_dataframe,
)
from crowdopt.errors import InputError

pd = pytest.importorskip("pandas")

ALL = [MajorityVote, Wawa, ZeroBasedSkill, OneCoinDawidSkene, DawidSkene, GLAD, MACE, KOS, MMSR,
       EBCC]
CSV = ("task,worker,label\n"
       "t1,w1,cat\nt1,w2,cat\nt1,w3,dog\n"
       "t2,w1,dog\nt2,w2,dog\nt2,w3,dog\n"
       "t3,w1,cat\nt3,w2,cat\nt3,w3,cat\n"
       "t4,w1,dog\nt4,w2,dog\nt4,w3,cat\n")


def test_crowd_kit_readme_pattern_verbatim(tmp_path, monkeypatch):
    """crowd-kit's README "Getting Started", with crowdopt's import in place of crowd-kit's."""
    (tmp_path / "results.csv").write_text(CSV)
    monkeypatch.chdir(tmp_path)

    from crowdopt.crowd import DawidSkene

    df = pd.read_csv('results.csv')  # should contain columns: task, worker, label
    aggregated_labels = DawidSkene(n_iter=100).fit_predict(df)

    assert isinstance(aggregated_labels, pd.Series)
    assert aggregated_labels.index.name == "task"
    assert aggregated_labels.to_dict() == {"t1": "cat", "t2": "dog", "t3": "cat", "t4": "dog"}


def test_every_exported_estimator_is_fitted_here_and_every_name_resolves():
    """ALL (plus WeightedMajorityVote, which needs weights and has its own test) is every
    estimator class the package exports; crowdopt.crowd.__all__ (a literal, for static tools)
    names exactly the lazily loaded names, and every one of them loads."""
    import crowdopt.crowd as crowd
    from crowdopt.crowd import estimators
    classes = {getattr(estimators, n) for n in estimators.__all__
               if isinstance(getattr(estimators, n), type)}
    assert classes == set(ALL) | {WeightedMajorityVote}
    assert {c.__name__ for c in classes} <= set(crowd.__all__)
    assert sorted(crowd.__all__) == sorted(crowd._LAZY)
    for name in crowd.__all__:
        assert getattr(crowd, name) is not None, name


@pytest.mark.parametrize("cls", ALL)
def test_every_estimator_fits_a_dataframe(cls):
    df = pd.read_csv(__import__("io").StringIO(CSV))
    m = cls()
    labels = m.fit_predict(df)
    proba = m.fit_predict_proba(df)
    assert list(labels.index) == ["t1", "t2", "t3", "t4"]
    assert set(labels) <= {"cat", "dog"}
    assert list(proba.columns) == ["cat", "dog"] and proba.index.name == "task"
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert list(m.skills_.index) == ["w1", "w2", "w3"] and m.skills_.name == "skill"
    assert isinstance(m.n_iter_, int) and isinstance(m.converged_, bool)
    assert m.labels_ is not None and m.probas_ is not None and m.result_.method
    assert repr(m).startswith(cls.__name__ + "(")


def test_fitted_frames_are_built_on_access_and_rebuilt_by_a_refit():
    """probas_/skills_/priors_/errors_ are computed when first read; a second fit on other
    data must not leave the first fit's frames behind."""
    m = DawidSkene()
    with pytest.raises(AttributeError, match="probas_: DawidSkene is not fitted"):
        m.probas_  # noqa: B018 - not fitted yet
    df = pd.read_csv(__import__("io").StringIO(CSV))
    m.fit(df)
    assert "probas_" not in vars(m)
    first = m.probas_
    assert m.probas_ is first and list(first.index) == ["t1", "t2", "t3", "t4"]
    assert m.errors_ is not None and m.priors_ is not None
    m.fit(df[df.task != "t4"])
    assert list(m.probas_.index) == ["t1", "t2", "t3"]
    assert list(m.labels_.index) == ["t1", "t2", "t3"]
    assert m.errors_.shape == (3 * 2, 2)
    assert MajorityVote().fit(df).errors_ is None
    from crowdopt.crowd.estimators import _LAZY
    assert set(_LAZY) == {"probas_", "skills_", "priors_", "errors_"}


def test_opaque_ids_ints_strings_mixed_and_label_table_input():
    df = pd.DataFrame({"task": [1, 1, "x", "x", 25, 25], "worker": ["a", 7, "a", 7, "a", 7],
                       "label": [0, 0, 1, 1, 1, 0]})
    m = DawidSkene().fit(df)
    assert list(m.labels_.index) == [1, "x", 25]
    assert list(m.skills_.index) == ["a", 7]
    tb = from_dataframe(df)
    m2 = DawidSkene().fit(tb)
    pd.testing.assert_series_equal(m.labels_, m2.labels_)
    back = to_dataframe(tb)
    assert back["task"].tolist() == [1, 1, "x", "x", 25, 25]
    df.loc[4, "task"] = 2.5  # a float is no id (the id rule: a text or an integer)
    with pytest.raises(InputError, match=r"^task\[4\]: expected a text or integer id"):
        DawidSkene().fit(df)


def test_thin_wrapper_gives_the_function_result():
    rng = np.random.default_rng(0)
    rows = [(f"t{t}", f"w{w}", int(rng.integers(3))) for t in range(40) for w in range(5)]
    tb = from_arrays(*zip(*rows, strict=True))
    m = DawidSkene(n_iter=50, tol=1e-8, smoothing=0.2).fit(tb)
    r = dawid_skene(tb, max_iter=50, tol=1e-8, smoothing=0.2)
    np.testing.assert_array_equal(m.probas_.to_numpy(), r.posteriors)
    assert m.n_iter_ == r.iterations and m.objective_ == r.objective
    assert m.log_likelihood_ == r.log_likelihood[-1]
    # errors_: crowd-kit's layout, rows (worker, observed label), columns the true label
    w = tb.worker_index(["w2"])[0]
    np.testing.assert_allclose(m.errors_.loc["w2"].to_numpy(), r.confusion[w].T)
    np.testing.assert_allclose(m.errors_.groupby(level="worker").sum().to_numpy(), 1.0)
    np.testing.assert_allclose(m.priors_.to_numpy(), r.priors)


def test_true_labels_clamp_em_and_feed_weighted_vote():
    df = pd.read_csv(__import__("io").StringIO(CSV))
    gold = pd.Series({"t3": "dog", "t4": "cat"})
    m = DawidSkene().fit(df, true_labels=gold)
    assert m.labels_["t3"] == "dog" and m.labels_["t4"] == "cat"
    assert m.probas_.loc["t3", "dog"] == 1.0
    w = WeightedMajorityVote(weights={"w1": 1.0, "w2": 1.0, "w3": 3.0}).fit_predict(df)
    assert w["t1"] == "dog"          # w3 outweighs w1 + w2
    acc = WeightedMajorityVote(accuracies={"w1": 0.9, "w2": 0.6, "w3": 0.6}).fit_predict(df)
    assert acc["t3"] == "cat"        # log-odds(0.9) > 2 x log-odds(0.6)
    full = pd.Series({"t1": "cat", "t2": "dog", "t3": "cat", "t4": "dog"})
    cross = WeightedMajorityVote().fit_predict(df, true_labels=full)
    assert len(cross) == 4
    with pytest.raises(InputError, match="true_labels"):
        MajorityVote().fit(df, true_labels=gold)
    with pytest.raises(InputError, match="weights, accuracies or true_labels"):
        WeightedMajorityVote().fit(df)


@pytest.mark.parametrize("bad,match", [
    ([("t", "w", 1)], "a pandas DataFrame with columns task, worker, label"),
    ("labels.csv", "a pandas DataFrame"),
    (None, "found 'NoneType'"),
])
def test_wrong_input_type_is_one_line(bad, match):
    with pytest.raises(InputError, match=match) as e:
        DawidSkene().fit(bad)
    assert "\n" not in str(e.value)


def test_missing_columns_duplicates_and_nan_are_one_line():
    with pytest.raises(InputError, match="columns.worker"):
        DawidSkene().fit(pd.DataFrame({"task": [1], "performer": ["a"], "label": [0]}))
    dup = pd.DataFrame({"task": [1, 1], "worker": ["a", "a"], "label": [0, 1]})
    with pytest.raises(InputError, match="repeated rows"):
        DawidSkene().fit(dup)
    assert len(DawidSkene(duplicates="all").fit_predict(dup)) == 1
    with pytest.raises(InputError, match="missing value"):
        DawidSkene().fit(pd.DataFrame({"task": [1, None], "worker": ["a", "b"],
                                       "label": [0, 1]}))


@pytest.mark.parametrize("make,field", [
    (lambda: DawidSkene(n_iter=-1), "n_iter"),
    (lambda: OneCoinDawidSkene(n_iter=2.5), "n_iter"),
    (lambda: MACE(n_restarts=-1), "n_restarts"),
    (lambda: MACE(alpha=0.0), "alpha / beta / strategy_prior"),
    (lambda: ZeroBasedSkill(lr_steps_to_reduce=0), "lr_steps_to_reduce"),
    (lambda: ZeroBasedSkill(lr_init=5.0), "lr_init / lr_reduce_factor"),
    (lambda: KOS(n_iter=-3), "n_iter"),
    (lambda: DawidSkene(tol=-1.0), "tol"),
    (lambda: EBCC(n_subtypes=0), "n_subtypes"),
    (lambda: EBCC(n_iter=-1), "n_iter"),
])
def test_bad_parameters_are_named_as_the_estimator_names_them(make, field):
    """A bad parameter is reported under the estimator's name for it (crowd-kit's `n_iter`,
    `n_restarts`, ...), not the name of the function argument it feeds (`max_iter`)."""
    df = pd.DataFrame({"task": [1, 1, 2, 2], "worker": ["a", "b", "a", "b"],
                       "label": [0, 1, 1, 1]})
    with pytest.raises(InputError) as e:
        make().fit(df)
    assert e.value.field == field and str(e.value).startswith(f"{field}: expected ")
    assert "\n" not in str(e.value)


def test_rte_estimator_equals_cli(data_dir, capsys):
    """DawidSkene().fit_predict(df) on rte, DataFrame from the
    CSV, scores on gold exactly what `crowdopt aggregate dataset:rte --method dawid-skene`
    reports."""
    from crowdopt.cli import main

    raw = pd.read_csv(data_dir / "rte" / "rte.standardized.csv")
    df = raw[["orig_id", "!amt_worker_ids", "response"]].set_axis(["task", "worker", "label"],
                                                                   axis=1)
    labels = DawidSkene().fit_predict(df)
    gold = raw.drop_duplicates("orig_id").set_index("orig_id")["gold"]
    acc = float((labels[gold.index] == gold).mean())
    assert main(["aggregate", "dataset:rte", "--method", "dawid-skene", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert acc == out["accuracy_tie_broken"] == pytest.approx(0.92875)


def test_docs_aggregation_snippet_runs(capsys, tmp_path, monkeypatch):
    """The Python snippet of the Aggregation page's "From Python" section, executed as
    written (it writes its CSV files in the current folder)."""
    import re
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    text = (Path(__file__).resolve().parents[1] / "docs" / "aggregation.md").read_text()
    section = text.split("\n## From Python\n")[1].split("\n## ")[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "docs/aggregation.md", "exec"), {})
    out = capsys.readouterr().out
    assert "{'t1': 'cat', 't2': 'dog'}" in out and "evidence lower bound" in out
