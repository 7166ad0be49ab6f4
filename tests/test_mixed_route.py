"""The mixed route of `crowdopt.solve_model`: a model `build_model` returned for a formulation
with an array emitter keeps its registered part unbuilt (`models.lazy.LazyModel`), and a user's
added rows and variables are compiled onto the emitted columns (`solvers.exact_runner
.load_mixed`). The same additions on the formulation's eager Pyomo model, compiled whole, must
give the very same matrix (columns and rows in the same order, coefficients, bounds,
integrality, objective) and the same answer; dropping an addition or swapping the order of new
columns makes the comparison fail."""

from __future__ import annotations

import zlib

import numpy as np
import pyomo.environ as pyo
import pytest

import crowdopt
from crowdopt.models import cltap, olas_select, worker_select
from crowdopt.solvers import exact_runner
from crowdopt.solvers.highs import HighsOptions, compile_pyomo

FORMS = {("cltap", "head-cover"): cltap.FORMULATIONS["head-cover"],
         ("olas-select", "lp-prefix"): olas_select.FORMULATIONS["lp-prefix"],
         ("olas-select", "lp-bmatching"): olas_select.FORMULATIONS["lp-bmatching"],
         ("worker-select", "milp-a"): worker_select.FORMULATIONS["milp-a"]}
DECISION = {"lp-prefix": "s", "lp-bmatching": "y", "milp-a": "z", "head-cover": "u"}


def instance(problem: str, rng: np.random.Generator):
    seed = int(rng.integers(10**6))
    if problem == "olas-select":
        return crowdopt.generate(problem, seed, points=int(rng.integers(3, 12)),
                                 labelers=int(rng.integers(1, 4)),
                                 budget=int(rng.choice([-1, 2, 4])))
    if problem == "cltap":
        t = int(rng.integers(2, 6))
        return crowdopt.generate(problem, seed, t=t, a=int(rng.integers(1, 4)),
                                 K=int(rng.integers(1, t + 1)),
                                 trend=str(rng.choice(["inc", "dec", "nonmono"])))
    kw = {"cost_max": int(rng.choice([0, 5]))}
    return crowdopt.generate(problem, seed, workers=int(rng.integers(2, 8)),
                             max_workers=int(rng.integers(1, 5)), **kw)


def add_things(m: pyo.ConcreteModel, method: str, rng: np.random.Generator) -> None:
    """Random additions, drawn with `rng`, named by keys (the same on any model of the same
    instance): new variables (binary, integer, continuous, one unused), rows over registered
    entries and new variables (<=, >=, ==, ranged), a Block with its own variable and row."""
    var = getattr(m, DECISION[method])
    keys = list(var.index_set())
    pick = [keys[int(k)] for k in rng.choice(len(keys), min(4, len(keys)), replace=False)]
    m.u_bin = pyo.Var(range(2), domain=pyo.Binary)
    m.u_int = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 3))
    m.u_cont = pyo.Var(bounds=(-1.5, 2.5))
    m.u_unused = pyo.Var(bounds=(0, 1))
    a = [float(v) for v in rng.choice([-2.0, -1.0, 0.5, 1.0, 3.0], len(pick))]
    m.r_le = pyo.Constraint(expr=sum(c * var[k] for c, k in zip(a, pick)) + m.u_bin[1]
                            <= float(rng.integers(1, 4)))
    m.r_ge = pyo.Constraint(expr=m.u_cont + var[pick[0]] >= -1.0)
    m.r_eq = pyo.Constraint(expr=m.u_int - m.u_bin[0] - var[pick[-1]] == 0)
    m.r_range = pyo.Constraint(expr=pyo.inequality(-1.0, m.u_bin[0] + 0.5 * m.u_cont, 2.0))
    m.blk = pyo.Block()
    m.blk.v = pyo.Var(domain=pyo.Binary)
    m.blk.r = pyo.Constraint(expr=m.blk.v + var[pick[0]] <= 1)
    if method == "head-cover":  # a cap on the objective variable (eta, which the point check
        # completes from the registered rows), from above: the search stays exact
        m.r_eta = pyo.Constraint(expr=m.eta + 0.1 * var[pick[0]]
                                 <= float(rng.choice([0.3, 1.0, 3.0])))


def names_of(cols: list) -> list:
    return [(v.parent_component().name, v.index()) for v in cols]


def matrices(problem: str, method: str, rng: np.random.Generator):
    """(mixed arrays with their column and row names, whole compile of the eager model with
    the same additions, the lazy model, the eager model, the instance)."""
    form = FORMS[problem, method]
    inst = instance(problem, rng)
    while not len(getattr(form.build(inst), DECISION[method])):  # no pair within beta
        inst = instance(problem, rng)
    state = rng.bit_generator.state
    lazy = crowdopt.build_model(inst, method)
    add_things(lazy, method, rng)
    rng.bit_generator.state = state
    eager = form.build(inst)
    add_things(eager, method, rng)
    from crowdopt.models.snapshot import compare
    change = compare(lazy.crowdopt_build.snapshot, lazy)
    assert change.kind == "added rows" and not lazy.materialized
    ctx = exact_runner.load_mixed(form, inst, lazy, list(change.added), HighsOptions(), False)
    e = form.emit(inst)
    mixed_cols = list(e.columns()) + names_of(ctx.added.columns)
    whole = compile_pyomo(eager)
    return ctx, mixed_cols, whole, lazy, eager, inst


