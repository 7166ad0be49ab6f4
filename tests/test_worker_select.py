"""Worker selection (paper 004): evaluator, Algorithm 1, the DP and the MILPs agree (digest P3-P11).

Every method goes through the problem's one evaluator; objective values are compared with
tolerance 1e-7, and the smallest-optimal-size rule (k*) is compared exactly.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from crowdopt.api import compare, run_method
from crowdopt.errors import InputError
from crowdopt.instances import dump_instance, load_instance
from crowdopt.problems import worker_select as P
from crowdopt.problems.worker_scores import score_plugin, score_unbiased
from crowdopt.registry import RunOptions, get_problem
from crowdopt.solvers import worker_select as S

TOL = 1e-7
SPEC = get_problem("worker-select")


def brute_force(x, K, costs=None, budget=None):
    """(best value, smallest optimal size) over every non-empty feasible subset."""
    x = np.asarray(x, float)
    M = len(x)
    per_size = {}
    for k in range(1, min(K, M) + 1):
        for S_ in itertools.combinations(range(M), k):
            if costs is not None and sum(costs[i] for i in S_) > budget:
                continue
            v = sum(x[i] for i in S_) / math.sqrt(k)
            per_size[k] = max(per_size.get(k, -math.inf), v)
    if not per_size:
        return None, None
    best = max(per_size.values())
    k_star = min(k for k, v in per_size.items() if v >= best - P.tie_tol(best))
    return best, k_star


def value_of(inst, outcome):
    ev = P.evaluate(inst, outcome.solution)
    assert ev.feasible, ev.violations
    return ev.objective, len(outcome.solution.selected)


def random_scores(rng, M):
    """Scores with ties, negatives and exact grid values (as G takes n + 1 values)."""
    kind = rng.integers(4)
    if kind == 0:
        return score_unbiased(rng.binomial(10, rng.beta(2.3, 2, M)) / 10, 10, 2)
    if kind == 1:
        return rng.choice([-0.5, 0.0, 1 / 3, 0.3, 1.0], M)
    if kind == 2:
        return rng.normal(0, 1, M)
    return -rng.uniform(0, 1, M)  # all negative


# ----------------------------------------------------------------------------- worked example
def test_worked_example_p10():
    c = np.array([10, 9, 8, 0, 7, 5, 3])
    inst = P.make_instance(max_workers=7, w_hat=c / 10, n=10)
    r = S.select_prefix(inst.scores, 7)
    assert np.allclose(r.curve, [1, 1.4142, 1.5011, 1.4444, 1.3218, 1.2338, 1.1003], atol=5e-5)
    assert r.k == 3 and sorted(c[r.selected].tolist()) == [0, 9, 10]
    ev = P.evaluate(inst, P.WorkerSelectSolution(r.selected))
    assert abs(ev.objective - 1.5011) < 5e-5 and abs(ev.extra["error_bound"] - 0.324) < 5e-4
    two = S.select_prefix(inst.scores, 2)
    assert two.k == 2 and abs(two.value - math.sqrt(2)) < 1e-12
    plug = S.select_prefix(score_plugin(c / 10, 2), 7)
    assert np.allclose(plug.curve, [1, 1.4142, 1.5242, 1.5, 1.4132, 1.3554, 1.2548], atol=5e-5)
    assert plug.k == 3


# ----------------------------------------------------------------------------- structure (P6, P7)
def test_prefix_curve_is_not_unimodal_so_the_scan_never_stops_early():
    r = S.select_prefix([1, .3, .3, .3, .3, .3], 6)
    assert r.curve[1] < r.curve[0] and r.k == 6
    assert np.allclose(r.curve, [1, .919, .924, .950, .984, 1.021], atol=5e-4)


def test_structural_cases():
    assert S.select_prefix([0.7] * 5, 10).k == 5  # constant positive: everyone (k* = B)
    assert S.select_prefix([0.7] * 5, 3).k == 3
    assert S.select_prefix([0.0, -1.0, -0.2], 3).k == 1  # x_(1) <= 0: one worker
    tie = S.select_prefix([1, 1 / 3, 1 / 3, 1 / 3], 4)  # F_1 = F_4 = 1 exactly
    assert tie.k == 1 and tie.curve[3] != 1.0  # floating point needs the tolerance
    assert S.select_prefix([2.0], 5).k == 1  # M = 1, K > M


def test_objective_is_neither_submodular_nor_supermodular():
    def gain(x, S_, i):
        return P.set_value(np.array(x, float), np.array(S_ + [i])) - P.set_value(
            np.array(x, float), np.array(S_))
    x = [1, 1, 0.2]
    assert gain(x, [0], 2) < gain(x, [0, 1], 2)  # not submodular
    assert abs(gain(x, [0], 2) + 0.1515) < 1e-4 and abs(gain(x, [0, 1], 2) + 0.1440) < 1e-4
    y = [1, 1, 1]
    assert gain(y, [0], 2) > gain(y, [0, 1], 2)  # not supermodular


# ----------------------------------------------------------------------------- fast path (P3-P5)
def test_algorithm1_equals_brute_force_on_random_instances():
    rng = np.random.default_rng(2024)
    for _ in range(300):
        M = int(rng.integers(1, 11))
        K = int(rng.choice([1, 2, M, M + 3, int(rng.integers(1, M + 1))]))
        x = random_scores(rng, M)
        r = S.select_prefix(x, K)
        best, k_star = brute_force(x, K)
        assert abs(P.set_value(x, r.selected) - best) <= TOL * (1 + abs(best))
        assert r.k == k_star  # Pareto: the smallest optimal size (P4)


def test_fixed_size_top_k_is_best():
    """The paper's key claim (digest 2.3.1): for fixed |S| = k the top k by G is optimal."""
    rng = np.random.default_rng(5)
    for _ in range(60):
        M = int(rng.integers(1, 10))
        x = random_scores(rng, M)
        for k in range(1, M + 1):
            best = max(sum(x[list(c)]) for c in itertools.combinations(range(M), k))
            assert abs(x[S.top_k(x, k)].sum() - best) < 1e-12


