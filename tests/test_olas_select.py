"""OLAS Model 10 fast path (corrected Algorithm 1) and the problem module (paper 000 Sec. 3.3).

Exact models are checked in test_olas_select_exact.py; here: the worked examples (T2.10),
brute force on tiny pools, structure (T2.5, T2.6, T2.8), monotonicity in beta (T2.7), the budget
cap (F3), the printed Algorithm 1's defects (T2.9), validation and the evaluator.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from crowdopt.errors import InputError
from crowdopt.problems import olas_select as P
from crowdopt.problems.olas_noise import CallableNoise
from crowdopt.problems.olas_select import assign_theorem1
from crowdopt.solvers.certify import close
from crowdopt.solvers.olas_assign import assign_sorted
from crowdopt.solvers.olas_select import select_greedy

A3 = [0.9, 0.8, 0.7]
C3 = [2, 2, 2]
E5 = [0.6, 0.5, 0.4, 0.3, 0.2]


def random_instance(rng: np.random.Generator, max_points: int = 40) -> P.OlasSelectInstance:
    """Digest 000 section 4 generator with ties, beta exactly at an eps value, labelers that can
    take nothing (capacity 0 or noise above beta everywhere), and budgets below/above capacity."""
    m = int(rng.integers(1, 7))
    u = int(rng.integers(0, max_points + 1))
    c = rng.integers(0 if rng.random() < 0.2 else 1, 5, m)
    a = rng.uniform(0.5, 0.95, m)
    e = rng.uniform(0, np.log(2) if rng.random() < 0.5 else 1.0, u)
    if rng.random() < 0.5:
        a, e = np.round(a, 1), np.round(e, 1)  # many exact ties
    if rng.random() < 0.3:
        a[rng.integers(m)] = 0.0  # this labeler can take (almost) nothing
    noise = ["linear", "superellipse"][int(rng.integers(2))]
    eps = P.make_instance(a, c, e, noise, 1.0).eps_matrix()
    if eps.size and rng.random() < 0.4:
        beta = float(rng.choice(eps.ravel()))  # eps exactly at beta for some pairs
    else:
        beta = float(rng.choice([0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 1.0]))
    r = rng.random()
    budget = None if r < 0.4 else int(rng.integers(0, max(1, int(c.sum())) + 3))
    return P.make_instance(a, c, e, noise, beta, budget)


def brute_force(inst: P.OlasSelectInstance) -> float:
    """Best (10a) over every map point -> labeler or nothing, with (10c), (10d) and B."""
    M, u = inst.n_labelers, inst.n_points
    if u == 0:
        return 0.0
    combos = np.array(list(itertools.product(range(-1, M), repeat=u)))
    used = combos >= 0
    ok = np.all(~used | P.allowed(inst)[np.maximum(combos, 0), np.arange(u)], axis=1)
    for i in range(M):
        ok &= (combos == i).sum(axis=1) <= inst.capacities[i]
    if inst.budget is not None:
        ok &= used.sum(axis=1) <= inst.budget
    return float((used[ok] * inst.entropies).sum(axis=1).max())


def objective(inst: P.OlasSelectInstance) -> float:
    ev = P.evaluate(inst, select_greedy(inst))
    assert ev.feasible, ev.violations
    return ev.objective


@pytest.mark.parametrize("noise, beta, pairs, value", [
    ("linear", 0.055, [(1, 2), (1, 3), (2, 5)], 1.1),
    ("superellipse", 0.05, [(1, 3), (1, 4), (2, 5)], 0.9),
    ("superellipse", 0.02, [(1, 4), (1, 5)], 0.5),
])
def test_worked_examples_t2_10(noise, beta, pairs, value):
    inst = P.make_instance(A3, C3, E5, noise, beta)
    sol = select_greedy(inst)
    got = [(int(i) + 1, int(j) + 1) for i, j in zip(sol.assignment, sol.selected, strict=True)]
    assert got == pairs
    assert P.evaluate(inst, sol).objective == pytest.approx(value)


def test_paper_counterexample_to_the_appendix_b_proof():
    """Digest 2.4: c1 = 1, e = (0.6, 0.5, 0.1), labeler 2 may only take point 3 -> {1, 3}."""
    nf = CallableNoise(lambda a, e: np.where(a > 0.8, 0.0, np.where(e <= 0.2, 0.0, 1.0)))
    inst = P.make_instance([0.9, 0.6], [1, 5], [0.6, 0.5, 0.1], nf, 0.1)
    sol = select_greedy(inst)
    assert sorted(sol.selected.tolist()) == [0, 2]
    assert P.evaluate(inst, sol).objective == pytest.approx(brute_force(inst)) == 0.7


def test_greedy_equals_brute_force_on_tiny_pools():
    rng = np.random.default_rng(11)
    for _ in range(150):
        inst = random_instance(rng, max_points=6)
        if inst.n_labelers > 3:
            continue
        assert close(objective(inst), brute_force(inst))


def test_greedy_structure_t2_5_t2_6():
    """Every pair allowed; contiguous blocks; labelers in accuracy order, full but the last;
    the assignment is Theorem 1's on the selected set (T2.6); no crossing (10e)-(10h)."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        inst = random_instance(rng)
        sol = select_greedy(inst)
        assert P.allowed(inst)[sol.assignment, sol.selected].all()
        assert P.policy_violations(inst, sol) == []
        rank_p = np.argsort(inst.point_order())
        pos = rank_p[sol.selected]
        assert np.all(np.diff(pos) > 0)  # entropy order, each point once
        for i in np.unique(sol.assignment):  # each labeler: one contiguous block
            block = pos[sol.assignment == i]
            assert block[-1] - block[0] == len(block) - 1
        canon = assign_theorem1(inst, sol.selected)
        assert canon.selected.tolist() == sol.selected.tolist()
        assert canon.assignment.tolist() == sol.assignment.tolist()
        if len(sol.selected):  # its max noise is the Model 2 optimum on Q* (T2.6)
            from crowdopt.problems import olas_assign as P2
            sub = P2.OlasAssignInstance(inst.accuracies, inst.capacities,
                                        inst.entropies[sol.selected], inst.noise)
            m2 = P2.evaluate(sub, assign_sorted(sub)).objective
            assert P.evaluate(inst, sol).extra["max_noise"] == pytest.approx(m2)
            assert m2 <= inst.beta + P.ALLOWED_TOL


