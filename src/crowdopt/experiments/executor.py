"""The one execution layer of every `simulate`, `reproduce`, `sweep` and `certify DIR`.

A task is a plain record (function path, JSON parameters, seed). `run_tasks` runs tasks in this
process (`jobs=1`), in a process pool with the spawn start method (`jobs>1`), or on a Dask
distributed cluster (`scheduler="tcp://host:8786"` or a `distributed.Client`). Guarantees:

- Every result is appended to `results_path` as one JSON line (one unbuffered O_APPEND write)
  the moment it finishes, so an interrupted run (Ctrl-C, SIGTERM, even kill -9) loses nothing
  already finished, and `resume=True` re-runs only the tasks without a successful line (a torn
  last line is cut). The file is locked: a second run on the same file stops with exit 2.
- A task that raises, or whose worker process dies, becomes a record with `error`; the run goes
  on. A dead worker is found by re-running the tasks it may have held one at a time.
- `CROWDOPT_SCHEDULER=tcp://host:8786` sends the tasks of every command that has no
  `--scheduler` option (simulate, reproduce, certify) to that Dask cluster.
- One thread per task: HiGHS gets `threads=1` from `RunOptions`/`HighsOptions` defaults, and
  workers start with OMP/OpenBLAS/MKL thread variables at 1 (threadpoolctl limits too), so the
  same seeds give the same results whatever `jobs` or scheduler.

Task functions are called as `fn(**params, seed=seed)` and return a JSON-serializable dict.
Records: `{key, fn, params, seed, result, error, time_s}` (+ `traceback` on error), returned in
task order.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import signal
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CrowdoptError, InputError
from ..progress import ProgressBar

# thread pools of numerical libraries, set to 1 in every worker (one core per task)
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
WORKER_DIED = "WorkerDied: the worker process died while running this task"
SCHEDULER_TIMEOUT_S = 15.0  # how long to try to reach a Dask scheduler


@dataclass(frozen=True)
class Task:
    fn: str  # "package.module:function"
    params: dict = field(default_factory=dict)
    seed: int = 0
    key: str = ""

    def __post_init__(self) -> None:
        mod, sep, name = self.fn.partition(":") if isinstance(self.fn, str) else ("", "", "")
        if not (mod and sep and name):
            raise InputError("task fn", "'package.module:function'", self.fn)
        if not isinstance(self.params, dict):
            raise InputError("task params", "a dict of keyword arguments", type(self.params).__name__)

    def task_key(self) -> str:
        """Stable id of (fn, params, seed): what `resume` matches on."""
        if self.key:
            return self.key
        blob = json.dumps([self.fn, _jsonable(self.params), int(self.seed)], sort_keys=True)
        return hashlib.sha1(blob.encode()).hexdigest()[:16]

    def record(self) -> dict:
        """The task's JSON record (key, function, parameters, seed)."""
        return {"key": self.task_key(), "fn": self.fn, "params": _jsonable(self.params),
                "seed": int(self.seed)}


def resolve(fn: str) -> Callable[..., Any]:
    """The function named 'module:name'."""
    mod, _, name = fn.partition(":")
    return getattr(importlib.import_module(mod), name)


def run_one(task: dict) -> dict:
    """Run one task record in the current process; an exception becomes a record with `error`."""
    t0 = time.perf_counter()
    out = dict(task)
    try:
        result = resolve(task["fn"])(**task["params"], seed=task["seed"])
        out["result"] = _jsonable(result)
        out["error"] = None
    except Exception as exc:  # a failing task must not kill the run
        out["result"] = None
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc(limit=8)
    out["time_s"] = time.perf_counter() - t0
    return out