def test_permutation_and_tie_breaking_do_not_move_the_optimum():
    rng = np.random.default_rng(9)
    for _ in range(50):
        M = int(rng.integers(2, 30))
        x = random_scores(rng, M)
        K = int(rng.integers(1, M + 1))
        a = S.select_prefix(x, K)
        perm = rng.permutation(M)
        b = S.select_prefix(x[perm], K)
        assert a.k == b.k and abs(a.value - b.value) <= TOL
        assert sorted(x[a.selected]) == pytest.approx(sorted(x[perm][b.selected]))


# ----------------------------------------------------------------------------- exact models
@pytest.mark.parametrize("x", [[1, .3, .3, .3, .3, .3], [1, 1 / 3, 1 / 3, 1 / 3],
                               [0.0, -1.0, -0.2], [0.7] * 5])
def test_exact_models_on_the_digest_fixtures(x):
    inst = P.make_instance(max_workers=len(x), scores_=x)
    fast = S.select_prefix(inst.scores, inst.max_workers)
    for solve in (S.solve_formulation_a, S.solve_compact):
        out = solve(inst)
        assert out.status == "optimal"
        v, k = value_of(inst, out)
        assert abs(v - fast.value) <= TOL and k == fast.k


@pytest.mark.slow
def test_fast_equals_formulation_a_equals_compact_equals_brute_force():
    rng = np.random.default_rng(77)
    for t in range(30):
        M = int(rng.integers(1, 13))
        K = int(rng.choice([1, M, M + 2, int(rng.integers(1, M + 1))]))
        inst = P.make_instance(max_workers=K, scores_=random_scores(rng, M))
        best, k_star = brute_force(inst.scores, K)
        fast = run_method(SPEC, inst, "sort-scan")
        a = S.solve_formulation_a(inst)
        assert a.status == "optimal" and a.details["nodes"] <= 1  # integral LP: the root
        assert a.details["presolve"] is False  # DESIGN trap: presolve dominates model A
        assert a.bound is not None and abs(a.bound - best) <= TOL * (1 + abs(best))
        results = [(fast.objective, len(fast.solution.selected)), value_of(inst, a)]
        if t % 2 == 0:
            results.append(value_of(inst, S.solve_compact(inst)))
        for v, k in results:
            assert abs(v - best) <= TOL * (1 + abs(best)) and k == k_star