@pytest.mark.slow
def test_monotone_in_beta_t2_7():
    rng = np.random.default_rng(7)
    for _ in range(300):
        base = random_instance(rng)
        counts, values = [], []
        for beta in np.linspace(0, 1, 11):
            inst = P.make_instance(base.accuracies, base.capacities, base.entropies, base.noise,
                                   beta, base.budget)
            sol = select_greedy(inst)
            counts.append(len(sol.selected))
            values.append(P.evaluate(inst, sol).objective)
        assert np.all(np.diff(counts) >= 0)
        assert np.all(np.diff(values) >= -1e-12)


def test_large_beta_gives_top_entropy_points_t2_8():
    rng = np.random.default_rng(8)
    for _ in range(200):
        base = random_instance(rng)
        inst = P.make_instance(base.accuracies, base.capacities, base.entropies, base.noise,
                               float(base.eps_matrix().max(initial=0.0)), base.budget)
        sol = select_greedy(inst)
        k = inst.max_selected
        assert len(sol.selected) == k
        assert sol.selected.tolist() == inst.point_order()[:k].tolist()


def test_budget_cap_truncates_the_uncapped_greedy_f3():
    rng = np.random.default_rng(9)
    for _ in range(200):
        base = random_instance(rng)
        free = select_greedy(P.make_instance(base.accuracies, base.capacities, base.entropies,
                                             base.noise, base.beta))
        for B in (0, 1, 3, len(free.selected), len(free.selected) + 5):
            capped = select_greedy(P.make_instance(base.accuracies, base.capacities,
                                                   base.entropies, base.noise, base.beta, B))
            assert capped.selected.tolist() == free.selected[:B].tolist()
            assert capped.assignment.tolist() == free.assignment[:B].tolist()


