"""Fit the exact methods' time guards (crowdopt/solvers/guards.py) from measurement.

Usage: python benchmarks/bench_guards.py [--only KEY ...] [--shapes NAME ...] [--stop S]
                                         [--cap S] [--seed N] [--out NAME] [--from FILE ...]
                                         [--write | --check] [--stops] [--split]

For every guarded method, several instance shapes (a vote rule, costs or not, a pool's number
of labelers, a capacity family, ...), each a ladder of growing sizes: each size is solved once
by `api.run_method` (build, HiGHS, decode, evaluator, certificate) after one warm-up per
method, its CPU time (time.process_time: the machine is shared) recorded with the model's size
figures; a ladder stops at the first size over --stop CPU seconds (the shape's frontier
instance) or stopped by --cap (a time_limit point is censored: left out of the fit).
Then, per guard key, least squares of ln(seconds) on the key's features (FEATURES), the
measurements of the frontier instances weighted x6, and one table: predicted vs measured CPU
seconds and their ratio for every instance (frontier rows marked); the criterion is a ratio
within [1/3, 3] on every frontier instance.

--write rewrites src/crowdopt/data/guards.json (the fit the guard reads); --check predicts with
the committed file instead of the new fit and exits 1 if a frontier ratio leaves [1/3, 3].
--from FILE ... refits saved measurements (benchmarks/results/NAME.json, rewritten after every
instance of a run, --out NAME, default guards_measurements; several files are merged, the first
measurement of an instance kept) without solving.
--stops prints where each method stops under the committed fit (README's table) and exits.
--split (with --from) builds and compiles the Pyomo model of each frontier instance and prints
their CPU seconds beside the method's measured total (why a build is not interrupted).
The committed fit: `--stop 5`/`--stop 6 --cap 300`, the keys run in parallel processes (--only,
--shapes), under load (CPU time is what is fitted), merged with --from and written with --write.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[0] / "src"))
sys.path.insert(0, str(HERE))

from common import RESULTS, emit  # noqa: E402

GUARD_DATA = HERE.parents[0] / "src" / "crowdopt" / "data" / "guards.json"
RATIO_MAX = 3.0
FRONTIER_WEIGHT = 6.0

# guard key -> regressors of ln(seconds) (guards.feature names)
FEATURES: dict[str, list[str]] = {
    "olas-assign/milp-epigraph": ["log:nnz", "log:M"],
    "olas-select/milp-literal": ["log:rows", "log:sel"],
    "olas-select/milp-compact": ["log:nnz", "log:sel"],
    "labeler-set/milp/mv": ["log:M"],
    "labeler-set/milp/mv-uniform": ["M"],
    "labeler-set/milp/wmv": ["M"],
    "labeler-set/milp/wmv-uniform": ["M"],
    "labeler-set/enumeration/mv": ["M", "log:M"],
    "labeler-set/enumeration/wmv": ["M", "log:M"],
    "worker-select/milp-a": ["log:nnz", "log:B"],
    "worker-select/milp-a/costs": ["log:nnz"],
    "worker-select/milp-compact": ["M", "log:B"],
    "cltap/milp-compact": ["log:cols", "log:a", "learning", "log:bt"],
    # a crowd whose curves fall or stay flat: no fit (its time is not its size: the start
    # proves t = 320, a = 3 in 1 ms, a = 10, t = 15 takes 22 s), so no time guard
    "cltap/head-cover/learning": ["log:links", "log:a", "rising"],
}


@dataclass(frozen=True)
class Shape:
    key: str  # the guard key its instances fall under
    name: str  # the shape, as the table shows it
    problem: str
    method: str
    sizes: tuple  # the ladder
    make: Callable[[Any, int], Any]  # (size, seed) -> instance
    what: str  # what a size is


def _gen(problem: str, seed: int, **params: Any) -> Any:
    from crowdopt.registry import get_problem

    return get_problem(problem).generate(seed, **params)


def _ws_costs(M: int, seed: int, B: int | None = None, budget: int = 40) -> Any:
    """Integer costs 1..10 and a budget of 40 (bench_worker_select part 2), K = B (default M)."""
    from crowdopt.problems import worker_select as P

    base = P.generate(seed + 1, workers=M, max_workers=B or M, cost_max=10)
    return P.make_instance(max_workers=B or M, scores_=base.scores, costs=base.costs,
                           budget=budget)


def _olas_sel(u: int, M: int, noise: str, cap: tuple[int, int] | None = None) -> dict:
    p = {"points": u, "labelers": M, "noise": noise, "beta": 0.1 if noise == "linear" else 0.05}
    if noise == "superellipse":
        p["entropy_max"] = 1.0
    if cap:
        p["capacity_min"], p["capacity_max"] = cap
    return p


SHAPES: list[Shape] = [
    # olas-assign Model 2: points N, labelers M, noise family
    *[Shape("olas-assign/milp-epigraph", f"M={M} {noise}", "olas-assign", "milp-epigraph",
            sizes, lambda N, s, M=M, noise=noise: _gen("olas-assign", s, points=N, labelers=M,
                                                       noise=noise), "N")
      for M, noise, sizes in ((8, "superellipse", (250, 500, 1000, 1500, 2000, 3000)),
                              (17, "superellipse", (120, 240, 480, 720, 960, 1440)),
                              (17, "linear", (60, 120, 180, 240, 360, 480)),
                              (40, "superellipse", (50, 100, 200, 300, 400, 600)))],
    # olas-select, the paper's literal model: pool u, labelers M
    *[Shape("olas-select/milp-literal", f"M={M} {noise}", "olas-select", "milp-literal",
            sizes, lambda u, s, M=M, noise=noise: _gen("olas-select", s, **_olas_sel(u, M, noise)),
            "u")
      for M, noise, sizes in ((4, "superellipse", (20, 60, 130, 280, 400, 560, 800, 1100)),
                              (8, "superellipse", (15, 40, 90, 130, 190, 280, 400, 560)),
                              (12, "linear", (10, 20, 30, 45, 65, 95)))],
    # olas-select compact w-formulation: sparse superellipse and Spambase-like linear pools
    *[Shape("olas-select/milp-compact", f"M={M} {noise}" + (" cap16" if cap else ""),
            "olas-select", "milp-compact", sizes,
            lambda u, s, M=M, noise=noise, cap=cap: _gen("olas-select", s,
                                                         **_olas_sel(u, M, noise, cap)), "u")
      for M, noise, cap, sizes in (
          (8, "superellipse", None, (50, 100, 200, 400, 800, 1600, 3200)),
          (17, "superellipse", None, (40, 80, 160, 320, 640, 1280, 2560)),
          (17, "linear", (16, 16), (60, 120, 240, 480, 960, 1920, 3840)))],
    # labeler-set P1 (MV) and P2 (WMV) MILPs, costs or not
    *[Shape(f"labeler-set/milp/{key}", f"{rule} costs={costs} p>={p_low}", "labeler-set",
            "milp", sizes,
            lambda M, s, rule=rule, costs=costs, p_low=p_low: _gen(
                "labeler-set", s, labelers=M, rule=rule, costs=costs, p_low=p_low), "M")
      for key, rule, costs, p_low, sizes in (
          ("mv-uniform", "mv", "none", 0.3, (8, 10, 12, 13, 14, 15, 16, 18, 20)),
          ("mv-uniform", "mv", "uniform", 0.3, (8, 10, 12, 13, 14, 15, 16, 18, 20)),
          ("mv", "mv", "random", 0.3, (10, 20, 30, 45, 65, 95, 140, 200)),
          ("mv", "mv", "random", 0.55, (10, 20, 30, 45, 65, 95, 140, 200)),
          ("wmv-uniform", "wmv", "none", 0.3, (5, 7, 8, 9, 10, 11, 12, 13)),
          ("wmv", "wmv", "random", 0.3, (5, 7, 8, 9, 10, 11, 12, 13)))],
    *[Shape(f"labeler-set/enumeration/{rule}", f"{rule} costs={costs}", "labeler-set",
            "enumeration", sizes,
            lambda M, s, rule=rule, costs=costs: _gen("labeler-set", s, labelers=M, rule=rule,
                                                      costs=costs), "M")
      for rule, costs, sizes in (("mv", "random", (12, 14, 16, 18, 19, 20, 21, 22, 23)),
                                 ("mv", "none", (12, 14, 16, 18, 19, 20, 21, 22, 23)),
                                 ("wmv", "random", (10, 12, 13, 14, 15, 16, 17, 18, 19)),
                                 ("wmv", "none", (10, 12, 13, 14, 15, 16, 17, 18, 19)))],
    # worker-select formulation A: cap B, uniform costs or integer costs
    *[Shape("worker-select/milp-a", f"B={B or 'M'}", "worker-select", "milp-a", sizes,
            lambda M, s, B=B: _gen("worker-select", s, workers=M, max_workers=B or M), "M")
      for B, sizes in ((20, (500, 1000, 2000, 4000, 8000, 16000)),
                       (100, (200, 400, 800, 1600, 3200, 6400)),
                       (0, (100, 200, 400, 800, 1600, 3200)))],  # B = 0: K = M
    *[Shape("worker-select/milp-a/costs", f"B={'M' if B is None else B} budget={budget}",
            "worker-select", "milp-a", sizes,
            lambda M, s, B=B, budget=budget: _ws_costs(M, s, B, budget), "M")
      for B, budget, sizes in ((None, 40, (50, 100, 200, 300, 450, 650, 900)),
                               (30, 40, (100, 200, 400, 800, 1600, 3200)),
                               (None, 200, (50, 100, 150, 200, 300, 450, 650)))],
    # worker-select compact McCormick model
    *[Shape("worker-select/milp-compact", f"B={'M' if B is None else B}", "worker-select",
            "milp-compact", sizes,
            lambda M, s, B=B: _gen("worker-select", s, workers=M, max_workers=B or M), "M")
      for B, sizes in ((None, (20, 30, 40, 60, 80, 100, 120, 160, 240)),
                       (10, (20, 30, 40, 60, 80, 100, 120, 160, 240)))],
    # CL-TAP compact MILP: tasks t (K = t), annotators a, accuracy trend of the crowd
    *[Shape("cltap/milp-compact", f"a={a} {trend}"
            + (f" b={bf:g}t" if bf != 2 else ""), "cltap", "milp-compact", sizes,
            lambda t, s, a=a, trend=trend, bf=bf: _gen("cltap", s, t=t, a=a, trend=trend,
                                                       budget_factor=bf), "t")
      for a, trend, bf, sizes in ((2, "dec", 2, (6, 10, 14, 18, 27, 35, 45, 60, 80)),
                                  (3, "dec", 2, (6, 8, 10, 12, 14, 16, 18, 22)),
                                  (5, "dec", 2, (4, 6, 8, 10, 11, 12, 13, 15)),
                                  (3, "inc", 2, (4, 5, 6, 7, 8, 10, 12, 14, 16, 20)),
                                  (3, "nonmono", 2, (4, 6, 8, 10, 12, 14, 16, 20)),
                                  (3, "dec", 3, (6, 8, 10, 12, 14, 16, 18, 22)),
                                  (3, "inc", 3, (4, 5, 6, 7, 8, 10, 12, 14, 16)))],
    # CL-TAP head-cover (the default exact method): tasks t (K = t, b = 2t), annotators a,
    # trend; flat = constant curves (the dec draw of p_j1 with tau = 100, t-bar ~ 1e6)
    *[Shape("cltap/head-cover", f"a={a} {trend}", "cltap", "head-cover", sizes,
            lambda t, s, a=a, trend=trend: _gen("cltap", s, t=t, a=a, **(
                {"trend": "dec", "tau": 100.0, "horizon": 1e6} if trend == "flat"
                else {"trend": trend})), "t")
      for a, trend, sizes in ((3, "dec", (20, 40, 80, 160, 320)),
                              (3, "flat", (25, 50, 100, 200, 320)),
                              (3, "inc", (10, 20, 30, 40, 50, 60, 70, 80)),
                              (3, "nonmono", (10, 20, 30, 40, 50, 60, 70, 80)),
                              (5, "inc", (5, 8, 10, 15, 20, 25, 30, 40)),
                              (5, "nonmono", (5, 8, 10, 15, 20, 25, 30, 40)),
                              (5, "dec", (10, 20, 40, 80, 120)),
                              (10, "inc", (4, 6, 8, 10, 12, 15, 20)),
                              (10, "dec", (5, 10, 15, 20, 30, 40, 60, 80)),
                              (10, "flat", (10, 20, 40, 80)))],
]


# ----------------------------------------------------------------------------- measuring
def _run(shape: Shape, size: Any, seed: int, cap: float) -> dict:
    from crowdopt.api import run_method
    from crowdopt.registry import RunOptions, get_problem
    from crowdopt.solvers import guards

    spec = get_problem(shape.problem)
    inst = shape.make(size, seed)
    m = spec.method(shape.method)
    reason = m.applicable(inst)  # memory guards only: the time guard is what is measured
    fig = guards.figures(shape.problem, shape.method, inst)
    row = {"key": guards.guard_key(shape.problem, shape.method, inst), "shape": shape.name,
           "size": f"{shape.what}={size}", "figures": fig}
    if reason:
        return {**row, "status": "refused", "cpu_s": None, "wall_s": None, "note": reason}
    c0, w0 = time.process_time(), time.perf_counter()
    r = run_method(spec, inst, m, RunOptions(time_limit=cap, seed=seed), True)  # past guards
    d = r.details or {}
    return {**row, "status": str(r.status), "cpu_s": time.process_time() - c0,
            "wall_s": time.perf_counter() - w0, "route": d.get("route"),
            "build_s": d.get("build_s"), "compile_s": d.get("compile_s")}


def measure(shapes: list[Shape], seed: int, stop: float, cap: float,
            out: Path | None = None) -> list[dict]:
    """Every shape's ladder; the rows so far are rewritten to `out` after each instance."""
    warmed: set[tuple[str, str]] = set()
    rows: list[dict] = []
    for shape in shapes:
        if (shape.problem, shape.method) not in warmed:
            _run(shape, shape.sizes[0], seed + 99, cap)  # imports, the first HiGHS object
            warmed.add((shape.problem, shape.method))
        last = None
        for size in shape.sizes:
            r = _run(shape, size, seed, cap)
            rows.append(r)
            print(f"  {r['key']} {shape.name} {r['size']}: {r['status']} "
                  f"{r['cpu_s'] if r['cpu_s'] is None else round(r['cpu_s'], 2)} s CPU",
                  file=sys.stderr, flush=True)
            if out is not None:
                out.write_text(json.dumps({"measurements": rows}, indent=1, default=str))
            if r["status"] not in ("optimal", "feasible"):
                break
            last = r
            if r["cpu_s"] > stop:
                break
        if last is not None:
            last["frontier"] = True
    return rows


