"""Every exact method of every problem: end-to-end time against a raw HiGHS replay of the same
arrays, the time split, peak memory per binary, the fitted growth, and the size guards.

Usage: python benchmarks/bench_exact_overhead.py [--quick] [--repeat R] [--seed S]
                                                 [--only NAME ...] [--guards] [--presolve]

For each exact method at 3 sizes, one fresh subprocess (so that peak RSS belongs to one run):
1. warm-up: the same method on a tiny instance (imports, the first Highs object, Pyomo's
   compiler), outside every timed region;
2. one plain end-to-end run, `api.run_method` (build, compile, adapter, HiGHS, decode, the
   evaluator and the certificate); its peak RSS growth over the warmed-up process, divided by
   the model's integer columns ("binaries"; columns for an LP, cells/sets for a method without
   HiGHS), is `rss_KB/bin`;
3. one run under `solvers.highs.capture()`: every call crowdopt makes on highspy, with copies of
   its arguments (arrays, options), and the split: build (the method's own model building),
   compile (Pyomo's LinearStandardFormCompiler), adapter (the rest of solvers/highs.py), HiGHS
   (time inside highspy calls), certificate (evaluator + certificate), other (decode etc.);
4. R interleaved pairs (raw, end-to-end): raw = the captured calls replayed on a fresh highspy
   object (every state-changing call and run; after each run one read of status and info and
   the primal values as an array);
   end-to-end = run_method on a freshly made instance (no cached matrices). Medians; the
   ratio is the median over the pairs of end-to-end / raw (both under the same load), and fast
   cases get up to MAX_PAIRS pairs (about PAIR_BUDGET_S seconds of them).
A second subprocess replays the captured calls alone for HiGHS's own peak RSS (`raw_KB/bin`).

Every instance is seeded and every run checks its status and objective against the first run.
Growth: the exponent p of time ~ n^p (least squares on the 3 sizes, n = binaries), or for the
exponential methods the factor r of time ~ r^M per labeler. `--guards` runs each method with a
memory guard once at it (the constant in its module) and prints the time (time guards are fitted
by bench_guards.py); `--guard-worker CASE --size S` probes one size. `--presolve` adds the TU-LP presolve on/off
table (raw replays with the presolve option flipped).
`--masters` times only CL-TAP's LP masters (column generation's faithful and aggregated
masters, the configuration LP) at 3 sizes each: the registered route (array emitter) against the
user's (the formulation's Pyomo model), as `--user-route` does for the methods.
`--user-route` adds, for every method with a Pyomo model, the route a user takes,
`crowdopt.solve_model(inst, crowdopt.build_model(inst, method))`, next to the registered
`crowdopt.solve(inst, method)`, in CPU seconds (time.process_time: the machine may be loaded),
medians of R runs each: registered total and HiGHS part; user total split into Pyomo build,
compile (LinearStandardFormCompiler) and HiGHS; `highs_x` = user HiGHS / registered HiGHS
(target <= 1.2 at the largest size: both routes run the same formulation's settings and passes
on the same matrix). Both answers are checked equal.
Writes benchmarks/results/exact_overhead.json (and exact_overhead_guards.json with --guards).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "src"))
sys.path.insert(0, str(HERE))

RATIO_LARGEST = 1.3  # end-to-end over a raw replay at the largest size
USER_HIGHS_LARGEST = 1.2  # user-route HiGHS over registered HiGHS at the largest size
RATIO_SMALLEST = 2.0
MAX_PAIRS = 25  # interleaved (raw, end-to-end) pairs of a fast case
PAIR_BUDGET_S = 3.0  # about this much time in pairs for the fast cases


# ----------------------------------------------------------------------------- the cases
@dataclass(frozen=True)
class Case:
    name: str  # row label
    problem: str
    method: str
    params: Callable[[Any], dict]  # size -> generator parameters
    sizes: tuple  # the 3 sizes of the full table
    quick: tuple  # the 3 sizes of --quick
    warm: Any  # a tiny size for the warm-up
    binaries: Callable[[Any], int]  # integer columns of the model (columns for an LP)
    unit: str  # what `binaries` counts
    growth: str = "power"  # "power": t ~ n^p; "exp": t ~ r^size
    guard: Callable[[], Any] | None = None  # -> the size at the guard (for --guards)
    guard_note: str = ""
    make: Callable[[str, Any, int], Any] | None = None  # custom instance maker
    guard_params: Callable[[Any], dict] | None = None  # the (harder) family the guard is set on


def _gen(problem: str, params: dict, seed: int) -> Any:
    from crowdopt.registry import get_problem

    return get_problem(problem).generate(seed, **params)


def _ws_costs(M: int, seed: int) -> Any:
    """bench_worker_select part 2: integer costs 1..10, budget 40, K = M."""
    from crowdopt.problems import worker_select as P

    base = P.generate(seed + 1, workers=M, max_workers=M, cost_max=10)
    return P.make_instance(max_workers=M, scores_=base.scores, costs=base.costs, budget=40)


def _olas_sel(u: int, M: int = 17) -> dict:
    # Spambase-like pool (digest 000 section 6.2): 17 labelers of capacity 16, linear noise
    return {"points": u, "labelers": M, "capacity_min": 16, "capacity_max": 16,
            "noise": "linear", "beta": 0.1}


def _olas_sel_small(s: tuple) -> dict:
    u, M = s
    return {"points": u, "labelers": M, "noise": "superellipse", "beta": 0.05,
            "entropy_max": 1.0}


def _guard(module: str, attr: str, to_size: Callable[[Any], Any] = lambda v: v,
           key: str | None = None) -> Callable[[], Any]:
    """-> the case size at a solver module's size-guard constant (`key` into a dict constant)."""
    def get() -> Any:
        import importlib

        v = getattr(importlib.import_module(f"crowdopt.solvers.{module}"), attr)
        return to_size(v[key] if key is not None else v)
    return get