def test_labelers_that_can_take_nothing():
    # capacity 0 in the middle, and a labeler whose noise is above beta everywhere
    inst = P.make_instance([0.9, 0.85, 0.8, 0.0], [1, 0, 2, 3], E5, "linear", 0.1)
    sol = select_greedy(inst)
    assert set(sol.assignment.tolist()) <= {0, 2}
    assert P.evaluate(inst, sol).objective == pytest.approx(brute_force(inst))
    none = P.make_instance([0.1], [3], E5, "linear", 0.01)
    assert len(select_greedy(none).selected) == 0
    assert P.evaluate(none, select_greedy(none)).objective == 0.0
    empty = P.make_instance([0.9], [3], [], "linear", 0.1)
    assert len(select_greedy(empty).selected) == 0


def test_allowed_predicate_includes_eps_exactly_at_beta():
    inst = P.make_instance([0.7], [5], [0.5], "linear", 0.0)
    eps = float(inst.eps_matrix()[0, 0])  # 0.5 * (1 - 0.7) = 0.15000000000000002
    at = P.make_instance([0.7], [5], [0.5], "linear", eps)
    assert P.allowed(at)[0, 0] and len(select_greedy(at).selected) == 1
    near = P.make_instance([0.7], [5], [0.5], "linear", 0.15)  # digest 7.4: within 1e-12
    assert P.allowed(near)[0, 0]
    below = P.make_instance([0.7], [5], [0.5], "linear", eps - 1e-9)
    assert not P.allowed(below)[0, 0] and len(select_greedy(below).selected) == 0


# --------------------------------------------------------------- T2.9: Algorithm 1 as printed

def algorithm1_as_printed(inst: P.OlasSelectInstance, stop_after_last_labeler: bool = False,
                          max_steps: int = 10_000) -> list[tuple[int, int]]:
    """Literal transcription of the paper's Algorithm 1 (digest A3), 1-based, sorted inputs.

    Kept only here, as the regression test of the correction (A3'). Returns (labeler, point)
    pairs in sorted ranks. Without a guard it reads a_{M+1} (IndexError) or never ends.
    """
    a = [None] + list(inst.accuracies[inst.labeler_order()])
    c = [None] + list(inst.capacities[inst.labeler_order()])
    e = [None] + list(inst.entropies[inst.point_order()])
    U, cap = len(e) - 1, int(inst.capacities.sum())
    v, u, Q = 1, 1, []
    steps = 0
    while len(Q) < cap:
        while v <= U:
            steps += 1
            if steps > max_steps:
                raise RuntimeError("Algorithm 1 as printed does not terminate")
            if stop_after_last_labeler and u > len(a) - 1:
                return Q
            if float(inst.noise(a[u], e[v])) <= inst.beta + P.ALLOWED_TOL:
                k = min(U - v, c[u] - 1)
                Q.extend((u, x) for x in range(v, v + k + 1))
                u = u + 1
                v = v + k  # the printed update; A3' uses v + c_u
            else:
                v = v + 1
        steps += 1
        if steps > max_steps:
            raise RuntimeError("Algorithm 1 as printed does not terminate")
    return Q


def test_printed_algorithm1_duplicates_points_t2_9():
    inst = P.make_instance(A3, C3, E5, "linear", 0.2)  # every pair allowed
    printed = algorithm1_as_printed(inst, stop_after_last_labeler=True)
    assert printed == [(1, 1), (1, 2), (2, 2), (2, 3), (3, 3), (3, 4)]  # points 2, 3 twice
    sol = select_greedy(inst)
    got = [(int(i) + 1, int(j) + 1) for i, j in zip(sol.assignment, sol.selected, strict=True)]
    assert got == [(1, 1), (1, 2), (2, 3), (2, 4), (3, 5)]
    with pytest.raises(IndexError):  # no u <= M guard: reads a_{M+1}
        algorithm1_as_printed(inst)
    stuck = P.make_instance(A3, C3, E5, "linear", 0.055)
    with pytest.raises(RuntimeError, match="terminate"):  # pool ends before |Q| = total cap
        algorithm1_as_printed(stuck, stop_after_last_labeler=True)


def test_printed_algorithm1_is_wrong_often_and_corrected_never():
    rng = np.random.default_rng(9)
    dup = 0
    for _ in range(200):
        inst = random_instance(rng)
        try:
            pairs = algorithm1_as_printed(inst, stop_after_last_labeler=True, max_steps=2000)
        except RuntimeError:
            continue
        points = [p for _, p in pairs]
        dup += len(points) != len(set(points))
        sol = select_greedy(inst)
        assert len(set(sol.selected.tolist())) == len(sol.selected)
    assert dup > 20


