"""CL-TAP layered construction: every plan it returns is feasible for (13)-(16) and reaches the
lower end it was given, on the soundness suite's instances (`draw`: generated curves, flat rows,
ties, duplicate annotators, zero rows, unused annotators, weights scaled to 1e-4..1e-10; K < t,
budgets from 0 to a*K), checked by the evaluator and against the independent enumeration
oracle; and it finds the steep-row plans that CBP misses."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from crowdopt.problems import cltap as P
from crowdopt.solvers.cltap_cbp import cbp
from crowdopt.solvers.cltap_construct import constructions
from crowdopt.solvers.cltap_layers import layered

sys.path.insert(0, str(Path(__file__).parent))
from cltap_oracle import OracleTimeout, optimum  # noqa: E402
from test_cltap_soundness import SAMPLE_CELLS, draw  # noqa: E402


def test_layered_plans_are_feasible_and_never_above_the_optimum():
    positive = 0
    for n in range(3000):
        _, inst = draw(n, SAMPLE_CELLS)
        sol = layered(inst)
        if sol is None:
            continue
        ev = P.evaluate(inst, sol)
        assert ev.feasible, (inst.phi, inst.t, inst.b, sol.task_of)
        if n % 15 == 0:  # the oracle on every 15th (it dominates the test's time)
            try:
                opt = optimum(inst.phi, inst.t, inst.b, cpu_s=5.0)
            except OracleTimeout:
                continue
            assert ev.objective <= opt * (1 + 1e-9)
        positive += ev.objective > 0
    # most draws have budgets below t (optimum 0: the empty plan): count the real plans
    assert positive > 400


def test_layered_reaches_the_lower_end_it_is_given_or_returns_none():
    for n in range(3000, 3500):
        _, inst = draw(n, SAMPLE_CELLS)
        lo = P.evaluate(inst, cbp(inst)).objective
        sol = layered(inst, lo=lo)
        if sol is not None:
            ev = P.evaluate(inst, sol)
            assert ev.feasible and ev.objective >= lo


@pytest.mark.parametrize("trend", ["dec", "inc", "nonmono"])
def test_layered_plans_at_scale_are_feasible(trend):
    inst = P.generate(3, t=60, a=6, K=40, trend=trend)
    sol = layered(inst)
    assert sol is not None and P.evaluate(inst, sol).feasible


def test_layered_finds_the_steep_row_plan_cbp_misses():
    """inc, t = 100, a = 10: CBP's two whole rows give 1.7535; a steep row, a partial row and a
    few flat labels reach 1.8429 (the best plan `reproduce cltap --scale table3` knew)."""
    inst = P.generate(0, t=100, a=10, trend="inc")
    v_cbp = P.evaluate(inst, cbp(inst)).objective
    sol = layered(inst, lo=v_cbp)
    assert sol is not None
    assert P.evaluate(inst, sol).objective >= 1.84 > v_cbp + 0.08
    assert "layered" in constructions(inst)


def test_layered_resumes_its_bisection_on_the_same_instance():
    """A second call (certify's methods each build their start) reuses what the first learnt:
    the same plan for the same arguments, and a feasible one for other bounds."""
    inst = P.generate(1, t=40, a=5, trend="inc")
    first = layered(inst, lo=0.0, hi=3.0)
    assert first is not None
    assert np.array_equal(layered(inst, lo=0.0, hi=3.0).task_of, first.task_of)
    other = layered(inst, lo=0.0, hi=2.5)
    assert other is not None and P.evaluate(inst, other).feasible
    fresh = P.generate(1, t=40, a=5, trend="inc")  # a new instance object learns afresh
    assert np.array_equal(layered(fresh, lo=0.0, hi=3.0).task_of, first.task_of)
