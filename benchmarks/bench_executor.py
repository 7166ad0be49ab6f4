"""Execution layer benchmark: --jobs 1 vs 2 on a 200-task sweep, and the overhead per task.

Scaling: an olas-assign fast-vs-exact sweep (200 tasks = 2 sizes x 100 seeds; 40 with --quick)
run with --jobs 1 and --jobs 2; ratio = wall(jobs 1) / wall(jobs 2) (2.0 is perfect on 2 cores).
The machine is shared, so the run also measures how much parallelism two plain processes get at
the moment (before and after) and reports the ratio relative to it.
The same run reports the sweep's fast path vs exact MILP time ratio.
Overhead: tasks that do nothing (`busy_task(work=0)`) through `run_tasks` with a results file,
in process, in a 2-worker spawn pool (pool start-up reported apart) and on a Dask LocalCluster;
overhead per task = (wall - time of the bare function calls) / tasks.

    python benchmarks/bench_executor.py [--quick]     # JSON: benchmarks/results/executor.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from crowdopt.experiments.executor import Task, _run_pool, busy_task, run_tasks
from crowdopt.experiments.sweep import parse_config, run_sweep


def _wall(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


_SPIN = "import time; t = time.perf_counter(); x = sum(range(15_000_000)); print(time.perf_counter() - t)"


def machine_parallelism() -> float:
    """How many cores two plain processes get right now: 2 * t(one alone) / t(two at once).
    2.0 on an idle 2-core machine; less when other users load it. No crowdopt code involved."""
    import subprocess

    def run(k: int) -> float:
        t0 = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", _SPIN], stdout=subprocess.DEVNULL)
                 for _ in range(k)]
        for p in procs:
            p.wait()
        return time.perf_counter() - t0

    one = min(run(1) for _ in range(2))
    two = min(run(2) for _ in range(2))
    return 2 * one / two


def scaling(n_seeds: int, tmp: Path) -> dict:
    cfg = parse_config({"name": "bench", "problem": "olas-assign", "methods": ["fast", "exact"],
                        "seeds": n_seeds, "grid": {"points": [10, 20], "labelers": 4}})
    out = {"tasks": len(cfg.tasks())}
    runs = {}
    for jobs in (1, 2):
        t0 = time.perf_counter()
        runs[jobs] = run_sweep(cfg, tmp / f"jobs{jobs}", jobs=jobs, show_progress=False)
        out[f"jobs{jobs}_wall_s"] = time.perf_counter() - t0
        assert not runs[jobs].errors, runs[jobs].errors[0]["error"]
        times = [r["time_s"] for r in runs[jobs].records]
        out[f"jobs{jobs}_task_sum_s"] = sum(times)
        out[f"jobs{jobs}_task_median_s"] = statistics.median(times)
        out[f"jobs{jobs}_task_max_s"] = max(times)
    # control: the same tasks in a 1-worker pool (no parallelism): does the pool slow a task?
    one_worker: list[dict] = []
    _run_pool([t.record() for t in cfg.tasks()], 1, one_worker.append)
    out["pool1_task_median_s"] = statistics.median(r["time_s"] for r in one_worker)
    same = [(r["result"]["fast_objective"], r["result"]["exact_objective"])
            for r in runs[1].records] == [(r["result"]["fast_objective"],
                                           r["result"]["exact_objective"])
                                          for r in runs[2].records]
    res = [r["result"] for r in runs[1].records]
    fast = statistics.fmean(r["fast_time_s"] for r in res)
    exact = statistics.fmean(r["exact_time_s"] for r in res)
    out.update(speedup_jobs2=out["jobs1_wall_s"] / out["jobs2_wall_s"],
               identical_results=same, fast_mean_s=fast, exact_mean_s=exact,
               exact_over_fast=exact / fast,
               fast_equals_exact=all(abs(r["fast_objective"] - r["exact_objective"]) <= 1e-7
                                     for r in res))
    return out


def overhead(n: int, tmp: Path) -> dict:
    tasks = [Task("crowdopt.experiments.executor:busy_task", {"work": 0}, seed=s)
             for s in range(n)]
    bare = _wall(lambda: [busy_task(0, s) for s in range(n)])
    out = {"tasks": n, "bare_call_us": bare / n * 1e6}
    here = _wall(lambda: run_tasks(tasks, jobs=1, results_path=tmp / "o1.jsonl",
                                   show_progress=False))
    out["in_process_us"] = (here - bare) / n * 1e6
    start = _wall(lambda: run_tasks(tasks[:2], jobs=2, results_path=tmp / "s.jsonl",
                                    show_progress=False))
    pool = _wall(lambda: run_tasks(tasks, jobs=2, results_path=tmp / "o2.jsonl",
                                   show_progress=False))
    out["pool_startup_s"] = start
    out["pool_us"] = max(pool - start, 0.0) / (n - 2) * 1e6
    try:
        from distributed import LocalCluster
    except ImportError:  # the dask extra is missing
        return out
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster:
        addr = cluster.scheduler_address
        connect = _wall(lambda: run_tasks(tasks[:1], scheduler=addr, show_progress=False))
        dask = _wall(lambda: run_tasks(tasks, scheduler=addr, results_path=tmp / "od.jsonl",
                                       show_progress=False))
    out["dask_connect_s"] = connect
    out["dask_us"] = max(dask - connect, 0.0) / n * 1e6
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="40-task sweep, 200 no-op tasks")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        capacity = machine_parallelism()
        sc = scaling(20 if args.quick else 100, tmp)
        capacity = (capacity + machine_parallelism()) / 2
        ov = overhead(200 if args.quick else 1000, tmp)
    doc = {"quick": args.quick, "cores": os.cpu_count(), "load_avg_1min": [load0,
           os.getloadavg()[0]], "machine_parallelism": capacity, "scaling": sc,
           "overhead": ov}
    print(f"cores={os.cpu_count()}  load average (1 min) at start/end: {load0:.1f} / "
          f"{os.getloadavg()[0]:.1f}  (the machine is shared: ratios below include that)")
    print(f"\nscaling: olas-assign fast-vs-exact sweep, {sc['tasks']} tasks")
    print(f"  {'jobs':<6}{'wall s':>10}{'sum task s':>12}{'median task ms':>16}"
          f"{'max task s':>12}")
    for j in (1, 2):
        print(f"  {j:<6}{sc[f'jobs{j}_wall_s']:>10.2f}{sc[f'jobs{j}_task_sum_s']:>12.2f}"
              f"{sc[f'jobs{j}_task_median_s'] * 1e3:>16.1f}{sc[f'jobs{j}_task_max_s']:>12.2f}")
    print("  (max task: the first task of a fresh worker pays the imports, e.g. Pyomo)")
    print(f"  control, 1-worker pool: median task {sc['pool1_task_median_s'] * 1e3:.1f} ms "
          "(vs jobs 1 in process: the pool itself does not slow a task)")
    print(f"  ratio jobs1/jobs2 = {sc['speedup_jobs2']:.2f}   identical results: "
          f"{sc['identical_results']}")
    print(f"  machine parallelism now (two plain processes, no crowdopt) = {capacity:.2f} "
          f"of 2.00 -> layer efficiency = ratio / parallelism = "
          f"{sc['speedup_jobs2'] / capacity:.2f}")
    print(f"  in the same sweep: exact MILP {sc['exact_mean_s'] * 1e3:.1f} ms vs fast path "
          f"{sc['fast_mean_s'] * 1e6:.1f} us per instance -> exact/fast = "
          f"{sc['exact_over_fast']:.0f}x; fast == exact on every instance: "
          f"{sc['fast_equals_exact']}")
    print(f"\noverhead per task ({ov['tasks']} no-op tasks, results file on)")
    print(f"  bare function call      {ov['bare_call_us']:10.1f} us")
    print(f"  run_tasks jobs=1        {ov['in_process_us']:10.1f} us")
    print(f"  run_tasks jobs=2 pool   {ov['pool_us']:10.1f} us  (+ {ov['pool_startup_s']:.2f} s "
          "pool start-up)")
    if "dask_us" in ov:
        print(f"  Dask LocalCluster       {ov['dask_us']:10.1f} us  (+ {ov['dask_connect_s']:.2f}"
              " s connect)")
    out = Path(__file__).resolve().parent / "results" / "executor.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
