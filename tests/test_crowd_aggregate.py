"""Aggregators: hand-computed fixtures, properties, tie rules, bad input, real-data MV figures."""

from __future__ import annotations

import numpy as np
import pytest

from crowdopt.crowd.aggregate import (
    accuracy,
    break_ties,
    count_matrix,
    dawid_skene,
    majority_vote,
    one_coin_em,
    weighted_majority_vote,
    weights_from_accuracy,
)
from crowdopt.crowd.tables import from_arrays, gold_from_arrays
from crowdopt.errors import InputError


@pytest.fixture
def tiny():
    # t1: a, a, b (w1 w2 w3);  t2: b (w1), a (w2) -> a tie
    return from_arrays(["t1", "t1", "t1", "t2", "t2"], ["w1", "w2", "w3", "w1", "w2"],
                       ["a", "a", "b", "b", "a"])


@pytest.fixture
def two():
    # t1: w1=0, w2=0;  t2: w1=1, w2=0  (hand-computed EM steps below)
    return from_arrays(["t1", "t1", "t2", "t2"], ["w1", "w2", "w1", "w2"], [0, 0, 1, 0])


def test_majority_vote_hand_values(tiny):
    r = majority_vote(tiny, ties="first")
    assert r.labels.tolist() == [0, 0]
    np.testing.assert_allclose(r.posteriors, [[2 / 3, 1 / 3], [0.5, 0.5]])
    # skills: mean posterior of own answers: w1 (2/3 + 1/2)/2, w2 (2/3 + 1/2)/2, w3 1/3
    np.testing.assert_allclose(r.skills, [7 / 12, 7 / 12, 1 / 3])
    gold = gold_from_arrays(tiny, ["t1", "t2"], ["a", "b"])
    assert accuracy(r, gold) == pytest.approx(0.75)          # tie split: 1 + 1/2
    assert accuracy(r, gold, ties="labels") == pytest.approx(0.5)
    assert r.iterations == 0 and r.method == "mv"
    assert r.label_values(tiny).tolist() == ["a", "a"]


def test_random_ties_are_seeded_and_reach_every_tied_class(tiny):
    seen = {int(majority_vote(tiny, seed=s).labels[1]) for s in range(20)}
    assert seen == {0, 1}
    assert majority_vote(tiny, seed=3).labels.tolist() == majority_vote(tiny, seed=3).labels.tolist()
    assert all(majority_vote(tiny, seed=s).labels[0] == 0 for s in range(20))  # no tie on t1


def test_break_ties_tolerance():
    scores = np.array([[0.1 + 0.2, 0.3, 0.0], [1.0, 2.0, 2.0]])
    assert break_ties(scores, ties="first").tolist() == [0, 1]


def test_weighted_vote_hand_values(tiny):
    r = weighted_majority_vote(tiny, np.array([1.0, 1.0, 3.0]), ties="first")
    assert r.labels.tolist() == [1, 0]          # t1: a=2 < b=3; t2: 1 vs 1 tie -> first
    r2 = weighted_majority_vote(tiny, np.array([2.0, 1.0, 4.0]))
    assert r2.labels.tolist() == [1, 1]         # t1: a=3 < b=4; t2: b=2 > a=1
    np.testing.assert_allclose(r2.posteriors[1], [1 / (1 + np.e), np.e / (1 + np.e)])
    flip = weighted_majority_vote(tiny, np.array([0.0, 0.0, -1.0]))
    assert flip.labels[0] == 0                  # a negative weight votes against its label


def test_weights_from_accuracy_values():
    acc = np.array([0.9, 0.5, 1.0, np.nan])
    w = weights_from_accuracy(acc, 2, "log-odds")
    np.testing.assert_allclose(w[:3], [np.log(9), 0.0, np.log(99)])
    assert w[3] == pytest.approx(np.log(0.8 / 0.2))         # NaN -> mean known accuracy 0.8
    np.testing.assert_allclose(weights_from_accuracy(acc[:3], 2, "linear"), [0.8, 0.0, 1.0])
    np.testing.assert_allclose(weights_from_accuracy([0.25], 4, "log-odds"), [0.0], atol=1e-12)
    np.testing.assert_allclose(weights_from_accuracy([0.25], 4, "linear"), [0.0])


