"""Certificates: lower/upper by sense, gap and ratio, and the failures they must catch."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from crowdopt.api import certify, compare, run_method
from crowdopt.cli import main
from crowdopt.problems import olas_assign as P
from crowdopt.problems.olas_assign import SPEC
from crowdopt.registry import Evaluation, Outcome
from crowdopt.solvers.certify import gap_ratio, lower_upper, make_certificate


def test_lower_upper_and_ratio():
    assert lower_upper("min", 5.0, 4.0) == (4.0, 5.0)
    assert lower_upper("max", 4.0, 5.0) == (4.0, 5.0)
    gap, rel, ratio = gap_ratio(4.0, 5.0)
    assert gap == 1.0 and rel == pytest.approx(0.2) and ratio == pytest.approx(0.8)
    assert gap_ratio(0.0, 0.0) == (0.0, 0.0, 1.0)
    assert gap_ratio(None, 1.0) == (None, None, None)
    assert gap_ratio(1.0, 1.0 + 1e-12)[0] == 0.0  # within tolerance: closed


def cert(**kw):
    base = dict(method="exact", algorithm="x", status="optimal",
                evaluation=Evaluation(1.0, True), bound=1.0, bound_source="test", times={})
    base.update(kw)
    return make_certificate(SPEC, **base)


def test_certificate_checks():
    ok = cert()
    assert ok["certified"] and ok["proven_optimal"] and ok["ratio"] == 1.0
    assert not cert(evaluation=Evaluation(1.0, False, 2.0, ["overload"]))["certified"]
    assert not cert(reported_objective=0.5)["certified"]  # solver number != evaluator's
    crossed = cert(bound=1.5)  # min problem: lower bound above the incumbent
    assert not crossed["certified"] and "crosses" in crossed["failures"][0]
    open_gap = cert(bound=0.5)
    assert not open_gap["certified"]  # 'optimal' claimed with an open gap
    fine = cert(bound=0.5, status="feasible")
    assert fine["certified"] and fine["ratio"] == 0.5 and not fine["proven_optimal"]


def test_run_method_never_trusts_a_wrong_reported_objective():
    inst = P.generate(1)

    def liar(instance, opts):
        from crowdopt.solvers.olas_assign import assign_sorted
        return Outcome("optimal", assign_sorted(instance), bound=0.0, bound_source="lie",
                       reported_objective=0.0)

    from crowdopt.registry import Method
    r = run_method(SPEC, inst, Method("liar", "exact", liar))
    assert r.objective > 0 and not r.certificate["certified"]


def test_compare_and_certify_agree():
    inst = P.generate(3, points=30, labelers=5, noise="superellipse")
    results = compare(inst)
    objs = {r.algorithm: r.objective for r in results}
    assert max(objs.values()) - min(objs.values()) <= 1e-7
    assert all(r.gap == 0.0 for r in results)
    c = certify(inst)
    assert c["certified"] and c["proven_optimal"] and c["primal_source"] == "sorted"


def test_certify_given_suboptimal_solution_reports_ratio():
    inst = P.make_instance([0.9, 0.6], [2, 2], [0.6, 0.1], "linear")
    worst = P.OlasAssignSolution(np.array([1, 0]))  # high-entropy point to the bad labeler
    c = certify(inst, worst)
    assert c["certified"] and c["upper"] == pytest.approx(0.6 * 0.4)
    assert c["lower"] == pytest.approx(0.06) and c["ratio"] == pytest.approx(0.06 / 0.24)


def test_compare_falls_back_to_bound_methods_when_exact_is_skipped():
    from crowdopt.registry import get_problem

    spec = get_problem("cltap")
    inst = spec.generate(1, t=60, a=8)
    results = compare(inst, time_limit=0.2)
    kinds = {r.algorithm: r for r in results}
    assert kinds["milp-compact"].status == "skipped"
    bounds = [r for r in results if r.method == "bound" and r.bound is not None]
    assert bounds, "no bound method ran"
    cbp = kinds["cbp"]
    assert cbp.gap is not None and cbp.gap >= 0
    assert 0 < cbp.certificate["ratio"] <= 1


FAST_PATH_SCRIPT = """
import json, sys
from crowdopt.cli import main
rc = main(["solve", sys.argv[1], "--method", "fast", "--json"])
heavy = sorted(m for m in ("pyomo", "highspy") if m in sys.modules)
print(json.dumps({"rc": rc, "heavy": heavy}), file=sys.stderr)
"""


@pytest.mark.parametrize("problem", ["olas-assign", "olas-select", "cltap", "labeler-set",
                                     "worker-select"])
def test_fast_path_imports_no_solver_and_records_no_highs_version(tmp_path, problem):
    """A fast solve loads neither Pyomo nor highspy; its certificate takes package versions from
    the installed metadata and names no HiGHS version (HiGHS did not run)."""
    inst = tmp_path / "i.json"
    assert main(["generate", problem, "-o", str(inst)]) == 0
    run = subprocess.run([sys.executable, "-c", FAST_PATH_SCRIPT, str(inst)],
                         capture_output=True, text=True, timeout=120)
    probe = json.loads(run.stderr.strip().splitlines()[-1])
    assert probe == {"rc": 0, "heavy": []}, run.stderr
    cert = json.loads(run.stdout)["certificate"]
    assert "highs" not in cert["versions"] and cert["versions"]["highspy"]


def test_a_poor_plan_under_a_proven_optimum_is_not_called_a_loose_bound():
    """CL-TAP: certifying a poor plan (the random baseline, objective 0) against an optimum
    that head-cover proves: the low ratio is the plan's, so the verdict names the proven
    optimum and never says the bound is probably loose; the JSON form reads the same."""
    import crowdopt
    from crowdopt.results import verdict_of, verdict_text

    inst = crowdopt.generate("cltap", 0, t=8, a=4)
    best = crowdopt.solve(inst, "exact")
    assert best.certificate.proven_optimal and best.objective > 0
    poor = crowdopt.solve(inst, "rnd")
    c = crowdopt.certify(inst, poor.solution, max_steps=20)
    assert c.ratio < 0.5 and not c.proven_optimal
    assert "loose" not in c.verdict and "proven by" in c.verdict
    assert c.upper == pytest.approx(best.objective, rel=1e-6)
    assert verdict_of(c.to_dict()) == c.verdict
    # where no run proved the optimum, a low ratio still warns about the bound
    assert "probably loose" in verdict_text(True, (), False, 0.3, 1.0)
    assert "probably loose" not in verdict_text(True, (), False, 0.3, 1.0,
                                                optimum=(0.3, "exact"))


def test_a_zero_is_never_printed_minus_zero():
    """-0.0 (a negated zero bound) prints '0' and is written 0.0 in JSON."""
    from crowdopt.results import fmt, jsonable

    assert fmt(-0.0) == "0" and fmt(np.float64(-0.0)) == "0" and fmt(0.0) == "0"
    assert json.dumps(jsonable({"bound": -0.0, "x": [np.float64(-0.0)]})) == \
        '{"bound": 0.0, "x": [0.0]}'
    c = cert(bound=-0.0, evaluation=Evaluation(0.0, True))
    assert "-0" not in str(c) and c.to_dict()["bound"] == 0.0