def busy_task(work: int = 100_000, seed: int = 0) -> dict:
    """Calibration task: sum of `work` seeded normal draws (CPU-bound, deterministic).

    Used by the tests and `benchmarks/bench_executor.py` to measure the execution layer itself.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    total, left = 0.0, int(work)
    if left < 0:
        raise ValueError(f"work must be >= 0, found {work}")
    while left > 0:
        n = min(left, 100_000)
        total += float(rng.standard_normal(n).sum())
        left -= n
    return {"sum": total, "work": int(work)}


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=_default))


def _default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def read_results(path: Path | str) -> list[dict]:
    """All complete JSON lines of a results file (a torn last line is ignored)."""
    p = Path(path)
    if not p.exists():
        return []
    rows = []
    with p.open() as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


def latest_results(path: Path | str) -> dict[str, dict]:
    """key -> the last record of each task in a results file (a resumed run appends)."""
    return {r["key"]: r for r in read_results(path) if isinstance(r, dict) and "key" in r}


def _drop_torn_tail(path: Path) -> None:
    """Cut a partial last line (the writer was killed mid-write) so appends stay line-aligned."""
    size = path.stat().st_size
    if size == 0:
        return
    with path.open("rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        pos = size
        while pos > 0:
            step = min(65536, pos)
            fh.seek(pos - step)
            chunk = fh.read(step)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                fh.truncate(pos - step + nl + 1)
                return
            pos -= step
        fh.truncate(0)


def _check_jobs(jobs: Any) -> int:
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 0:
        raise InputError("--jobs", "an integer >= 0 (0 = all cores)", jobs)
    return jobs or (os.cpu_count() or 1)


def _check_functions(records: list[dict]) -> None:
    """Fail fast (exit 2) on a task function that cannot be imported, before any work."""
    for fn in sorted({r["fn"] for r in records}):
        try:
            f = resolve(fn)
        except (ImportError, AttributeError) as exc:
            raise InputError("task fn", "an importable 'module:function'",
                             f"{fn} ({type(exc).__name__}: {exc})") from None
        if not callable(f):
            raise InputError("task fn", "a callable", fn)


def run_tasks(tasks: Iterable[Task], *, jobs: int = 1, results_path: Path | str | None = None,
              resume: bool = False, scheduler: Any = None, show_progress: bool = True,
              desc: str = "tasks", on_result: Callable[[dict], None] | None = None,
              fresh: bool = False) -> list[dict]:
    """Run tasks; return one result record per task, in task order.

    jobs: 1 = in this process, N > 1 = spawn process pool, 0 = one worker per core.
    results_path: JSON Lines file appended as results finish (created with its folder). Results
    are never lost by accident: a file holding only tasks of this run is resumed (its successful
    records kept, the other tasks run); a file holding other tasks is refused (InputError) unless
    `resume` (keep the successful records of the wanted tasks, append) or `fresh` (replace it). scheduler: a Dask scheduler address or `distributed.Client`;
    when None, the environment variable CROWDOPT_SCHEDULER (if set) sends every command's tasks
    to that cluster. on_result: called with each new record as it finishes (parent process).
    """
    jobs = _check_jobs(jobs)
    if scheduler is None:
        scheduler = os.environ.get("CROWDOPT_SCHEDULER") or None
    records = [t.record() for t in tasks]
    if records:
        _check_functions(records)  # before the results file is touched
    done: dict[str, dict] = {}
    sink = _ResultsFile(Path(results_path)) if results_path is not None else None
    try:
        if sink is not None:
            done = sink.prepare({r["key"] for r in records}, resume, fresh)
        todo, seen = [], set(done)
        for r in records:
            if r["key"] not in seen:
                seen.add(r["key"])
                todo.append(r)
        errors = 0
        with ProgressBar(len(todo), desc, show_progress) as bar:
            def emit(res: dict) -> None:
                nonlocal errors
                done[res["key"]] = res
                if sink is not None:
                    sink.append(res)
                errors += res.get("error") is not None
                bar.update(1, f"errors={errors}" if errors else None)
                if on_result is not None:
                    on_result(res)

            with _sigterm_as_interrupt():
                if not todo:
                    pass
                elif scheduler is not None:
                    _run_dask(todo, scheduler, emit)
                elif jobs == 1 or len(todo) == 1:
                    _run_here(todo, emit)
                else:
                    _run_pool(todo, min(jobs, len(todo)), emit)
    finally:
        if sink is not None:
            sink.close()
    return [done[r["key"]] for r in records if r["key"] in done]


class _ResultsFile:
    """The JSON Lines sink: locked against a second run, one O_APPEND write per record."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            import fcntl
        except ImportError:  # pragma: no cover - no advisory locks on this platform
            return
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self.fd)
            self.fd = -1
            raise InputError("results file", "a file no other running crowdopt run is "
                             "writing", str(path)) from None

    def prepare(self, wanted: set[str], resume: bool, fresh: bool = False) -> dict[str, dict]:
        """The successful records of wanted tasks to keep (torn tail cut): all of them when
        `resume` or when the file holds only wanted tasks (the same configuration run again);
        none when `fresh` (the file is emptied). A file with other tasks is refused."""
        if fresh:
            os.ftruncate(self.fd, 0)
            return {}
        _drop_torn_tail(self.path)
        old = latest_results(self.path)
        if not resume and not set(old) <= wanted:
            other = len(set(old) - wanted)
            raise InputError("-o", "a directory without results of other parameters (the same "
                             "command resumes; --fresh replaces them; or choose another DIR)",
                             f"{self.path.parent} ({other} results of other parameters)")
        return {k: r for k, r in old.items() if k in wanted and r.get("error") is None}

    def append(self, record: dict) -> None:
        data = (json.dumps(record, default=_default) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]

    def close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.fsync(self.fd)
            os.close(self.fd)
            self.fd = -1


