"""Time guards fitted from measurement (solvers/guards.py, data/guards.json), told apart from
memory guards; --force past a time guard; the CLI does not wait for a run the watchdog left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import crowdopt
from crowdopt import InputError, LabelerSetInstance
from crowdopt.cli import main
from crowdopt.registry import Lazy, get_problem, problem_names
from crowdopt.solvers import guards


def _time_guarded() -> list[tuple[str, str]]:
    return [(p, m.algorithm) for p in problem_names() for m in get_problem(p).methods
            if isinstance(m.time_guard, Lazy)
            and m.time_guard.target == "crowdopt.solvers.guards:time_guard"]


def test_every_time_guarded_method_has_figures_and_a_committed_fit():
    """Every fitted time guard (head-cover keeps its link-count guard) has figures and a fit."""
    pairs = _time_guarded()
    assert ("labeler-set", "milp") in pairs and ("worker-select", "milp-a") in pairs
    fits = guards.coefficients()
    for problem, algorithm in pairs:
        spec = get_problem(problem)
        inst = spec.example()
        key = guards.guard_key(problem, algorithm, inst)
        fig = guards.figures(problem, algorithm, inst)
        assert {"rows", "cols", "nnz"} <= set(fig)
        assert key in fits, f"no fitted guard for {key} (benchmarks/bench_guards.py --write)"
        assert len(fits[key]["coef"]) == len(fits[key]["features"]) + 1
        # the built-in example is small: predicted well inside the limit, so it runs
        assert guards.predict(problem, algorithm, inst) < guards.GUARD_LIMIT_S


def test_prediction_grows_with_size_and_refuses_far_past_the_frontier():
    small = LabelerSetInstance.from_arrays(np.linspace(0.55, 0.9, 9))
    huge = LabelerSetInstance.from_arrays(np.linspace(0.55, 0.9, 60))
    assert guards.predict("labeler-set", "enumeration", small) < guards.predict(
        "labeler-set", "enumeration", huge)
    reason = get_problem("labeler-set").method("enumeration").refuses(huge)
    assert reason.startswith("predicted") and "--force" in reason and "\n" not in reason


def test_a_memory_guard_refuses_even_when_forced():
    spec = get_problem("labeler-set")
    wmv = LabelerSetInstance.from_arrays(np.linspace(0.55, 0.9, 17), rule="wmv")
    m = spec.method("milp")
    assert m.refuses(wmv, force=True).startswith("memory:")
    with pytest.raises(InputError, match="memory"):
        crowdopt.solve(wmv, "milp", force=True)


@pytest.mark.parametrize("problem, algorithm, params", [
    ("cltap", "milp-compact", {"t": 1000, "a": 100, "K": 1000}),
    ("olas-select", "milp-literal", {"points": 3680, "labelers": 17}),
    ("olas-assign", "milp-epigraph", {"points": 30_000, "labelers": 17}),
])
def test_pyomo_milps_past_the_memory_they_would_take_are_refused_even_when_forced(
        problem, algorithm, params, monkeypatch):
    """A forced MILP still may not build a model past the memory cap (KB_PER_NNZ per nonzero;
    the cap is lowered 100-fold here so that OLAS needs 30,000 points, not 3 million, to pass
    it: generating those took 18 s)."""
    monkeypatch.setattr(guards, "MEMORY_MAX_GB", guards.MEMORY_MAX_GB / 100)
    inst = crowdopt.generate(problem, 0, **params)
    reason = get_problem(problem).method(algorithm).refuses(inst, force=True)
    assert reason.startswith("memory:") and "GB" in reason and "\n" not in reason
    assert guards.memory_guard(problem, algorithm, crowdopt.generate(problem, 0)) is None


@pytest.mark.slow
def test_cli_force_runs_a_method_past_its_time_guard(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(guards, "coefficients", lambda: {
        "labeler-set/milp/mv-uniform": {"features": ["M"], "coef": [10.0, 0.0]}})  # e^10 s: refused
    path = tmp_path / "ls.json"
    path.write_text(json.dumps(LabelerSetInstance.from_arrays([0.6, 0.7, 0.8]).to_dict()))
    assert main(["solve", str(path), "--method", "milp", "--json"]) == 2
    assert "predicted" in capsys.readouterr().err
    assert main(["solve", str(path), "--method", "milp", "--force", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "optimal" and doc["certificate"]["details"]["forced"]
    assert main(["certify", str(path), "--force", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["details"]["runs"]
    assert all(r["status"] != "skipped" or "not needed" in r["message"] for r in runs)


LEFT_BEHIND = """
import sys, threading, time
from crowdopt.solvers import highs
run = threading.Thread(target=time.sleep, args=(60,), name="highs-run")  # a run still going
run.start()
highs._LEFT_BEHIND.append(run)
sys.argv = ["crowdopt", *sys.argv[1:]]
from crowdopt.cli import main
sys.exit(main())
"""


@pytest.mark.slow
def test_cli_exits_after_its_output_without_waiting_for_a_left_behind_run(tmp_path):
    path = tmp_path / "ls.json"
    path.write_text(json.dumps(LabelerSetInstance.from_arrays([0.6, 0.7, 0.8]).to_dict()))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(LEFT_BEHIND), "solve", str(path),
                        "--json"], capture_output=True, text=True, timeout=50, env=env)
    assert time.perf_counter() - t0 < 50  # not the 60 s the left-behind run takes
    assert r.returncode == 0 and json.loads(r.stdout)["algorithm"] == "top-k"
    assert "without waiting" in r.stderr
    bad = subprocess.run([sys.executable, "-c", textwrap.dedent(LEFT_BEHIND), "solve",
                          str(tmp_path / "none.json")], capture_output=True, text=True,
                         timeout=50, env=env)
    assert bad.returncode == 2 and bad.stdout == ""  # the code is kept


def _slow_milp_build(monkeypatch, seconds):
    """labeler-set's MILP with a build that takes `seconds` (Python, as a Pyomo build is)."""
    import dataclasses

    from crowdopt.models import labeler_set as models

    form = models.FORMULATIONS["milp"]

    def slow_build(inst):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:  # busy, not a sleep: a build computes
            pass
        return form.build(inst)

    monkeypatch.setitem(models.FORMULATIONS, "milp", dataclasses.replace(form, build=slow_build))