CASES: list[Case] = [
    Case("olas-assign milp-epigraph", "olas-assign", "milp-epigraph",
         lambda s: {"points": s[0], "labelers": s[1], "noise": "superellipse"},
         ((60, 8), (200, 17), (400, 17)), ((30, 5), (60, 8), (90, 10)), (10, 3),
         lambda s: s[0] * s[1], "binaries (N*M)",
         guard=None,
         guard_note="time guard fitted by bench_guards.py (N*M binaries)"),
    Case("olas-assign threshold", "olas-assign", "threshold",
         lambda s: {"points": s, "labelers": 17, "capacity_min": s, "capacity_max": s},
         (100_000, 400_000, 1_600_000), (10_000, 40_000, 160_000), 100,
         lambda s: s * 17, "eps entries (N*M)",
         guard=None,
         guard_note="none: memory (the eps matrix) binds before time"),
    Case("olas-select lp-prefix", "olas-select", "lp-prefix", _olas_sel,
         (3_680, 30_000, 100_000), (1_000, 3_680, 10_000), 100,
         lambda s: s, "columns (u)",
         guard=None,
         guard_note="none: memory binds before time"),
    Case("olas-select lp-bmatching", "olas-select", "lp-bmatching", _olas_sel,
         (3_680, 15_000, 40_000), (1_000, 3_680, 8_000), 100,
         lambda s: s * 17, "columns (<= u*M)",
         guard=None,
         guard_note="none: memory binds before time"),
    Case("olas-select milp-compact", "olas-select", "milp-compact", _olas_sel_small,
         ((40, 8), (80, 12), (120, 17)), ((20, 5), (40, 8), (60, 10)), (10, 3),
         lambda s: s[0] * s[1], "binaries (<= u*M)",
         guard=None,
         guard_note="time guard fitted by bench_guards.py (u*M pairs, Spambase-like pool (linear noise))",
         guard_params=lambda s: _olas_sel(s[0], s[1])),
    Case("olas-select milp-literal", "olas-select", "milp-literal", _olas_sel_small,
         ((30, 4), (80, 5), (110, 5)), ((10, 3), (30, 4), (50, 5)), (6, 2),
         lambda s: s[0] * s[1], "binaries (<= u*M)",
         guard=None,
         guard_note="time guard fitted by bench_guards.py (nominal (10e) rows, M = 12)"),
    Case("cltap milp-compact", "cltap", "milp-compact",
         lambda s: {"t": s[0], "a": s[1], "trend": "dec"}, ((6, 3), (8, 3), (10, 3)), ((4, 2), (5, 3), (6, 3)),
         (3, 2), lambda s: s[0] * s[0] * s[1], "binaries (t*a*K)",
         guard=None,
         guard_note="time guard fitted by bench_guards.py (t*a*K binaries, a = 5)"),
    Case("cltap brute-force", "cltap", "brute-force",
         lambda s: {"t": s[0], "a": s[1], "trend": "dec"}, ((3, 2), (4, 2), (4, 3)), ((3, 2), (4, 2), (4, 3)),
         (2, 2), lambda s: s[0] * s[0] * s[1], "pairs (t*a*K)",
         guard=lambda: (4, 3),
         guard_note="t <= 4, a <= 3 (fixed)"),
    Case("labeler-set milp (mv)", "labeler-set", "milp",
         lambda s: {"labelers": s, "rule": "mv"}, (8, 10, 12), (6, 7, 8), 4,
         lambda s: s, "binaries (M)", growth="exp",
         guard=None,
         guard_note="time guard fitted by bench_guards.py (M labelers)"),
    Case("labeler-set milp (wmv)", "labeler-set", "milp",
         lambda s: {"labelers": s, "rule": "wmv"}, (6, 7, 8), (4, 5, 6), 3,
         lambda s: s + 2 ** (s + 1), "binaries (M + 2^(M+1))", growth="exp",
         guard=None,
         guard_note="time guard fitted by bench_guards.py (M labelers)"),
    Case("labeler-set enumeration (mv)", "labeler-set", "enumeration",
         lambda s: {"labelers": s, "rule": "mv", "costs": "random"}, (12, 14, 16), (8, 10, 12), 4,
         lambda s: 2 ** s, "sets (2^M)", growth="exp",
         guard=None,
         guard_note="time guard fitted by bench_guards.py (M labelers)"),
    Case("labeler-set enumeration (wmv)", "labeler-set", "enumeration",
         lambda s: {"labelers": s, "rule": "wmv", "costs": "random"}, (8, 10, 12), (6, 8, 10), 3,
         lambda s: 2 ** s, "sets (2^M)", growth="exp",
         guard=None,
         guard_note="time guard fitted by bench_guards.py (M labelers)"),
    Case("worker-select milp-a", "worker-select", "milp-a",
         lambda s: {"workers": s[0], "max_workers": s[1]},
         ((300, 50), (1_000, 100), (3_000, 100)), ((100, 20), (300, 50), (1_000, 50)), (20, 10),
         lambda s: s[0] * s[1] + s[1], "binaries (M*B + B)",
         guard=None,
         guard_note="time guard fitted by bench_guards.py (M*B binaries, B = 100)"),
    Case("worker-select milp-a (costs)", "worker-select", "milp-a", lambda s: {},
         (20, 40, 80), (10, 20, 30), 6, lambda s: s * s + s, "binaries (M*B + B)",
         make=lambda problem, s, seed: _ws_costs(s, seed),
         guard=None,
         guard_note="time guard fitted by bench_guards.py (M*B binaries, B = M)"),
    Case("worker-select milp-compact", "worker-select", "milp-compact",
         lambda s: {"workers": s, "max_workers": s}, (20, 30, 40), (10, 15, 20), 6,
         lambda s: 2 * s, "binaries (M + B)",
         guard=None,
         guard_note="time guard fitted by bench_guards.py (M workers)"),
    Case("worker-select cost-dp", "worker-select", "cost-dp", lambda s: {},
         (100, 400, 1_600), (50, 100, 200), 6, lambda s: s * s * 41, "cells (M*B*(C+1))",
         make=lambda problem, s, seed: _ws_costs(s, seed),
         guard=_guard("worker_select", "DP_MAX_CELLS", lambda v: int((v / 41) ** 0.5)),
         guard_note="cells; memory binds"),
]