def test_dawid_skene_one_iteration_by_hand(two):
    r = dawid_skene(two, max_iter=1, smoothing=0.0, ties="first")
    # M-step from MV posteriors t1 [1, 0], t2 [.5, .5]
    np.testing.assert_allclose(r.confusion[0], [[2 / 3, 1 / 3], [0, 1]])
    np.testing.assert_allclose(r.confusion[1], [[1, 0], [1, 0]])
    np.testing.assert_allclose(r.priors, [0.75, 0.25])
    # E-step: t1 [.75*2/3*1, 0] -> [1, 0]; t2 [.75*1/3*1, .25*1*1] -> [.5, .5]
    np.testing.assert_allclose(r.posteriors, [[1, 0], [0.5, 0.5]])
    np.testing.assert_allclose(r.skills, [0.75, 0.75])
    # one objective value cannot show convergence; the next iteration repeats it and stops
    assert r.iterations == 1 and not r.converged
    r2 = dawid_skene(two, max_iter=5, smoothing=0.0, ties="first")
    assert r2.iterations == 2 and r2.converged and r2.objective[0] == r2.objective[1]


def test_one_coin_one_iteration_by_hand(two):
    r = one_coin_em(two, max_iter=1, smoothing=0.0)
    np.testing.assert_allclose(r.skills, [0.75, 0.75])   # (1 + .5) / 2 each
    # t1: [.75*.75, .25*.25] / sum = [.9, .1];  t2: [.25*.75, .75*.25] -> [.5, .5]
    np.testing.assert_allclose(r.posteriors, [[0.9, 0.1], [0.5, 0.5]])
    np.testing.assert_allclose(r.priors, [0.5, 0.5])


def test_gold_is_clamped(two):
    gold = gold_from_arrays(two, ["t2"], [1])
    for f in (dawid_skene, one_coin_em):
        r = f(two, gold=gold, max_iter=5)
        np.testing.assert_array_equal(r.posteriors[1], [0.0, 1.0])
        assert r.labels[1] == 1


def random_instance(rng, n_t=40, n_w=6, n_c=3, density=0.7):
    truth = rng.integers(n_c, size=n_t)
    conf = rng.dirichlet(np.ones(n_c), size=(n_w, n_c)) * 0.5
    conf[:, np.arange(n_c), np.arange(n_c)] += 0.5
    tasks, workers, labels = [], [], []
    for t in range(n_t):
        for w in range(n_w):
            if rng.random() < density or w == 0:
                tasks.append(f"t{t}")
                workers.append(f"w{w}")
                labels.append(int(rng.choice(n_c, p=conf[w, truth[t]])))
    return truth, conf, (tasks, workers, labels)


def test_dawid_skene_with_true_confusion_and_no_iterations_is_bayes_posterior():
    rng = np.random.default_rng(1)
    _, conf, rows = random_instance(rng)
    tb = from_arrays(*rows, classes=[0, 1, 2])
    c = conf[[int(w[1:]) for w in tb.worker_ids]]
    priors = np.array([0.5, 0.3, 0.2])
    r = dawid_skene(tb, init_confusion=c, init_priors=priors, max_iter=0)
    expect = np.tile(priors, (tb.n_tasks, 1))
    for t, w, lab in zip(tb.task, tb.worker, tb.label, strict=True):
        expect[t] *= c[w, :, lab]
    expect /= expect.sum(1, keepdims=True)
    np.testing.assert_allclose(r.posteriors, expect, rtol=1e-10)
    assert r.iterations == 0
    acc = np.array([0.8, 0.6, 0.7, 0.9, 0.55, 0.65])[: tb.n_workers]
    oc = one_coin_em(tb, init_accuracy=acc, max_iter=0)
    off = (1 - acc) / 2
    expect = np.full((tb.n_tasks, 3), 1 / 3)
    for t, w, lab in zip(tb.task, tb.worker, tb.label, strict=True):
        expect[t] *= np.where(np.arange(3) == lab, acc[w], off[w])
    expect /= expect.sum(1, keepdims=True)
    np.testing.assert_allclose(oc.posteriors, expect, rtol=1e-10)


