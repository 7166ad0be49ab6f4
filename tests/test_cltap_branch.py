"""CL-TAP `config-branch` (`solvers.cltap_branch`): each step of its proof against enumeration
(the supply of a box of prefix lengths, the heaviest cheap set, the bound of a box that holds an
optimal plan, for any prices), the method against the independent oracle and head-cover's proven
optima at t = 20-50, and deliberate mutations that the checks catch.

The soundness suite (test_cltap_soundness.py) runs the method on every instance of its sample
and of `make soak` as it runs every bound method; the campaign at t = 20-50 against head-cover is
`make soak` here."""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crowdopt
from crowdopt.problems import cltap as P
from crowdopt.problems.catalogue import RunOptions
from crowdopt.solvers import cltap_branch as B
from crowdopt.solvers.cltap import brute_force

sys.path.insert(0, str(Path(__file__).parent))
from cltap_oracle import optimum  # noqa: E402

REL = 1e-7
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _prices(rng: np.random.Generator, phi: np.ndarray, kind: str) -> np.ndarray:
    """Prices of every shape a certificate may hold: zeros, random, the covering bound's
    truncated weights, a few concentrated ones, ties, and signed ones (an LP's raw duals)."""
    theta = float(phi.max(initial=0.0)) * rng.uniform(0.2, 1.2) + 1e-300
    return {"zero": np.zeros(phi.shape),
            "random": rng.random(phi.shape) * rng.choice([1e-6, 1.0, 1e3]),
            "covering": np.minimum(phi, theta) / theta,
            "sparse": (rng.random(phi.shape) < 0.3) * rng.random(phi.shape),
            "ties": rng.choice([0.0, 0.5, 1.0], size=phi.shape),
            "signed": rng.random(phi.shape) - 0.5}[kind]


@PROPERTY
@given(seed=st.integers(0, 10_000), a=st.integers(1, 3), K=st.integers(1, 4),
       b=st.integers(0, 10), kind=st.sampled_from(["zero", "random", "covering", "sparse",
                                                   "ties"]), exact=st.booleans())
def test_supply_bounds_every_prefix_vector_of_the_box(seed, a, K, b, kind, exact):
    """The supply is at least every prefix vector's price sum; the integer DP (`exact`) meets
    the best one, the knapsack LP (the DP switched off) may exceed it."""
    rng = np.random.default_rng(seed)
    gamma = _prices(rng, rng.random((a, K)), kind)
    lo = rng.integers(0, K + 1, size=a)
    hi = np.array([rng.integers(v, K + 1) for v in lo])
    G = np.concatenate([np.zeros((a, 1)), np.cumsum(gamma, axis=1)], axis=1)
    best = -np.inf
    for n in itertools.product(*[range(lo[j], hi[j] + 1) for j in range(a)]):
        if sum(n) <= b:
            best = max(best, float(sum(G[j, n[j]] for j in range(a))))
    cells = B.SUPPLY_DP_CELLS
    try:
        B.SUPPLY_DP_CELLS = cells if exact else 0
        got = B.supply(gamma, lo, hi, b)
    finally:
        B.SUPPLY_DP_CELLS = cells
    if best == -np.inf:
        assert got == -np.inf
    else:
        assert got >= best - 1e-9 * (1 + abs(best))
        if exact:
            assert got <= best + 1e-9 * (1 + abs(best))


@PROPERTY
@given(seed=st.integers(0, 10_000), a=st.integers(1, 3), K=st.integers(1, 4),
       kind=st.sampled_from(["zero", "random", "covering", "sparse", "ties"]),
       frac=st.sampled_from([0.0, 0.3, 1.0, 2.5]),
       units=st.sampled_from([B.COST_UNITS, B.FINE_COST_UNITS]))
