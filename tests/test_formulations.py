"""One formulation per exact method: the array emitter emits the compiled Pyomo model's matrix
entry for entry, and `solve_model(inst, build_model(inst, m))` answers as `solve(inst, m)`."""

from __future__ import annotations

import dataclasses
import importlib

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crowdopt
from crowdopt import CltapInstance, OlasSelectInstance, WorkerSelectInstance
from crowdopt.registry import RunOptions, get_problem, problem_names
from crowdopt.solvers.exact_runner import run
from crowdopt.solvers.highs import compile_pyomo
from crowdopt.status import Status

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
    assert ra.status == rb.status and ra.objective == rb.objective
    if form.method == "head-cover" and ra.status is Status.OPTIMAL:
        # its start is clock-budgeted (the best-of search, config-branch): an optimum is proven
        # either by the start's bound or by the search's last step just above it, so two runs
        # may prove it with bounds that differ within the proof's margin (4.5032174531 and
        # 4.5032174982 for 4.5032174531, a cold run and a warm one), never outside it
        from crowdopt.solvers.cltap_exact import proven

        for r in (ra, rb):
            assert r.objective <= r.bound and proven(r.objective, r.bound, inst)
    else:
        assert ra.bound == rb.bound
    spec = get_problem(form.problem)
    sa, sb = a.result.solution, b.result.solution
    assert (sa is None) == (sb is None)
    if sa is not None and form.method == "head-cover":  # its start's search is clock-budgeted:
        # equally good plans may differ between two runs, never their value
        assert spec.evaluate(inst, sa).objective == spec.evaluate(inst, sb).objective
    elif sa is not None:
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


@st.composite
def cltap_instances(draw) -> CltapInstance:
    """Small CL-TAP instances where head-cover's structure can go wrong: equal weights (the
    ordering rows), zero weights (labels that head nothing), heads at or above theta (no
    links), budgets from none to every label."""
    a = draw(st.integers(1, 4))
    K = draw(st.integers(1, 5))
    t = draw(st.integers(K, 6))
    p = draw(st.lists(st.sampled_from([0.5, 0.6, 0.7, 0.9, 0.99, 0.999]), min_size=a * K,
                      max_size=a * K))
    b = draw(st.integers(0, a * K + 1))
    return CltapInstance.from_arrays(np.reshape(p, (a, K)), t, b)


