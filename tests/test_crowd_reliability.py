"""Worker reliability from gold (digest 004 Theorem 3) and from EM; the export table."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from crowdopt.crowd.aggregate import dawid_skene
from crowdopt.crowd.reliability import (
    accuracy_vector,
    from_em,
    from_gold,
    gold_estimates,
    read_accuracies,
    write_reliability,
)
from crowdopt.crowd.tables import from_arrays, gold_from_arrays
from crowdopt.errors import InputError

# digest 004 §4.1 reference table, n = 10, c = 0..10
G_L2 = [1.0, .6, .2889, .0667, -.0667, -.1111, -.0667, .0667, .2889, .6, 1.0]
G_L4 = [1.0, .2, -.2444, -.3333, -.0667, .5556, 1.5333, 2.8667, 4.5556, 6.6, 9.0]


def test_theorem3_reference_values():
    c = np.arange(11)
    for L, ref in ((2, G_L2), (4, G_L4)):
        acc, var, g = gold_estimates(c, np.full(11, 10), L)
        np.testing.assert_allclose(acc, c / 10)
        np.testing.assert_allclose(var, (c / 10) * (1 - c / 10) / 9)
        np.testing.assert_allclose(g, ref, atol=5e-5)


@pytest.mark.parametrize("L", [2, 3, 4, 5])
@pytest.mark.parametrize("n", [2, 3, 10, 31])
def test_theorem3_estimates_are_unbiased(L, n):
    """E[G(c/n)] = (Lw - 1)^2 and E[var] = w(1 - w)/n exactly for c ~ Binomial(n, w)."""
    c = np.arange(n + 1)
    acc, var, g = gold_estimates(c, np.full(n + 1, n), L)
    for w in np.linspace(0, 1, 11):
        p = binom.pmf(c, n, w)
        assert p @ g == pytest.approx((L * w - 1) ** 2, abs=1e-12)
        assert p @ var == pytest.approx(w * (1 - w) / n, abs=1e-12)
        assert p @ acc == pytest.approx(w, abs=1e-12)


@pytest.fixture
def table():
    # gold: t1=a, t2=b, t3=a; t4 has no gold
    return from_arrays(["t1", "t2", "t3", "t1", "t2", "t4", "t1"],
                       ["w1", "w1", "w1", "w2", "w2", "w2", "w3"],
                       ["a", "b", "b", "a", "a", "b", "a"])


def test_from_gold_counts(table):
    gold = gold_from_arrays(table, ["t1", "t2", "t3"], ["a", "b", "a"])
    rel = from_gold(table, gold)
    assert rel.n.tolist() == [3, 2, 1]
    assert rel.correct.tolist() == [2, 1, 1]
    np.testing.assert_allclose(rel.accuracy, [2 / 3, 0.5, 1.0])
    np.testing.assert_allclose(rel.variance[:2], [(2 / 3) * (1 / 3) / 2, 0.25])
    assert np.isnan(rel.variance[2]) and np.isnan(rel.score[2])   # n = 1: no variance
    assert rel.score[1] == pytest.approx(0 - 4 * 0.25)
    only_t1 = from_gold(table, gold, tasks=np.array([0]))
    assert only_t1.n.tolist() == [1, 1, 1] and only_t1.correct.tolist() == [1, 1, 1]


def test_export_roundtrip_and_accuracy_vector(table, tmp_path):
    gold = gold_from_arrays(table, ["t1", "t2"], ["a", "b"])
    rel = from_gold(table, gold)
    path = tmp_path / "rel.csv"
    write_reliability(rel, path)
    text = path.read_text().splitlines()
    assert text[0] == "worker,n,correct,accuracy,variance,score,source"
    acc = read_accuracies(path)
    assert acc == pytest.approx({"w1": 1.0, "w2": 0.5, "w3": 1.0})
    np.testing.assert_allclose(accuracy_vector(table, acc), [1.0, 0.5, 1.0])
    assert np.isnan(accuracy_vector(table, {"w1": 0.9})[1])


def test_from_em(table):
    r = dawid_skene(table)
    rel = from_em(table, r)
    np.testing.assert_allclose(rel.accuracy, r.skills)
    assert rel.n.tolist() == [3, 3, 1] and rel.source == "dawid-skene"
    assert np.isnan(rel.variance).all()


@pytest.mark.parametrize("text,match", [
    ("worker,accuracy\nw1,1.5\n", r"\[0, 1\]"),
    ("worker,accuracy\nw1,high\n", "a number"),
    ("worker,skill\nw1,0.5\n", "column accuracy"),
    ("worker,accuracy\nw1,\n", "at least one"),
])
def test_read_accuracies_bad_input(tmp_path, text, match):
    p = tmp_path / "a.csv"
    p.write_text(text)
    with pytest.raises(InputError, match=match):
        read_accuracies(p)


def test_gold_estimates_bad_input():
    with pytest.raises(InputError, match="correct"):
        gold_estimates(np.array([3]), np.array([2]), 2)
    with pytest.raises(InputError, match="n_classes"):
        gold_estimates(np.array([1]), np.array([2]), 1)


def test_cross_fitted_vote_uses_held_out_gold():
    from crowdopt.crowd.reliability import cross_fitted_weighted_vote
    rng = np.random.default_rng(0)
    n_t = 40
    truth = rng.integers(2, size=n_t)
    tasks, workers, labels = [], [], []
    for t in range(n_t):
        for w, p in enumerate((0.9, 0.6, 0.6)):
            tasks.append(t), workers.append(w)
            labels.append(int(truth[t] if rng.random() < p else 1 - truth[t]))
    tb = from_arrays(tasks, workers, labels, classes=[0, 1])
    gold = gold_from_arrays(tb, list(range(n_t)), truth.tolist())
    r = cross_fitted_weighted_vote(tb, gold, folds=2, seed=1)
    assert r.posteriors.shape == (n_t, 2) and r.method == "wmv-log-odds"
    np.testing.assert_allclose(r.posteriors.sum(1), 1.0)
    # each fold is voted with accuracies from the other fold's gold only
    from crowdopt.crowd.aggregate import weighted_majority_vote, weights_from_accuracy
    fold = np.random.default_rng(1).permutation(n_t) % 2
    for f in (0, 1):
        acc = from_gold(tb, gold, tasks=np.flatnonzero(fold != f)).accuracy
        ref = weighted_majority_vote(tb, weights_from_accuracy(acc, 2))
        np.testing.assert_allclose(r.posteriors[fold == f], ref.posteriors[fold == f])
    with pytest.raises(InputError, match="folds"):
        cross_fitted_weighted_vote(tb, gold, folds=1)
