"""CL-TAP instance, evaluator, accuracy model and generator (paper 003, digest 003 P1-P4)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from crowdopt.errors import InputError
from crowdopt.problems import cltap as P


def test_weight_reference_values():  # digest 1.5
    ps = [0.55, 0.6, 0.7, 0.75, 0.8, 0.9, 0.99, 0.999]
    ref = [0.0201, 0.0811, 0.3389, 0.5493, 0.8318, 1.7578, 4.5032, 6.8929]
    assert np.allclose(P.weight(ps), ref, atol=5e-5)


def test_weight_properties():  # P4
    p = np.linspace(0.5, 0.999, 200)
    w = P.weight(p)
    assert w[0] == 0.0 and np.all(np.diff(w) > 0)
    assert np.allclose(P.weight(1 - p[1:]), w[1:])


def _instance(p, t, b):
    return P.make_instance(p, t, b)


def test_evaluator_objective_and_violations():
    inst = P.example()
    z = np.array([[2, 1, 0], [1, 2, -1]])
    ev = P.evaluate(inst, P.CltapSolution(z))
    assert ev.feasible and ev.objective == pytest.approx(0.569373, abs=1e-6)
    assert ev.extra["labels"] == 5
    over = np.array([[2, 1, 0], [1, 2, 0]])  # 6 labels > b = 5
    assert not P.evaluate(inst, P.CltapSolution(over)).feasible
    gap = np.array([[2, -1, 0], [1, -1, -1]])  # skips iteration 2
    ev = P.evaluate(inst, P.CltapSolution(gap))
    assert not ev.feasible and "prefix" in ev.violations[0]
    twice = np.array([[1, 1, -1], [0, 2, -1]])
    ev = P.evaluate(inst, P.CltapSolution(twice))
    assert not ev.feasible and "twice" in ev.violations[0]
    bad = np.array([[3, -1, -1], [0, -1, -1]])
    assert not P.evaluate(inst, P.CltapSolution(bad)).feasible
    shape = P.evaluate(inst, P.CltapSolution(np.zeros((1, 3), int)))
    assert not shape.feasible and shape.objective == -math.inf


def test_empty_assignment_is_zero():
    inst = P.example()
    ev = P.evaluate(inst, P.empty_solution(inst))
    assert ev.feasible and ev.objective == 0.0


@pytest.mark.parametrize("doc,field", [
    ({"t": 3, "b": 5}, "p"),
    ({"t": 3, "b": 5, "p": [[0.6, 1.2]]}, "p[0][1]"),
    ({"t": 1, "b": 5, "p": [[0.6, 0.7]]}, "p"),
    ({"t": 3, "b": -1, "p": [[0.6]]}, "b"),
    ({"t": 0, "b": 1, "p": [[0.6]]}, "t"),
    ({"t": 3, "b": 1, "p": [[0.6]], "extra": 1}, "extra"),
    ({"t": 3, "b": 1, "p": [[0.6], [0.7, 0.8]]}, "p[1]"),
])
def test_from_dict_errors(doc, field):
    with pytest.raises(InputError) as err:
        P.from_dict(doc)
    assert err.value.field == field


def test_clipping_and_roundtrip():
    inst = P.from_dict({"t": 2, "b": 2, "p": [[1.0, 0.6], [0.3, 0.0]]})
    assert inst.p.max() == P.P_MAX and inst.p.min() == pytest.approx(1 - P.P_MAX)
    assert inst.meta["clipped"] == 2 and np.all(np.isfinite(inst.phi))
    again = P.from_dict(P.to_dict(inst))
    assert np.array_equal(again.p, inst.p) and again.b == 2
    sol = P.CltapSolution(np.array([[0, 1], [1, -1]]))
    back = P.solution_from_dict(inst, P.solution_to_dict(inst, sol))
    assert np.array_equal(back.task_of, sol.task_of)
    with pytest.raises(InputError):
        P.solution_from_dict(inst, {"task_of": [[0, 2], []]})


def _enumerate(logits, ps, tie=0.5):
    """Direct 2^n enumeration of eq. (6) with the tie = 1/2 convention."""
    acc = 0.0
    for z in itertools.product([1, -1], repeat=len(ps)):
        pr = np.prod([p if zi == 1 else 1 - p for zi, p in zip(z, ps)])
        s = sum(zi * lv for zi, lv in zip(z, logits))
        acc += pr * (1.0 if s > 1e-12 else tie if abs(s) <= 1e-12 else 0.0)
    return acc


def test_expected_accuracy_tie_convention():  # digest 1.4 caveat: two labels p = 0.7 -> 0.70
    assert P.workplan_accuracy(P.logit([0.7, 0.7]), [0.7, 0.7]) == pytest.approx(0.7)
    assert P.workplan_accuracy([], []) == 0.5
    assert P.workplan_accuracy(P.logit([0.8]), [0.8]) == pytest.approx(0.8)


def test_expected_accuracy_matches_enumeration():  # P2
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(1, 7))
        ps = rng.choice([0.55, 0.6, 0.7, 0.8, 0.9], size=n) if rng.random() < 0.5 \
            else rng.uniform(0.5, 0.99, n)
        ls = P.logit(ps)
        assert P.workplan_accuracy(ls, ps) == pytest.approx(_enumerate(ls, ps), abs=1e-12)


def test_posterior_is_logit_weighted_vote():  # P1: Bayes with prior 1/2
    rng = np.random.default_rng(4)
    for _ in range(30):
        ps = rng.uniform(0.5, 0.95, 4)
        z = rng.choice([-1, 1], 4)
        like_pos = np.prod(np.where(z == 1, ps, 1 - ps))
        like_neg = np.prod(np.where(z == -1, ps, 1 - ps))
        post = like_pos / (like_pos + like_neg)
        assert math.log(post / (1 - post)) == pytest.approx(float(P.logit(ps) @ z))


def test_correctness_dominates_linear_correctness():  # P3: c(W) >= c'(W) >= 0
    rng = np.random.default_rng(5)
    for _ in range(100):
        ps = rng.uniform(0.5, 0.99, int(rng.integers(1, 6)))
        ls = P.logit(ps)
        c = 0.0
        for z in itertools.product([1, -1], repeat=len(ps)):
            pr = np.prod([p if zi == 1 else 1 - p for zi, p in zip(z, ps)])
            c += pr * max(0.0, float(np.dot(z, ls)))
        assert c >= P.weight(ps).sum() - 1e-12 >= -1e-12


def test_simulated_error_matches_exact_expectation():
    inst = P.generate(2, t=4000, a=10, trend="inc", K=400, b=8000)
    from crowdopt.solvers.cltap_cbp import cbp

    sol = cbp(inst)
    exact = P.classification_error(inst, sol)
    sims = [P.simulate_error(inst, sol, seed=s) for s in range(5)]
    se = math.sqrt(exact * (1 - exact) / (5 * inst.t))
    assert abs(np.mean(sims) - exact) < 4 * se + 1e-3


def test_beta_parameters():  # digest 3.6 table
    assert P.beta_params(0.7, 0.14) == pytest.approx((6.80, 2.914), abs=1e-3)
    assert P.beta_params(0.6, 0.14) == pytest.approx((6.747, 4.498), abs=1e-3)
    assert P.beta_params(0.9, 0.03) == pytest.approx((89.1, 9.9), abs=1e-3)
    assert P.beta_params(0.15, 0.14) == pytest.approx((0.826, 4.679), abs=1e-3)


@pytest.mark.parametrize("trend", ["dec", "inc", "nonmono"])
@pytest.mark.parametrize("tau", ["mixed", 100, 0.25])
def test_generator(trend, tau):
    a = P.generate(7, t=60, a=7, trend=trend, tau=tau)
    b = P.generate(7, t=60, a=7, trend=trend, tau=tau)
    assert np.array_equal(a.p, b.p) and a.b == 120 and a.K == 60
    assert np.all(np.isfinite(a.p)) and a.p.min() >= 0.5 and a.p.max() <= P.P_MAX
    d = np.diff(a.p, axis=1)
    if trend == "dec":
        assert np.all(d <= 1e-12)
    elif trend == "inc":
        assert np.all(d >= -1e-12)


def test_generator_params_validated():
    with pytest.raises(InputError):
        P.generate(0, trend="up")
    with pytest.raises(InputError):
        P.generate(0, t=5, K=6)
    assert P.generate(0, t=10, a=2, K=4, b=7).K == 4


def test_power_curve_is_overflow_free():
    p = P.power_curve(np.array([0.6, 0.6]), 1.0, np.array([1700.0, 1.0]), np.array([100.0, 1.0]),
                      2000)
    assert np.all(np.isfinite(p))
    assert p[1, 0] == pytest.approx(0.6) and p[1, 1] == pytest.approx(1.0)


def test_linear_correctness_per_workplan_matches_per_task():
    from crowdopt.solvers.cltap_cbp import cbp

    inst = P.generate(9, t=15, a=4, trend="nonmono")
    sol = cbp(inst)
    per_task = P.task_correctness(inst, sol)
    per_plan = [P.linear_correctness(inst, w) for w in sol.workplans(inst.t)]
    assert np.allclose(per_task, per_plan)
    assert P.linear_correctness(P.example(), [(0, 2), (1, 0)]) == pytest.approx(
        float(P.weight(0.8) + P.weight(0.55)))
