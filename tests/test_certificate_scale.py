"""Certificates at every scale of the data: the same instance with its objective-side data
scaled by 10^k (k = -10 .. 6) gives the same solution and verdict, with objective and bound
scaled by 10^k; a bound on the wrong side of the objective is a failure at any scale."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np
import pytest

import crowdopt
from crowdopt import api
from crowdopt.problems import cltap as CT
from crowdopt.problems import labeler_set as LS
from crowdopt.problems import olas_assign as OA
from crowdopt.problems import olas_select as OS
from crowdopt.problems import worker_select as WS
from crowdopt.problems.olas_noise import LinearNoise, NoiseFunction
from crowdopt.registry import get_problem
from crowdopt.solvers.certify import REL_TOL, gap_ratio, make_certificate
from crowdopt.status import Status

EXPONENTS = range(-10, 7)


class ScaledNoise(NoiseFunction):
    """eps(a, e) = out * linear(a, e / inner): the linear noise with its values multiplied by
    `out` (olas-assign's objective) or its entropy axis stretched by `inner` (olas-select)."""

    name = "scaled"
    max_entropy = None

    def __init__(self, out: float = 1.0, inner: float = 1.0) -> None:
        self.out, self.inner = out, inner

    def eps(self, a: Any, e: Any) -> np.ndarray:
        return self.out * LinearNoise().eps(a, np.asarray(e, float) / self.inner)


def olas_assign(f: float) -> OA.OlasAssignInstance:
    # the dataclass itself: a noise above 1 (k > 0) is outside what the reader accepts
    return OA.OlasAssignInstance(np.array([0.9, 0.7, 0.6, 0.8]), np.array([2, 3, 1, 2]),
                                 np.array([0.1, 0.5, 0.3, 0.6, 0.2, 0.45]), ScaledNoise(out=f))


def olas_select(f: float) -> OS.OlasSelectInstance:
    return OS.make_instance([0.9, 0.7, 0.6], [2, 1, 2], f * np.array([0.1, 0.5, 0.3, 0.6, 0.2,
                                                                       0.45, 0.35]),
                            noise=ScaledNoise(inner=f), beta=0.2, budget=4)


def worker_select(f: float) -> WS.WorkerSelectInstance:
    return WS.make_instance(max_workers=3, scores_=f * np.array([0.8, -0.2, 1.3, 0.5, 0.9]),
                            costs=[2, 1, 3, 1, 2], budget=5)


def labeler_set(f: float) -> LS.LabelerSetInstance:
    # objective pi(S) - lambda C(S): costs (and the budget) times f, lambda over f
    return LS.make_instance([0.8, 0.7, 0.65, 0.6, 0.75], costs=f * np.array([3., 1, 2, 1, 2]),
                            cost_weight=0.02 / f, budget=f * 6.0)


def cltap(f: float) -> CT.CltapInstance:
    base = CT.make_instance([[0.9, 0.85, 0.7], [0.8, 0.75, 0.6], [0.7, 0.65, 0.62]], t=3, b=6)
    return dataclasses.replace(base, _phi=f * base.phi)


PROBLEMS = {"olas-assign": (olas_assign, True), "olas-select": (olas_select, True),
            "worker-select": (worker_select, True), "labeler-set": (labeler_set, False),
            "cltap": (cltap, True)}


def _key(spec: Any, inst: Any, sol: Any) -> Any:
    """The solution up to the problem's symmetry (CL-TAP's tasks are interchangeable)."""
    if isinstance(sol, CT.CltapSolution):
        return sorted(sorted(w) for w in sol.workplans(inst.t))
    return crowdopt.results.jsonable(spec.solution_to_dict(inst, sol))


@pytest.mark.slow
@pytest.mark.parametrize("problem", list(PROBLEMS))
def test_same_solution_and_verdict_at_every_scale(problem):
    make, objective_scales = PROBLEMS[problem]
    spec = get_problem(problem)
    ref = {m: crowdopt.solve(make(1.0), m) for m in ("fast", "exact")}
    for m, r in ref.items():
        assert r.certified and r.objective is not None, (m, r.certificate.failures)
    assert ref["exact"].proven_optimal
    for k in EXPONENTS:
        f = 10.0 ** k
        g = f if objective_scales else 1.0
        inst = make(f)
        for m, r0 in ref.items():
            r = crowdopt.solve(inst, m)
            what = f"{problem} {m} k={k}"
            assert r.status == r0.status, what
            assert _key(spec, inst, r.solution) == _key(spec, make(1.0), r0.solution), what
            assert r.objective == pytest.approx(g * r0.objective, rel=1e-9, abs=0), what
            c, c0 = r.certificate, r0.certificate
            assert (c.certified, c.proven_optimal) == (c0.certified, c0.proven_optimal), what
            if c0.bound is None:
                assert c.bound is None, what
            else:
                assert c.bound == pytest.approx(g * c0.bound, rel=1e-7, abs=0), what


@pytest.mark.parametrize("scale", [1e-10, 1e-8, 1.0, 1e6])
def test_bound_below_the_objective_fails_at_any_scale(scale):
    """A max problem's upper bound below a feasible objective (the CL-TAP case: a MILP that
    returned bound 0 under an optimum of 6e-8) is a failure naming both, never gap 0."""
    spec = get_problem("cltap")
    ev = crowdopt.registry.Evaluation(objective=6.05e-8 / 1e-8 * scale, feasible=True)
    cert = make_certificate(spec, method="certify", algorithm="cbp", status="feasible",
                            evaluation=ev, bound=0.0, bound_source="milp-compact:milp-dual-bound",
                            times={})
    assert not cert.certified and not cert.proven_optimal and cert.gap < 0
    assert "milp-compact:milp-dual-bound" in cert.failures[0] and "cbp" in cert.failures[0]
    assert cert.tolerances["rel"] == REL_TOL
    # a bound within the relative tolerance is the same number, at any scale
    ok = make_certificate(spec, method="certify", algorithm="cbp", status="feasible",
                          evaluation=ev, bound=ev.objective * (1 - REL_TOL / 10),
                          bound_source="x", times={})
    assert ok.proven_optimal and ok.gap == 0.0


def test_gap_is_relative():
    assert gap_ratio(1e-12, 1.0000001e-12)[0] == 0.0
    assert gap_ratio(1e-12, 1.1e-12)[0] > 0
    assert gap_ratio(1.1e-12, 1e-12)[0] < 0
    assert gap_ratio(0.0, 0.0)[0] == 0.0
    assert gap_ratio(0.0, 1e-20)[0] > 0  # no absolute tolerance swallows an objective


NONFINITE = (float("nan"), float("inf"), float("-inf"))


@pytest.mark.parametrize("value", NONFINITE)
def test_no_certificate_on_a_non_finite_objective_or_bound(value):
    spec = get_problem("worker-select")
    ev = crowdopt.registry.Evaluation(objective=value, feasible=True)
    cert = make_certificate(spec, method="fast", algorithm="x", status="feasible", evaluation=ev,
                            bound=1.0, bound_source="b", times={})
    assert not cert.certified and not cert.proven_optimal and cert.failures
    ev = crowdopt.registry.Evaluation(objective=1.0, feasible=True)
    cert = make_certificate(spec, method="fast", algorithm="x", status="feasible", evaluation=ev,
                            bound=value, bound_source="b", times={})
    assert not cert.proven_optimal
    assert cert.upper is None or np.isfinite(cert.upper)
    if value != float("inf"):  # +inf is a max problem's vacuous upper bound: dropped
        assert not cert.certified and cert.failures


def test_no_solution_is_never_certified():
    spec = get_problem("olas-assign")
    for status in ("error", "infeasible", "time_limit", "no_solution"):
        cert = make_certificate(spec, method="exact", algorithm="x", status=status,
                                evaluation=None, bound=None, bound_source=None, times={})
        assert not cert.certified and not cert.proven_optimal and not cert.failures
        assert "certified" not in cert.verdict.replace("NOT certified", "")


@pytest.mark.slow
def test_certify_proves_the_cltap_optimum_at_1e_minus_8():
    """The reported case: phi times 1e-8; HiGHS's absolute tolerances used to swallow the
    objective (bound 0.0 'proving' an optimum of 6e-8)."""
    small, ref = crowdopt.certify(cltap(1e-8)), crowdopt.certify(cltap(1.0))
    assert ref.proven_optimal and small.proven_optimal, small.failures
    assert small.objective == pytest.approx(1e-8 * ref.objective, rel=1e-9, abs=0)
    assert small.bound == pytest.approx(1e-8 * ref.bound, rel=1e-7, abs=0)


# ----------------------------------------------------------------------------- non-finite
def _leaves(doc: Any, path: tuple = ()) -> list[tuple]:
    """Paths of every number (and every number inside a string) of an instance document."""
    out = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _leaves(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _leaves(v, (*path, i))
    elif isinstance(doc, bool):
        pass
    elif isinstance(doc, int | float):
        out.append(path)
    return out


def _put(doc: Any, path: tuple, value: Any) -> Any:
    doc = json.loads(json.dumps(doc))
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return doc


def _documents(problem: str) -> list[dict]:
    """The problem's example and a variant with every optional numeric field set; olas noise
    given as the logistic string form as well."""
    doc = get_problem(problem).example().to_dict()
    docs = [doc]
    if problem.startswith("olas"):
        docs.append({**doc, "noise": "logistic:2,-3,4"})
    if problem == "worker-select":
        docs.append({**{k: v for k, v in doc.items() if k not in ("w_hat", "n", "estimator")},
                     "scores": [0.5, -0.2, 1.0], "max_workers": 2, "costs": [1, 2, 1],
                     "budget": 3})
    return docs


def _check(doc: dict) -> None:
    try:
        inst = crowdopt.load(doc)
    except crowdopt.InputError:
        return
    r = crowdopt.solve(inst, "fast")
    c = r.certificate
    if c is not None and (c.certified or c.proven_optimal):
        assert all(v is None or np.isfinite(v) for v in (c.lower, c.upper)), c
        assert c.objective is not None and np.isfinite(c.objective) and c.feasible, c


@pytest.mark.parametrize("problem", list(PROBLEMS))
def test_no_certificate_from_a_non_finite_value_anywhere(problem):
    for doc in _documents(problem):
        for path in _leaves(doc):
            for bad in NONFINITE:
                _check(_put(doc, path, bad))
        for key, text in doc.items():  # numbers inside strings ('logistic:w0,we,wa')
            if isinstance(text, str) and ":" in text:
                head, nums = text.split(":", 1)
                parts = nums.split(",")
                for i in range(len(parts)):
                    for bad in ("nan", "inf", "-inf", "1e999"):
                        new = ",".join(bad if j == i else p for j, p in enumerate(parts))
                        _check({**doc, key: f"{head}:{new}"})


def test_an_error_without_a_solution_is_not_called_certified():
    inst = crowdopt.generate("worker-select", workers=744, max_workers=744, cost_max=100)
    r = crowdopt.solve(inst, "fast")  # the cost DP refuses a table this large
    assert r.status == "error" and not r.certified and not r.proven_optimal
    line = dict(row.split(None, 1) for row in r.summary().splitlines())["certificate"]
    assert "certified" not in line


# ----------------------------------------------------------------------------- certify's run
def test_certify_stops_at_the_first_proof_and_says_what_it_skipped():
    inst = olas_select(1.0)
    cert = crowdopt.certify(inst)
    assert cert.proven_optimal
    order = cert.details["order"]
    assert order.index("lp-prefix") < order.index("milp-compact")  # cheapest proof first
    skipped = {s["algorithm"]: s["reason"] for s in cert.details["skipped"]}
    assert "milp-literal" in skipped and "meets the objective" in skipped["milp-literal"]
    ran = {r["algorithm"] for r in cert.details["runs"] if r["status"] != "skipped"}
    assert not ran & set(skipped)


def test_one_overall_time_limit_for_certify_and_compare():
    """Past the overall limit every method is skipped with that reason, but the cheapest proof
    (the first quick method in proof order) runs first whatever the clock says: a certificate
    always has the cheapest bound there is."""
    inst = worker_select(1.0)
    cert = crowdopt.certify(inst, total_time_limit=1e-6)
    ran = [r["algorithm"] for r in cert.details["runs"] if r["status"] != "skipped"]
    first = api.proof_order([m for m in inst.spec.methods if m.kind in ("exact", "bound")])
    first = next(m for m in first if m.time_limit is None and m.refuses(inst) is None)
    assert ran == [first.algorithm] and cert.bound is not None
    assert cert.details["skipped"] and not cert.failures
    assert all("overall time limit" in s["reason"] or "meets the objective" in s["reason"]
               for s in cert.details["skipped"])
    comp = crowdopt.compare(inst, total_time_limit=1e-6, warmup=False)
    assert {r.status for r in comp} == {"skipped"}



def test_an_overall_limit_caps_a_search_budget_and_never_stretches_it(monkeypatch):
    """The CL-TAP local searches run for their whole budget: with compare/certify
    --time-limit 1e7 (and no per-method limit) they were handed the 1e7 s left of the overall
    limit instead of their 2 s default; the overall limit only cuts a method's own limit."""
    from crowdopt import api
    from crowdopt.solvers.cltap import search_budget

    spec, inst = get_problem("cltap"), cltap(1.0)
    monkeypatch.delenv("CROWDOPT_SEARCH_TIME", raising=False)
    # the search length each method would get from the limit the clock hands it
    monkeypatch.setattr(api, "run_method",
                        lambda spec, inst, m, opts, force: search_budget(opts))
    for name in ("cbp+ls", "best-of"):
        m = spec.method(name)
        assert api._Clock(1e7, None).run(spec, inst, m, api.RunOptions()) == 2.0
        assert api._Clock(1.0, None).run(spec, inst, m, api.RunOptions()) <= 1.0
        assert api._Clock(1e7, 30.0).run(spec, inst, m, api.RunOptions()) == 2.0
        assert api._Clock(1e7, 30.0).run(spec, inst, m, api.RunOptions(search_s=20)) == 20

# ----------------------------------------------------------------------------- the adapter
F = 1e7  # the reference model's objective is F times larger: well inside HiGHS's tolerances


def _pair() -> list:
    """The same LP loaded scaled (costs ~1e-7, rows with coefficients from 1e-8 to 1e3, a
    column without an upper bound) and unscaled with its costs times F as the reference."""
    import scipy.sparse as sp

    from crowdopt.solvers.highs import INF, HighsModel, HighsOptions

    rng = np.random.default_rng(3)
    m, n = 6, 5
    A = rng.uniform(1, 2, (m, n)) * 10.0 ** rng.integers(-8, 3, (m, n))
    A[:, 0] = 1.0
    c = rng.uniform(1, 2, n) * 1e-7
    rhs = A[:, 1:].sum(1) * 0.3
    return [HighsModel.from_arrays(c * f, sp.csc_array(A), np.full(m, -INF), rhs, np.zeros(n),
                                   np.full(n, INF), sense="max", options=HighsOptions(scale=s))
            for s, f in ((True, 1.0), (False, F))]


def test_scaling_is_invisible_to_the_caller():
    """Results come back in the caller's units, through every change of a live model, and
    match the well-scaled reference (the unscaled model with costs 1e-7 stops early: its
    reduced costs are within HiGHS's absolute dual tolerance)."""
    import scipy.sparse as sp

    scaled, ref = _pair()
    assert scaled.scaled and not ref.scaled
    for step in range(3):
        a, b = scaled.solve(), ref.solve()
        assert a.status == b.status == "optimal", step
        assert a.objective * F == pytest.approx(b.objective, rel=1e-6), step
        assert a.bound * F == pytest.approx(b.bound, rel=1e-6), step
        if step == 0:  # strong duality at the unscaled duals (x >= 0, rows <= rhs only)
            assert float(a.row_duals @ ref._row_hi) == pytest.approx(a.objective, rel=1e-6)
        for hm, f in ((scaled, 1.0), (ref, F)):  # the same changes through the live models
            if step == 0:
                hm.add_columns([3e-7 * f], 0.0, 5.0, sp.csc_array(np.full((6, 1), 1e-4)))
                hm.set_row_bounds([0], -np.inf, 1e-3)
            else:
                hm.set_integrality([1, 2], True)  # scaled columns become integer: unscaled
                hm.set_col_bounds([3], 0.0, 2.0)
                hm.set_objective(f * np.r_[np.full(hm.num_col - 1, 1e-7), 2e-7])


def test_every_row_reaches_highs_with_its_largest_entry_at_most_2_to_the_10():
    """HiGHS's feasibility tolerance is absolute (1e-9): it is a tolerance only while it stays
    far above the rounding of a row's activity (2.2e-16 of its largest term). Rows spanning 40
    decades, free, boxed and integer columns, tiny and huge costs: every row's largest scaled
    entry is at most 2^10 (and at least 2^-40 unless the row is empty), in the arrays HiGHS
    gets too."""
    import scipy.sparse as sp

    from crowdopt.solvers.highs import INF, HighsModel, model_scales

    rng = np.random.default_rng(11)
    for _ in range(300):
        m, n = rng.integers(1, 8, 2)
        A = rng.uniform(1, 2, (m, n)) * 10.0 ** rng.integers(-30, 11, (m, n))
        A[rng.random((m, n)) < 0.3] = 0.0
        A *= rng.choice([-1.0, 1.0], (m, n))
        kind = rng.integers(0, 3, n)  # 0 free, 1 boxed, 2 integer
        lo = np.zeros(n)
        hi = np.where(kind == 0, INF, 10.0 ** rng.integers(-12, 13, n))
        c = rng.uniform(-1, 1, n) * 10.0 ** rng.integers(-12, 13, n)
        rs, cs, _ = model_scales(sp.csc_array(A), c, (kind == 2).astype(np.int32), lo, hi)
        scaled = np.abs(rs[:, None] * A * cs[None, :]).max(axis=1)
        assert np.all(scaled <= 2.0 ** 10), scaled
        assert np.all((scaled >= 2.0 ** -40) | (np.abs(A).max(axis=1) == 0))
        hm = HighsModel.from_arrays(c, sp.csc_array(A), np.full(m, -INF), np.ones(m), lo, hi,
                                    (kind == 2).astype(np.int32))
        assert np.abs(hm._A).max(axis=1).toarray().max(initial=0.0) <= 2.0 ** 10
        # a row added to the live model is capped the same way
        row = rng.uniform(1, 2, (1, n)) * 10.0 ** rng.integers(-30, 11, (1, n))
        hm.add_rows([-INF], [1.0], sp.csr_array(row))
        assert np.abs(hm._A).max(axis=1).toarray().max(initial=0.0) <= 2.0 ** 10


@pytest.mark.slow
def test_a_head_cover_step_with_labels_of_1e_25_is_not_refuted():
    """t = 20, a = 10, nonmono seed 1: labels from 2.5 down to 1.7e-25. Every task reaching
    2.0627 is feasible (a plan of 2.0810 exists, checked on the model's own rows), but when
    centring put a cover row's largest entry at 2.3e7 (its right-hand side 3.3e7, where 1e-9
    is below double precision) HiGHS called the step infeasible, with and without presolve,
    and head-cover "proved" a plan of 2.0627 optimal."""
    from types import SimpleNamespace

    from crowdopt.models.cltap_heads import emit_heads
    from crowdopt.solvers.cltap_exact import _Search, cheap_upper_bound
    from crowdopt.solvers.highs import HighsModel, HighsOptions

    inst = CT.generate(1, t=20, a=10, trend="nonmono")
    assert inst.phi[inst.phi > 0].min() < 1e-24
    em = emit_heads(inst, cheap_upper_bound(inst)[0])
    # loaded as the search loads it (eta free), then one step's bounds set by the search's
    # own code: eta fixed at theta, the heads that cannot reach theta fixed to 0
    hm = HighsModel.from_arrays(em.c, em.A, em.row_lo, em.row_hi, em.col_lo, em.col_hi,
                                em.integrality, sense=em.sense)
    step = _Search(SimpleNamespace(inst=inst, model=hm, extras=em.extras))
    theta = 2.0627005871856
    step.set_eta(theta, theta)
    step.set_heads(theta)
    hm.options = HighsOptions(time_limit=300)
    res = hm.solve()
    assert res.status is Status.OPTIMAL, res.status  # a feasibility step: optimal = a point
    assert res.max_violation <= 1e-7


@pytest.mark.slow
def test_the_watchdog_returns_when_highs_does_not(monkeypatch):
    """A run still going at limit + slack is left behind: the solve returns a time limit
    without a solution, and the busy model refuses a second solve instead of touching HiGHS
    while it runs. (HiGHS is given a longer limit of its own here, standing for a presolve
    that does not look at the clock, as on a long knapsack row.)"""
    import scipy.sparse as sp

    from crowdopt.solvers import highs
    from crowdopt.solvers.highs import HighsModel, HighsOptions

    monkeypatch.setattr(highs, "WATCHDOG_SLACK_S", 0.2)
    n = 20_000
    rng = np.random.default_rng(0)
    w = rng.integers(1, 10**6, n).astype(float)
    hm = HighsModel.from_arrays(w + rng.integers(0, 1000, n), sp.csr_array(w[None, :]),
                                [-np.inf], [w.sum() / 3], np.zeros(n), np.ones(n),
                                np.ones(n, np.int32), sense="max",
                                options=HighsOptions(time_limit=0.1,
                                                     extra=(("time_limit", 60.0),)))
    r = hm.solve()
    assert r.status == "time_limit" and r.raw_status == "watchdog" and "watchdog" in r.message
    assert r.x is None and r.objective is None
    again = hm.solve()
    assert again.status == "error" and "still running" in again.message

