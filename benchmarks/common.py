"""Shared helpers of the benchmarks: argument parsing, the table printer, JSON output."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from crowdopt.cli import format_table  # noqa: E402
from crowdopt.solvers.certify import cached_versions  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def parse_args(description: str, *, quick_help: str = "small sizes (< 30 s)",
               repeat_help: str = "timing repetitions (median kept)",
               extend: Callable[[argparse.ArgumentParser], None] | None = None,
               argv: list[str] | None = None) -> argparse.Namespace:
    """Every benchmark's --quick, --repeat R and --seed S; `extend` adds a benchmark's own
    options to the same parser; `argv` (default: the command line) is what is parsed."""
    # raw: a description of several lines (a usage block) is printed as written
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help=quick_help)
    p.add_argument("--repeat", type=int, default=3, help=repeat_help)
    p.add_argument("--seed", type=int, default=0)
    if extend is not None:
        extend(p)
    return p.parse_args(argv)


def shapes_arg(text: str) -> list[tuple[int, int]]:
    """'30x3,20x10' as [(30, 3), (20, 10)] for argparse; anything else is a one-line usage
    error naming what was expected and what was found."""
    try:
        out = [tuple(int(x) for x in part.split("x")) for part in text.split(",")]
    except ValueError:
        out = []
    if not out or any(len(x) != 2 or min(x) < 1 for x in out):
        raise argparse.ArgumentTypeError(f"expected shapes like 30x3,20x10, found {text!r}")
    return out


def list_arg(allowed: tuple[str, ...]) -> Callable[[str], list[str]]:
    """An argparse type: a comma list of `allowed` names (one-line usage error otherwise)."""
    def parse(text: str) -> list[str]:
        out = text.split(",")
        bad = [x for x in out if x not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(
                f"expected a comma list of {', '.join(allowed)}, found {text!r}")
        return out
    return parse


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1 (one-line usage error otherwise)."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, found {text!r}")
    return n


def study_sets(prog: str, description: str, with_gold: bool | None) -> list[str] | None:
    """The shared data sets a study runs on: all of them (`with_gold`: only those with or
    without gold) or its `--sets a,b,...`; None (after saying so) when the data is absent."""
    from crowdopt.crowd.datasets import list_datasets
    from crowdopt.datapath import missing_sets

    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--sets", default=None, help="comma-separated data sets (default: all)")
    args = p.parse_args()
    sets = list_datasets(with_gold=with_gold)
    if missing_sets(sets):
        print(f"{prog}: real data not found ({', '.join(missing_sets(sets))}): run "
              "`crowdopt datasets fetch --all`; skipped")
        return None
    if args.sets:
        want = args.sets.split(",")
        unknown = [s for s in want if s not in sets]
        if unknown:
            p.error(f"--sets: expected shared data sets{' with gold' if with_gold else ''} "
                    f"({', '.join(sets)}), found {', '.join(unknown)}")
        sets = [s for s in sets if s in want]
    return sets


def nondecreasing(trace: list[float]) -> bool:
    """Whether an objective trace never falls (beyond rounding: 1e-12 relative)."""
    o = np.asarray(trace, dtype=float)
    return bool(np.all(np.diff(o) >= -1e-12 * np.maximum(np.abs(o[1:]), 1.0)))


def timed(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Median wall time of `repeat` calls, and the last result (call `warm_up()` first)."""
    times, out = [], None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def interleaved(fns: dict[str, Callable[[], Any]], repeat: int = 3,
                repeats: dict[str, int] | None = None) -> dict[str, tuple[float, Any]]:
    """Median wall time and last result of each function, timed in turn (A B C A B C ...).

    Interleaving puts machine drift on every method alike, so the ratios measured in one run
    hold. `repeats` lowers the count for expensive methods (e.g. an exact MILP: 1).
    """
    repeats = repeats or {}
    times: dict[str, list[float]] = {k: [] for k in fns}
    out: dict[str, Any] = {}
    for r in range(max([1, repeat, *repeats.values()])):
        for name, fn in fns.items():
            if r >= repeats.get(name, repeat):
                continue
            t0 = time.perf_counter()
            out[name] = fn()
            times[name].append(time.perf_counter() - t0)
    return {k: (statistics.median(v), out[k]) for k, v in times.items()}


_WARM = False


def warm_up() -> float:
    """Pay the one-off costs once, outside every timed region: imports of Pyomo, scipy and
    highspy, the first Highs object, Pyomo's compiler, numpy's first calls. It solves each
    problem's built-in example with every fast and exact method once (a few seconds); without
    it the first exact call timed in a process carries 1.3-1.6 s of imports. Returns seconds."""
    global _WARM
    if _WARM:
        return 0.0
    from crowdopt.api import run_method
    from crowdopt.registry import RunOptions, get_problem, problem_names

    t0 = time.perf_counter()
    for name in problem_names():
        spec = get_problem(name)
        inst = spec.example()
        for m in spec.methods:
            if m.kind in ("fast", "exact") and m.refuses(inst) is None:
                run_method(spec, inst, m, RunOptions(time_limit=30.0))
    _WARM = True
    return time.perf_counter() - t0


def emit(topic: str, rows: list[dict], columns: list[str], args: argparse.Namespace,
         note: str = "") -> Path:
    """Print the table and write benchmarks/results/<topic>.json."""
    print(f"## {topic}" + (" (quick)" if getattr(args, "quick", False) else ""))
    if _WARM:
        print("(one warm-up of every method ran before the timings: imports and first-call "
              "costs are not in them)")
    print(format_table(rows, columns))
    if note:
        print(note)
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{topic}.json"
    path.write_text(json.dumps({"topic": topic, "args": vars(args), "rows": rows,
                                "versions": cached_versions()}, indent=1, default=str))
    print(f"(written {path.relative_to(RESULTS.parent.parent)})\n")
    return path
