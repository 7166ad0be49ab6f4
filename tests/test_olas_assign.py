"""OLAS Model 2: Theorem 1 fast path == epigraph MILP == threshold == brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from crowdopt.errors import InputError
from crowdopt.problems import olas_assign as P
from crowdopt.problems.olas_assign import SPEC, assign_sorted
from crowdopt.solvers.certify import close
from crowdopt.solvers.olas_assign import solve_milp, solve_threshold


def brute_force(inst: P.OlasAssignInstance) -> float:
    best = np.inf
    for z in itertools.product(range(inst.n_labelers), repeat=inst.n_points):
        ev = P.evaluate(inst, P.OlasAssignSolution(np.array(z)))
        if ev.feasible:
            best = min(best, ev.objective)
    return best


def random_instance(rng: np.random.Generator) -> P.OlasAssignInstance:
    """Digest 000 section 4 generator, with rounding (ties) and boundary values mixed in."""
    m = int(rng.integers(1, 7))
    c = rng.integers(0 if rng.random() < 0.2 else 1, 5, m)
    c[rng.integers(m)] = max(1, c.max())
    n = int(rng.integers(0, c.sum() + 1))
    a = rng.uniform(0.5, 0.95, m)
    e = rng.uniform(0, np.log(2) if rng.random() < 0.5 else 1.0, n)
    if rng.random() < 0.5:
        a, e = np.round(a, 1), np.round(e, 1)  # many exact ties
    if rng.random() < 0.2 and n:
        e[rng.integers(n)] = 0.0
        a[rng.integers(m)] = 1.0
    noise = ["linear", "superellipse"][int(rng.integers(2))]
    return P.make_instance(a, c, e, noise)


def test_worked_example_figure2_nm1_and_nm2():
    """Digest T1.4: a=(0.9,0.8,0.7), c=(2,2,2), e=(0.6,..,0.2) -> labelers (1,1,2,2,3)."""
    for noise, noises, opt in (
        ("linear", (0.06, 0.05, 0.08, 0.06, 0.06), 0.08),
        ("superellipse", (0.194019, 0.1, 0.103958, 0.031379, 0.006446), 0.194019),
    ):
        inst = P.make_instance([0.9, 0.8, 0.7], [2, 2, 2], [0.6, 0.5, 0.4, 0.3, 0.2], noise)
        sol = assign_sorted(inst)
        assert sol.assignment.tolist() == [0, 0, 1, 1, 2]
        eps = inst.eps_matrix()[sol.assignment, np.arange(5)]
        assert np.allclose(eps, noises, atol=1e-6)
        assert P.evaluate(inst, sol).objective == pytest.approx(opt, abs=1e-6)
        assert solve_milp(inst).bound == pytest.approx(opt, abs=1e-6)


@pytest.mark.slow
def test_fast_equals_milp_and_threshold_on_300_random_instances():
    rng = np.random.default_rng(2026)
    for _ in range(300):
        inst = random_instance(rng)
        fast = P.evaluate(inst, assign_sorted(inst))
        assert fast.feasible
        milp = solve_milp(inst)
        assert milp.status == "optimal"
        exact = P.evaluate(inst, milp.solution)
        assert exact.feasible
        assert close(fast.objective, exact.objective), (inst, fast.objective, exact.objective)
        assert close(milp.bound, exact.objective)
        thr = solve_threshold(inst)
        assert close(thr.bound, fast.objective)


def test_fast_equals_brute_force_on_tiny_instances():
    rng = np.random.default_rng(7)
    for _ in range(60):
        m = int(rng.integers(1, 4))
        c = rng.integers(1, 3, m)
        n = int(rng.integers(1, min(5, c.sum()) + 1))
        inst = P.make_instance(np.round(rng.uniform(0.5, 1, m), 1), c,
                               np.round(rng.uniform(0, 0.7, n), 1),
                               ["linear", "superellipse"][int(rng.integers(2))])
        assert close(P.evaluate(inst, assign_sorted(inst)).objective, brute_force(inst))


def test_assignment_respects_capacities_and_fills_best_labeler_first():
    inst = P.make_instance([0.6, 0.9, 0.7], [3, 2, 2], [0.1, 0.5, 0.3], "linear")
    sol = assign_sorted(inst)
    assert sol.assignment.tolist() == [1, 1, 2] or set(sol.assignment.tolist()) == {1} | {2}
    assert sol.assignment[1] == 1  # highest entropy -> most accurate labeler
    assert np.bincount(sol.assignment, minlength=3)[1] <= 2
    few = P.make_instance([0.6, 0.9], [3, 4], [0.1, 0.5, 0.3], "linear")  # N <= c_best
    assert set(assign_sorted(few).assignment.tolist()) == {1}


def test_infeasible_instance_is_a_result_not_a_crash():
    inst = P.make_instance([0.9, 0.8], [1, 1], [0.1, 0.2, 0.3], "linear")
    assert not inst.feasible
    assert solve_milp(inst).status == "infeasible"
    assert solve_threshold(inst).status == "infeasible"
    assert SPEC.default("fast").run(inst, None).status == "infeasible"


def test_evaluator_detects_violations():
    inst = P.make_instance([0.9, 0.8], [1, 1], [0.1, 0.2], "linear")
    over = P.evaluate(inst, P.OlasAssignSolution(np.array([0, 0])))
    assert not over.feasible and over.max_violation == 1 and "capacity" in over.violations[0]
    missing = P.evaluate(inst, P.OlasAssignSolution(np.array([0, -1])))
    assert not missing.feasible and "not assigned" in missing.violations[0]


def test_empty_query_set():
    inst = P.make_instance([0.9], [2], [], "linear")
    assert P.evaluate(inst, assign_sorted(inst)).objective == 0.0
    assert solve_milp(inst).status == "optimal"


def test_round_trip_and_solution_ids():
    inst = P.make_instance([0.9, 0.8], [1, 2], [0.3, 0.2, 0.1], "superellipse",
                           labeler_ids=["ann", "bob"], point_ids=[10, 11, 12])
    again = P.from_dict(P.to_dict(inst))
    assert np.array_equal(again.accuracies, inst.accuracies) and again.labeler_ids == ["ann", "bob"]
    sol = assign_sorted(inst)
    d = P.solution_to_dict(inst, sol)
    assert d["assignment"][0] == "ann"
    assert np.array_equal(P.solution_from_dict(inst, d).assignment, sol.assignment)
    with pytest.raises(InputError, match=r"solution.assignment\[1\]"):
        P.solution_from_dict(inst, {"assignment": ["ann", "zed", "bob"]})


@pytest.mark.parametrize("field,value,needle", [
    ("accuracies", [0.9, float("nan")], "accuracies[1]"),
    ("accuracies", [0.9, 1.5], "probability"),
    ("capacities", [1, -1], "capacities[1]"),
    ("capacities", [1, 1.5], "integer"),
    ("capacities", [1], "length 2"),
    ("entropies", [0.2, 1.7], "entropies[1]"),
    ("noise", "quadratic", "noise"),
    ("noise", {"type": "logistic", "w0": 0, "we": 1.0, "wa": 1.0}, "monotone"),
])
def test_validation_names_the_field(field, value, needle):
    d = {"accuracies": [0.9, 0.8], "capacities": [1, 1], "entropies": [0.2, 0.3], "noise": "linear"}
    d[field] = value
    with pytest.raises(InputError) as err:
        P.from_dict(d)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_generator_is_seeded_and_feasible():
    a = P.generate(5, points=30, labelers=4)
    b = P.generate(5, points=30, labelers=4)
    assert np.array_equal(a.entropies, b.entropies) and np.array_equal(a.capacities, b.capacities)
    assert a.feasible
    with pytest.raises(InputError, match="labelers"):
        P.generate(0, labelers=0)


def test_huge_capacities_do_not_allocate_slots():
    inst = P.make_instance([0.9, 0.8], [3_233_989_795, 2], [0.3, 0.2, 0.1], "linear")
    assert P.evaluate(inst, assign_sorted(inst)).objective == pytest.approx(0.03)
    assert solve_threshold(inst).bound == pytest.approx(0.03)