def make_instance(case: Case, size: Any, seed: int) -> Any:
    size = tuple(size) if isinstance(size, list) else size
    if case.make is not None:
        return case.make(case.problem, size, seed)
    return _gen(case.problem, case.params(size), seed)


# ----------------------------------------------------------------------------- one worker
def _peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB on Linux


def _replay(seqs: list, override: dict | None = None) -> float:
    """The captured calls on fresh Highs objects (optionally with some options changed)."""
    import numpy as np

    from crowdopt.solvers.highs import new_highs, stdout_to_stderr

    override = override or {}
    t0 = time.perf_counter()
    for seq in seqs:
        h = new_highs()
        with stdout_to_stderr():
            for name, args in seq:
                if name == "setOptionValue" and args[0] in override:
                    args = (args[0], override[args[0]])
                out = getattr(h, name)(*args)
                if name == "getSolution":  # what any caller needs: the primal values
                    np.asarray(out.col_value, dtype=float)
    return time.perf_counter() - t0


def _with_option(seqs: list, name: str, value: Any) -> list:
    """The calls with `setOptionValue(name, ...)` made before every run (added if absent)."""
    out = []
    for seq in seqs:
        new = []
        for call in seq:
            if call[0] == "run":
                new.append(("setOptionValue", (name, value)))
            new.append(call)
        out.append(new)
    return out


def _summary(r: Any) -> dict:
    return {"status": r.status, "objective": r.objective, "bound": r.bound}