def test_cover_weight_counts_every_cheap_set(seed, a, K, kind, frac, units):
    """W(c) is at least the weight of every set (one label per annotator at most, inside the
    box) whose price is at most c, and at most the heaviest set a little above c."""
    rng = np.random.default_rng(seed)
    phi = rng.random((a, K)) * rng.choice([1e-8, 1.0])
    gamma = _prices(rng, phi, kind)
    hi = rng.integers(0, K + 1, size=a)
    price = frac * float(gamma.max(initial=0.0))
    W, chosen = B.cover_weight(phi, gamma, price, hi, units)
    heaviest, loose = 0.0, 0.0
    for pick in itertools.product(*[[None] + list(range(hi[j])) for j in range(a)]):
        labels = [(j, k) for j, k in enumerate(pick) if k is not None]
        w = sum(phi[j, k] for j, k in labels)
        cost = sum(gamma[j, k] for j, k in labels)
        if cost <= price:
            heaviest = max(heaviest, w)
        if cost <= price * (1 + a / units) + 1e-12:
            loose = max(loose, w)
    assert W >= heaviest * (1 - 1e-12)
    assert W <= loose * (1 + 1e-12) + 1e-300
    assert len({j for j, _ in chosen}) == len(chosen)  # one label per annotator
    assert sum(phi[j, k] for j, k in chosen) == pytest.approx(W, rel=1e-12, abs=1e-300)
    assert all(k < hi[j] for j, k in chosen)
    # the short cut of `price_bound`: one label within the price is a set W counts
    single, label = B.heaviest_single(phi, gamma, price, hi, units)
    assert [phi[j, k] for j, k in label] == ([single] if label else [])
    assert single <= W * (1 + 1e-12) + 1e-300
    assert single >= max((phi[j, k] for j in range(a) for k in range(hi[j])
                          if gamma[j, k] <= price), default=-np.inf)


@st.composite
def tiny(draw):
    t = draw(st.integers(1, 4))
    a = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 10_000))
    b = draw(st.integers(0, 3 * t))
    if draw(st.booleans()):  # ties and the p = 1/2 boundary
        rng = np.random.default_rng(seed)
        return P.make_instance(rng.choice([0.5, 0.6, 0.8, 0.9], size=(a, draw(
            st.integers(1, t)))), t, b)
    return P.generate(seed, t=t, a=a, b=b, K=draw(st.integers(1, t)),
                      trend=draw(st.sampled_from(["dec", "inc", "nonmono"])))


@PROPERTY
@given(inst=tiny(), seed=st.integers(0, 10_000),
       kind=st.sampled_from(["zero", "random", "covering", "sparse", "ties", "signed"]))
def test_price_bound_of_a_box_holding_an_optimal_plan_is_at_least_opt(inst, seed, kind):
    """Steps 1-2 of the proof, for any prices: a box that holds an optimal plan's prefix lengths
    is never bounded below the optimum (brute force)."""
    opt, plan = brute_force(inst)
    n = (plan.task_of >= 0).sum(axis=1)
    rng = np.random.default_rng(seed)
    lo = np.array([rng.integers(0, v + 1) for v in n])
    hi = np.array([rng.integers(v, inst.K + 1) for v in n])
    gamma = _prices(rng, inst.phi, kind)
    got, _ = B.price_bound(inst.phi, gamma, inst.t, lo, hi, inst.b)
    assert got >= opt * (1 - 1e-12), (got, opt, n, lo, hi)
    # asked whether it refutes a level (the DP skipped when one label reaches it, run with
    # finer price units when rounding alone keeps its set): still at least OPT, and the same
    # bound wherever the plain one refutes
    level = opt * rng.choice([0.5, 1.0, 1.5]) + rng.choice([0.0, 1e-3])
    quick, _ = B.price_bound(inst.phi, gamma, inst.t, lo, hi, inst.b, refute_below=level)
    assert quick >= opt * (1 - 1e-12), (quick, opt, level)
    if got < level:
        assert quick == got


@PROPERTY
@given(inst=tiny(), seed=st.integers(0, 10_000), f=st.sampled_from([0.3, 0.7, 1.0, 1.3, 3.0]))
def test_covering_price_bound_of_a_box_holding_an_optimal_plan_is_at_least_opt(inst, seed, f):
    """The covering price's short cut (W <= theta0 c when c < 1, no DP) never bounds a box that
    holds an optimal plan's prefix lengths below the optimum, at any theta0 (brute force), and
    it is never looser than theta0 c."""
    opt, plan = brute_force(inst)
    n = (plan.task_of >= 0).sum(axis=1)
    rng = np.random.default_rng(seed)
    lo = np.array([rng.integers(0, v + 1) for v in n])
    hi = np.array([rng.integers(v, inst.K + 1) for v in n])
    theta0 = max(opt, float(inst.phi.max(initial=0.0)) * 0.5, 1e-300) * f
    got = B.covering_price_bound(inst.phi, theta0, inst.t, lo, hi, inst.b, opt * 1.01)
    assert got >= opt * (1 - 1e-12), (got, opt, theta0, n, lo, hi)