# ----------------------------------------------------------------------------- fitting
def _x(features: list[str], fig: dict) -> list[float]:
    from crowdopt.solvers.guards import feature

    return [1.0, *(feature(f, fig) for f in features)]


def fit(rows: list[dict]) -> dict[str, dict]:
    """key -> {"features", "coef", "n", "rms_log"}: weighted least squares of ln(CPU seconds)."""
    fits = {}
    for key, features in FEATURES.items():
        pts = [r for r in rows if r["key"] == key and r["cpu_s"] is not None
               and r["status"] in ("optimal", "feasible")]
        if len(pts) < len(features) + 2:
            continue
        X = np.array([_x(features, r["figures"]) for r in pts])
        y = np.log(np.maximum([r["cpu_s"] for r in pts], 1e-3))
        w = np.sqrt([FRONTIER_WEIGHT if r.get("frontier") else 1.0 for r in pts])
        coef, *_ = np.linalg.lstsq(X * w[:, None], y * w, rcond=None)
        res = y - X @ coef
        fits[key] = {"features": features, "coef": [round(float(c), 6) for c in coef],
                     "n": len(pts), "rms_log": round(float(np.sqrt(np.mean(res ** 2))), 4)}
    return fits


def table(rows: list[dict], fits: dict[str, dict]) -> tuple[list[dict], bool]:
    from crowdopt.solvers.guards import predict_from

    out, ok = [], True
    for r in rows:
        f = fits.get(r["key"])
        pred = predict_from(f, r["figures"]) if f else None
        ratio = pred / r["cpu_s"] if pred is not None and r["cpu_s"] else None
        front = bool(r.get("frontier"))
        if front and (ratio is None or not 1 / RATIO_MAX <= ratio <= RATIO_MAX):
            ok = False
        out.append({"key": r["key"], "shape": r["shape"], "size": r["size"],
                    "status": r["status"], "measured_cpu_s": r["cpu_s"],
                    "predicted_s": pred, "ratio": ratio, "frontier": "*" if front else ""})
    return out, ok