def worker(case: Case, size: Any, repeat: int, seed: int, dump: str | None,
           presolve: bool, user: bool = False) -> dict:
    from crowdopt.api import run_method
    from crowdopt.registry import RunOptions, get_problem
    from crowdopt.solvers.certify import close
    from crowdopt.solvers.highs import capture

    spec = get_problem(case.problem)
    method = spec.method(case.method)
    opts = RunOptions()
    # 1. warm-up (twice: imports, then first-call paths), and one replay
    for _ in range(2):
        with capture() as cap:
            run_method(spec, make_instance(case, case.warm, seed), method, opts)
    if cap.calls:
        _replay(cap.replay_calls())
    inst = make_instance(case, size, seed)
    reason = method.applicable(inst)
    if reason:
        return {"skipped": reason}
    # 2. plain run: peak RSS
    base = _peak_kb()
    t0 = time.perf_counter()
    first = run_method(spec, inst, method, opts)
    t_first = time.perf_counter() - t0
    rss_kb = _peak_kb() - base
    # 3. captured run: the calls and the split
    inst = make_instance(case, size, seed)
    with capture() as cap:
        t0 = time.perf_counter()
        r = run_method(spec, inst, method, opts)
        t_cap = time.perf_counter() - t0
    seqs = cap.replay_calls()
    details = r.details or {}
    build = float(details.get("build_s") or 0.0)
    split = {"build_s": build, "compile_s": cap.compile_s, "adapter_s": cap.own_adapter_s,
             "highs_s": cap.highs_s, "certificate_s": max(t_cap - r.time_s, 0.0),
             "other_s": max(r.time_s - build - cap.adapter_s, 0.0),
             "captured_s": t_cap - cap.copy_s}
    # 4. interleaved (raw replay, end-to-end); the plain run above is not a sample (cold pages).
    # Fast cases get more pairs (up to MAX_PAIRS, about PAIR_BUDGET_S of pairs): on a shared
    # machine a few milliseconds of load change a small case's ratio.
    pairs = max(repeat, 1, min(MAX_PAIRS, math.ceil(PAIR_BUDGET_S / max(2 * t_cap, 1e-6))))
    e2e, raw = [], []
    for i in range(pairs):
        if seqs:
            raw.append(_replay(seqs))
        inst = make_instance(case, size, seed)
        t0 = time.perf_counter()
        again = run_method(spec, inst, method, opts)
        e2e.append(time.perf_counter() - t0)
        if again.status != first.status or (first.objective is not None and not close(
                again.objective, first.objective)):
            raise AssertionError(f"{case.name}: run {i} gave {_summary(again)}, "
                                 f"first {_summary(first)}")
    out = {"size": size, "binaries": case.binaries(size), "status": first.status,
           "objective": first.objective, "bound": first.bound, "gap": first.gap,
           "certified": bool(first.certificate.get("certified")),
           "e2e_s": statistics.median(e2e), "e2e_runs": e2e, "first_s": t_first,
           "raw_s": statistics.median(raw) if raw else None, "raw_runs": raw,
           # each end-to-end run over the raw replay just before it (same load), median
           "ratio": statistics.median(e / r for e, r in zip(e2e, raw, strict=True))
           if raw else None,
           "highs_objects": len(seqs), "highs_runs": sum(n == "run" for s in seqs for n, _ in s),
           "rss_kb": rss_kb, **split}
    if presolve and seqs:
        for pre in ("on", "off"):
            for strategy, sname in ((1, "dual"), (4, "primal")):
                over = {"presolve": pre, "simplex_strategy": strategy}
                ts = [_replay(_with_option(seqs, "simplex_strategy", strategy), over)
                      for _ in range(max(repeat, 1))]
                out[f"{sname}_presolve_{pre}_s"] = statistics.median(ts)
    if dump and seqs:
        with open(dump, "wb") as f:
            pickle.dump(seqs, f)
    if user:
        out["user"] = user_route(case, size, repeat, seed)
    return out