# ----------------------------------------------------------------------------- interruption
class Terminated(KeyboardInterrupt):
    """SIGTERM during a run: handled like Ctrl-C (finished results kept, workers stopped)."""


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous not in (signal.SIG_DFL, None):
        yield  # the application has its own handler; leave it alone
        return

    def handler(signum: int, frame: Any) -> None:
        raise Terminated("SIGTERM")

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# ----------------------------------------------------------------------------- threads
_LIMITER: Any = None


def limit_threads() -> None:
    """One thread for numerical libraries in this (worker) process; idempotent."""
    global _LIMITER
    for var in THREAD_ENV:
        os.environ.setdefault(var, "1")
    if _LIMITER is None:
        try:
            from threadpoolctl import threadpool_limits

            _LIMITER = threadpool_limits(limits=1)
        except Exception:  # threadpoolctl absent: the environment variables do the job
            _LIMITER = False


@contextlib.contextmanager
def _single_threaded_here() -> Iterator[None]:
    """jobs=1 runs in this process with the same one-thread limits as the workers."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1):
        yield


@contextlib.contextmanager
def _worker_environment() -> Iterator[None]:
    """Thread variables at 1 while workers are spawned (they inherit os.environ at start)."""
    saved = {v: os.environ.get(v) for v in THREAD_ENV}
    for var in THREAD_ENV:
        os.environ.setdefault(var, "1")
    try:
        yield
    finally:
        for var, val in saved.items():
            if val is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = val


# ----------------------------------------------------------------------------- backends
def _run_here(todo: list[dict], emit: Callable[[dict], None]) -> None:
    with _single_threaded_here():
        for rec in todo:
            emit(run_one(rec))


_STARTED: Any = None  # worker side: queue of started task keys (finds the task of a dead worker)


def _init_worker(started: Any) -> None:
    global _STARTED
    _STARTED = started
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    _exit_with_parent()
    limit_threads()


def _exit_with_parent() -> None:
    """A worker whose parent was killed (kill -9) exits instead of waiting forever."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    parent = mp.parent_process()
    if parent is None or parent.sentinel is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="crowdopt-parent-watch", daemon=True).start()


def _run_in_worker(rec: dict) -> dict:
    if _STARTED is not None:
        _STARTED.put(rec["key"])
    return run_one(rec)


def _error_record(rec: dict, error: str, time_s: float = 0.0) -> dict:
    return {**rec, "result": None, "error": error, "time_s": time_s}