# --------------------------------------------------------------- instance, validation, evaluator

def test_make_instance_validation_errors():
    with pytest.raises(InputError, match="accuracies"):
        P.make_instance([1.2], [1], [0.1])
    with pytest.raises(InputError, match="capacities"):
        P.make_instance([0.9], [-1], [0.1])
    with pytest.raises(InputError, match="capacities"):
        P.make_instance([0.9, 0.8], [1], [0.1])
    with pytest.raises(InputError, match="entropies"):
        P.make_instance([0.9], [1], [1.5], "linear")  # NM1 needs e <= 1 (digest 7.7)
    with pytest.raises(InputError, match="beta"):
        P.make_instance([0.9], [1], [0.1], beta=-0.1)
    with pytest.raises(InputError, match="budget"):
        P.make_instance([0.9], [1], [0.1], budget=-2)
    with pytest.raises(InputError, match="point_ids"):
        P.make_instance([0.9], [1], [0.1, 0.2], point_ids=["x", "x"])
    bad = CallableNoise(lambda a, e: np.abs(e - 0.5) * (1 - a), check=False)  # not monotone in e
    with pytest.raises(InputError, match="non-decreasing in entropy") as err:
        P.make_instance([0.9], [3], [0.1, 0.5, 0.9], bad, 0.03)
    assert err.value.field == "noise"


def test_from_dict_round_trip_and_errors():
    inst = P.make_instance(A3, C3, E5, "superellipse", 0.05, 2, ["ann", "bob", "cy"],
                           [f"p{j}" for j in range(5)])
    back = P.from_dict(json.loads(json.dumps(P.to_dict(inst))))
    assert P.to_dict(back) == P.to_dict(inst)
    with pytest.raises(InputError, match="beta"):
        P.from_dict({"accuracies": A3, "capacities": C3, "entropies": E5})
    with pytest.raises(InputError, match="colour"):
        P.from_dict({"accuracies": A3, "capacities": C3, "entropies": E5, "beta": 0.1,
                     "colour": 1})
    sol = select_greedy(back)
    d = P.solution_to_dict(back, sol)
    assert d == {"selected": ["p2", "p3"], "assignment": ["ann", "ann"]}
    again = P.solution_from_dict(back, json.loads(json.dumps(d)))
    assert again.selected.tolist() == sol.selected.tolist()
    with pytest.raises(InputError, match="solution.selected"):
        P.solution_from_dict(back, {"selected": ["zz"], "assignment": ["ann"]})
    with pytest.raises(InputError, match="solution.assignment"):
        P.solution_from_dict(back, {"selected": ["p1"], "assignment": []})


def test_evaluator_reports_each_violation():
    inst = P.make_instance(A3, C3, E5, "linear", 0.055, budget=2)

    def ev(sel, lab):
        return P.evaluate(inst, P.OlasSelectSolution(np.array(sel, np.int64),
                                                     np.array(lab, np.int64)))

    good = ev([1, 2], [0, 0])
    assert good.feasible and good.objective == pytest.approx(0.9) and good.extra["selected"] == 2
    assert "(10b)" in " ".join(ev([1, 1], [0, 1]).violations)
    assert "(10d)" in " ".join(ev([0], [0]).violations)  # eps = 0.06 > 0.055
    assert "(10c)" in " ".join(ev([3, 4], [1, 1]).violations + ev([2, 3, 4], [0, 0, 0]).violations)
    assert "budget" in " ".join(ev([1, 2, 4], [0, 0, 1]).violations)
    assert not ev([7], [0]).feasible and not ev([1], [5]).feasible
    assert not ev([1, 2], [0]).feasible
    assert P.policy_violations(inst, P.OlasSelectSolution(np.array([1, 2]), np.array([1, 0])))


def test_generator_is_seeded_and_validated():
    a, b = P.generate(3), P.generate(3)
    assert P.to_dict(a) == P.to_dict(b)
    assert P.generate(3, budget=4).budget == 4
    with pytest.raises(InputError, match="labelers"):
        P.generate(0, labelers=0)
    with pytest.raises(InputError, match="colour"):
        P.generate(0, colour=1)
