"""The one execution layer of every `simulate`, `reproduce` and `sweep`.

A task is a plain record (function path, JSON parameters, seed). `run_tasks` runs tasks in this
process (`jobs=1`) or in a process pool with the spawn start method (`jobs>1`, one HiGHS thread
per task), appends each result as one JSON line to `results_path` as soon as it finishes, and
with `resume=True` skips tasks whose key is already in that file, so an interrupted run loses
nothing already finished. Task functions are called as `fn(**params, seed=seed)` and return a
JSON-serializable dict.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..progress import progress


@dataclass(frozen=True)
class Task:
    fn: str  # "package.module:function"
    params: dict = field(default_factory=dict)
    seed: int = 0
    key: str = ""

    def task_key(self) -> str:
        if self.key:
            return self.key
        blob = json.dumps([self.fn, self.params, self.seed], sort_keys=True, default=str)
        return hashlib.sha1(blob.encode()).hexdigest()[:16]

    def record(self) -> dict:
        return {"key": self.task_key(), "fn": self.fn, "params": self.params, "seed": self.seed}


def resolve(fn: str) -> Callable[..., Any]:
    mod, _, name = fn.partition(":")
    return getattr(importlib.import_module(mod), name)


def run_one(task: dict) -> dict:
    """Run one task record in the current process; errors become a result with `error`."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    t0 = time.perf_counter()
    out = dict(task)
    try:
        result = resolve(task["fn"])(**task["params"], seed=task["seed"])
        out["result"] = _jsonable(result)
        out["error"] = None
    except Exception as exc:  # a failing task must not kill the sweep
        out["result"] = None
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc(limit=8)
    out["time_s"] = time.perf_counter() - t0
    return out


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=_default))


def _default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def read_results(path: Path | str) -> list[dict]:
    """All complete JSON lines of a results file (a torn last line is ignored)."""
    p = Path(path)
    if not p.exists():
        return []
    rows = []
    for line in p.read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def run_tasks(tasks: Iterable[Task], *, jobs: int = 1, results_path: Path | str | None = None,
              resume: bool = False, scheduler: str | None = None, show_progress: bool = True,
              desc: str = "tasks") -> list[dict]:
    """Run tasks; return one result record per task, in task order."""
    tasks = list(tasks)
    records = [t.record() for t in tasks]
    done: dict[str, dict] = {}
    if results_path is not None:
        results_path = Path(results_path)
        results_path.parent.mkdir(parents=True, exist_ok=True)
        if resume:
            done = {r["key"]: r for r in read_results(results_path) if r.get("error") is None}
        elif results_path.exists():
            results_path.unlink()
    todo = [r for r in records if r["key"] not in done]
    sink = open(results_path, "a") if results_path is not None else None  # noqa: SIM115
    try:
        for res in progress(_execute(todo, jobs, scheduler), total=len(todo), desc=desc,
                            enabled=show_progress):
            done[res["key"]] = res
            if sink is not None:
                sink.write(json.dumps(res) + "\n")
                sink.flush()
    finally:
        if sink is not None:
            sink.close()
    return [done[r["key"]] for r in records if r["key"] in done]


def _execute(todo: list[dict], jobs: int, scheduler: str | None):
    if not todo:
        return
    if scheduler:
        yield from _execute_dask(todo, scheduler)
        return
    if jobs <= 1:
        for rec in todo:
            yield run_one(rec)
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        futures = [pool.submit(run_one, rec) for rec in todo]
        for fut in as_completed(futures):
            yield fut.result()


def _execute_dask(todo: list[dict], scheduler: str):
    try:
        from distributed import Client, as_completed
    except ImportError:
        from ..errors import InputError

        raise InputError("--scheduler", "the dask extra installed (pip install 'crowdopt[dask]')",
                         scheduler) from None
    client = scheduler if not isinstance(scheduler, str) else Client(scheduler)
    try:
        futures = [client.submit(run_one, rec, pure=False) for rec in todo]
        for fut in as_completed(futures):
            yield fut.result()
    finally:
        if isinstance(scheduler, str):
            client.close()
