"""Models users extend: public builders indexed by ids, decode, and solve_model's certificate
against the model's own bound (and the checks that keep that claim honest)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pyomo.environ as pyo
import pytest
from helpers import FROM_ARRAYS

import crowdopt
from crowdopt import Status

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "extend_model.py"


@pytest.mark.parametrize("name", sorted(FROM_ARRAYS))
def test_every_public_builder_solves_to_the_exact_optimum(name):
    inst = FROM_ARRAYS[name]()
    exact = crowdopt.solve(inst, "exact")
    builders = inst.spec.builders()
    assert builders, f"{name} has no public Pyomo builder"
    for algorithm in builders:
        m = crowdopt.build_model(inst, algorithm)
        r = crowdopt.solve_model(inst, m)
        assert r.method == "model" and r.status is Status.OPTIMAL, (algorithm, r)
        assert r.certificate.proven_optimal and r.certificate.gap == 0.0, (algorithm, r)
        assert r.objective == pytest.approx(exact.objective, abs=1e-7), algorithm
        assert "model" in r.certificate.details["scope"]
        assert crowdopt.decode(inst, m, _resolve(inst, m)).__class__ is type(r.solution)
    assert crowdopt.build_model(inst) is not None  # the default: first applicable model


def _resolve(inst, m):
    from crowdopt.solvers.highs import solve_model

    return solve_model(m)


def test_models_are_indexed_by_the_users_ids():
    olas = FROM_ARRAYS["olas-select"]()
    m = crowdopt.build_model(olas, "milp-compact")
    assert ("ann", "v") in m.y and set(m.z) == {"ann", "bob"}
    assert set(crowdopt.build_model(olas, "lp-prefix").s) == set("vwxyz")
    ws = crowdopt.build_model(FROM_ARRAYS["worker-select"](), "milp-a")
    assert ("w1", 1) in ws.z
    ls = crowdopt.build_model(FROM_ARRAYS["labeler-set"](), "milp")
    assert set(ls.x) == {"L1", "L2", "L3", "L4", "L5"}
    oa = crowdopt.build_model(FROM_ARRAYS["olas-assign"](), "milp-epigraph")
    assert ("cy", "p4") in oa.z


def test_build_model_refuses_what_it_cannot_build():
    inst = FROM_ARRAYS["olas-assign"]()
    with pytest.raises(crowdopt.InputError, match="milp-epigraph"):
        crowdopt.build_model(inst, "threshold")  # polynomial, no model
    wide = crowdopt.generate("labeler-set", seed=1, labelers=17, rule="wmv")
    with pytest.raises(crowdopt.InputError, match="memory"):  # a memory guard refuses the build
        crowdopt.build_model(wide, "milp")


def test_a_side_constraint_is_certified_against_the_modified_models_own_bound():
    inst = FROM_ARRAYS["worker-select"]()
    base = crowdopt.solve(inst, "exact")
    m = crowdopt.build_model(inst, "milp-a")
    m.no_w1 = pyo.Constraint(expr=sum(m.z["w1", k] for k in m.Kset) == 0)
    r = crowdopt.solve_model(inst, m)
    assert r.certificate.proven_optimal and r.certificate.certified
    assert 0 not in r.solution.selected and r.objective < base.objective
    assert r.certificate.bound == pytest.approx(r.objective, abs=1e-7)
    assert r.certificate.bound < base.objective  # its own bound, not the original one
    # the original problem's certificate of the same solution has a gap: the rule cost it
    cert = crowdopt.certify(inst, r.solution)
    assert cert.certified and cert.gap == pytest.approx(base.objective - r.objective)


def test_a_relaxed_model_fails_the_original_problems_evaluator():
    inst = FROM_ARRAYS["olas-select"]()
    m = crowdopt.build_model(inst, "lp-bmatching")
    m.once.deactivate()  # (10b) dropped: a point can go to two labelers
    r = crowdopt.solve_model(inst, m)
    assert r.status is Status.OPTIMAL and not r.certified and not r.proven_optimal
    assert any("infeasible" in f for f in r.certificate.failures)


def test_a_changed_objective_or_sense_cannot_be_certified():
    """A changed objective (scaled, penalized, another sense) is the model's own: the result is
    the model's (details.model: its objective, bound, proof), and the certificate claims
    nothing for the problem's objective (not certified, no failure, the reason first) even
    where both objectives agree at the answer."""
    inst = FROM_ARRAYS["worker-select"]()
    base = crowdopt.solve(inst, "milp-a")
    m = crowdopt.build_model(inst, "milp-a")
    m.obj.deactivate()
    m.doubled = pyo.Objective(expr=2 * m.value, sense=pyo.maximize)
    m1 = crowdopt.build_model(inst, "milp-a")  # a penalty claims LESS than the evaluator
    m1.obj.deactivate()
    m1.penalized = pyo.Objective(expr=m1.value - 0.01 * m1.size, sense=pyo.maximize)
    m2 = crowdopt.build_model(inst, "milp-a")
    m2.obj.sense = pyo.minimize
    for model, value in ((m, 2 * base.objective), (m1, None), (m2, None)):
        r = crowdopt.solve_model(inst, model)
        assert r.solution is not None and not r.certified and not r.certificate.failures
        assert "not the problem's" in r.certificate.notes[0]
        assert "not the problem's" in r.certificate.verdict
        own = r.details["model"]
        assert own["proven"] and not own["objective_is_problems"]
        assert own["objective"] == pytest.approx(own["bound"], rel=1e-7)
        if value is not None:
            assert own["objective"] == pytest.approx(value, rel=1e-7)


def test_contradicting_constraints_are_reported_infeasible():
    inst = FROM_ARRAYS["olas-select"]()
    m = crowdopt.build_model(inst, "milp-compact")
    m.too_many = pyo.Constraint(expr=sum(m.y.values()) >= 99)
    r = crowdopt.solve_model(inst, m)
    assert r.status is Status.INFEASIBLE and r.solution is None and r.objective is None
    assert "no feasible point" in r.message


def test_extend_model_example_runs_with_gap_zero_certificates(capsys):
    out = runpy.run_path(str(EXAMPLE), run_name="extend_model")["main"]()
    printed = capsys.readouterr().out
    assert "the rule costs" in printed and "certified, proven optimal" in printed
    assert set(out) == {"olas-select", "worker-select"}
    for name, pair in out.items():
        base, mod = pair["base"], pair["modified"]
        assert mod.method == "model" and mod.certificate.proven_optimal, name
        assert mod.certificate.gap == 0.0 and mod.certificate.certified, name
        assert base.proven_optimal and mod.objective < base.objective, name


def test_solve_model_runs_the_registered_settings_and_passes():
    """The model build_model returns is solved as solve() solves it: the TU models as their LP
    (presolve off, vertex checked integral), worker selection with its min-|S| second pass;
    an untagged copy of the same rows gets one plain solve."""
    ws = FROM_ARRAYS["worker-select"]()
    reg = crowdopt.solve(ws, "milp-a")
    r = crowdopt.solve_model(ws, crowdopt.build_model(ws, "milp-a"))
    for key in ("lp_integral", "second_pass", "presolve", "k"):
        assert r.details[key] == reg.details[key], key
    # the model's registered part is emitted as arrays, as solve() does (nothing was added)
    assert r.details["route"] == "mixed" and reg.details["route"] == "arrays"
    assert r.details["compiled"] == {"rows": 0, "columns": 0}
    olas = FROM_ARRAYS["olas-select"]()
    reg = crowdopt.solve(olas, "lp-prefix")
    r = crowdopt.solve_model(olas, crowdopt.build_model(olas, "lp-prefix"))
    assert r.details["lp_integral"] and r.details["presolve"] is False and not r.details["is_mip"]
    assert reg.details["lp_integral"] and reg.details["presolve"] is False
    m = crowdopt.build_model(olas, "lp-prefix")
    del m.crowdopt_build  # no longer known as the formulation's model: a plain MILP solve
    plain = crowdopt.solve_model(olas, m)
    assert plain.details["is_mip"] and "lp_integral" not in plain.details
    assert plain.objective == pytest.approx(r.objective, abs=1e-9)