# ----------------------------------------------------------------------------- costs (P11)
def test_costs_dp_equals_milp_equals_brute_force():
    rng = np.random.default_rng(31)
    for t in range(20):
        M = int(rng.integers(1, 11))
        K = int(rng.integers(1, M + 2))
        costs = rng.integers(0 if t % 4 == 0 else 1, 6, M)
        budget = int(rng.integers(0, costs.sum() + 2))
        inst = P.make_instance(max_workers=K, scores_=random_scores(rng, M), costs=costs,
                               budget=budget)
        best, k_star = brute_force(inst.scores, K, costs.tolist(), budget)
        dp = S.solve_dp(inst)
        a = S.solve_formulation_a(inst)
        runs = [dp, a] + ([S.solve_compact(inst)] if t % 3 == 0 else [])
        if best is None:
            assert all(r.status == "infeasible" for r in runs)
            continue
        for r in runs:
            assert r.status == "optimal"
            v, k = value_of(inst, r)
            assert abs(v - best) <= TOL * (1 + abs(best)) and k == k_star



def test_every_cost_zero_is_solved_by_every_model():
    """Costs all 0 with a budget: every set is within it (the compact MILP's budget row was the
    constant 0 <= B, a Pyomo error and a traceback from compare)."""
    rng = np.random.default_rng(5)
    inst = P.make_instance(max_workers=2, scores_=random_scores(rng, 4), costs=[0, 0, 0, 0],
                           budget=3)
    best, _ = brute_force(inst.scores, 2, [0, 0, 0, 0], 3)
    for r in (S.solve_dp(inst), S.solve_formulation_a(inst), S.solve_compact(inst)):
        assert r.status == "optimal" and abs(value_of(inst, r)[0] - best) <= TOL * (1 + abs(best))