def test_price_bound_counts_negative_prices_as_zero():
    """One task, two annotators with one label each, both prefixes forced: OPT is both labels.
    Raw duals (-1, 1) sum to 0 over the box, but the cheap set is priced with the negative one
    at 0; the supply must be of those same prices (1), or the bound would be the first label
    alone. Mutation: the supply of the raw prices gives 0.339 < OPT 1.171."""
    inst = P.make_instance(np.array([[0.7], [0.8]]), 1, 2)
    opt = float(inst.phi.sum())
    one = np.ones(2, dtype=np.int64)
    got, _ = B.price_bound(inst.phi, np.array([[-1.0], [1.0]]), inst.t, one, one, inst.b)
    assert got >= opt * (1 - 1e-12)


@pytest.fixture
def independent_head_cover(monkeypatch):
    """head-cover without the configuration-LP stage in its start (which would make it prove
    optima with the very bound under test)."""
    from crowdopt.solvers import cltap_exact

    monkeypatch.setattr(cltap_exact, "BRANCH_NODES", 0)


def _known_optimum(inst: P.CltapInstance) -> float:
    """The optimum proven by head-cover (the independent exact route at these sizes; the
    `independent_head_cover` fixture must be active)."""
    from crowdopt.solvers import cltap_exact

    assert cltap_exact.BRANCH_NODES == 0
    key = (inst.phi.tobytes(), inst.phi.shape, inst.t, inst.b)
    if key not in _OPTIMA:
        out = crowdopt.solve(inst, "head-cover", time_limit=120, force=True)
        assert out.proven_optimal, out.message
        _OPTIMA[key] = out.objective
    return _OPTIMA[key]


_OPTIMA: dict = {}  # proven optima of this module's instances (one head-cover run each)


@pytest.mark.soak
def test_config_branch_closes_on_the_optimum_where_head_cover_proves_it():
    """inc t = 30, a = 3, seed 0 (OPT 1.19021): the configuration LP alone stops at 1.2547 and
    the tightest cheap bound at 1.4421; branching on prefix lengths ends within 0.1 % of the
    optimum (1.19095: at levels this close the rounding of weights to units leaves leaves
    whose LP covers every task and no annotator to split), with the optimal plan."""
    inst = P.generate(0, t=30, a=3, trend="inc")
    r = crowdopt.solve(inst, "config-branch", time_limit=60)
    assert r.objective == pytest.approx(1.1902147647, rel=1e-9)
    assert r.objective * (1 - REL) <= r.bound <= r.objective * 1.001
    assert r.details["nodes"] <= 60


@pytest.mark.parametrize("trend,t,a,seed", [
    ("inc", 20, 3, 0),
    pytest.param("nonmono", 20, 3, 1, marks=pytest.mark.soak),
    pytest.param("dec", 20, 5, 1, marks=pytest.mark.soak),
    pytest.param("inc", 20, 5, 2, marks=pytest.mark.soak)])
def test_config_branch_is_valid_against_head_cover(trend, t, a, seed, independent_head_cover):
    inst = P.generate(seed, t=t, a=a, trend=trend)
    opt = _known_optimum(inst)
    r = crowdopt.solve(inst, "config-branch", time_limit=60)
    assert r.bound >= opt * (1 - REL)
    assert r.objective <= opt * (1 + REL)
    assert r.certificate.certified