# ----------------------------------------------------------------------------- where it stops
def stops(fits: dict[str, dict]) -> list[dict]:
    """Per shape, the least size the method refuses: its predicted time passes the guard limit,
    or its memory guard binds first (doubling from the ladder's first size, then bisection;
    searched up to 100 x the ladder's last size)."""
    from crowdopt.registry import get_problem
    from crowdopt.solvers import guards

    def refused(shape: Shape, size: int) -> str | None:
        inst = shape.make(size, 0)
        if get_problem(shape.problem).method(shape.method).applicable(inst):
            return "memory guard"
        fit = fits.get(guards.guard_key(shape.problem, shape.method, inst))
        if fit is None:  # a variant without a fit: the method's own time guard decides
            m = get_problem(shape.problem).method(shape.method)
            return "size rule" if m.time_guard(inst) else None
        fig = guards.figures(shape.problem, shape.method, inst)
        return "time" if guards.predict_from(fit, fig) > guards.GUARD_LIMIT_S else None

    rows = []
    for shape in SHAPES:
        if not any(k == shape.key or k.startswith(shape.key + "/") for k in fits):
            continue
        lo, hi, top = shape.sizes[0], None, 100 * shape.sizes[-1]
        if refused(shape, lo):
            hi = lo
        while hi is None and lo < top:
            nxt = min(2 * lo, top)
            if refused(shape, nxt):
                hi = nxt
            else:
                lo = nxt
        while hi is not None and hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if refused(shape, mid) else (mid, hi)
        why = refused(shape, hi) if hi is not None else None
        rows.append({"method": f"{shape.problem} {shape.method}", "shape": shape.name,
                     "stops_at": f"beyond {shape.what} = {top:,}" if hi is None else
                     f"{shape.what} = {hi:,}" + ("" if why == "time" else f" ({why})")})
    return rows