def test_uniform_costs_reduce_to_algorithm1_with_smaller_cap():
    rng = np.random.default_rng(3)
    for _ in range(40):
        M = int(rng.integers(1, 25))
        x = random_scores(rng, M)
        K, c, C = int(rng.integers(1, M + 1)), int(rng.integers(1, 4)), int(rng.integers(0, 30))
        dp = S.select_costs_dp(x, np.full(M, c), C, K)
        if C < c:
            assert dp is None
            continue
        alg = S.select_prefix(x, min(K, C // c))
        assert dp.k == alg.k and abs(dp.value - alg.value) <= TOL


def test_algorithm1_is_not_exact_with_costs():
    """Counterexample (digest 3.5): the best affordable prefix misses the optimum."""
    x, costs, budget = np.array([1.0, 0.9, 0.9]), np.array([2, 1, 1]), 2
    r = S.select_prefix(x, 3)
    affordable = [k for k in range(1, 4) if costs[r.order[:k]].sum() <= budget]
    prefix_best = max(r.curve[k - 1] for k in affordable)
    dp = S.select_costs_dp(x, costs, budget, 3)
    assert dp.selected.tolist() == [1, 2] and dp.value > prefix_best + 0.2


def test_fast_path_with_costs_runs_the_dp_and_infeasible_budget_is_a_result():
    inst = P.generate(3, workers=12, cost_max=5)
    out = run_method(SPEC, inst, "fast")
    assert out.details["path"] == "cost-dp"
    assert abs(out.objective - S.solve_dp(inst).bound) <= TOL
    none_fit = P.make_instance(max_workers=3, scores_=[1, 2], costs=[5, 6], budget=4)
    assert run_method(SPEC, none_fit, "fast").status == "infeasible"
    assert S.solve_formulation_a(none_fit).status == "infeasible"


# ----------------------------------------------------------------------------- evaluator
def test_evaluator_flags_every_infeasibility():
    inst = P.make_instance(max_workers=2, scores_=[1, 2, 3], costs=[1, 1, 5], budget=3)
    sol = P.WorkerSelectSolution
    assert not P.evaluate(inst, sol(np.array([], np.int64))).feasible
    assert "cap K" in P.evaluate(inst, sol(np.array([0, 1, 2]))).violations[0]
    ev = P.evaluate(inst, sol(np.array([1, 2])))
    assert not ev.feasible and ev.max_violation == 3.0 and ev.extra["cost"] == 6
    assert not P.evaluate(inst, sol(np.array([0, 0]))).feasible
    assert not P.evaluate(inst, sol(np.array([7]))).feasible
    ok = P.evaluate(inst, sol(np.array([0, 1])))
    assert ok.feasible and ok.objective == pytest.approx(3 / math.sqrt(2))


def test_error_bound_constants():
    assert P.error_bound(1.5, 2, "paper") == pytest.approx(math.exp(-1.125))
    assert P.error_bound(1.5, 2, "rigorous") == pytest.approx(math.exp(-1.125))
    # L = 4: the paper's exponent -2F^2/(L^2 (L-1)^2) vs the corrected -F^2/(2 (L-1)^4)
    assert P.error_bound(20, 4, "paper") == pytest.approx(3 * math.exp(-800 / 144))
    assert P.error_bound(20, 4, "rigorous") == pytest.approx(3 * math.exp(-400 / 162))
    assert P.error_bound(-3.0, 2) == 1.0 and P.error_bound(0.0, 4) == 1.0  # E2: capped
    with pytest.raises(InputError):
        P.error_bound(1.0, 2, "loose")


@pytest.mark.parametrize("doc, field", [
    ({"max_workers": 3, "w_hat": [0.5], "n": 1}, "n"),
    ({"max_workers": 3, "w_hat": [1.5], "n": 10}, "w_hat[0]"),
    ({"max_workers": 3, "scores": [1], "w_hat": [0.5], "n": 10}, "scores / w_hat"),
    ({"max_workers": 3}, "scores / w_hat"),
    ({"max_workers": 0, "scores": [1]}, "max_workers"),
    ({"scores": [1]}, "max_workers"),
    ({"max_workers": 2, "scores": [1, 2], "costs": [1, 1]}, "costs / budget"),
    ({"max_workers": 2, "scores": [1, 2], "costs": [1, -1], "budget": 3}, "costs[1]"),
    ({"max_workers": 2, "scores": [1, 2], "classes": 1}, "classes"),
    ({"max_workers": 2, "scores": [1, 2], "colour": 1}, "colour"),
    ({"max_workers": 2, "scores": [1, float("nan")]}, "scores[1]"),
])
def test_bad_instances_name_the_field(doc, field):
    with pytest.raises(InputError) as err:
        P.from_dict(doc)
    assert str(err.value).startswith(field + ":")


def test_instance_and_solution_round_trip():
    inst = P.generate(8, workers=9, cost_max=4)
    inst2 = load_instance(json.loads(dump_instance(SPEC, inst)))[1]
    assert np.array_equal(inst.scores, inst2.scores) and inst2.budget == inst.budget
    named = P.make_instance(max_workers=2, scores_=[3, 1, 2], worker_ids=["a", "b", 7])
    sol = P.solution_from_dict(named, {"selected": [7, "a"]})
    assert sol.selected.tolist() == [0, 2]
    assert P.solution_to_dict(named, sol) == {"size": 2, "selected": ["a", 7]}
    with pytest.raises(InputError, match=r"solution.selected\[0\]"):
        P.solution_from_dict(named, {"selected": ["zz"]})


def test_compare_on_the_example_is_certified():
    results = compare(SPEC.example(), algorithms=["sort-scan", "milp-a"])
    fast, exact = results
    assert exact.status == "optimal" and exact.certificate["certified"]
    assert fast.certificate["proven_optimal"] and fast.certificate["ratio"] == 1.0
    assert run_method(SPEC, SPEC.example(), "cost-dp").status == "skipped"
    big = P.generate(0, workers=2000, max_workers=2000)  # far past its fitted time guard
    assert run_method(SPEC, big, "milp-compact", RunOptions()).status == "skipped"


def test_theorem1_bound_holds_by_monte_carlo_for_two_classes():
    """P8: WMV-linear with weights from independent control items errs at most exp(-F^2/2)."""
    from crowdopt.crowd.aggregate import accuracy, weighted_majority_vote
    from crowdopt.experiments.selection_repro import simulate_table

    rng = np.random.default_rng(8)
    for _ in range(3):
        table, gold, w = simulate_table(rng, 5, 3000, 2, 4.0, 1.5)
        F = P.set_value((2 * w - 1) ** 2, np.arange(5))
        errors = []
        for _ in range(10):  # weights from 10 fresh control questions per worker
            w_hat = rng.binomial(10, w) / 10
            res = weighted_majority_vote(table, 2 * w_hat - 1, seed=1)
            errors.append(1 - accuracy(res, gold))
        assert np.mean(errors) <= P.error_bound(F, 2) + 0.02


# ----------------------------------------------------------------------------- array-built route
def test_array_built_formulation_a_equals_the_pyomo_builder():
    """The registered milp-a builds formulation A straight from numpy; the Pyomo builder of
    models/worker_select.py (the extension point) must give the same optimum and k*."""
    rng = np.random.default_rng(1414)
    for t in range(40):
        M = int(rng.integers(1, 14))
        K = int(rng.choice([1, M, M + 2, int(rng.integers(1, M + 1))]))
        costs = budget = None
        if t % 3 == 0:
            costs = rng.integers(0 if t % 2 else 1, 6, M)
            budget = int(rng.integers(0, costs.sum() + 2))
        inst = P.make_instance(max_workers=K, scores_=random_scores(rng, M), costs=costs,
                               budget=budget)
        a = S.solve_formulation_a(inst)
        b = S.solve_formulation_a(inst, route="pyomo")
        assert a.details["route"] == "arrays" and b.details["route"] == "pyomo"
        assert a.status == b.status
        if a.status == "infeasible":
            continue
        va, ka = value_of(inst, a)
        vb, kb = value_of(inst, b)
        assert abs(va - vb) <= TOL * (1 + abs(vb)) and ka == kb
        assert abs(a.bound - b.bound) <= TOL * (1 + abs(b.bound))
        if costs is None:  # the integral LP route: bound = LP optimum, no branching
            assert a.details["lp_integral"] and a.details["nodes"] == 0


def test_second_pass_runs_on_the_live_model_without_recompiling():
    """One Highs object, no Pyomo compile: stage 2 (uniform costs) only changes column bounds
    (sizes >= k1 fixed out) and re-solves the same LP warm: no row, no new costs."""
    from crowdopt.solvers.highs import capture

    inst = P.generate(5, workers=60, max_workers=30)
    with capture() as cap:
        out = S.solve_formulation_a(inst)
    assert out.status == "optimal" and len(cap.calls) == 1 and cap.compile_s == 0.0
    names = [name for name, _, _ in cap.calls[0]]
    assert names.count("passModel") == 1 and names.count("run") >= 2
    assert "addRows" not in names and "changeColsCost" not in names
    assert names.index("run") < names.index("changeColsBounds") < len(names) - names[::-1].index("run")
    assert out.details["second_pass"].startswith("lp") and not out.details["stage2"]["is_mip"]
    fast = S.select_prefix(inst.scores, inst.max_workers)
    assert abs(P.evaluate(inst, out.solution).objective - fast.value) <= TOL
    assert len(out.solution.selected) == fast.k


def test_mip_fallbacks_give_the_same_answer(monkeypatch):
    """A fractional stage-1 vertex and an inconclusive stage-2 LP bound both fall back to the
    MILP on the same live model (never expected in practice; forced here)."""
    rng = np.random.default_rng(12)
    cases = [P.make_instance(max_workers=M, scores_=random_scores(rng, M))
             for M in (3, 6, 9, 12)] + [P.make_instance(max_workers=4, scores_=[1, 1 / 3, 1 / 3, 1 / 3])]
    want = [S.select_prefix(c.scores, c.max_workers) for c in cases]
    from crowdopt.models import formulation
    from crowdopt.models import worker_select as W

    monkeypatch.setattr(W, "lp_bound_proves", lambda lp_max, floor: False)
    for inst, fast in zip(cases, want, strict=True):
        out = S.solve_formulation_a(inst)
        v, k = value_of(inst, out)
        assert abs(v - fast.value) <= TOL and k == fast.k
        if fast.k > 1:  # no LP bound may conclude: a smaller set exists or the MILP proves it
            assert out.details["stage2"]["is_mip"] or len(out.solution.selected) == 1
    monkeypatch.setattr(formulation, "INTEGRAL_TOL", -1.0)  # every vertex "fractional": MILP
    for inst, fast in zip(cases, want, strict=True):
        out = S.solve_formulation_a(inst)
        assert out.details["fallback"] == "milp" and out.bound_source == "milp-dual-bound"
        v, k = value_of(inst, out)
        assert abs(v - fast.value) <= TOL and k == fast.k


def test_shrink_pass_finds_the_smaller_tied_set():
    """F_1 = F_4 = 1 (an exact tie): whatever size stage 1 picks, the exact path returns the
    smallest optimal set, as Algorithm 1 does, and says how stage 2 concluded."""
    inst = P.make_instance(max_workers=4, scores_=[1, 1 / 3, 1 / 3, 1 / 3])
    out = S.solve_formulation_a(inst)
    assert list(out.solution.selected) == [0] and S.select_prefix(inst.scores, 4).k == 1
    if "stage2" in out.details:  # stage 1 picked the 4-set: the LP shrink found the 1-set
        assert out.details["second_pass"].startswith("lp")
        assert out.details["stage2"]["lp_runs"] >= 1


@pytest.mark.slow
@pytest.mark.parametrize("method", ["milp-a", "milp-compact"])
def test_milps_meet_the_scan_when_scores_span_24_orders_of_magnitude(method):
    """A score of -1e12 beside 0.3 let HiGHS's objective scale hide 0.3 (milp-a claimed 1e-9
    optimal with bound 1e-9); workers no optimum selects are held at 0 (never_chosen)."""
    import crowdopt
    from crowdopt.problems.worker_select import WorkerSelectInstance as W

    cases = [(1, [0.3, 1e-9, -1e-9, 0.0, -1e12], {}),
             (1, [-9.6e11, -7.7e10, -1.05e4, 0.0], {}),
             (2, [-4.2e9, -2.3e-12, -1.8e-5, -1.1e6, -7.5e-9], {}),
             (1, [5.0, -1.0], {"costs": [100, 1], "budget": 10})]
    rng = np.random.default_rng(2)
    for _ in range(25):
        M = int(rng.integers(2, 6))
        sc = rng.choice([1, -1], M) * 10.0 ** rng.uniform(-12, 12, M)
        kw = ({"costs": rng.integers(0, 5, M).tolist(), "budget": int(rng.integers(0, 10))}
              if rng.random() < 0.4 else {})
        cases.append((int(rng.integers(1, M + 1)), sc.tolist(), kw))
    for K, scores, kw in cases:
        inst = W.from_arrays(K, scores=scores, **kw)
        ref = crowdopt.solve(inst, "cost-dp" if kw else "sort-scan").objective
        r = crowdopt.solve(inst, method)
        if ref is None:
            assert r.objective is None
            continue
        tol = 1e-9 * max(1.0, abs(ref))
        assert abs(r.objective - ref) <= tol and r.bound >= ref - tol, (K, scores, kw, r)