@pytest.mark.soak
@pytest.mark.parametrize("trend", ["dec", "inc", "nonmono", "flat"])
@pytest.mark.parametrize("t,a", [(20, 3), (30, 3), (50, 3), (20, 5), (30, 5), (20, 10)])
def test_config_branch_is_valid_at_t20_50_soak(trend, t, a, independent_head_cover):
    """Five seeds per shape: the bound never below head-cover's proven optimum (instances that
    head-cover does not prove within its limit are skipped and counted)."""
    from crowdopt.solvers.cltap_exact import solve_head_cover

    unproven = 0
    for seed in range(5):
        inst = (P.generate(seed, t=t, a=a, trend="dec", tau=100.0, horizon=1e6)
                if trend == "flat" else P.generate(seed, t=t, a=a, trend=trend))
        ref = solve_head_cover(inst, RunOptions(time_limit=120))
        if str(ref.status) != "optimal":
            unproven += 1
            continue
        opt = P.evaluate(inst, ref.solution).objective
        r = crowdopt.solve(inst, "config-branch", time_limit=60)
        assert r.bound >= opt * (1 - REL), (seed, r.bound, opt)
        assert r.objective <= opt * (1 + REL)
    print(f"{trend} t={t} a={a}: {unproven} of 5 not proven by head-cover (skipped)")


def _raw_bound_is_valid(seeds: range, cells: int) -> list[str]:
    """The method's own bound and plan (no verification step) against the enumeration on the
    soundness set's instances (its kinds: ties, duplicates, zero rows, unused annotators,
    weights scaled to 1e-10, generated curves): what it claims that the optimum refutes."""
    from cltap_oracle import OracleTimeout
    from test_cltap_soundness import ORACLE_CPU_S, draw

    from crowdopt.solvers.cltap import _config_branch

    bad = []
    for seed in seeds:
        kind, inst = draw(seed, cells)
        try:
            opt = optimum(inst.phi, inst.t, inst.b, cpu_s=ORACLE_CPU_S)
        except OracleTimeout:  # beyond the enumeration (the soundness suite skips it too)
            continue
        out = _config_branch(inst, RunOptions(time_limit=60))
        ev = P.evaluate(inst, out.solution)
        tol = REL * max(opt, 1e-300)
        if out.bound < opt - tol or not ev.feasible or ev.objective > opt + tol:
            bad.append(f"seed {seed} ({kind}): OPT {opt!r}, bound {out.bound!r}, "
                       f"plan {ev.objective!r} (feasible {ev.feasible})")
    return bad


def test_raw_bound_against_the_enumeration_on_a_sample():
    from test_cltap_soundness import SAMPLE_CELLS

    assert _raw_bound_is_valid(range(40), SAMPLE_CELLS) == []


@pytest.mark.soak
@pytest.mark.parametrize("chunk", range(4))
def test_raw_bound_against_the_enumeration_soak(chunk):
    """3,000 instances up to a t K = 160 (about 4 min of CPU)."""
    from test_cltap_soundness import SOAK_CELLS

    assert _raw_bound_is_valid(range(1000 + 750 * chunk, 1000 + 750 * (chunk + 1)),
                               SOAK_CELLS) == []


# ------------------------------------------------------------------ mutations make it fail
def _raw_bound(inst: P.CltapInstance) -> float:
    """The method's own bound, before the verification step of `crowdopt.solve` (which drops a
    bound that a feasible value crosses): what the enumeration must catch by itself."""
    from crowdopt.solvers.cltap import _config_branch

    return _config_branch(inst, RunOptions(time_limit=60)).bound


def test_mutation_dropped_child_is_caught(monkeypatch, independent_head_cover):
    """A branch that keeps only the shorter prefixes (the box m..hi_j dropped) bounds inc
    t = 20, a = 3, seed 0 below its proven optimum."""
    inst = P.generate(0, t=20, a=3, trend="inc")
    opt = _known_optimum(inst)
    monkeypatch.setattr(B, "_children", lambda lo, hi, j, m: [
        (lo, np.where(np.arange(len(hi)) == j, m, hi))])
    assert _raw_bound(inst) < opt * (1 - 1e-3)


