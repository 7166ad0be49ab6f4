"""The execution layer: order, errors, resume, interruption, dead workers, pool == Dask == local."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crowdopt.errors import InputError
from crowdopt.experiments.executor import (
    WORKER_DIED,
    Task,
    busy_task,
    latest_results,
    read_results,
    run_tasks,
)

BUSY = "crowdopt.experiments.executor:busy_task"


def crash_task(code: int = 3, seed: int = 0) -> dict:
    """Kills its own process (a segfault or the OOM killer, as far as the pool can tell)."""
    os._exit(code)


def thread_env_task(seed: int = 0) -> dict:
    """What a worker sees of its numerical thread settings."""
    from threadpoolctl import threadpool_info

    return {"omp": os.environ.get("OMP_NUM_THREADS"),
            "openblas": os.environ.get("OPENBLAS_NUM_THREADS"),
            "pools": sorted({int(p["num_threads"]) for p in threadpool_info()})}


def _tasks(n: int, work: int = 2000) -> list[Task]:
    return [Task(BUSY, {"work": work + 7 * s}, seed=s) for s in range(n)]


def _results(records: list[dict]) -> list:
    return [(r["key"], r["seed"], r["params"], r["result"], r["error"]) for r in records]


def test_records_in_task_order_with_every_field(tmp_path):
    tasks = _tasks(5)
    recs = run_tasks(tasks, results_path=tmp_path / "r.jsonl", show_progress=False)
    assert [r["seed"] for r in recs] == [0, 1, 2, 3, 4]
    for t, r in zip(tasks, recs):
        assert set(r) >= {"key", "fn", "params", "seed", "result", "error", "time_s"}
        assert r["key"] == t.task_key() and r["error"] is None
        assert r["result"] == busy_task(**t.params, seed=t.seed)
    assert len(read_results(tmp_path / "r.jsonl")) == 5


def test_task_key_is_stable_and_numpy_params_are_plain():
    import numpy as np

    a = Task(BUSY, {"work": np.int64(5), "x": np.float64(0.5)}, seed=np.int64(2))
    b = Task(BUSY, {"x": 0.5, "work": 5}, seed=2)
    assert a.task_key() == b.task_key()
    assert a.record() == b.record()
    assert type(a.record()["params"]["work"]) is int and type(a.record()["seed"]) is int
    assert Task(BUSY, {"work": 5}, seed=3).task_key() != b.task_key()


def test_bad_input_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="task fn"):
        Task("no_colon_here")
    (tmp_path / "r.jsonl").write_text('{"key": "k"}\n')
    with pytest.raises(InputError, match="task fn"):
        run_tasks([Task("crowdopt.nope:f")], results_path=tmp_path / "r.jsonl",
                  show_progress=False)
    assert (tmp_path / "r.jsonl").read_text() == '{"key": "k"}\n'  # untouched
    with pytest.raises(InputError, match="--jobs"):
        run_tasks(_tasks(1), jobs=-1, show_progress=False)


def test_error_in_a_task_is_recorded_and_resume_reruns_only_it(tmp_path):
    path = tmp_path / "r.jsonl"
    tasks = [*_tasks(3), Task(BUSY, {"work": -1}, seed=9)]
    recs = run_tasks(tasks, results_path=path, show_progress=False)
    assert [r["error"] is None for r in recs] == [True, True, True, False]
    assert recs[3]["error"].startswith("ValueError") and "traceback" in recs[3]
    ran = []
    again = run_tasks(tasks, results_path=path, resume=True, show_progress=False,
                      on_result=ran.append)
    assert [r["key"] for r in ran] == [tasks[3].task_key()]
    assert _results(again[:3]) == _results(recs[:3])


def test_resume_after_a_torn_write_runs_only_the_missing_tasks(tmp_path):
    path = tmp_path / "r.jsonl"
    tasks = _tasks(6)
    full = run_tasks(tasks, results_path=path, show_progress=False)
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:3]) + lines[3][:25])  # killed while writing line 4
    ran = []
    again = run_tasks(tasks, results_path=path, resume=True, show_progress=False,
                      on_result=ran.append)
    assert sorted(r["seed"] for r in ran) == [3, 4, 5]
    assert _results(again) == _results(full)
    assert len(read_results(path)) == 6 and len(latest_results(path)) == 6
    assert all(line.endswith("\n") for line in path.read_text().splitlines(keepends=True))


def test_results_are_never_lost_by_accident(tmp_path):
    """The same tasks again resume (nothing re-run, nothing lost); other
    tasks are refused; only `fresh` replaces the file."""
    path = tmp_path / "r.jsonl"
    first = run_tasks(_tasks(3), results_path=path, show_progress=False)
    again = run_tasks(_tasks(3), results_path=path, show_progress=False)  # the same: resumed
    assert len(read_results(path)) == 3  # nothing re-run
    assert [r["result"] for r in again] == [r["result"] for r in first]
    more = run_tasks(_tasks(4), results_path=path, show_progress=False)  # more runs: extended
    assert len(read_results(path)) == 4 and len(more) == 4
    other = [Task(BUSY, {"work": 99}, seed=0)]
    with pytest.raises(InputError, match="--fresh"):
        run_tasks(other, results_path=path, show_progress=False)
    assert len(read_results(path)) == 4
    run_tasks(other, results_path=path, show_progress=False, resume=True)  # keep and add
    assert len(read_results(path)) == 5
    run_tasks(_tasks(2), results_path=path, show_progress=False, fresh=True)
    assert len(read_results(path)) == 2


def test_pool_matches_in_process_and_workers_use_one_thread(tmp_path):
    pytest.importorskip("threadpoolctl", reason="threadpoolctl comes with the al extra")
    tasks = _tasks(6) + [Task(f"{__name__}:thread_env_task", {}, seed=0)]
    local = run_tasks(tasks, jobs=1, show_progress=False)
    pool = run_tasks(tasks, jobs=2, results_path=tmp_path / "r.jsonl", show_progress=False)
    assert _results(pool[:-1]) == _results(local[:-1])
    env = pool[-1]["result"]
    assert env["omp"] == "1" and env["openblas"] == "1"
    assert env["pools"] in ([], [1])
    assert local[-1]["result"]["pools"] in ([], [1])  # jobs=1 runs under the same limits


def test_dead_worker_is_recorded_and_the_run_goes_on(tmp_path):
    tasks = _tasks(4)
    tasks.insert(2, Task(f"{__name__}:crash_task", {"code": 3}, seed=0))
    recs = run_tasks(tasks, jobs=2, results_path=tmp_path / "r.jsonl", show_progress=False)
    assert recs[2]["error"] == WORKER_DIED
    assert [r["error"] for i, r in enumerate(recs) if i != 2] == [None] * 4
    assert _results([r for i, r in enumerate(recs) if i != 2]) == _results(
        run_tasks(_tasks(4), show_progress=False))


def test_dask_local_cluster_gives_the_local_results():
    distributed = pytest.importorskip("distributed")
    tasks = _tasks(5)
    local = run_tasks(tasks, jobs=1, show_progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        remote = run_tasks(tasks, scheduler=cluster.scheduler_address, show_progress=False)
        with distributed.Client(cluster) as client:
            via_client = run_tasks(tasks, scheduler=client, show_progress=False)
    assert _results(remote) == _results(local) == _results(via_client)


def where_task(seed: int = 0) -> dict:
    """Where the task ran: a Dask worker or not."""
    try:
        from distributed import get_worker

        get_worker()
        return {"dask": True}
    except (ImportError, ValueError):
        return {"dask": False}


def test_crowdopt_scheduler_environment_variable_sends_tasks_to_dask(monkeypatch):
    distributed = pytest.importorskip("distributed")
    task = [Task(f"{__name__}:where_task", {}, seed=0)]
    assert run_tasks(task, show_progress=False)[0]["result"] == {"dask": False}
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        monkeypatch.setenv("CROWDOPT_SCHEDULER", cluster.scheduler_address)
        assert run_tasks(task, show_progress=False)[0]["result"] == {"dask": True}


@pytest.mark.slow
def test_bad_scheduler_address_is_an_input_error(monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr("crowdopt.experiments.executor.SCHEDULER_TIMEOUT_S", 1.0)
    with pytest.raises(InputError, match="--scheduler"):
        run_tasks(_tasks(1), scheduler="tcp://127.0.0.1:1", show_progress=False)


def test_progress_goes_to_stderr_only(tmp_path, capsys):
    run_tasks(_tasks(3), show_progress=True, desc="busy")
    out, err = capsys.readouterr()
    assert out == ""
    assert "busy" in err


_INTERRUPTED = """
import sys
from crowdopt.experiments.executor import Task, run_tasks
if __name__ == "__main__":
    # ~0.2 s a task: 30 of them on 2 workers leave seconds between the third result and the
    # end, room for the signal even when the test's poller waits for a core
    tasks = [Task("crowdopt.experiments.executor:busy_task", {"work": 12_000_000 + s}, seed=s)
             for s in range(30)]
    run_tasks(tasks, jobs=2, results_path=sys.argv[1], resume=True, show_progress=False)
