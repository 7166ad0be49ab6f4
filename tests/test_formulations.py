"""One formulation per exact method: the array emitter emits the compiled Pyomo model's matrix
entry for entry, and `solve_model(inst, build_model(inst, m))` answers as `solve(inst, m)`."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crowdopt
from crowdopt import OlasSelectInstance, WorkerSelectInstance
from crowdopt.registry import RunOptions, get_problem, problem_names
from crowdopt.solvers.exact_runner import run
from crowdopt.solvers.highs import compile_pyomo

PROPERTY = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def formulations(problem: str) -> dict:
    return importlib.import_module(get_problem(problem).models).FORMULATIONS


def key(component_data) -> tuple:
    return (component_data.parent_component().name, component_data.index())


def assert_same_matrix(form, inst) -> None:
    """The emitter's arrays equal Pyomo's compile of the builder's model: the same column and
    row keys in the same order, then every coefficient, bound, integrality and the objective."""
    e = form.emit(inst)
    f = compile_pyomo(form.model(inst))
    cols = [key(v) for v in f.columns]
    rows = [key(c) for c in f.row_constraints]
    assert e.columns() == cols
    assert e.rows() == rows
    assert e.sense == f.sense and e.offset == f.offset
    np.testing.assert_array_equal(e.c, f.c)
    np.testing.assert_array_equal(e.col_lo, f.col_lo)
    np.testing.assert_array_equal(e.col_hi, f.col_hi)
    np.testing.assert_array_equal(e.integrality, f.integrality)
    np.testing.assert_array_equal(e.row_lo, f.row_lo)
    np.testing.assert_array_equal(e.row_hi, f.row_hi)
    A, B = e.A.tocsc(), f.A.tocsc()
    A.sort_indices()
    B.sort_indices()
    assert A.shape == B.shape
    np.testing.assert_array_equal(A.indptr, B.indptr)
    np.testing.assert_array_equal(A.indices, B.indices)
    np.testing.assert_array_equal(A.data, B.data)


def assert_same_optimum(form, inst) -> None:
    """Both routes: same status, bound, objective claim and solution."""
    opts = RunOptions()
    a, b = run(form, inst, opts), run(form, inst, opts, route="pyomo")
    assert (a.route, b.route) == ("arrays", "pyomo")
    ra, rb = a.result.res, b.result.res
    assert ra.status == rb.status and ra.bound == rb.bound and ra.objective == rb.objective
    spec = get_problem(form.problem)
    sa, sb = a.result.solution, b.result.solution
    assert (sa is None) == (sb is None)
    if sa is not None:
        assert spec.solution_to_dict(inst, sa) == spec.solution_to_dict(inst, sb)


# ---------------------------------------------------------------------------- random instances
grid = st.sampled_from([0.0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.6, 0.65, 0.69])


@st.composite
def olas_select_instances(draw) -> OlasSelectInstance:
    m = draw(st.integers(1, 5))
    u = draw(st.integers(0, 14))
    acc = draw(st.lists(st.sampled_from([0.0, 0.55, 0.6, 0.7, 0.75, 0.9, 0.95]),
                        min_size=m, max_size=m))
    caps = draw(st.lists(st.integers(0, 4), min_size=m, max_size=m))
    ent = draw(st.lists(grid, min_size=u, max_size=u))
    noise = draw(st.sampled_from(["linear", "superellipse"]))
    beta = draw(st.sampled_from([0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 1.0]))
    budget = draw(st.none() | st.integers(0, 12))
    ids = draw(st.booleans())
    return OlasSelectInstance.from_arrays(
        acc, caps, ent, noise=noise, beta=beta, budget=budget,
        labeler_ids=[f"L{i}" for i in range(m)] if ids else None,
        point_ids=[f"p{j}" for j in range(u)] if ids and u else None)


@st.composite
def worker_select_instances(draw) -> WorkerSelectInstance:
    M = draw(st.integers(1, 7))
    K = draw(st.integers(1, M + 2))
    scores = draw(st.lists(st.sampled_from([-0.5, 0.0, 1 / 3, 0.3, 0.8, 1.0, 2.0]),
                           min_size=M, max_size=M))
    costs = draw(st.none() | st.lists(st.integers(0, 5), min_size=M, max_size=M))
    budget = None if costs is None else draw(st.integers(0, sum(costs) + 1))
    ids = draw(st.booleans())
    return WorkerSelectInstance.from_arrays(
        K, scores=scores, costs=costs, budget=budget,
        worker_ids=[f"w{i}" for i in range(M)] if ids else None)


EMITTED = [("olas-select", "lp-prefix", olas_select_instances()),
           ("olas-select", "lp-bmatching", olas_select_instances()),
           ("worker-select", "milp-a", worker_select_instances())]


def test_every_emitter_is_covered_here():
    emitted = {(p, m) for p in problem_names() for m, f in formulations(p).items()
               if f.emit is not None}
    assert emitted == {(p, m) for p, m, _ in EMITTED}


@pytest.mark.slow
@pytest.mark.parametrize(("problem", "method", "instances"), EMITTED,
                         ids=[f"{p}-{m}" for p, m, _ in EMITTED])
def test_emitter_equals_the_compiled_pyomo_model(problem, method, instances):
    form = formulations(problem)[method]

    @PROPERTY
    @given(instances)
    def check(inst):
        assert_same_matrix(form, inst)
        assert_same_optimum(form, inst)

    check()


def test_the_matrix_check_catches_a_swapped_row():
    """A row/column mix-up that keeps the coefficient lists is caught: swap two rows' bounds."""
    inst = WorkerSelectInstance.from_arrays(3, scores=[1.0, 0.5, 0.2], costs=[1, 2, 3], budget=3)
    form = formulations("worker-select")["milp-a"]
    emit = form.emit

    def swapped(i):
        e = emit(i)
        e.row_hi = e.row_hi.copy()
        e.row_lo = e.row_lo.copy()
        e.row_lo[[0, -1]] = e.row_lo[[-1, 0]]
        e.row_hi[[0, -1]] = e.row_hi[[-1, 0]]
        return e

    import dataclasses

    with pytest.raises(AssertionError):
        assert_same_matrix(dataclasses.replace(form, emit=swapped), inst)