def user_route(case: Case, size: Any, repeat: int, seed: int) -> dict | None:
    """Registered route vs the user's route (build_model + solve_model), CPU seconds."""
    import crowdopt
    from crowdopt.api import run_method, solve_model
    from crowdopt.registry import RunOptions, get_problem
    from crowdopt.solvers.certify import close
    from crowdopt.solvers.highs import capture

    spec = get_problem(case.problem)
    if case.method not in spec.builders():
        return None
    method = spec.method(case.method)
    clock = time.process_time
    warm = make_instance(case, case.warm, seed)
    solve_model(warm, crowdopt.build_model(warm, case.method))
    runs: dict[str, list[float]] = {k: [] for k in (
        "reg_s", "reg_highs_s", "user_s", "user_build_s", "user_compile_s", "user_highs_s")}
    for _ in range(max(repeat, 1)):
        inst = make_instance(case, size, seed)
        with capture(clock) as cap:
            t0 = clock()
            reg = run_method(spec, inst, method, RunOptions())
            runs["reg_s"].append(clock() - t0)
        runs["reg_highs_s"].append(cap.highs_s)
        inst = make_instance(case, size, seed)
        t0 = clock()
        m = crowdopt.build_model(inst, case.method)
        build = clock() - t0
        with capture(clock) as cap:
            t1 = clock()
            user = solve_model(inst, m)
            solve = clock() - t1
        runs["user_s"].append(build + solve)
        runs["user_build_s"].append(build)
        runs["user_compile_s"].append(cap.compile_s)
        runs["user_highs_s"].append(cap.highs_s)
        if user.status != reg.status or (reg.objective is not None and not close(
                user.objective, reg.objective)):
            raise AssertionError(f"{case.name}: user route {_summary(user)}, registered "
                                 f"{_summary(reg)}")
    out = {k: statistics.median(v) for k, v in runs.items()}
    out["highs_x"] = out["user_highs_s"] / max(out["reg_highs_s"], 1e-9)
    out["total_x"] = out["user_s"] / max(out["reg_s"], 1e-9)
    return out


MASTER_SIZES = {"colgen faithful": ((20, 4), (40, 6), (60, 8)),
                "colgen aggregated": ((60, 8), (150, 15), (300, 30)),
                "config-lp": ((60, 10), (150, 20), (300, 30))}
MASTER_QUICK = {"colgen faithful": ((10, 3), (20, 4), (30, 5)),
                "colgen aggregated": ((20, 4), (40, 6), (60, 8)),
                "config-lp": ((20, 4), (40, 6), (60, 10))}


def master_data(name: str, size: tuple, seed: int) -> tuple[Any, Any, int]:
    """(formulation, data, columns) of a CL-TAP master at instance size (t, a): the workplans
    column generation ends with (faithful: every task x workplan), or the configuration LP's
    label classes at grid 200 of the closed-form bound with one cover per task of CBP's
    assignment and of CONFIG_COVERS random covers (one segment per annotator)."""
    import numpy as np

    import crowdopt.problems.cltap as P
    from crowdopt.models.cltap_masters import (
        COLGEN_MASTER,
        CONFIG_MASTER,
        ColgenMaster,
        ConfigMaster,
    )
    from crowdopt.solvers.cltap_bounds import CONFIG_GRID, _Segments
    from crowdopt.solvers.cltap_cbp import cbp
    from crowdopt.solvers.cltap_colgen import closed_form_bound, column_generation

    t, a = size
    inst = P.generate(seed, t=t, a=a, trend="inc")
    if name.startswith("colgen"):
        agg = name.endswith("aggregated")
        cols = column_generation(inst, aggregated=agg, time_limit=60).workplans
        pairs = None if agg else [(i, h) for h in range(len(cols)) for i in range(t)]
        data = ColgenMaster(inst, cols, pairs)
        return COLGEN_MASTER, data, len(cols) if agg else 1 + len(pairs)
    seg = _Segments(inst, closed_form_bound(inst) / CONFIG_GRID, CONFIG_GRID)
    rng = np.random.default_rng(seed)
    covers = {tuple(sorted({int(seg.of[j, k]) for j, k in wp}))
              for wp in cbp(inst).workplans(t) if wp}
    while len(covers) < 20 * t:
        js = rng.choice(a, size=int(rng.integers(1, min(a, 6) + 1)), replace=False)
        covers.add(tuple(sorted(int(seg.of[j, rng.integers(inst.K)]) for j in js)))
    covers_l = sorted(covers)
    units = [int(seg.u[list(c)].sum()) for c in covers_l]
    data = ConfigMaster(seg.n.astype(float), seg.prefix_later, inst.b, covers_l, units,
                        int(np.median(units)))
    return CONFIG_MASTER, data, seg.S + len(covers_l)