"""


def _default_sigint() -> None:
    """In the child: SIGINT at its default (a process that ignores it, as a test runner's
    worker may, passes SIG_IGN on to its children, and Python then never raises
    KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _children(pid: int) -> set[int]:
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.add(int(stat.parent.name))
    return out


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_interrupted_pool_run_keeps_finished_results_and_resume_completes(tmp_path, sig):
    script, path = tmp_path / "run.py", tmp_path / "r.jsonl"
    script.write_text(_INTERRUPTED)
    proc = subprocess.Popen([sys.executable, str(script), str(path)], stderr=subprocess.PIPE,
                            preexec_fn=_default_sigint)
    deadline = time.monotonic() + 60
    while len(read_results(path)) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    workers = _children(proc.pid)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0, "the run finished before it could be interrupted"
    if sig != signal.SIGKILL:
        assert b"KeyboardInterrupt" in err or b"Terminated" in err
    deadline = time.monotonic() + 10  # no orphan workers, even after kill -9
    while _alive(workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert workers and not _alive(workers)
    kept = read_results(path)
    assert 3 <= len(kept) < 30 and all(r["error"] is None for r in kept)
    tasks = [Task(BUSY, {"work": 12_000_000 + s}, seed=s) for s in range(30)]
    kept_keys = {r["key"] for r in kept}
    ran = []
    # resume with tiny stand-ins would change keys, so resume the real tasks in this process
    recs = run_tasks(tasks, jobs=2, results_path=path, resume=True, show_progress=False,
                     on_result=ran.append)
    assert len(ran) == 30 - len(kept) and not {r["key"] for r in ran} & kept_keys
    assert [r["seed"] for r in recs] == list(range(30))
    assert len(latest_results(Path(path))) == 30


@pytest.mark.slow
def test_thousands_of_pool_tasks_do_not_block_the_workers():
    # regression: the started-task pipe was only read after the run and filled up at ~1500 tasks
    tasks = [Task(BUSY, {"work": 0}, seed=s) for s in range(2500)]
    recs = run_tasks(tasks, jobs=2, show_progress=False)
    assert len(recs) == 2500 and all(r["error"] is None for r in recs)


def test_a_second_run_on_the_same_results_file_is_refused(tmp_path):
    import fcntl

    path = tmp_path / "r.jsonl"
    path.write_text("")
    with path.open("a") as other:  # another run holds the lock (flock: per open file)
        fcntl.flock(other, fcntl.LOCK_EX)
        with pytest.raises(InputError, match="results file"):
            run_tasks(_tasks(1), results_path=path, show_progress=False)
    assert len(run_tasks(_tasks(2), results_path=path, show_progress=False)) == 2
