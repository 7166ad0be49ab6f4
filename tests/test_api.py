"""The Python API as a user meets it: instances from plain data, frozen results, one Status,
certificates that always serialize, honest defaults (fall-through, time limits)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import FROM_ARRAYS

import crowdopt
from crowdopt import (
    CltapInstance,
    InputError,
    LabelerSetInstance,
    OlasAssignInstance,
    OlasSelectInstance,
    Status,
    WorkerSelectInstance,
)
from crowdopt.api import run_method
from crowdopt.registry import MILP_DEFAULT_TIME, Method, Outcome, RunOptions, get_problem
from crowdopt.results import Certificate, Comparison, Result, jsonable


def test_every_problem_has_a_from_arrays_case():
    assert set(FROM_ARRAYS) == set(crowdopt.problem_names())


def _no_string_booleans(obj) -> None:
    if isinstance(obj, dict):
        for v in obj.values():
            _no_string_booleans(v)
    elif isinstance(obj, list):
        for v in obj:
            _no_string_booleans(v)
    else:
        assert obj not in ("True", "False"), "a boolean serialized as a string"


@pytest.mark.parametrize("name", sorted(FROM_ARRAYS))
def test_solve_prints_one_line_and_certificate_serializes(name):
    inst = FROM_ARRAYS[name]()
    assert inst.problem == name and inst.spec.name == name
    r = crowdopt.solve(inst, "exact")
    line = str(r)
    assert "\n" not in line and "[" not in line and len(line) < 200, line
    assert line.startswith(f"{name} exact/") and "proven optimal" in line
    assert len(repr(r)) < 400 and "array" not in repr(r)  # no solution arrays in the repr
    assert isinstance(r.status, Status) and r.status is Status.OPTIMAL
    cert = crowdopt.certify(inst, r.solution)
    assert isinstance(cert, Certificate)
    text = json.dumps(cert.to_dict(), allow_nan=False)
    back = json.loads(text)
    assert back["certified"] is True and back["proven_optimal"] is True
    assert back["feasible"] is True and back["status"] == "feasible"
    assert back["gap"] == 0.0 and back["problem"] == name
    _no_string_booleans(back)
    assert json.loads(cert.to_json()) == back
    # the solution travels with the instance's ids, and a certificate accepts that form too
    sol = r.to_dict()["solution"]
    assert crowdopt.certify(inst, sol).objective == pytest.approx(r.objective, abs=1e-12)


def test_results_use_the_instance_ids():
    sol = crowdopt.solve(FROM_ARRAYS["olas-select"](), "exact").to_dict()["solution"]
    assert set(sol["assignment"]) <= {"ann", "bob"} and set(sol["selected"]) <= set("vwxyz")


BAD = [  # (problem, field, bad value, expected text in the one-line error)
    ("olas-assign", "accuracies", [1.5, 0.7, 0.6], "accuracies[0]"),
    ("olas-select", "capacities", [-1, 3], "capacities[0]"),
    ("labeler-set", "qualities", [0.8, 1.2], "qualities[1]"),
    ("worker-select", "max_workers", 0, "max_workers"),
    ("cltap", "b", -1, "b: expected an integer >= 0"),
]
GOOD_KW = {
    "olas-assign": dict(accuracies=[0.9, 0.7, 0.6], capacities=[2, 2, 1],
                        entropies=[0.6, 0.5, 0.3]),
    "olas-select": dict(accuracies=[0.9, 0.7], capacities=[2, 3], entropies=[0.6, 0.5],
                        beta=0.2),
    "labeler-set": dict(qualities=[0.8, 0.7]),
    "worker-select": dict(max_workers=2, scores=[1.0, 0.5, 0.2]),
    "cltap": dict(p=[[0.7, 0.8]], t=2, b=2),
}
CLASSES = {"olas-assign": OlasAssignInstance, "olas-select": OlasSelectInstance,
           "labeler-set": LabelerSetInstance, "worker-select": WorkerSelectInstance,
           "cltap": CltapInstance}


@pytest.mark.parametrize("name,field,bad,needle", BAD)
def test_from_arrays_rejects_like_the_json_reader(name, field, bad, needle):
    kw = {**GOOD_KW[name], field: bad}
    with pytest.raises(InputError) as from_py:
        CLASSES[name].from_arrays(**kw)
    with pytest.raises(InputError) as from_json:
        crowdopt.load({"problem": name, **kw})
    assert str(from_py.value) == str(from_json.value)
    assert needle in str(from_py.value) and "\n" not in str(from_py.value)


def test_generate_returns_the_instance_and_load_round_trips():
    inst = crowdopt.generate("olas-assign", seed=1, points=12, labelers=3)
    assert isinstance(inst, OlasAssignInstance) and inst.spec.name == "olas-assign"
    doc = inst.to_dict()
    assert doc["problem"] == "olas-assign" and doc["schema_version"] == 1
    again = crowdopt.load(doc)
    assert again.to_dict() == doc
    with pytest.raises(InputError, match="bogus"):
        crowdopt.generate("olas-assign", bogus=1)


def test_the_api_takes_instances_and_files_go_through_load(tmp_path):
    inst = crowdopt.generate("olas-select", seed=2)
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(inst.to_dict()))
    objs = {crowdopt.solve(x, "fast").objective
            for x in (inst, crowdopt.load(inst.to_dict()), crowdopt.load(str(path)),
                      crowdopt.load(path))}
    assert len(objs) == 1


@pytest.mark.parametrize("bad, found", [
    ("inst.json", "found 'inst.json' (a file path: read it with crowdopt.load(path))"),
    (Path("inst.json"), "found 'inst.json' (a file path"),
    ({"problem": "olas-select"}, "found 'dict' (an instance document: read it with crowdopt.load"),
    ("tuple", "found 'tuple' (the (spec, instance) pair of crowdopt 0.1 is retired"),
    (42, "found 'int'"),
    (None, "found 'NoneType'"),
])
@pytest.mark.parametrize("call", [
    lambda x: crowdopt.solve(x), lambda x: crowdopt.compare(x), lambda x: crowdopt.certify(x),
    lambda x: crowdopt.build_model(x), lambda x: crowdopt.decode(x, None, None),
    lambda x: crowdopt.solve_model(x, None)])
def test_anything_but_an_instance_is_a_one_line_error_naming_it(bad, found, call):
    if bad == "tuple":
        inst = crowdopt.generate("olas-select", seed=2)
        bad = (inst.spec, inst)
    with pytest.raises(InputError) as err:
        call(bad)
    text = str(err.value)
    assert text.startswith("instance: expected a crowdopt instance") and "\n" not in text
    assert found in text


def test_results_are_frozen_and_summarized():
    r = crowdopt.solve(FROM_ARRAYS["worker-select"](), "exact")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.objective = 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.certificate.gap = 1.0
    text = r.summary()
    assert "proven optimal" in text and "worker-select" in text and len(text.splitlines()) > 5
    assert r.certificate["gap"] == r.certificate.gap == 0.0  # read access by JSON key
    assert r.certificate.get("nope") is None
    with pytest.raises(KeyError):
        r.certificate["nope"]


def test_one_status_vocabulary():
    assert crowdopt.Status is Status
    from crowdopt.solvers.highs import Status as HighsStatus

    assert HighsStatus is Status
    assert Outcome("optimal").status is Status.OPTIMAL
    with pytest.raises(ValueError):
        Outcome("solved")  # not a word of the vocabulary
    comp = crowdopt.compare(crowdopt.generate("worker-select", seed=1))
    assert all(isinstance(r.status, Status) for r in comp)
    assert {r.status for r in comp} == {Status.FEASIBLE, Status.OPTIMAL, Status.SKIPPED}


def test_jsonable_converts_at_the_source():
    from crowdopt.registry import Evaluation

    out = jsonable({"a": np.bool_(True), "b": np.int64(3), "c": np.float64("nan"),
                    "d": (1.0, float("inf")), "e": Status.TIME_LIMIT, 5: np.arange(2),
                    "f": Evaluation(1.0, True)})
    assert out == {"a": True, "b": 3, "c": None, "d": [1.0, None], "e": "time_limit",
                   "5": [0, 1], "f": {"objective": 1.0, "feasible": True,
                                      "max_violation": 0.0, "violations": [], "extra": {}}}
    assert type(out["a"]) is bool and type(out["b"]) is int
    json.dumps(out, allow_nan=False)


def test_numpy_values_in_a_methods_details_serialize_as_json_types():
    spec = get_problem("olas-assign")

    def numpy_details(instance, opts):
        from crowdopt.solvers.olas_assign import assign_sorted
        return Outcome("feasible", assign_sorted(instance),
                       details={"flag": np.bool_(True), "n": np.int32(4), "x": np.float32(0.5),
                                "curve": np.array([1.0, np.inf])})

    r = run_method(spec, spec.generate(1), Method("np", "fast", numpy_details))
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))["certificate"]["details"]
    assert d == {"flag": True, "n": 4, "x": 0.5, "curve": [1.0, None]}
    assert type(r.certificate.feasible) is bool and type(r.certificate.objective) is float


def test_top_level_functions_have_real_signatures_and_docs():
    for fn in (crowdopt.solve, crowdopt.compare, crowdopt.certify):
        params = inspect.signature(fn).parameters
        for p in ("time_limit", "threads", "seed", "mip_rel_gap", "presolve"):
            assert p in params, (fn.__name__, p)
        assert "time_limit" in fn.__doc__ and "Returns" in fn.__doc__
    for fn in (crowdopt.generate, crowdopt.load, crowdopt.build_model, crowdopt.decode,
               crowdopt.solve_model):
        assert fn.__doc__ and len(fn.__doc__) > 80
    for name in crowdopt.__all__:
        getattr(crowdopt, name)


def test_import_and_fast_solve_load_no_solver():
    code = ("import sys, crowdopt\n"
            "assert 'numpy' not in sys.modules, 'import crowdopt loads numpy'\n"
            "r = crowdopt.solve(crowdopt.generate('olas-assign', seed=1), 'fast')\n"
            "r.to_dict(); str(r)\n"
            "print(sorted(m for m in ('pyomo', 'highspy') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_command_line_parser_loads_no_aggregation_method():
    """Every command builds the whole parser: it takes the aggregation methods' names from
    `crowd.names`, not from the methods (which pull in scipy: 0.5 s on every command)."""
    code = ("import sys, crowdopt.cli as c\nc.build_parser()\n"
            "print(sorted(m for m in ('crowdopt.crowd.methods', 'scipy.sparse', 'pyomo')"
            " if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_an_exact_solve_imports_pyomo_without_the_scipy_extras():
    """Pyomo's scipy hook imported scipy.stats, integrate and spatial (1.5 s of CPU on a busy
    machine) in every exact solve; `models.pyomo_env` leaves the hook out, scipy imported
    before or not, and the one scipy module stays the one scipy module."""
    code = ("import sys, scipy, scipy.sparse, crowdopt\n"
            "first = sys.modules['scipy']\n"
            "r = crowdopt.solve(crowdopt.generate('cltap', 1, t=6, a=3), 'head-cover')\n"
            "m = crowdopt.build_model(crowdopt.generate('labeler-set', 1))\n"
            "assert r.proven_optimal and sys.modules['scipy'] is first\n"
            "print(sorted(x for x in ('scipy.stats', 'scipy.integrate', 'scipy.spatial')"
            " if x in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ----------------------------------------------------------------------------- defaults
def test_exact_falls_through_size_guards_then_fails_with_one_line(monkeypatch):
    from crowdopt.solvers import guards

    # time guards with known fits: the MILP predicted e^(M - 5) s, the enumeration 2^(M - 8) s
    fits = {"labeler-set/milp/mv-uniform": {"features": ["M"], "coef": [-5.0, 1.0]},
            "labeler-set/enumeration/mv": {"features": ["M"], "coef": [-8 * 0.6931, 0.6931]}}
    monkeypatch.setattr(guards, "coefficients", lambda: fits)
    spec = get_problem("labeler-set")
    mid = LabelerSetInstance.from_arrays(np.linspace(0.55, 0.9, 10))  # MILP ~150 s, enum 4 s
    assert spec.method("milp").refuses(mid) and spec.method("enumeration").refuses(mid) is None
    assert spec.method("milp").applicable(mid) is None  # a time guard, not a memory guard
    r = crowdopt.solve(mid, "exact")
    assert r.algorithm == "enumeration" and r.proven_optimal
    big = LabelerSetInstance.from_arrays(np.linspace(0.55, 0.9, 16))  # enumeration ~256 s
    with pytest.raises(InputError) as err:
        crowdopt.solve(big, "exact")
    text = str(err.value)
    assert "\n" not in text and "milp:" in text and "enumeration:" in text and "fast" in text
    with pytest.raises(InputError, match="predicted .* s > 120 s .*--force"):
        crowdopt.solve(big, "milp")  # a named method past its guard is an error too
    assert run_method(spec, big, "milp").status is Status.SKIPPED  # compare shows it skipped
    # compare (and sweeps) name kinds too: they fall through, and none left is a skipped row
    assert [r.algorithm for r in crowdopt.compare(mid, algorithms=["fast", "exact"])] == [
        "top-k", "enumeration"]
    rows = crowdopt.compare(big, algorithms=["fast", "exact"])
    assert [(r.algorithm, r.status) for r in rows] == [("top-k", Status.OPTIMAL),
                                                        ("milp", Status.SKIPPED)]
    # force: the first exact method runs anyway, under the time limit, and says it was forced
    forced = crowdopt.solve(mid, "exact", force=True, time_limit=30)
    assert forced.algorithm == "milp" and forced.proven_optimal
    assert forced.certificate.details["forced"].startswith("predicted")
    assert forced.objective == pytest.approx(r.objective, abs=1e-9)
    with pytest.raises(InputError, match="force"):
        crowdopt.solve(mid, "exact", force="yes")


def test_cli_exact_with_no_applicable_method_exits_2_with_one_line():
    doc = crowdopt.generate("cltap", seed=1, t=45).to_dict()  # t=45, a=7: past both exact guards
    r = subprocess.run([sys.executable, "-m", "crowdopt", "solve", "-", "--method", "exact"],
                       input=json.dumps(doc), capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "bound" in r.stderr


def test_every_milp_method_has_a_default_time_limit():
    seen = 0
    for name in crowdopt.problem_names():
        spec = get_problem(name)
        inst = FROM_ARRAYS[name]()
        forms = importlib.import_module(spec.models).FORMULATIONS
        for algorithm, build in spec.builders().items():
            model = build(inst)
            is_mip = any(v.is_integer() for v in model.component_data_objects(
                __import__("pyomo.environ", fromlist=["Var"]).Var))
            # a totally unimodular model is solved as its LP (vertex checked integral)
            is_mip = is_mip and not forms[algorithm].settings(inst).integral_lp
            limit = spec.method(algorithm).time_limit
            assert limit == MILP_DEFAULT_TIME if is_mip else True, (name, algorithm, limit)
            # (milp-a is a MILP when the instance has costs: it keeps the limit)
            assert limit is None if not is_mip and algorithm != "milp-a" else True
            seen += is_mip
    assert seen >= 6
    r = crowdopt.solve(FROM_ARRAYS["worker-select"](), "milp-a")
    assert r.certificate.details["time_limit_s"] == MILP_DEFAULT_TIME


def test_a_gap_left_open_by_mip_rel_gap_is_not_optimal():
    spec = get_problem("olas-assign")
    inst = spec.generate(3)

    def loose(instance, opts):  # what HiGHS does at mip_rel_gap > 0: 'optimal', gap open
        from crowdopt.solvers.olas_assign import assign_sorted
        sol = assign_sorted(instance)
        obj = spec.evaluate(instance, sol).objective
        return Outcome("optimal", sol, bound=0.9 * obj, bound_source="test", reported_objective=obj)

    r = run_method(spec, inst, Method("loose", "exact", loose), RunOptions(mip_rel_gap=0.2))
    assert r.status is Status.FEASIBLE and r.certified and not r.proven_optimal
    assert "mip_rel_gap" in r.message
    exact = crowdopt.solve(inst, "milp-epigraph", mip_rel_gap=0.5)
    assert exact.certified and (exact.status is Status.FEASIBLE or exact.gap == 0.0)


@pytest.mark.slow
def test_olas_assign_1500_exact_is_threshold_and_milp_stops_at_its_limit(tmp_path):
    """N = 1500, M = 17."""
    def cli(*args, stdin=None):
        return subprocess.run([sys.executable, "-m", "crowdopt", *args], input=stdin,
                              capture_output=True, text=True, timeout=300)

    gen = cli("generate", "olas-assign", "--param", "points=1500", "--param", "labelers=17")
    assert gen.returncode == 0
    exact = cli("solve", "-", "--method", "exact", "--json", stdin=gen.stdout)
    assert exact.returncode == 0, exact.stderr
    doc = json.loads(exact.stdout)
    assert doc["algorithm"] == "threshold" and doc["certificate"]["proven_optimal"] is True
    # the limit covers the model build too: on a loaded machine HiGHS may get too little of
    # 4 s for an incumbent; whatever it returns at the stop must be valid
    milp = cli("solve", "-", "--method", "milp-epigraph", "--time-limit", "4", "--json",
               stdin=gen.stdout)
    assert milp.returncode == 4, milp.stderr
    res = json.loads(milp.stdout)
    assert res["status"] == "time_limit" and "time limit" in res["message"]
    if res["bound"] is not None:
        assert res["bound"] <= doc["objective"] + 1e-9  # a valid lower bound
    if res["objective"] is not None:
        assert doc["objective"] <= res["objective"] + 2e-9
        assert len(res["solution"]["assignment"]) == 1500 and res["certificate"]["certified"]


# ----------------------------------------------------------------------------- compare
def test_compare_is_a_sequence_of_results_with_a_warm_up_apart(tmp_path):
    inst = crowdopt.generate("olas-select", seed=5)
    comp = crowdopt.compare(inst)
    assert isinstance(comp, Comparison) and all(isinstance(r, Result) for r in comp)
    assert len(comp) == len(comp.results) and comp[0] is comp.results[0]
    assert comp.warmup_s > 0 and comp.proven and comp.best is not None
    assert crowdopt.compare(inst, warmup=False).warmup_s == 0.0
    doc = comp.to_dict()
    assert set(doc) == {"problem", "size", "bound", "bound_source", "warmup_s", "best",
                        "results"}
    assert all("solution" not in row for row in doc["results"])
    assert doc["best"] == {"algorithm": comp.best.algorithm, "objective": comp.best.objective,
                           "solution": comp.best.solution_dict()}  # what certify reads
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(inst.to_dict()))
    out = subprocess.run([sys.executable, "-m", "crowdopt", "compare", str(path), "--json"],
                         capture_output=True, text=True, timeout=120)
    cli = json.loads(out.stdout)
    assert set(cli) == set(doc)
    assert [set(r) for r in cli["results"]] == [set(r) for r in doc["results"]]
    assert [set(r["certificate"]) for r in cli["results"]] == [
        set(r["certificate"]) for r in doc["results"]]


def test_compare_names_the_algorithms_field_for_an_unknown_algorithm():
    inst = crowdopt.generate("worker-select", 0, workers=4)
    with pytest.raises(InputError, match=r"^algorithms: expected one of .*found 'nosuch'"):
        crowdopt.compare(inst, algorithms=["fast", "nosuch"])


def test_compare_warmup_takes_true_or_false_only():
    """warmup is a flag like force: "no", 0 or None are refused with one line naming it (a
    string would otherwise warm up silently), False skips the warm-up."""
    inst = crowdopt.generate("worker-select", 0, workers=4)
    for bad in ("no", 0, 1, None):
        with pytest.raises(InputError, match=r"^warmup: expected True or False, found "):
            crowdopt.compare(inst, algorithms=["fast"], warmup=bad)
    assert crowdopt.compare(inst, algorithms=["fast"], warmup=False).warmup_s == 0.0