EMITTED = [("cltap", "head-cover", cltap_instances()),
           ("olas-select", "lp-prefix", olas_select_instances()),
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
def test_solve_model_of_build_model_answers_as_solve_on_15_instances(problem):
    """Every method's model, built and solved by the user's route, answers as `solve` on 15
    random instances per problem (the route soundness soak draws thousands)."""
    assert _same_answers(problem, 15, seed=2026) >= 15


# ---------------------------------------------------------------------------- CL-TAP masters
def live_arrays(hm) -> dict:
    """A live `HighsModel`'s matrix, bounds and costs, unscaled (powers of 2: exact)."""
    rs, cs = hm._rs, hm._cs
    A = sp.csc_array(sp.diags_array(1.0 / rs) @ hm._A @ sp.diags_array(1.0 / cs))
    cost = np.asarray(hm.h.getLp().col_cost_) / (cs * hm._sigma)
    return {"A": A, "row_lo": hm._row_lo / rs, "row_hi": hm._row_hi / rs,
            "col_lo": hm._col_lo * cs, "col_hi": hm._col_hi * cs, "c": cost}


def assert_live_is_emitted(hm, e) -> None:
    """The live model (built warm) holds the emitter's arrays, entry for entry."""
    live = live_arrays(hm)
    for name in ("row_lo", "row_hi", "col_lo", "col_hi", "c"):
        np.testing.assert_array_equal(live[name], getattr(e, name), err_msg=name)
    D = (live["A"] - e.A.tocsc()).tocsc()
    D.eliminate_zeros()
    assert live["A"].shape == e.A.shape and D.nnz == 0


@st.composite
def colgen_masters(draw):
    """A small instance, some of its workplans and (faithful) some (task, workplan) pairs."""
    from crowdopt.models.cltap import feasible_workplans
    from crowdopt.models.cltap_masters import ColgenMaster

    t, a = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    inst = crowdopt.generate("cltap", draw(st.integers(0, 10_000)), t=t, a=a,
                             K=draw(st.integers(1, t)))
    every = feasible_workplans(inst)
    cols = draw(st.lists(st.sampled_from(every), unique=True, max_size=8)) if every else []
    if draw(st.booleans()):
        return ColgenMaster(inst, cols, None)
    pairs = [(i, h) for h in range(len(cols)) for i in range(t)]
    pairs = draw(st.permutations(pairs)) if pairs else []
    return ColgenMaster(inst, cols, pairs[:draw(st.integers(0, len(pairs)))])


@st.composite
def config_masters(draw):
    """Label classes n[s], their prefix links, a budget, covers and a need level."""
    from crowdopt.models.cltap_masters import ConfigMaster

    S = draw(st.integers(1, 7))
    n = np.array(draw(st.lists(st.integers(1, 5), min_size=S, max_size=S)), float)
    later = np.array(sorted(draw(st.sets(st.integers(1, S - 1), max_size=S - 1)))
                     if S > 1 else [], dtype=np.int64)
    cfgs = draw(st.lists(st.sets(st.integers(0, S - 1), min_size=1, max_size=3)
                         .map(lambda c: tuple(sorted(c))), unique=True, max_size=6))
    units = draw(st.lists(st.integers(1, 9), min_size=len(cfgs), max_size=len(cfgs)))
    return ConfigMaster(n, later, draw(st.integers(0, 12)), cfgs, units,
                        draw(st.integers(0, 9)))


@st.composite
def flow_masters(draw):
    """The flow LP of a small random CL-TAP instance at a tested value: annotators one by one
    or in pools, a coarse grid, a level offset, and a box of prefix lengths."""
    from crowdopt.solvers.cltap_branch import flow_data

    t, a = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    inst = crowdopt.generate("cltap", draw(st.integers(0, 10_000)), t=t, a=a,
                             K=draw(st.integers(1, t)),
                             trend=draw(st.sampled_from(["dec", "inc", "nonmono"])))
    order = draw(st.permutations(range(a)))
    cut = draw(st.integers(1, a))
    layers = [[j] for j in order[:cut]] + ([sorted(order[cut:])] if cut < a else [])
    theta = float(inst.phi.max()) * draw(st.sampled_from([0.3, 0.7, 1.0, 1.5])) + 1e-3
    data, _ = flow_data(inst, theta, draw(st.integers(2, 6)), draw(st.integers(-1, 1)), layers)
    n = np.asarray(data.n)
    lo = np.array([draw(st.integers(0, int(v))) for v in n], dtype=float)
    hi = np.array([draw(st.integers(int(v0), int(v))) for v0, v in zip(lo, n)], dtype=float)
    return dataclasses.replace(data, w_lo=lo, w_hi=hi) if draw(st.booleans()) else data


def assert_same_master_optimum(form, data) -> None:
    """Both routes of a master: same status, objective and point by variable key."""
    a, b = run(form, data, RunOptions()), run(form, data, RunOptions(), route="pyomo")
    assert (a.route, b.route) == ("arrays", "pyomo")
    assert a.result.res.status == b.result.res.status
    assert a.result.res.objective == b.result.res.objective
    assert a.result.solution == b.result.solution


@pytest.mark.slow
@PROPERTY
@given(colgen_masters())
def test_colgen_master_emitter_equals_the_compiled_pyomo_model(data):
    from crowdopt.models.cltap_masters import COLGEN_MASTER

    if not data.columns:  # no variable (aggregated) / eta alone (faithful): nothing to compare
        return
    assert_same_matrix(COLGEN_MASTER, data)
    assert_same_master_optimum(COLGEN_MASTER, data)


@pytest.mark.slow
@PROPERTY
@given(config_masters())
def test_config_master_emitter_equals_the_compiled_pyomo_model(data):
    from crowdopt.models.cltap_masters import CONFIG_MASTER

    assert_same_matrix(CONFIG_MASTER, data)
    assert_same_master_optimum(CONFIG_MASTER, data)


@PROPERTY
@given(flow_masters())
def test_flow_master_emitter_equals_the_compiled_pyomo_model(data):
    from crowdopt.models.cltap_masters import FLOW_MASTER

    assert_same_matrix(FLOW_MASTER, data)
    assert_same_master_optimum(FLOW_MASTER, data)


@pytest.mark.parametrize("aggregated", [False, True])
def test_live_colgen_master_is_the_emitted_master(aggregated):
    """Column generation's live master, columns added warm in rounds, holds the emitter's
    matrix (every row), and its warm RMP value is the formulation's optimum."""
    from crowdopt.models.cltap_masters import COLGEN_MASTER, emit_colgen_master
    from crowdopt.solvers.cltap_colgen import _Master, column_generation
    from crowdopt.solvers.exact_runner import formulation_options

    inst = crowdopt.generate("cltap", 3, t=4, a=3, K=3, trend="dec")
    cols = column_generation(inst, aggregated=aggregated, time_limit=5).workplans
    master = _Master(inst, aggregated, "highspy",
                     formulation_options(COLGEN_MASTER.settings(None), RunOptions()))
    tasks = [None] if aggregated else range(inst.t)
    for chunk in (cols[:2], cols[2:5], cols[5:]):
        master.add([(i, w) for w in chunk for i in tasks if i is None or (i + len(w)) % 2])
        value, _ = master.solve()
    assert_live_is_emitted(master.model, emit_colgen_master(master.data(), all_rows=True))
    assert run(COLGEN_MASTER, master.data(), RunOptions()).result.res.objective == \
        pytest.approx(value, rel=1e-9, abs=1e-12)


def test_live_config_master_is_the_emitted_master():
    """The configuration LP's live master, covers added warm and levels changed, holds the
    emitter's matrix and bounds, and its warm value is the formulation's optimum."""
    from crowdopt.models.cltap_masters import CONFIG_MASTER, ConfigMaster, emit_config_master
    from crowdopt.solvers.cltap_bounds import ConfigMasterLP

    n = np.array([2.0, 1.0, 3.0, 2.0, 1.0])
    data = ConfigMaster(n, np.array([1, 3]), 5)
    live = ConfigMasterLP(data, RunOptions())
    u = np.array([3, 2, 1, 4, 2])
    live.add([(0, 2), (1, 3)], u)
    live.model.solve()
    live.set_level(5)
    live.add([(2, 4), (0, 3, 4), (1,)], u)
    res = live.model.solve()
    full = ConfigMaster(n, data.later, 5, list(live.pool), list(live.pool.values()), 5)
    assert_live_is_emitted(live.model, emit_config_master(full))
    assert run(CONFIG_MASTER, full, RunOptions()).result.res.objective == \
        pytest.approx(res.objective, rel=1e-9, abs=1e-12)


def test_the_matrix_check_catches_swapped_master_rows():
    """Two rows of the master's matrix swapped (keys, bounds and coefficient lists kept) fail
    the entry-for-entry check."""
    import dataclasses

    from crowdopt.models.cltap import feasible_workplans
    from crowdopt.models.cltap_masters import COLGEN_MASTER, ColgenMaster

    inst = crowdopt.generate("cltap", 1, t=3, a=2, K=2)
    data = ColgenMaster(inst, feasible_workplans(inst)[:4], [(0, 0), (1, 1), (2, 2), (0, 3)])
    assert_same_matrix(COLGEN_MASTER, data)
    emit = COLGEN_MASTER.emit

    def swapped(d):
        e = emit(d)
        perm = np.arange(e.A.shape[0])
        perm[[0, 1]] = [1, 0]
        e.A = sp.csc_array(e.A.tocsr()[perm])
        return e

    with pytest.raises(AssertionError):
        assert_same_matrix(dataclasses.replace(COLGEN_MASTER, emit=swapped), data)


def test_master_with_zero_cost_workplans_equals_the_pyomo_model():
    """Workplans of coin-flip labels (c' = 0) have no bottleneck/objective entry in either."""
    from crowdopt.models.cltap import feasible_workplans
    from crowdopt.models.cltap_masters import COLGEN_MASTER, ColgenMaster
    from crowdopt.problems.cltap import CltapInstance

    inst = CltapInstance.from_arrays([[0.5, 0.5], [0.8, 0.7], [0.5, 0.9]], 3, 4)
    cols = feasible_workplans(inst)
    for pairs in (None, [(i, h) for h in range(len(cols)) for i in range(3) if (i + h) % 3]):
        data = ColgenMaster(inst, cols, pairs)
        assert_same_matrix(COLGEN_MASTER, data)
        assert_same_master_optimum(COLGEN_MASTER, data)