@pytest.mark.slow
def test_a_build_is_stopped_at_the_limit_not_after_it(monkeypatch):
    """On the main thread a 30 s build stops at the 0.2 s limit, before HiGHS starts."""
    _slow_milp_build(monkeypatch, 30.0)
    inst = LabelerSetInstance.from_arrays([0.6, 0.7, 0.8])
    t0 = time.perf_counter()
    r = crowdopt.solve(inst, "milp", time_limit=0.2)
    assert time.perf_counter() - t0 < 10  # not the 30 s of the build
    assert r.status == "time_limit" and r.solution is None
    assert "while building the Pyomo model" in r.message and "HiGHS not started" in r.message
    import signal
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0  # the timer is disarmed
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)


@pytest.mark.slow
def test_off_the_main_thread_a_build_that_uses_up_the_limit_stops_before_highs(monkeypatch):
    """Signals reach only the main thread: elsewhere the clock is read after the build."""
    import threading

    _slow_milp_build(monkeypatch, 0.3)
    inst = LabelerSetInstance.from_arrays([0.6, 0.7, 0.8])
    out = {}
    th = threading.Thread(target=lambda: out.update(r=crowdopt.solve(inst, "milp",
                                                                     time_limit=0.1)))
    th.start()
    th.join()
    r = out["r"]
    assert r.status == "time_limit" and r.solution is None
    assert "after building the Pyomo model" in r.message and "HiGHS not started" in r.message
    assert crowdopt.solve(inst, "milp", time_limit=5).proven_optimal  # in time: solved


def test_a_time_limit_too_long_for_a_thread_wait_solves_instead_of_overflowing():
    """1e308 s would overflow the watchdog's wait (OverflowError): such a limit has no watchdog."""
    inst = LabelerSetInstance.from_arrays([0.6, 0.7, 0.8])
    assert crowdopt.solve(inst, "milp", time_limit=1e308).proven_optimal


def test_bench_guards_names_a_missing_measurements_file_in_one_line(tmp_path):
    bench = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "bench_guards.py")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    r = subprocess.run([sys.executable, bench, "--check", "--from", str(tmp_path / "none.json")],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "none.json" in r.stderr.strip().splitlines()[-1]


def test_a_limit_counts_from_the_callers_start():
    """The limit's clock is the caller's (`started`): a limit the set-up already used up is
    status time_limit before the method starts, with the time spent in the certificate; the
    quick methods still run under what is left."""
    inst = crowdopt.generate("cltap", 700001, t=20, a=3, trend="inc")
    r = crowdopt.solve(inst, "head-cover", time_limit=2, started=time.perf_counter() - 5)
    assert r.status == "time_limit" and r.solution is None and not r.proven_optimal
    assert "used up before head-cover started" in r.message
    assert r.certificate.times["total_s"] >= 5
    ok = crowdopt.solve(inst, "head-cover", time_limit=60, started=time.perf_counter() - 5)
    assert ok.certificate.times["total_s"] >= 5


def test_the_command_lines_clock_starts_with_the_command(tmp_path, monkeypatch, capsys):
    """Reading the instance counts against --time-limit (`cli.STARTED`): a slow read that
    uses up the limit ends in exit 4 and the one-line reason, times.total_s past the read."""
    import crowdopt.api as api

    path = tmp_path / "m1.json"
    path.write_text(json.dumps(crowdopt.generate("cltap", 700001, t=20, a=3,
                                                 trend="inc").to_dict()))
    real = api.load

    def slow(source):
        time.sleep(0.5)
        return real(source)

    monkeypatch.setattr(api, "load", slow)
    code = main(["solve", str(path), "--method", "head-cover", "--time-limit", "0.3",
                 "--force", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 4 and doc["status"] == "time_limit"
    assert doc["certificate"]["times"]["total_s"] >= 0.5