def split(rows: list[dict]) -> list[dict]:
    """For each frontier instance solved through a Pyomo model: the CPU seconds of the model
    build and of its compile (one build each, no solve) beside the measured total."""
    import importlib

    from crowdopt.registry import get_problem
    from crowdopt.solvers.highs import compile_pyomo

    out = []
    for r in rows:
        if not r.get("frontier"):
            continue
        shape = next((s for s in SHAPES if s.name == r["shape"] and r["key"].startswith(
            f"{s.problem}/{s.method}")), None)
        if shape is None:
            continue
        spec = get_problem(shape.problem)
        if not spec.models:
            continue
        forms = importlib.import_module(spec.models).__dict__.get("FORMULATIONS", {})
        form = forms.get(shape.method)
        row = {"key": r["key"], "shape": r["shape"], "size": r["size"],
               "measured_cpu_s": r["cpu_s"]}
        if form is None or form.emit is not None:
            out.append({**row, "route": "no Pyomo model" if form is None else "arrays"})
            continue
        inst = shape.make(int(r["size"].split("=")[1]), 0)
        c0 = time.process_time()
        model = form.model(inst)
        c1 = time.process_time()
        compile_pyomo(model)
        c2 = time.process_time()
        out.append({**row, "route": "pyomo", "build_s": c1 - c0, "compile_s": c2 - c1,
                    "share": (c2 - c0) / r["cpu_s"] if r["cpu_s"] else None})
    return out