def assert_same(ctx, whole, mixed_cols) -> None:
    assert mixed_cols == names_of(whole.columns)
    a, b = ctx.assembled, whole
    assert a.A.shape == b.A.shape
    assert np.array_equal(a.A.toarray(), b.A.toarray())
    for f in ("row_lo", "row_hi", "col_lo", "col_hi", "c"):
        assert np.array_equal(np.asarray(getattr(a, f), float), np.asarray(getattr(b, f), float)), f
    assert np.array_equal(np.asarray(a.integrality) != 0, np.asarray(b.integrality) != 0)
    assert a.sense == b.sense and a.offset == b.offset


@pytest.mark.parametrize("problem, method", sorted(FORMS))
def test_the_mixed_route_is_the_whole_compile(problem, method):
    """Random additions on random instances: the same matrix in the same order, and the same
    answer (solve_model on the lazy model against a plain solve of the eager one)."""
    rng = np.random.default_rng(zlib.crc32(method.encode()))  # not hash(): salted per run
    for _ in range(6):
        ctx, cols, whole, lazy, eager, inst = matrices(problem, method, rng)
        assert_same(ctx, whole, cols)
        added = [c.name for c in ctx.added.row_constraints]
        assert added == [c.name for c in whole.row_constraints][-len(added):]
        r = crowdopt.solve_model(inst, lazy)
        assert r.details["route"] == "mixed" and not lazy.materialized
        plain = crowdopt.solve_model(inst, eager)
        assert r.status == plain.status
        if r.details.get("objective") is not None:
            assert r.details["objective"] == pytest.approx(plain.details["objective"],
                                                           rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("mutation", ["drop a row", "swap new columns"])
def test_a_wrong_assembly_is_caught(mutation, monkeypatch):
    """Mutations of the additions' compile: the comparison with the whole compile fails."""
    from crowdopt.solvers import highs

    real = highs.compile_rows

    def mutated(model, rows, registered, n):
        if mutation == "drop a row":
            return real(model, rows[:-1], registered, n)
        out = real(model, rows, registered, n)
        k = out.A.shape[1]
        perm = np.arange(k)
        perm[[k - 1, k - 2]] = perm[[k - 2, k - 1]]
        out.A = out.A[:, perm]
        return out

    monkeypatch.setattr(exact_runner, "compile_rows", mutated)
    rng = np.random.default_rng(5)
    ctx, cols, whole, *_ = matrices("olas-select", "lp-prefix", rng)
    with pytest.raises(AssertionError):
        assert_same(ctx, whole, cols)


def test_walking_the_model_builds_it_as_the_eager_builder_does():
    """A lazy model walked (here written whole by the compiler) is the eager model: the same
    compiled matrix, and the record still reads the user's rows as added."""
    rng = np.random.default_rng(11)
    for problem, method in sorted(FORMS):
        inst = instance(problem, rng)
        lazy = crowdopt.build_model(inst, method)
        a = compile_pyomo(lazy)
        assert lazy.materialized
        b = compile_pyomo(FORMS[problem, method].build(inst))
        assert np.array_equal(a.A.toarray(), b.A.toarray()) and np.array_equal(a.c, b.c)
        assert [v.name for v in a.columns] == [v.name for v in b.columns]
        m = crowdopt.build_model(inst, method)
        add_things(m, method, rng)
        m.materialize()
        from crowdopt.models.snapshot import compare
        assert compare(m.crowdopt_build.snapshot, m).kind == "added rows"


def test_rows_below_the_emitted_matrix_by_index_arithmetic():
    """`_below` (the added rows under the registered CSC matrix, widened by the new columns)
    equals dense stacking on random shapes, empty ones included, and is a valid CSC array."""
    import scipy.sparse as sp

    from crowdopt.solvers.exact_runner import _below

    rng = np.random.default_rng(5)
    for _ in range(300):
        r, n, k, m = (int(x) for x in rng.integers(0, 6, 4))
        A = (sp.random_array((r, n), density=rng.random(), format="csc", rng=rng)
             if r and n else sp.csc_array((r, n)))
        B = (sp.random_array((k, n + m), density=rng.random(), format="csr", rng=rng)
             if k and n + m else sp.csr_array((k, n + m)))
        got = _below(A, B, m)
        got.check_format(full_check=True)
        want = np.vstack([np.hstack([A.toarray(), np.zeros((r, m))]), B.toarray()])
        assert np.array_equal(got.toarray(), want), (r, n, k, m)