def _all_methods(tb):
    w = np.array([0.5 + 0.25 * int(str(x)[1:]) for x in tb.worker_ids.tolist()])  # by id
    return {
        "mv": majority_vote(tb),
        "wmv": weighted_majority_vote(tb, w),
        "one-coin": one_coin_em(tb),
        "dawid-skene": dawid_skene(tb),
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_permuting_rows_and_ids_does_not_change_results(seed):
    rng = np.random.default_rng(seed)
    _, _, (tasks, workers, labels) = random_instance(rng)
    base = from_arrays(tasks, workers, labels)
    perm = rng.permutation(len(tasks))
    shuffled = from_arrays([tasks[i] for i in perm], [workers[i] for i in perm],
                           [labels[i] for i in perm])
    order = shuffled.task_index(base.task_ids.tolist())
    worder = shuffled.worker_index(base.worker_ids.tolist())
    a, b = _all_methods(base), _all_methods(shuffled)
    for m in a:
        np.testing.assert_allclose(b[m].posteriors[order], a[m].posteriors, atol=1e-9,
                                   err_msg=m)
        np.testing.assert_allclose(b[m].skills[worder], a[m].skills, atol=1e-9, err_msg=m)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_one_perfect_worker_recovers_the_truth(seed):
    """A worker who is always right fixes every label: a log-odds weighted vote with its
    accuracy outvotes the rest, and for EM the truth is a fixed point - once the worker's
    confusion is the identity (smoothing 0) every iteration keeps it and the true labels.
    (EM from the MV start can stop in another fixed point: with five 0.6-accuracy workers
    on 60 tasks, about 1 seed in 4 ends at 0.95-0.98 accuracy.)"""
    rng = np.random.default_rng(seed)
    n_t, n_c = 60, 3
    truth = rng.integers(n_c, size=n_t)
    tasks, workers, labels = [], [], []
    for t in range(n_t):
        tasks.append(t), workers.append("perfect"), labels.append(int(truth[t]))
        for w in range(5):
            lab = truth[t] if rng.random() < 0.6 else rng.integers(n_c)
            tasks.append(t), workers.append(w), labels.append(int(lab))
    tb = from_arrays(tasks, workers, labels, classes=range(n_c))
    gold = gold_from_arrays(tb, list(range(n_t)), truth.tolist())
    acc = np.full(tb.n_workers, 0.6)
    acc[0] = 1.0
    wmv = weighted_majority_vote(tb, weights_from_accuracy(acc, n_c, "log-odds"))
    assert accuracy(wmv, gold, ties="labels") == 1.0
    conf = np.full((tb.n_workers, n_c, n_c), 0.2)
    conf[:, np.arange(n_c), np.arange(n_c)] = 0.6
    conf[0] = np.eye(n_c)
    ds = dawid_skene(tb, init_confusion=conf, smoothing=0.0, max_iter=20)
    oc = one_coin_em(tb, init_accuracy=np.where(acc == 1, 1 - 1e-15, acc), smoothing=0.0,
                     max_iter=20)
    for r in (ds, oc):
        assert accuracy(r, gold, ties="labels") == 1.0, r.method
        assert r.skills[0] == pytest.approx(1.0, abs=1e-9)
        assert r.iterations >= 1


def test_em_reports_iterations_and_stops_at_tolerance():
    rng = np.random.default_rng(5)
    _, _, rows = random_instance(rng, n_t=80)
    tb = from_arrays(*rows)
    r = dawid_skene(tb, tol=1e-8, max_iter=500)
    assert r.converged and 1 <= r.iterations < 500
    assert len(r.log_likelihood) == r.iterations
    capped = dawid_skene(tb, tol=0.0, max_iter=3)
    assert capped.iterations == 3 and not capped.converged
    lls = np.array(dawid_skene(tb, smoothing=0.0, max_iter=30, tol=0).log_likelihood)
    assert np.all(np.diff(lls) >= -1e-8)       # EM never decreases the likelihood


def test_count_matrix_and_tasks_without_labels(tiny):
    n = count_matrix(tiny).toarray()
    assert n.shape == (2, 3 * 2)
    assert n[0].tolist() == [1, 0, 1, 0, 0, 1]
    sub = tiny.subset(tasks=[0])
    for r in _all_methods(sub).values():
        np.testing.assert_allclose(r.posteriors.sum(1), 1.0)
    assert majority_vote(sub).posteriors[1].tolist() == [0.5, 0.5]


@pytest.mark.parametrize("call,match", [
    (lambda tb: majority_vote(tb, ties="coin"), "ties"),
    (lambda tb: weighted_majority_vote(tb, np.ones(2)), "weights"),
    (lambda tb: weighted_majority_vote(tb, np.array([1, np.nan, 1])), "weights"),
    (lambda tb: dawid_skene(tb, max_iter=-1), "max_iter"),
    (lambda tb: dawid_skene(tb, tol=float("nan")), "tol"),
    (lambda tb: dawid_skene(tb, init_confusion=np.eye(3)), "init_confusion"),
    (lambda tb: dawid_skene(tb, init_confusion=np.ones((2, 2))), "init_confusion"),
    (lambda tb: dawid_skene(tb, init_priors=[0.5, 0.5]), "init_priors"),
    (lambda tb: dawid_skene(tb, priors="guess"), "priors"),
    (lambda tb: one_coin_em(tb, init_accuracy=[1.0, 0.5, 0.5]), "init_accuracy"),
    (lambda tb: weights_from_accuracy([1.5], 2), "accuracy"),
    (lambda tb: weights_from_accuracy([0.5], 2, "cubic"), "weighting"),
    (lambda tb: majority_vote(tb.subset(np.zeros(5, dtype=bool))), "at least one label"),
])
def test_bad_input_gives_one_line_error(tiny, call, match):
    with pytest.raises(InputError, match=match) as e:
        call(tiny)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name,expected", [("rte", 0.8969), ("temp", 0.9361),
                                           ("bluebirds", 0.7593)])
def test_majority_vote_matches_data_readme(data_dir, name, expected):
    from crowdopt.crowd.datasets import load_table
    tb, gold = load_table(name)
    assert round(accuracy(majority_vote(tb), gold), 4) == expected
    assert accuracy(dawid_skene(tb), gold) >= expected


def test_break_ties_random_resolves_only_tied_rows_with_the_whole_draw():
    """Random tie-breaking draws one uniform per cell (the seed's whole stream) and picks the
    tied top cell with the largest draw; untied rows keep their argmax. Checked against the
    direct formula on random score matrices full of ties."""
    rng = np.random.default_rng(2)
    for trial in range(40):
        scores = rng.integers(0, 3, size=(int(rng.integers(1, 60)), int(rng.integers(1, 6))))
        scores = scores.astype(float)
        seed = int(rng.integers(0, 1000))
        top = scores >= scores.max(1, keepdims=True) - 1e-9
        noise = np.random.default_rng(seed).random(scores.shape)
        want = np.argmax(np.where(top, noise, -1.0), axis=1)
        assert break_ties(scores, ties="random", seed=seed).tolist() == want.tolist(), trial