def master_route(name: str, size: tuple, repeat: int, seed: int) -> dict:
    """A master's registered route (its array emitter, `exact_runner.run`) vs the user's (its
    Pyomo model, `run(..., model=)`), CPU seconds, medians of `repeat` runs; answers checked."""
    from crowdopt.registry import RunOptions
    from crowdopt.solvers.certify import close
    from crowdopt.solvers.exact_runner import run
    from crowdopt.solvers.highs import capture

    form, data, columns = master_data(name, size, seed)
    clock = time.process_time
    runs: dict[str, list[float]] = {k: [] for k in (
        "reg_s", "reg_build_s", "reg_highs_s", "user_s", "user_build_s", "user_compile_s",
        "user_highs_s")}
    for _ in range(max(repeat, 1)):
        with capture(clock) as cap:
            t0 = clock()
            reg = run(form, data, RunOptions())
            runs["reg_s"].append(clock() - t0)
        runs["reg_highs_s"].append(cap.highs_s)
        t0 = clock()
        form.emit(data)  # the emitter alone (the run's own build_s is wall-clock)
        runs["reg_build_s"].append(clock() - t0)
        t0 = clock()
        m = form.model(data)
        build = clock() - t0
        with capture(clock) as cap:
            t1 = clock()
            user = run(form, data, RunOptions(), model=m)
            solve = clock() - t1
        runs["user_s"].append(build + solve)
        runs["user_build_s"].append(build)
        runs["user_compile_s"].append(cap.compile_s)
        runs["user_highs_s"].append(cap.highs_s)
        a, b = reg.result.res, user.result.res
        if a.status != b.status or not close(a.objective, b.objective):
            raise AssertionError(f"{name} {size}: user route {b.status} {b.objective}, "
                                 f"registered {a.status} {a.objective}")
    out = {k: statistics.median(v) for k, v in runs.items()}
    out.update(columns=columns, status=str(reg.result.res.status),
               highs_x=out["user_highs_s"] / max(out["reg_highs_s"], 1e-9),
               total_x=out["user_s"] / max(out["reg_s"], 1e-9))
    return out


def masters_table(args: argparse.Namespace) -> None:
    """The `--masters` table: every CL-TAP master at its 3 sizes, registered vs user route."""
    from common import emit

    sizes = MASTER_QUICK if args.quick else MASTER_SIZES
    rows = []
    for name, sz in sizes.items():
        master_route(name, MASTER_QUICK[name][0], 1, args.seed)  # warm-up: imports, Pyomo
        for i, size in enumerate(sz):
            r = master_route(name, size, args.repeat, args.seed)
            verdict = ""
            if i == len(sz) - 1:
                verdict = "pass" if r["highs_x"] <= USER_HIGHS_LARGEST else "FAIL"
            rows.append({"master": name, "t,a": f"{size[0]},{size[1]}", **r,
                         "criteria": verdict})
            print(f"  {name} {size}: registered {r['reg_s']:.3f} s, user {r['user_s']:.3f} s",
                  file=sys.stderr, flush=True)
    emit("exact_overhead_masters", rows, ["master", "t,a", "columns", "status", "reg_s",
                                          "reg_build_s", "reg_highs_s", "user_s",
                                          "user_build_s", "user_compile_s", "user_highs_s",
                                          "highs_x", "total_x", "criteria"], args,
         note="CL-TAP's LP masters (models/cltap_masters.py), one cold solve each, CPU seconds "
              "(time.process_time), medians of --repeat runs: registered = the array emitter "
              "through solvers.exact_runner.run; user = the formulation's Pyomo model (build) "
              "through run(..., model=) (compile, HiGHS); highs_x = user HiGHS / registered "
              f"HiGHS (criteria: <= {USER_HIGHS_LARGEST} at the largest size). Column "
              "generation itself re-solves the emitter's matrix warm (bench_cltap.py).")


def raw_rss_worker(dump: str) -> dict:
    """HiGHS's own peak RSS: the captured calls replayed after the arrays are loaded."""
    from crowdopt.solvers.highs import new_highs

    new_highs()
    with open(dump, "rb") as f:
        seqs = pickle.load(f)
    base = _peak_kb()
    t = _replay(seqs)
    return {"raw_rss_kb": _peak_kb() - base, "raw_alone_s": t}


def guard_worker(case: Case, seed: int, size: Any = None) -> dict:
    from crowdopt.api import run_method
    from crowdopt.registry import RunOptions, get_problem

    spec = get_problem(case.problem)
    method = spec.method(case.method)
    run_method(spec, make_instance(case, case.warm, seed), method, RunOptions())
    size = case.guard() if size is None else size
    size = tuple(size) if isinstance(size, list) else size
    if case.guard_params is not None:
        inst = _gen(case.problem, case.guard_params(size), seed)
    else:
        inst = make_instance(case, size, seed)
    refused = method.applicable(inst)
    if refused:  # a probe beyond the guard: run the method anyway
        import dataclasses

        method = dataclasses.replace(method, applicable=lambda inst: None)
    base = _peak_kb()
    t0 = time.perf_counter()
    r = run_method(spec, inst, method, RunOptions())
    return {"size": size, "binaries": case.binaries(size), "status": r.status,
            "e2e_s": time.perf_counter() - t0, "rss_kb": _peak_kb() - base,
            "applicable": refused, "message": r.message}