# ---------------------------------------------------------------------------- solve == solve_model
def _draw(problem: str, rng: np.random.Generator):
    """A small random instance of `problem` (every exact model proves it in milliseconds)."""
    seed = int(rng.integers(1 << 30))
    if problem == "olas-select":
        return crowdopt.generate(problem, seed, points=int(rng.integers(1, 13)),
                                 labelers=int(rng.integers(1, 5)),
                                 beta=float(rng.choice([0.02, 0.05, 0.1, 0.3])),
                                 budget=int(rng.integers(-3, 10)),
                                 noise=str(rng.choice(["linear", "superellipse"])),
                                 decimals=int(rng.choice([-1, 1])))
    if problem == "worker-select":
        M = int(rng.integers(1, 9))
        return crowdopt.generate(problem, seed, workers=M,
                                 max_workers=int(rng.integers(1, M + 2)),
                                 cost_max=int(rng.choice([0, 0, 5])))
    if problem == "olas-assign":
        return crowdopt.generate(problem, seed, points=int(rng.integers(1, 9)),
                                 labelers=int(rng.integers(1, 4)), decimals=int(rng.choice([-1, 1])))
    if problem == "labeler-set":
        return crowdopt.generate(problem, seed, labelers=int(rng.integers(1, 7)),
                                 rule=str(rng.choice(["mv", "wmv"])),
                                 costs=str(rng.choice(["none", "random"])), decimals=2)
    t = int(rng.integers(1, 4))
    return crowdopt.generate(problem, seed, t=t, a=int(rng.integers(1, 4)),
                             K=int(rng.integers(1, t + 1)))


def _same_answers(problem: str, n: int, seed: int) -> int:
    rng = np.random.default_rng(seed)
    spec = get_problem(problem)
    checked = 0
    for _ in range(n):
        inst = _draw(problem, rng)
        for method in spec.builders():
            if spec.method(method).applicable(inst):
                continue
            a = crowdopt.solve(inst, method)
            b = crowdopt.solve_model(inst, crowdopt.build_model(inst, method))
            where = (method, spec.to_dict(inst))
            assert a.status == b.status, where
            assert a.objective == b.objective, where
            assert (a.solution is None) == (b.solution is None), where
            if a.solution is not None:
                assert (spec.solution_to_dict(inst, a.solution)
                        == spec.solution_to_dict(inst, b.solution)), where
            checked += 1
    return checked


@pytest.mark.parametrize("problem", sorted(problem_names()))
def test_solve_model_of_build_model_answers_as_solve(problem):
    assert _same_answers(problem, 4, seed=len(problem)) >= 4


@pytest.mark.slow
@pytest.mark.parametrize("problem", sorted(problem_names()))
def test_solve_model_of_build_model_answers_as_solve_on_50_instances(problem):
    assert _same_answers(problem, 50, seed=2026) >= 50


# ---------------------------------------------------------------------------- CL-TAP master
@pytest.mark.slow
@PROPERTY
@given(st.integers(0, 10_000), st.integers(2, 5), st.integers(1, 4), st.integers(1, 3))
def test_colgen_master_arrays_equal_the_pyomo_master(seed, t, a, K):
    """Column generation's live aggregated master (columns added warm, as arrays) is the
    compiled `build_aggregated_master` of the same workplans: same entries by (variable,
    constraint) key, rows left empty in the arrays absent from Pyomo; same RMP value."""
    from crowdopt.models.cltap import build_aggregated_master
    from crowdopt.solvers.cltap_colgen import _Master, column_generation
    from crowdopt.solvers.highs import HighsOptions, solve_model

    inst = crowdopt.generate("cltap", seed, t=t, a=a, K=min(K, t))
    cols = column_generation(inst, aggregated=True, time_limit=5).workplans
    master = _Master(inst, True, "highspy", HighsOptions(lp_solver="simplex"))
    master.add([(None, w) for w in cols])
    f = compile_pyomo(build_aggregated_master(inst, master.columns))
    names = ([("budget", None)] + [("pair", (j, k)) for j in range(inst.a) for k in range(inst.K)]
             + [("convex", None)]
             + [("prefix", (j, k)) for j in range(inst.a) for k in range(1, inst.K)])
    hm = master.model
    A = hm._A.tocsr()
    assert len(names) == A.shape[0]
    nonempty = [r for r in range(A.shape[0]) if A.indptr[r + 1] > A.indptr[r]]
    rows = [key(c) for c in f.row_constraints]
    assert [names[r] for r in nonempty] == rows
    col_of = {key(v): j for j, v in enumerate(f.columns)}
    perm = [col_of[("nu", h)] for h in range(hm.num_col)]
    B = f.A.tocsr()[:, perm]
    D = (A[nonempty] - B).tocsr()
    D.eliminate_zeros()
    assert D.nnz == 0
    np.testing.assert_array_equal(hm._row_hi[nonempty], f.row_hi)
    np.testing.assert_array_equal(hm._row_lo[nonempty], f.row_lo)
    lp = np.asarray(hm.h.getLp().col_cost_)
    np.testing.assert_array_equal(lp, f.c[perm])
    value, _ = master.solve()
    assert solve_model(build_aggregated_master(inst, master.columns)).objective == \
        pytest.approx(value, abs=1e-9)