def _run_pool(todo: list[dict], jobs: int, emit: Callable[[dict], None]) -> None:
    """Spawn pool; a dead worker breaks the pool: tasks it may have held are re-run alone."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    pending, suspects = todo, []
    while pending:
        pending, new_suspects = _pool_pass(ctx, pending, jobs, emit)
        suspects += new_suspects
    for rec in suspects:  # alone in a fresh worker: if it dies again, it is the culprit
        rest, again = _pool_pass(ctx, [rec], 1, emit)
        if rest or again:
            emit(_error_record(rec, WORKER_DIED))


class _StartedKeys:
    """Keys the workers report when they start a task, drained by a parent thread (a pipe left
    undrained fills up after ~1500 tasks and blocks the workers)."""

    def __init__(self, ctx: Any) -> None:
        self.queue = ctx.SimpleQueue()
        self.keys: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drain, name="crowdopt-started",
                                        daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while not self._stop.is_set():
            try:
                if self.queue.empty():
                    self._stop.wait(0.02)
                else:
                    self.keys.add(self.queue.get())
            except (OSError, EOFError, ValueError):  # the queue was closed
                return

    def close(self) -> set[str]:
        self._stop.set()
        self._thread.join(timeout=5)
        with contextlib.suppress(OSError, EOFError, ValueError):
            while not self.queue.empty():
                self.keys.add(self.queue.get())
        return self.keys


def _pool_pass(ctx: Any, pending: list[dict], jobs: int, emit: Callable[[dict], None]
               ) -> tuple[list[dict], list[dict]]:
    """Run `pending` on one pool; return (not started, maybe killed it) if the pool broke."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    started = _StartedKeys(ctx)
    finished: set[str] = set()
    broken = clean = False
    with _worker_environment():
        pool = ProcessPoolExecutor(max_workers=min(jobs, len(pending)), mp_context=ctx,
                                   initializer=_init_worker, initargs=(started.queue,))
        futures = {pool.submit(_run_in_worker, rec): rec for rec in pending}
        try:
            for fut in as_completed(futures):
                rec = futures[fut]
                try:
                    res = fut.result()
                except BrokenProcessPool:
                    broken = True
                    break
                except Exception as exc:  # e.g. a result that cannot be pickled back
                    res = _error_record(rec, f"{type(exc).__name__}: {exc}")
                finished.add(rec["key"])
                emit(res)
            clean = True
        finally:
            # keep whatever finished (also on Ctrl-C), then stop the workers
            for fut, rec in futures.items():
                if rec["key"] in finished or not fut.done() or fut.cancelled():
                    continue
                if fut.exception() is None:
                    finished.add(rec["key"])
                    emit(fut.result())
            if clean and not broken:
                pool.shutdown(wait=True)
            else:
                _stop_pool(pool)
            keys = started.close()
    if not broken:
        return [], []
    left = [r for r in pending if r["key"] not in finished]
    if not keys and not finished:
        raise CrowdoptError("the worker processes of --jobs fail to start (see the error "
                            "above; a script that runs tasks with jobs > 1 needs an "
                            "`if __name__ == '__main__':` guard)")
    suspects = [r for r in left if r["key"] in keys]
    if not suspects:  # cannot tell which one died: treat every unfinished task as a suspect
        return [], left
    return [r for r in left if r["key"] not in keys], suspects


def _stop_pool(pool: Any) -> None:
    """Cancel queued tasks and terminate running workers (interrupt or broken pool)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for p in processes:
        with contextlib.suppress(Exception):
            p.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        with contextlib.suppress(Exception):
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(timeout=5)


def _run_remote(rec: dict) -> dict:
    """What a Dask worker runs: one-thread limits, then the task."""
    limit_threads()
    return run_one(rec)


def _run_dask(todo: list[dict], scheduler: Any, emit: Callable[[dict], None]) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise InputError("--scheduler", "the dask extra installed (pip install 'crowdopt[dask]')",
                         str(scheduler)) from None
    own = isinstance(scheduler, str)
    if own:
        try:
            client = Client(scheduler, timeout=SCHEDULER_TIMEOUT_S, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError("--scheduler", "the address of a running Dask scheduler "
                             "(e.g. tcp://host:8786)", f"{scheduler} ({exc})") from None
    else:
        client = scheduler
    run_id = uuid.uuid4().hex[:8]
    futures = {client.submit(_run_remote, rec, key=f"crowdopt-{rec['key']}-{run_id}",
                             retries=0): rec for rec in todo}
    try:
        for fut in as_completed(list(futures), loop=client.loop):
            rec = futures[fut]
            try:
                res = fut.result()
            except Exception as exc:  # KilledWorker, a lost connection, ...
                res = _error_record(rec, f"{type(exc).__name__}: {exc}")
            emit(res)
    except BaseException:
        with contextlib.suppress(Exception):
            client.cancel(list(futures))
        raise
    finally:
        if own:
            client.close()
