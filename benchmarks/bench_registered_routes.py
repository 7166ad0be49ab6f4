"""CPU seconds of `crowdopt.solve(inst, method)` on the registered exact routes, medians of R
(default 5) after a warm-up, one JSON line: run it under two checkouts in turn (each tree's own
venv) to compare the verification step's cost side by side.

Usage: python benchmarks/bench_registered_routes.py [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import crowdopt

CASES = [("olas-assign", "milp-epigraph", {"points": 100, "labelers": 8}),
         ("labeler-set", "milp", {"labelers": 10}),
         ("worker-select", "milp-a", {"workers": 1000, "max_workers": 40}),
         ("olas-select", "lp-prefix", {"points": 20000, "labelers": 17, "capacity_min": 16,
                                       "capacity_max": 16}),
         ("cltap", "milp-compact", {"t": 6, "a": 3, "trend": "dec"})]


def main() -> None:
    """Print {problem/method: [median CPU seconds, objective]} for every case."""
    ap = argparse.ArgumentParser(prog="bench_registered_routes.py")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per case (median kept)")
    repeat = max(1, ap.parse_args().repeat)
    out = {}
    for problem, method, params in CASES:
        inst = crowdopt.generate(problem, 0, **params)
        crowdopt.solve(inst, method)  # warm-up: imports, first calls
        times = []
        for _ in range(repeat):
            t0 = time.process_time()
            r = crowdopt.solve(inst, method)
            times.append(time.process_time() - t0)
        out[f"{problem}/{method}"] = [statistics.median(times), r.objective]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
