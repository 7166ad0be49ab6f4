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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from crowdopt.cli import format_table  # noqa: E402
from crowdopt.solvers.certify import cached_versions  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def parse_args(description: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="small sizes (< 30 s)")
    p.add_argument("--repeat", type=int, default=3, help="timing repetitions (median kept)")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def timed(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Median wall time of `repeat` calls, and the last result."""
    times, out = [], None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def emit(topic: str, rows: list[dict], columns: list[str], args: argparse.Namespace,
         note: str = "") -> Path:
    """Print the table and write benchmarks/results/<topic>.json."""
    print(f"## {topic}" + (" (quick)" if getattr(args, "quick", False) else ""))
    print(format_table(rows, columns))
    if note:
        print(note)
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{topic}.json"
    path.write_text(json.dumps({"topic": topic, "args": vars(args), "rows": rows,
                                "versions": cached_versions()}, indent=1, default=str))
    print(f"(written {path.relative_to(RESULTS.parent.parent)})\n")
    return path
