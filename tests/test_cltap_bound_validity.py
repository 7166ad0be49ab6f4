"""CL-TAP: every new bound >= OPT (brute force / MILP at gap 0) on random small
instances of all three trends; the new constructions are feasible and the best-of `fast` is
never worse than CBP; the local search stops early only on a proof; verdicts; the default
instance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crowdopt
from crowdopt.problems import cltap as P
from crowdopt.problems.cltap import SPEC
from crowdopt.registry import RunOptions
from crowdopt.results import verdict_text
from crowdopt.solvers import cltap_bounds as CB
from crowdopt.solvers.cltap import brute_force, solve_milp
from crowdopt.solvers.cltap_cbp import cbp
from crowdopt.solvers.cltap_colgen import closed_form_bound
from crowdopt.solvers.cltap_construct import alloc_lpt, cbp_phi, constructions, fast
from crowdopt.solvers.cltap_exact import solve_head_cover
from crowdopt.solvers.cltap_search import local_search


def _all_bounds(inst: P.CltapInstance) -> dict[str, float]:
    cov = CB.covering_bound(inst).value
    out = {"lp": closed_form_bound(inst), "covering": cov,
           "covering-dp": CB.covering_bound(inst, exact=True).value,
           "counting": CB.counting_bound(inst).value,
           "pairing": CB.pairing_bound(inst).value,
           "first-labels": CB.first_labels_bound(inst).value,
           "first-labels-wide": CB.first_labels_bound(inst, shares=(0.25, 0.5, 0.75, 1.0),
                                                      lambdas=(0.1, 1.0, 10.0)).value}
    hi = min(out.values())
    lo = P.evaluate(inst, cbp(inst)).objective
    out["config-lp"] = CB.config_lp_bound(inst, lo=lo, hi=hi, time_limit=10.0).value
    out["config-lp-from-0"] = CB.config_lp_bound(inst, lo=0.0, hi=hi, time_limit=10.0,
                                                 grid=40).value
    out["head-cover"] = solve_head_cover(inst, RunOptions(time_limit=30.0)).bound
    out["config-lp-method"] = SPEC.method("config-lp").run(inst, RunOptions(time_limit=10.0)).bound
    return out


@st.composite
def tiny_instances(draw):
    t = draw(st.integers(2, 4))
    a = draw(st.integers(1, 3))
    trend = draw(st.sampled_from(["dec", "inc", "nonmono", "ties"]))
    seed = draw(st.integers(0, 10_000))
    b = draw(st.integers(0, 3 * t))
    if trend == "ties":  # ties and the p = 1/2 boundary, any shape
        rng = np.random.default_rng(seed)
        K = draw(st.integers(1, t))
        p = rng.choice([0.5, 0.6, 0.8, 0.9], size=(a, K))
        return P.make_instance(p, t, b)
    return P.generate(seed, t=t, a=a, trend=trend, b=b, K=draw(st.integers(0, t)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=tiny_instances())
def test_every_bound_is_at_least_the_brute_force_optimum(inst):
    opt = brute_force(inst)[0]
    for name, v in _all_bounds(inst).items():
        assert v >= opt - 1e-7 * (1 + opt), (name, v, opt)
    for name, sol in constructions(inst).items():
        ev = P.evaluate(inst, sol)
        assert ev.feasible, name
        assert ev.objective <= opt + 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("trend", ["dec", "inc", "nonmono"])
def test_every_bound_is_at_least_the_milp_optimum(trend):
    for seed in range(3):
        inst = P.generate(seed, t=6, a=3, trend=trend)
        out = solve_milp(inst, RunOptions(time_limit=60, mip_rel_gap=0.0))
        assert out.status.value == "optimal"
        opt = P.evaluate(inst, out.solution).objective
        for name, v in _all_bounds(inst).items():
            assert v >= opt - 1e-7 * (1 + opt), (trend, seed, name, v, opt)


def test_covering_bound_dec_is_machine_covering_formula():
    inst = P.generate(3, t=30, a=5, trend="dec")
    top = np.sort(inst.phi.ravel())[::-1][: inst.b]
    formula = min((top.sum() - top[:k].sum()) / (inst.t - k) for k in range(inst.t))
    assert CB.covering_bound(inst).value == pytest.approx(formula, rel=1e-8)
    assert CB.covering_bound(inst).value <= closed_form_bound(inst) + 1e-12


def test_dp_never_looser_than_lp_relaxation():
    for seed in range(4):
        inst = P.generate(seed, t=15, a=4, trend="inc")
        assert (CB.covering_bound(inst, exact=True).value
                <= CB.covering_bound(inst).value * (1 + 1e-9))


def test_constructions_feasible_and_fast_at_least_cbp():
    for trend in ("dec", "inc", "nonmono"):
        inst = P.generate(1, t=40, a=6, trend=trend)
        for sol in (cbp_phi(inst), alloc_lpt(inst)):
            assert P.evaluate(inst, sol).feasible
        f = P.evaluate(inst, fast(inst, time_limit=0.3)).objective
        assert f >= P.evaluate(inst, cbp(inst)).objective - 1e-12


def test_local_search_stops_early_only_on_a_proof():
    inst = P.generate(2, t=20, a=5, trend="dec")  # CBP is optimal here (covering bound)
    stats: dict = {}
    ub = CB.covering_bound(inst).value
    # no clock: only the target (or the step cap) can end these searches
    local_search(inst, cbp(inst), time_limit=math.inf, max_steps=10_000, target=ub, stats=stats)
    assert stats["stop"].startswith("target") and stats["steps"] == 0
    inst = P.generate(0, t=20, a=5, trend="inc")
    stats = {}
    local_search(inst, cbp(inst), time_limit=math.inf, max_steps=60, stats=stats)
    assert stats["stop"] == "step cap" and stats["steps"] == 60  # no proof: no early stop


@pytest.mark.parametrize("seed", [0, 2])
def test_certify_default_dec_t20_is_proven_optimal(seed):
    inst = P.generate(seed, t=20, a=5, trend="dec")
    # work budgets, no clock: the proof cannot depend on the machine's load
    cert = crowdopt.certify(inst, max_steps=20, max_rounds=5, colgen_rounds=5)
    assert cert.certified and cert.proven_optimal and cert.gap == 0.0
    assert "proven optimal" in cert.verdict


def test_certify_names_the_tightest_bound():
    inst = P.generate(0, t=20, a=5, trend="inc")
    cert = crowdopt.certify(inst, time_limit=0.5)
    bounds = [r for r in cert.details["runs"] if r.get("bound") is not None]
    best = min(r["bound"] for r in bounds)
    assert cert.bound == pytest.approx(best)
    assert cert.bound < closed_form_bound(inst)
    assert cert.bound_source.split(":")[0] in {"covering", "covering-dp", "counting", "pairing",
                                               "first-labels", "config-lp", "config-branch",
                                               "head-cover"}


def test_verdicts():
    assert "proven optimal" in verdict_text(True, (), True, 1.0, 0.0)
    assert "n/a" in verdict_text(True, (), False, 0.0, 1e-10)
    assert "%" not in verdict_text(True, (), False, 0.0, 1e-10)
    line = verdict_text(True, (), False, 0.3, 1.0)
    assert "warning" in line and "\n" not in line
    assert "warning" not in verdict_text(True, (), False, 0.7, 1.0)


def test_default_instance_nondegenerate_and_within_the_exact_guard():
    inst = P.generate(0)
    assert SPEC.method("milp-compact").applicable(inst) is None
    assert P.evaluate(inst, cbp(inst)).objective > 0  # OPT > 0


@pytest.mark.slow
def test_default_instance_compare_runs_every_method():
    inst = P.generate(0)
    comp = crowdopt.compare(inst, time_limit=5)  # cbp+ls searches for the whole limit
    statuses = {r.algorithm: r.status.value for r in comp}
    # head-cover proves this instance in milliseconds; the compact MILP takes 1-8 s of CPU
    # (its branch-and-bound depends on the column order HiGHS sees) and may stop at 5 s
    assert statuses.pop("head-cover") == "optimal"
    assert statuses.pop("milp-compact") in ("optimal", "time_limit")
    assert statuses.pop("brute-force") == "skipped"  # t <= 4, a <= 3 only
    assert set(statuses.values()) == {"feasible"}
    assert comp.bound > 0 and comp.proven


def test_real_data_curves_and_errors(data_dir):
    from crowdopt.experiments import cltap_repro as R

    Pm, t, kept = R.real_curves("bluebirds")
    assert t == 108 and kept == 39 and Pm.shape == (39, 108)
    assert Pm.min() >= 0.5 and Pm.max() <= 1.0
    out = R.real_errors("bluebirds", 2.0)
    assert out["cbp"] <= min(out[p] for p in R.POLICIES[1:]) + 1e-12


def test_config_lp_round_budget_stops_it_with_a_valid_bound():
    """max_rounds caps the configuration LP's rounds (the deterministic budget): it stops on
    the cap, says so, and its bound stays at or above the optimum."""
    inst = P.generate(0, t=50, a=3, trend="inc")
    hi = CB.covering_bound(inst).value
    res = CB.config_lp_bound(inst, lo=0.0, hi=hi, time_limit=1e6, max_rounds=4)
    assert res.details["rounds"] <= 4 and res.details["stopped"] != "time limit"
    assert res.value <= hi and res.value >= 1.257 - 1e-6  # OPT (head-cover, digest notes)


def test_first_labels_bound_without_input_bound_names_the_covering_bound():
    """Run alone (no `hi`), a first-labels bound that refutes nothing, or does not apply, is
    the covering bound and says so, not an input bound nobody gave."""
    one = P.make_instance(np.array([[0.9, 0.8]]), 2, 2)  # a = 1: does not apply
    cov = CB.covering_bound(one)
    res = CB.first_labels_bound(one)
    assert res.value == cov.value and res.source.startswith(cov.source)
    assert "input bound" not in res.source
    assert CB.first_labels_bound(one, hi=cov.value).source.startswith("input bound")


def _hull_lp(vals: np.ndarray, b: int) -> float:
    """The knapsack LP by the concave-hull greedy, row by row (the reference of `mckp_lp`)."""
    from crowdopt.solvers.cltap_colgen import upper_hull_segments

    segs = [s for row in vals for s in upper_hull_segments(np.concatenate([[0.0], np.cumsum(row)]))]
    left, tot = float(b), 0.0
    for slope, length in sorted(segs, key=lambda s: -s[0]):
        if left <= 0 or slope <= 0:
            break
        tot += slope * min(left, length)
        left -= min(left, length)
    return tot


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), a=st.integers(1, 6), K=st.integers(1, 9),
       shape=st.sampled_from(["any", "ties", "rising-falling"]), extra=st.integers(0, 3))
def test_knapsack_lp_is_exact_on_rows_of_any_shape(seed, a, K, shape, extra):
    """`mckp_lp` on non-monotone rows (the Lagrangian dual of the budget row) equals the
    concave-hull greedy, never exceeds the dual at any multiplier, and its lengths fit; asked
    whether the LP is below a target, it answers as the exact value does."""
    rng = np.random.default_rng(seed)
    vals = {"any": rng.random((a, K)), "ties": rng.choice([0.0, 0.5, 1.0, 2.0], size=(a, K)),
            "rising-falling": np.abs(np.sin(np.arange(K) * rng.random((a, 1)) * 3))}[shape]
    b = int(rng.integers(0, a * K + 1)) + extra
    val, n = CB.mckp_lp(vals, b)
    ref = _hull_lp(vals, b)
    assert val == pytest.approx(ref, rel=1e-9, abs=1e-12)
    C = np.concatenate([np.zeros((a, 1)), np.cumsum(vals, axis=1)], axis=1)
    for beta in np.linspace(0.0, vals.max() + 0.1, 23):
        assert val <= beta * b + (C - beta * np.arange(K + 1)).max(axis=1).sum() + 1e-9
    assert n.sum() <= b + 1e-9 and (n >= 0).all() and (n <= K).all()
    for tgt in (ref * (1 - 1e-3) - 1e-9, ref * (1 + 1e-3) + 1e-9):  # "LP < target?" early
        got, _ = CB.mckp_lp(vals, b, target=tgt)
        assert got >= ref - 1e-9 * (1 + ref) and (got < tgt) == (ref < tgt)


def _golden_knapsack(vals, b, kinds=None, target=None):
    """The knapsack LP as the first-labels bound computed it before: `_golden_prefix`."""
    return _golden_prefix(np.concatenate([np.zeros((vals.shape[0], 1)), np.cumsum(vals, axis=1)],
                                         axis=1), b)


def _golden_prefix(V, b, target=None, iters=30):
    """The first-labels bound's former budget-row multiplier: a golden-section search on the
    Lagrangian of prefix sums V (value at the best multiplier seen, the allocation there)."""
    import math

    nn = np.arange(V.shape[1], dtype=float)

    def f(beta):
        return beta * b + float((V - beta * nn).max(axis=1).sum())

    r = 0.5 * (math.sqrt(5.0) - 1.0)
    lo, hi = 0.0, float(np.abs(np.diff(V, axis=1)).max(initial=0.0)) + 1.0
    m1, m2 = hi - r * (hi - lo), lo + r * (hi - lo)
    f1, f2 = f(m1), f(m2)
    best, arg = min((f(lo), lo), (f1, m1), (f2, m2))
    for _ in range(iters):
        if f1 < f2:
            hi, m2, f2 = m2, m1, f1
            m1 = hi - r * (hi - lo)
            f1 = f(m1)
            best, arg = min((best, arg), (f1, m1))
        else:
            lo, m1, f1 = m1, m2, f2
            m2 = lo + r * (hi - lo)
            f2 = f(m2)
            best, arg = min((best, arg), (f2, m2))
    return best, (V - arg * nn).argmax(axis=1).astype(float)


@st.composite
def small_instances(draw):
    t = draw(st.integers(2, 12))
    return P.generate(draw(st.integers(0, 10_000)), t=t, a=draw(st.integers(2, 5)),
                      trend=draw(st.sampled_from(["dec", "inc", "nonmono"])),
                      b=draw(st.integers(t, 3 * t)))


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=small_instances())
def test_first_labels_exact_multiplier_tightens_and_stays_valid(inst):
    """The first-labels bound with the exact budget-row multiplier (`mckp_lp`) is never above
    the same bound with the former golden-section multiplier, and never below the best primal
    (the brute-force optimum where it fits)."""
    if CB.zero_optimum(inst):
        return
    hi = CB.covering_bound(inst).value
    new = CB.first_labels_bound(inst, hi=hi).value
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(CB, "mckp_lp", _golden_knapsack)
        mp.setattr(CB, "_lagrangian_lp", _golden_prefix)
        old = CB.first_labels_bound(inst, hi=hi).value
    assert new <= old * (1 + 1e-9) + 1e-12, (new, old)
    primal = max(P.evaluate(inst, s).objective for s in constructions(inst).values())
    if inst.t <= 4 and inst.a <= 3:
        primal = max(primal, brute_force(inst)[0])
    assert new >= primal - 1e-7 * (1 + primal), (new, primal)


@pytest.mark.slow
def test_config_lp_method_starts_at_the_tightest_cheap_bound():
    """The config-lp method starts at `cheap_upper_bound` (first labels included), so it is
    never above it nor above its former start (the least of covering, counting, pairing), and
    never below the best primal; inc t = 50, a = 5: the first-labels bound is below the former
    start, and a config LP with no time to refute anything returns it."""
    from crowdopt.solvers.cltap_construct import cheap_bound
    from crowdopt.solvers.cltap_exact import cheap_upper_bound

    inst = P.generate(0, t=50, a=5, trend="inc")
    former, _ = cheap_bound(inst)
    former = min(former, CB.pairing_bound(inst, hi=former).value)
    hi, _ = cheap_upper_bound(inst)
    first = CB.first_labels_bound(inst).value
    assert hi <= first < former
    out = SPEC.method("config-lp").run(inst, RunOptions(time_limit=0.01))
    assert out.bound <= hi
    assert out.bound >= P.evaluate(inst, fast(inst, time_limit=0.2)).objective - 1e-9
