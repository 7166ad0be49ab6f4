"""labeler-set: evaluator, validation, fast (top-k) == exact (MILP) == brute force."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crowdopt.api import compare, run_method
from crowdopt.cli import main
from crowdopt.errors import InputError
from crowdopt.problems import labeler_set as P
from crowdopt.registry import RunOptions, get_problem
from crowdopt.solvers import labeler_set as S

SPEC = get_problem("labeler-set")


def objective(inst, out):
    ev = P.evaluate(inst, out.solution)
    assert ev.feasible, ev.violations
    return ev.objective


def random_instance(seed, rule="mv", m=None, costs="none"):
    rng = np.random.default_rng(seed)
    m = m or int(rng.integers(1, 8))
    params = dict(labelers=m, rule=rule, costs=costs, p_low=float(rng.choice([0.0, 0.3, 0.5])))
    if seed % 3 == 0:
        params["decimals"] = 1  # ties and boundary values 0 / 1
    if seed % 4 == 1:
        params["max_size"] = int(rng.integers(1, m + 1))
    if costs != "none" and seed % 2:
        params["budget"] = float(rng.uniform(0.0, 0.3))
    return P.generate(seed, **params)


@pytest.mark.parametrize("rule", ["mv", "wmv"])
def test_fast_equals_brute_force_without_heterogeneous_costs(rule):
    for seed in range(60):
        inst = random_instance(seed, rule, costs="none" if seed % 2 else "uniform")
        fast = S._fast(inst, RunOptions())
        brute = S.solve_enumeration(inst)
        if brute.status == "infeasible":
            assert fast.status == "infeasible"
            continue
        assert objective(inst, fast) == pytest.approx(objective(inst, brute), abs=1e-7), seed
        assert fast.status == "optimal"


@pytest.mark.parametrize("rule,m", [("mv", 8), ("wmv", 5)])
def test_milp_equals_brute_force_with_costs(rule, m):
    for seed in range(4):
        inst = random_instance(seed, rule, m=m, costs="random" if seed % 2 else "uniform")
        exact = S.solve_milp(inst, RunOptions())
        brute = S.solve_enumeration(inst)
        assert exact.status == brute.status
        if brute.status == "optimal":
            assert objective(inst, exact) == pytest.approx(objective(inst, brute), abs=1e-7)
            assert exact.bound == pytest.approx(brute.bound, abs=1e-6)
            fast = S._fast(inst, RunOptions())
            assert objective(inst, fast) <= objective(inst, brute) + 1e-9
            if inst.uniform_costs:  # structure theorems: fast == exact MILP
                assert objective(inst, fast) == pytest.approx(objective(inst, exact), abs=1e-7)


def test_cost_instance_where_top_k_loses():
    inst = P.make_instance([0.9, 0.85, 0.8, 0.75, 0.7], costs=[0.3, 0.0, 0.0, 0.0, 0.0],
                           cost_weight=1.0)
    fast = objective(inst, S._fast(inst, RunOptions()))
    exact = S.solve_milp(inst, RunOptions())
    brute = objective(inst, S.solve_enumeration(inst))
    assert objective(inst, exact) == pytest.approx(brute, abs=1e-7)
    assert fast < brute - 0.01  # top-k must pay for labeler 0; {1,2,3} is better
    assert sorted(exact.solution.selected.tolist()) == [1, 2, 3]
    assert objective(inst, S._local(inst, RunOptions())) == pytest.approx(brute, abs=1e-9)


def test_odd_optimum_exists_with_any_costs():
    for seed in range(20):
        inst = random_instance(seed, "mv", m=7, costs="random")
        brute = S.solve_enumeration(inst)
        if brute.status != "optimal":
            continue
        masks = range(1, 1 << 7)
        odd_best = max(
            (P.evaluate(inst, P.LabelerSetSolution(np.flatnonzero([(k >> i) & 1 for i in range(7)])))
             for k in masks if bin(k).count("1") % 2),
            key=lambda e: e.objective if e.feasible else -1e9)
        assert odd_best.objective == pytest.approx(brute.bound, abs=1e-12)


def test_evaluator_feasibility():
    inst = P.make_instance([0.9, 0.6, 0.7], costs=[1, 1, 1], budget=2, max_size=2)
    ev = P.evaluate(inst, P.LabelerSetSolution(np.array([0, 1, 2])))
    assert not ev.feasible and len(ev.violations) == 2
    assert not P.evaluate(inst, P.LabelerSetSolution(np.array([], dtype=np.int64))).feasible
    ok = P.evaluate(inst, P.LabelerSetSolution(np.array([0])))
    assert ok.feasible and ok.objective == pytest.approx(0.9)
    assert not P.evaluate(inst, P.LabelerSetSolution(np.array([0, 0]))).feasible


def test_infeasible_budget():
    inst = P.make_instance([0.9, 0.6], costs=[1, 1], budget=0.5)
    assert S._fast(inst, RunOptions()).status == "infeasible"
    assert S.solve_enumeration(inst).status == "infeasible"
    assert S.solve_milp(inst, RunOptions()).status == "infeasible"



def test_budget_with_free_labelers_is_no_row():
    """Costs all 0 with a budget: C(S) = 0 <= B holds, the MILP has no budget row (Pyomo refused
    the constant row 0 <= B: a traceback from solve --method exact)."""
    for costs in ([0.0, 0.0, 0.0], [-0.0, 0.0, -0.0]):
        inst = P.make_instance([0.9, 0.6, 0.7], costs=costs, budget=0.2, max_size=2)
        exact = S.solve_milp(inst, RunOptions())
        assert exact.status == "optimal"
        assert objective(inst, exact) == pytest.approx(objective(inst, S.solve_enumeration(inst)))


@pytest.mark.parametrize("q", [1e-300, 1e-12, 1 - 1e-12])
def test_milp_at_qualities_next_to_0_and_1(q):
    """Qualities 1e-300 put 1e-300 next to 1 in the margin rows (HiGHS refused the scaled
    model: a traceback); within 1e-12 of 0 or 1 the MILP still meets enumeration."""
    inst = P.make_instance([q, q, q, 0.5], costs=[0.08, 0.02, 0.05, 0.01], cost_weight=1.0,
                           budget=0.2, max_size=3)
    exact = S.solve_milp(inst, RunOptions())
    assert exact.status == "optimal"
    assert objective(inst, exact) == pytest.approx(objective(inst, S.solve_enumeration(inst)),
                                                   abs=1e-9)

@pytest.mark.parametrize("q", [[1 - 2e-9, 0.3], [0.99997, 0.3, 0.5, 0.7, 0.3, 0.99997],
                               [0.9, 1 - 1e-7, 1e-7, 0.5]])
def test_milp_meets_enumeration_with_a_quality_within_1e_5_of_0_or_1(q):
    """HiGHS presolve on the margin MILP with such a quality returned 'optimal' below the
    optimum (0.3 with bound 0.3 where 0.999999998 is feasible): presolve is off for them."""
    inst = P.make_instance(q, costs=[0.0, 0.01, 0.05, 0.05, 0.0, 0.01][:len(q)],
                           cost_weight=1.0)
    exact = S.solve_milp(inst, RunOptions())
    best = objective(inst, S.solve_enumeration(inst))
    assert exact.status == "optimal" and objective(inst, exact) == pytest.approx(best, abs=1e-9)
    assert exact.bound >= best - 1e-9


@pytest.mark.parametrize("bad,field", [
    ({"qualities": [0.5, 1.2]}, "qualities[1]"),
    ({"qualities": [0.5, 1.0], "rule": "wmv"}, "qualities[1]"),
    ({"qualities": [0.5], "rule": "plurality"}, "rule"),
    ({"qualities": [0.5], "cost_weight": 1.0}, "costs"),
    ({"qualities": [0.5], "costs": [1, 2]}, "costs"),
    ({"qualities": [0.5], "max_size": 0}, "max_size"),
    ({"qualities": [0.5], "colour": 1}, "colour"),
    ({}, "qualities"),
])
def test_validation_names_the_field(bad, field):
    with pytest.raises(InputError) as exc:
        P.from_dict(bad)
    assert exc.value.field == field


def test_roundtrip_and_ids():
    inst = P.example()
    again = P.from_dict(P.to_dict(inst))
    assert np.array_equal(again.qualities, inst.qualities)
    sol = S.select_top_k(inst)
    d = P.solution_to_dict(inst, sol)
    assert all(isinstance(x, str) for x in d["selected"])
    assert np.array_equal(P.solution_from_dict(inst, d).selected, sol.selected)


def test_compare_certifies_example():
    res = {r.algorithm: r for r in compare(P.example())}
    best = res["enumeration"].objective
    assert res["milp"].objective == pytest.approx(best, abs=1e-7)
    assert res["top-k"].objective <= best + 1e-12
    assert res["local-search"].objective == pytest.approx(best, abs=1e-7)
    wide = P.generate(0, labelers=17, rule="wmv")  # the pattern MILP's memory guard
    assert run_method(SPEC, wide, "milp").status == "skipped"
    assert run_method(SPEC, P.generate(0, labelers=30), "fast").status == "optimal"


def test_cli_generate_and_compare(tmp_path, capsys):
    path = tmp_path / "ls.json"
    assert main(["generate", "labeler-set", "--seed", "3", "--param", "costs=random",
                 "-o", str(path)]) == 0
    assert main(["compare", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    objs = {r["algorithm"]: r["objective"] for r in doc["results"]}
    assert objs["milp"] == pytest.approx(objs["enumeration"], abs=1e-7)


def test_enumeration_obeys_its_time_limit_with_the_best_set_seen():
    rng = np.random.default_rng(3)
    inst = P.LabelerSetInstance.from_arrays(qualities=rng.uniform(0.5, 0.95, 18))
    full = S.solve_enumeration(inst)
    assert full.status == "optimal" and full.details["sets"] == (1 << 18) - 1
    assert S.solve_enumeration(inst, RunOptions(time_limit=60.0)).solution.selected.tolist() \
        == full.solution.selected.tolist()  # blocks change nothing when the limit is not hit
    cut = S.solve_enumeration(inst, RunOptions(time_limit=0.0))
    assert cut.status == "time_limit" and cut.bound is None
    assert 0 < cut.details["sets"] < (1 << 18) - 1 and "no bound" in cut.details["message"]
    assert cut.reported_objective <= full.reported_objective
    assert P.evaluate(inst, cut.solution).objective == pytest.approx(cut.reported_objective)


def test_a_heuristic_never_claims_infeasible_when_a_set_fits():
    """No top-k prefix fits the budget but cheaper sets do: top-k reports no_solution (it
    once said 'infeasible', exit 3), local search starts from the best single labeler that
    fits; infeasible only when no labeler fits at all (costs are >= 0)."""
    import crowdopt

    inst = crowdopt.LabelerSetInstance.from_arrays([0.9, 0.8, 0.75, 0.7, 0.7],
                                                   costs=[10, 2, 2, 3, 2], budget=8)
    assert crowdopt.solve(inst, "top-k").status == "no_solution"
    local = crowdopt.solve(inst, "local-search")
    assert local.status == "feasible" and local.certificate.certified
    assert crowdopt.solve(inst, "exact").objective >= local.objective
    none_fits = crowdopt.LabelerSetInstance.from_arrays([0.9, 0.8], costs=[10, 9], budget=8)
    for method in ("top-k", "local-search", "exact"):
        assert crowdopt.solve(none_fits, method).status == "infeasible"