# ----------------------------------------------------------------------------- orchestration
def _sub(args: list[str], timeout: float | None = None) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE)
    if p.returncode:
        raise RuntimeError(f"{' '.join(args)} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def fit_growth(case: Case, rows: list[dict]) -> tuple[str, float | None]:
    """(label, value): exponent p of t ~ n^p, or factor r of t ~ r^M (least squares in logs)."""
    pts = [(r["size"], r["binaries"], r["e2e_s"]) for r in rows if r.get("e2e_s")]
    if len(pts) < 2:
        return "", None
    if case.growth == "exp":
        xs = [float(s) for s, _, _ in pts]
        label = "x per labeler" if case.problem == "labeler-set" else "x per unit"
    else:
        xs = [math.log(b) for _, b, _ in pts]
        label = "exponent (t ~ n^p)"
    ys = [math.log(t) for _, _, t in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return label, None
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return label, (math.exp(slope) if case.growth == "exp" else slope)


def _fmt_size(s: Any) -> str:
    return "x".join(str(v) for v in s) if isinstance(s, list | tuple) else str(s)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a few minutes)")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved (raw, e2e) pairs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="*", default=None, help="case names containing these words")
    ap.add_argument("--guards", action="store_true", help="also run each method at its guard")
    ap.add_argument("--presolve", action="store_true", help="TU LPs: presolve on vs off")
    ap.add_argument("--no-raw-rss", action="store_true", help="skip HiGHS's own RSS")
    ap.add_argument("--user-route", action="store_true",
                    help="also time build_model + solve_model against solve (CPU seconds)")
    ap.add_argument("--masters", action="store_true",
                    help="only the CL-TAP LP masters: array emitter vs Pyomo model (CPU s)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--raw-rss", help=argparse.SUPPRESS)
    ap.add_argument("--guard-worker", help=argparse.SUPPRESS)
    ap.add_argument("--size", help=argparse.SUPPRESS)
    ap.add_argument("--dump", help=argparse.SUPPRESS)
    args = ap.parse_args()
    by_name = {c.name: c for c in CASES}
    if args.worker:
        out = worker(by_name[args.worker], json.loads(args.size), args.repeat, args.seed,
                     args.dump, args.presolve, args.user_route)
        print(json.dumps(out, default=str))
        return
    if args.raw_rss:
        print(json.dumps(raw_rss_worker(args.raw_rss)))
        return
    if args.guard_worker:
        size = json.loads(args.size) if args.size else None
        print(json.dumps(guard_worker(by_name[args.guard_worker], args.seed, size), default=str))
        return

    if args.masters:
        masters_table(args)
        return
    cases = [c for c in CASES if not args.only or any(w in c.name for w in args.only)]
    rows: list[dict] = []
    growth: list[dict] = []
    t_all = time.perf_counter()
    for case in cases:
        crow = []
        for size in (case.quick if args.quick else case.sizes):
            with tempfile.TemporaryDirectory() as tmp:
                dump = os.path.join(tmp, "calls.pkl")
                w = ["--worker", case.name, "--size", json.dumps(size), "--repeat",
                     str(args.repeat), "--seed", str(args.seed), "--dump", dump]
                if args.presolve and case.name.startswith("olas-select lp"):
                    w.append("--presolve")
                if args.user_route:
                    w.append("--user-route")
                r = _sub(w)
                if not r.get("skipped") and not args.no_raw_rss and os.path.exists(dump):
                    r.update(_sub(["--raw-rss", dump]))
            row = {"case": case.name, **r}
            if not r.get("skipped"):
                b = max(r["binaries"], 1)
                row["rss_KB/bin"] = r["rss_kb"] / b
                row["raw_KB/bin"] = r["raw_rss_kb"] / b if "raw_rss_kb" in r else None
            crow.append(row)
            rows.append(row)
            print(f"  {case.name} {_fmt_size(size)}: e2e {r.get('e2e_s', 0):.3f} s, raw "
                  f"{r.get('raw_s') or 0:.3f} s ({time.perf_counter() - t_all:.0f} s so far)",
                  file=sys.stderr, flush=True)
        label, value = fit_growth(case, [r for r in crow if not r.get("skipped")])
        ratios = [r.get("ratio") for r in crow]
        verdict = ""
        if ratios and ratios[0] is not None and ratios[-1] is not None:
            ok = ratios[-1] <= RATIO_LARGEST and ratios[0] <= RATIO_SMALLEST
            verdict = "pass" if ok else "FAIL"
        growth.append({"case": case.name, "unit": case.unit, "growth": label, "fit": value,
                       "sizes": ", ".join(_fmt_size(r["size"]) for r in crow),
                       "ratio_smallest": ratios[0] if ratios else None,
                       "ratio_largest": ratios[-1] if ratios else None, "criteria": verdict})

    from common import emit  # after the workers: common imports crowdopt

    table = [{"case": r["case"], "size": _fmt_size(r["size"]), "binaries": r.get("binaries"),
              "status": r.get("status", "skipped"), "e2e_s": r.get("e2e_s"),
              "raw_s": r.get("raw_s"), "ratio": r.get("ratio"), "build": r.get("build_s"),
              "compile": r.get("compile_s"), "adapter": r.get("adapter_s"),
              "highs": r.get("highs_s"), "cert": r.get("certificate_s"),
              "other": r.get("other_s"), "rss_KB/bin": r.get("rss_KB/bin"),
              "raw_KB/bin": r.get("raw_KB/bin")} for r in rows]
    args.rows = rows
    emit("exact_overhead", table, list(table[0]), args,
         note=f"e2e = api.run_method (build + compile + adapter + HiGHS + decode + certificate), "
              f"raw = the same highspy calls replayed on fresh objects; medians of >= {args.repeat} "
              f"interleaved pairs (up to {MAX_PAIRS} for fast cases) after a warm-up; ratio = "
              "median over the pairs of e2e / raw (the raw run just before it); split columns in seconds from one captured "
              "run; KB/bin = peak RSS growth per binary (per column for an LP), crowdopt's run "
              "and the raw replay alone. Criteria: ratio <= 1.3 at the largest size, <= 2 at "
              "the smallest.")
    emit("exact_overhead_growth", growth, list(growth[0]), args,
         note="growth fitted on the 3 sizes' e2e medians (least squares in logs)")
    if args.presolve:
        keys = [f"{a}_presolve_{b}_s" for b in ("on", "off") for a in ("dual", "primal")]
        pre = [{"case": r["case"], "size": _fmt_size(r["size"]), **{k: r.get(k) for k in keys}}
               for r in rows if keys[0] in r]
        if pre:
            emit("exact_overhead_presolve", pre, list(pre[0]), args,
                 note="raw HiGHS replays of the same TU LP arrays with presolve on/off and dual "
                      "(simplex_strategy 1) / primal (4) simplex; crowdopt uses primal, off")
    if args.user_route:
        cols = ["reg_s", "reg_highs_s", "user_s", "user_build_s", "user_compile_s",
                "user_highs_s", "highs_x", "total_x"]
        urows = []
        for case in cases:
            crow = [r for r in rows if r["case"] == case.name and r.get("user")]
            for i, r in enumerate(crow):
                verdict = ""
                if i == len(crow) - 1:
                    verdict = "pass" if r["user"]["highs_x"] <= USER_HIGHS_LARGEST else "FAIL"
                urows.append({"case": case.name, "size": _fmt_size(r["size"]),
                              **{k: r["user"][k] for k in cols}, "criteria": verdict})
        if urows:
            emit("exact_overhead_user_route", urows, ["case", "size", *cols, "criteria"], args,
                 note="CPU seconds (time.process_time), medians of --repeat runs: registered = "
                      "crowdopt.solve(inst, method); user = build_model + solve_model, split "
                      "into Pyomo build, compile and HiGHS; highs_x = user HiGHS / registered "
                      f"HiGHS (criteria: <= {USER_HIGHS_LARGEST} at the largest size), total_x "
                      "= user / registered total.")
    if args.guards:
        grows = []
        for case in cases:
            if case.guard is None:
                grows.append({"case": case.name, "guard": "none", "note": case.guard_note})
                continue
            r = _sub(["--guard-worker", case.name, "--seed", str(args.seed)])
            grows.append({"case": case.name, "guard": _fmt_size(r["size"]),
                          "binaries": r["binaries"], "status": r["status"],
                          "e2e_s": r["e2e_s"], "rss_MB": r["rss_kb"] / 1024,
                          "note": case.guard_note})
            print(f"  guard {case.name}: {r['e2e_s']:.1f} s", file=sys.stderr, flush=True)
        emit("exact_overhead_guards", grows, ["case", "guard", "binaries", "status", "e2e_s",
                                              "rss_MB", "note"], args,
             note="one run at each method's size guard (the largest size it accepts)")


if __name__ == "__main__":
    main()