def _saved(ap: argparse.ArgumentParser, files: list[str],
           only: list[str] | None) -> dict[tuple, dict]:
    """The measurements of saved files (--from), the first of an instance kept, only the keys
    `only` starts; a file that is missing or not a measurements file is a one-line error."""
    seen: dict[tuple, dict] = {}
    for src in files:
        try:
            rows = json.loads(Path(src).read_text())["measurements"]
            keys = [(r["key"], r["shape"], r["size"]) for r in rows]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            ap.error(f"--from {src}: expected a measurements file of bench_guards.py, "
                     f"found {type(exc).__name__}: {exc}")
        for k, r in zip(keys, rows, strict=True):
            if not only or any(k[0].startswith(o) for o in only):
                seen.setdefault(k, r)
    return seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", default=None, help="guard keys (prefixes) to run")
    ap.add_argument("--stop", type=float, default=15.0,
                    help="a ladder stops after a size over this many CPU seconds")
    ap.add_argument("--cap", type=float, default=60.0, help="time limit of every run")
    ap.add_argument("--shapes", nargs="*", default=None, help="only these shape names")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--from", dest="src", nargs="+", default=None,
                    help="refit saved measurements (one or more files)")
    ap.add_argument("--out", default="guards_measurements",
                    help="name of the measurements file under benchmarks/results")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true", help="write the fit to crowdopt/data")
    g.add_argument("--check", action="store_true", help="predict with the committed fit")
    ap.add_argument("--stops", action="store_true", help="print where each method stops")
    ap.add_argument("--split", action="store_true",
                    help="with --from: the Pyomo build and compile CPU time of each frontier "
                    "instance beside its measured total")
    args = ap.parse_args()
    from crowdopt.solvers import guards

    if args.stops:
        print(f"| method | instance shape | refused from (predicted > {guards.GUARD_LIMIT_S:g} s) |")
        print("|---|---|---|")
        for r in stops(guards.coefficients()):
            print(f"| {r['method']} | {r['shape']} | {r['stops_at']} |")
        return
    shapes = [s for s in SHAPES if (not args.only or any(s.key.startswith(o) for o in args.only))
              and (not args.shapes or s.name in args.shapes)]
    if args.split and not args.src:
        ap.error("--split needs --from FILE ... (saved measurements)")
    saved = _saved(ap, args.src or [], args.only)
    if args.split:
        rows = list(saved.values())
        emit("guards_build_split", split(rows), ["key", "shape", "size", "measured_cpu_s",
                                                 "route", "build_s", "compile_s", "share"], args,
             note="CPU seconds; share = (build + compile) / measured total of the method")
        return
    if args.src:
        rows = list(saved.values())
    else:
        RESULTS.mkdir(exist_ok=True)
        rows = measure(shapes, args.seed, args.stop, args.cap, RESULTS / f"{args.out}.json")
    fits = guards.coefficients() if args.check else fit(rows)
    out, ok = table(rows, fits)
    emit("guards", out, ["key", "shape", "size", "status", "measured_cpu_s", "predicted_s",
                         "ratio", "frontier"], args,
         note=f"CPU seconds (time.process_time); * = frontier instance (the largest of its "
              f"shape's ladder); criterion: predicted/measured in [1/{RATIO_MAX:g}, "
              f"{RATIO_MAX:g}] on every frontier instance",
         )
    if not args.src:
        (RESULTS / f"{args.out}.json").write_text(json.dumps(
            {"measurements": rows, "fits": fits}, indent=1, default=str))
    print("criteria:", "pass" if ok else "FAIL", f"(frontier ratios within {RATIO_MAX:g}x)")
    if args.write:
        if args.only:  # the keys not measured keep their committed fit
            old = json.loads(GUARD_DATA.read_text())["fits"] if GUARD_DATA.exists() else {}
            fits = {**old, **fits}
        doc = {"note": "time-guard fits of the exact methods: ln(CPU s) = coef . [1, features]; "
                       "written by benchmarks/bench_guards.py --write",
               "limit_s": guards.GUARD_LIMIT_S, "fits": dict(sorted(fits.items()))}
        GUARD_DATA.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"wrote {GUARD_DATA}")
    if args.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