@pytest.mark.parametrize("mutation", ["prices rounded up", "half box"])
def test_mutation_of_the_certificate_is_caught_by_the_enumeration(monkeypatch, mutation):
    """Prices rounded up in the heaviest-cheap-set DP (cheap sets missed), or the supply of a
    box computed over its shorter half, give bounds below the optimum on soundness-set
    instances (the oracle's enumeration)."""
    from test_cltap_soundness import SAMPLE_CELLS, draw

    if mutation == "prices rounded up":
        real = B.cover_weight
        monkeypatch.setattr(B, "cover_weight", lambda phi, g, price, hi=None, units=1000: real(
            phi, g * 1.05 + 1e-3 * price, price, hi, units))
    else:
        real = B.supply
        monkeypatch.setattr(B, "supply", lambda g, lo, hi, b: real(g, lo, lo + (hi - lo) // 2, b))
    caught = []
    # seeds where the mutation shows (a scan of seeds 0-399 with each mutation on); the
    # covering price's own short cut (no DP below price 1) leaves the DP to the LP's prices
    seeds = (210, 217, 341) if mutation == "prices rounded up" else (53, 65, 147)
    for seed in seeds:
        _, inst = draw(seed, SAMPLE_CELLS)
        opt = optimum(inst.phi, inst.t, inst.b)
        caught.append(_raw_bound(inst) < opt * (1 - REL))
    assert any(caught)


def test_mutation_box_dropped_instead_of_tried_finer_is_caught(monkeypatch):
    """A box that a coarse grid can neither refute nor split, dropped instead of tried again on
    the next finer grid (`_again`), claims its prefix lengths refuted: on soundness-set instance
    6 (weights scaled to 1e-9) the bound falls below the enumeration's optimum."""
    from test_cltap_soundness import SAMPLE_CELLS, draw

    _, inst = draw(6, SAMPLE_CELLS)
    opt = optimum(inst.phi, inst.t, inst.b)
    assert _raw_bound(inst) >= opt * (1 - REL)
    monkeypatch.setattr(B, "_again", lambda lo, hi, grid, ladder: [])
    assert _raw_bound(inst) < opt * (1 - REL)


@pytest.mark.parametrize("seed", [6, 65])
def test_mutation_raised_leaf_dropped_is_caught(monkeypatch, seed):
    """A leaf that no LP refutes at its level, dropped instead of tried at a raised level
    (`_raise`), claims its prefix lengths bounded by the other leaves: on soundness-set
    instances 6 (weights scaled to 1e-9) and 65 (ties) the bound falls below the enumeration's
    optimum. Unmutated, both raise leaves and stay valid."""
    from test_cltap_soundness import SAMPLE_CELLS, draw

    _, inst = draw(seed, SAMPLE_CELLS)
    opt = optimum(inst.phi, inst.t, inst.b)
    real, raised = B._raise, []
    monkeypatch.setattr(B, "_raise", lambda *a: raised.append(a) or real(*a))
    assert _raw_bound(inst) >= opt * (1 - REL)
    assert raised, "no leaf was raised: the test would prove nothing"
    monkeypatch.setattr(B, "_raise", lambda *a: [])
    assert _raw_bound(inst) < opt * (1 - REL)


@pytest.mark.parametrize("seed", [6, 65, 210])
def test_mutation_leaves_of_a_stopped_level_dropped_is_caught(monkeypatch, seed):
    """A level that ends early (a leaf stands, or the node budget runs out) hands its leaves to
    the next level (`_carry`): the one that stood and those not reached, with their W. Dropping
    them claims their prefix lengths bounded by the leaves done: on soundness-set instances 6
    (weights scaled to 1e-9), 65 (ties) and 210 the bound falls below the enumeration's
    optimum (a scan of seeds 0-399 with the mutation on found 6, 53, 65, 210, 217, 385)."""
    from test_cltap_soundness import SAMPLE_CELLS, draw

    _, inst = draw(seed, SAMPLE_CELLS)
    opt = optimum(inst.phi, inst.t, inst.b)
    assert _raw_bound(inst) >= opt * (1 - REL)
    monkeypatch.setattr(B, "_carry", lambda done, leaf, stack: done)
    assert _raw_bound(inst) < opt * (1 - REL)


def test_grid_ladder_and_widest_split():
    """Coarse grids first, the arc budget's last; the fallback split is strictly inside a
    branchable box (so both children are smaller and together hold every length), None when
    every branchable box is one length."""
    assert B.grid_ladder(200) == [30, 50, 200]
    assert B.grid_ladder(50) == [30, 50]
    assert B.grid_ladder(30) == [30]
    inst = P.generate(0, t=10, a=3, trend="inc")
    lo, hi = np.array([0, 2, 4]), np.array([10, 3, 9])
    for paid in (np.zeros(3), np.full(3, 10.0), np.array([5.0, 2.5, 7.0])):
        j, m = B._widest(inst, paid, lo, hi, np.array([True, True, True]))
        assert hi[j] - lo[j] >= 2 and lo[j] < m < hi[j]
        j, m = B._widest(inst, paid, lo, hi, np.array([False, True, True]))
        assert j == 2 and lo[2] < m < hi[2]
    assert B._widest(inst, np.zeros(3), lo, hi, np.array([False, True, False])) is None


def test_stop_within_ends_at_the_first_level_that_stands_near_the_plan():
    """`stop_within` (head-cover's start): once a level within it of the best plan stands the
    search stops, with the bound of the levels refuted so far: never below the bound of the
    full run, and the run says why it stopped (inc t = 10, a = 5, seed 38: it stops after 51
    node LPs; the full run spends 79 and ends at the same bound)."""
    from crowdopt.solvers.cltap_construct import fast
    from crowdopt.solvers.cltap_exact import ASCENT_GAP, cheap_upper_bound

    inst = P.generate(38, t=10, a=5, trend="inc")
    hi = cheap_upper_bound(inst)[0]
    start = fast(inst, time_limit=60.0, seed=0, target=hi, max_steps=200)  # deterministic
    lo = P.evaluate(inst, start).objective
    full, _ = B.branch_bound(inst, lo, hi, start=start, time_limit=60, max_nodes=80)
    near, _ = B.branch_bound(inst, lo, hi, start=start, time_limit=60, max_nodes=80,
                             stop_within=ASCENT_GAP)
    assert "stands" in near.details["stopped"]
    assert near.details["nodes"] < full.details["nodes"]
    assert near.value >= full.value
    stood = [lv for lv in near.details["levels"] if not lv["refuted"]]
    assert len(stood) == 1 and stood[0]["theta"] <= near.details["best_plan"] * (1 + ASCENT_GAP)


def test_the_bound_does_not_depend_on_the_clock(monkeypatch):
    """The node LPs' algorithm is a fixed rule (IPM first, then warm simplex), not the faster
    of the two so far: with a clock that jumps at random the bound, the plan and the tree are
    the ones of the real clock (the LP's duals are the certificates' prices; when the clock
    chose, inc t = 100, a = 10 ended at 1.9363 or 1.9520 from run to run)."""
    import random

    from crowdopt.solvers.cltap import _config_branch

    inst = P.generate(0, t=50, a=5, trend="inc")
    opts = RunOptions(time_limit=600, max_rounds=60)
    real = _config_branch(inst, opts)
    rng = random.Random(3)
    now = [0.0]

    def jumpy() -> float:
        now[0] += rng.choice([1e-4, 1e-4, 5.0])
        return now[0]

    monkeypatch.setattr(B.time, "process_time", jumpy)
    again = _config_branch(inst, opts)
    assert again.bound == real.bound
    assert P.evaluate(inst, again.solution).objective == P.evaluate(inst, real.solution).objective
    assert [lv["nodes"] for lv in again.details["levels"]] == \
        [lv["nodes"] for lv in real.details["levels"]]


def _inc_30_5() -> tuple[P.CltapInstance, float, float, P.CltapSolution]:
    """inc t = 30, a = 5, seed 1 (where a run of 120 node LPs cuts two levels): the instance,
    the fast path's plan value (200 search steps: deterministic), the cheap bound, the plan."""
    from crowdopt.solvers.cltap_construct import fast
    from crowdopt.solvers.cltap_exact import cheap_upper_bound

    inst = P.generate(1, t=30, a=5, trend="inc")
    hi = cheap_upper_bound(inst)[0]
    start = fast(inst, time_limit=60.0, seed=0, target=hi, max_steps=200)
    return inst, P.evaluate(inst, start).objective, hi, start


def test_once_the_bound_fell_a_level_takes_at_most_its_share_of_the_node_lps():
    """Once the bound fell, a level may take a quarter of the node LPs left (at least
    LEVEL_MIN), so one leaf's deep tree cannot hold the bound for the rest of the budget; a level
    cut there counts as standing and the search goes on (inc t = 30, a = 5, seed 1, 120 node
    LPs: two levels are cut, and the run ends by the levels' separation, not by its budget)."""
    inst, lo, hi, start = _inc_30_5()
    res, _ = B.branch_bound(inst, lo, hi, start=start, time_limit=120, max_nodes=120)
    used, ub, cut = 0, hi, 0
    for lv in res.details["levels"]:
        if ub < hi:
            share = max(B.LEVEL_MIN, (120 - used) // B.LEVEL_SHARE)
            assert lv["nodes"] <= share
            cut += lv["nodes"] == share and not lv["refuted"]
        used, ub = used + lv["nodes"], min(ub, lv["W"])
    assert cut >= 1
    assert res.details["nodes"] < 120 and "levels within" in res.details["stopped"]


def test_without_branching_the_levels_converge():
    """Without branching (the root configuration LP's own bound, `bench_cltap.py
    --large-ceiling`) a level that stands on its own is final: the search ends once the bound is
    within the levels' separation of it, instead of going down again until its budget (nonmono
    t = 20, a = 3, seed 2: 79 node LPs; going down again after every level that stood ran to its
    clock, 768 node LPs in 10 s)."""
    from crowdopt.solvers.cltap_bounds import covering_bound
    from crowdopt.solvers.cltap_construct import constructions
    from crowdopt.solvers.cltap_exact import cheap_upper_bound

    inst = P.generate(2, t=20, a=3, trend="nonmono")
    cands = constructions(inst, theta=cheap_upper_bound(inst)[0])
    start = max(cands.values(), key=lambda s: P.evaluate(inst, s).objective)
    res, _ = B.branch_bound(inst, P.evaluate(inst, start).objective, covering_bound(inst).value,
                            start=start, time_limit=120, branching=False, max_nodes=10**6,
                            search_steps=0)
    assert "levels within" in res.details["stopped"]
    assert res.details["nodes"] < 300


def test_head_covers_start_gives_no_level_a_share(monkeypatch):
    """With `stop_within` (head-cover's start) no level is cut by its share of the node LPs: its
    levels are those of a run whose share is every node LP left (the instance where a run
    without `stop_within` cuts two levels)."""
    inst, lo, hi, start = _inc_30_5()

    def levels() -> list:
        res, _ = B.branch_bound(inst, lo, hi, start=start, time_limit=120, max_nodes=120,
                                stop_within=1e-12)
        return [(lv["theta"], lv["nodes"]) for lv in res.details["levels"]]

    shared = levels()
    monkeypatch.setattr(B, "LEVEL_SHARE", 1)
    assert shared == levels()


def _world_of_an_optimum(inst: P.CltapInstance) -> tuple[float, np.ndarray, float]:
    """The optimum (brute force), its plan's prefix lengths and a value above every plan."""
    opt, plan = brute_force(inst)
    top = float(inst.phi.max(axis=1, initial=0.0).sum()) + 1.0
    return opt, (plan.task_of >= 0).sum(axis=1).astype(np.int64), top


@PROPERTY
@given(inst=tiny())
def test_world_bound_of_an_optimal_plans_world_is_at_least_opt(inst):
    """`world_bound` bounds every plan of its world: at an optimal plan's prefix lengths it is
    never below the optimum (brute force; ties, zero rows, short rows, budgets below t)."""
    opt, n, top = _world_of_an_optimum(inst)
    bound, _ = B.world_bound(inst, n, 0.0, top, levels=6)
    assert bound >= opt * (1 - 1e-12), (bound, opt, n)


def test_mutation_world_bound_without_certificates_is_caught(monkeypatch):
    """A refutation that claims every level fell (no certificate) drives the world bound below
    the optimum, which the test above catches (inc t = 3, a = 2, seed 3)."""
    inst = P.generate(3, t=3, a=2, trend="inc")
    opt, n, top = _world_of_an_optimum(inst)
    assert opt > 0 and B.world_bound(inst, n, 0.0, top, levels=6)[0] >= opt * (1 - 1e-12)
    monkeypatch.setattr(B, "refute", lambda run, theta, leaves: (
        "fell", [(lo, hi, theta * 0.99) for lo, hi, _ in leaves]))
    assert B.world_bound(inst, n, 0.0, top, levels=6)[0] < opt


@pytest.mark.parametrize("n", [[1], [1, 2, 3], [-1, 0], [0, 99], [0.5, 1.0]])
def test_world_bound_names_a_bad_world(n):
    inst = P.generate(0, t=4, a=2, trend="inc")
    with pytest.raises(ValueError, match=r"^n: expected 2 integer prefix lengths in \[0, "):
        B.world_bound(inst, np.array(n), 0.0, 1.0)


@pytest.mark.parametrize(("lo", "hi"), [(1.0, 0.5), (-1.0, 1.0), (0.0, math.inf),
                                        (math.nan, 1.0)])
def test_world_bound_names_bad_levels(lo, hi):
    inst = P.generate(0, t=4, a=2, trend="inc")
    with pytest.raises(ValueError, match=r"^lo, hi: expected finite levels with 0 <= lo <= hi"):
        B.world_bound(inst, np.array([1, 1]), lo, hi)


@PROPERTY
@given(inst=tiny(), f=st.sampled_from([0.5, 1.0, 1.05, 1.5, 3.0]), pooled=st.booleans())
def test_level_tree_never_refutes_a_level_an_optimal_plan_reaches(inst, f, pooled):
    """`level_tree` at theta = f x OPT (brute force): its bound is never below the optimum, and a
    level at or below the optimum never falls; with `pooled` all annotators but one share a pool
    (the layers of a large instance)."""
    opt, _, top = _world_of_an_optimum(inst)
    theta = max(opt * f, 1e-3)
    saved = B.MAX_LAYERS
    B.MAX_LAYERS = 1 if pooled else saved
    try:
        out = B.level_tree(inst, theta, max(top, theta), max_nodes=400, time_limit=120)
    finally:
        B.MAX_LAYERS = saved
    assert out["bound"] >= opt * (1 - 1e-12), (out, opt)
    if theta <= opt:
        assert out["outcome"] != "fell", (out, opt)


def test_level_tree_refutes_a_level_above_the_optimum(independent_head_cover):
    """Above the optimum the tree falls (inc t = 20, a = 3, seed 0, 5 % above head-cover's
    proven optimum) and its bound is below the level."""
    inst = P.generate(0, t=20, a=3, trend="inc")
    opt = _known_optimum(inst)
    top = float(inst.phi.max(axis=1).sum())
    out = B.level_tree(inst, opt * 1.05, top)
    assert out["outcome"] == "fell" and opt <= out["bound"] < opt * 1.05, (out, opt)
    assert out["nodes"] >= 1 and out["leaves"] >= 1 and out["open"] == 0
    assert len(out["split"]) == inst.a


def test_mutation_level_tree_without_certificates_is_caught(monkeypatch):
    """A refutation without certificates (every box claimed below the level) drives the bound
    below the optimum, which the property test above catches."""
    inst = P.generate(3, t=3, a=2, trend="inc")
    opt, _, top = _world_of_an_optimum(inst)
    assert B.level_tree(inst, opt, top)["bound"] >= opt * (1 - 1e-12)
    monkeypatch.setattr(B, "refute", lambda run, theta, leaves: (
        "fell", [(lo, hi, theta * 0.99) for lo, hi, _ in leaves]))
    assert B.level_tree(inst, opt, top)["bound"] < opt


@pytest.mark.parametrize(("theta", "hi"), [(0.0, 1.0), (2.0, 1.0), (math.nan, 1.0),
                                           (1.0, math.inf)])
def test_level_tree_names_bad_levels(theta, hi):
    inst = P.generate(0, t=4, a=2, trend="inc")
    with pytest.raises(ValueError, match=r"^theta, hi: expected finite levels with 0 < theta"):
        B.level_tree(inst, theta, hi)


@pytest.mark.parametrize("keep", [[1], [1, 2, 3], [-1, 0], [0, 99], [0.5, 1.0]])
def test_level_tree_names_a_bad_keep(keep):
    inst = P.generate(0, t=4, a=2, trend="inc")
    with pytest.raises(ValueError, match=r"^keep: expected 2 integer prefix lengths in \[0, "):
        B.level_tree(inst, 1.0, 2.0, keep=np.array(keep))
