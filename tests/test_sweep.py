"""Sweeps: config validation, grid expansion, summaries, CLI outputs, resume, Dask == local;
`crowdopt certify DIR --jobs 2 --json` through the same layer."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crowdopt.cli import certify_one, main
from crowdopt.errors import InputError
from crowdopt.experiments.executor import read_results, resolve
from crowdopt.experiments.sweep import load_config, parse_config, run_sweep, summarize
from crowdopt.registry import RunOptions, get_problem, problem_names

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CROWDOPT = str(Path(sys.executable).with_name("crowdopt"))
SMALL = {"problem": "olas-assign", "seeds": [0, 1], "time_limit": 30,
         "grid": {"points": [6, 9], "labelers": 3}}
COMPARED = ("status", "objective", "bound", "gap", "ratio", "algorithm")


def _outcomes(records: list[dict]) -> list:
    """Everything but timings: what must not depend on --jobs or the scheduler."""
    return [(r["key"], r["error"], {k: v for k, v in (r["result"] or {}).items()
                                    if k.endswith(COMPARED) or k in ("size", "bound")})
            for r in records]


@pytest.mark.parametrize("doc, field", [
    ({**SMALL, "gird": {}}, "gird"),
    ({**SMALL, "function": "m:f"}, "problem/function"),
    ({k: v for k, v in SMALL.items() if k != "problem"}, "problem/function"),
    ({**SMALL, "grid": {"pointz": [3]}}, "grid.pointz"),
    ({**SMALL, "grid": {"points": []}}, "grid.points"),
    ({**SMALL, "methods": ["fast", "nope"]}, "method"),
    ({**SMALL, "seeds": [1, 1]}, "seeds"),
    ({**SMALL, "seeds": 0}, "seeds"),
    ({**SMALL, "params": {"points": 4}}, "params.points"),
    ({**SMALL, "time_limit": -1}, "time_limit"),
    ({**SMALL, "summary": {"metrics": ["fast_gap:worst"]}}, "summary.metrics"),
    ({**SMALL, "plot": {"x": "size", "y": "fast_time_s"}}, "plot.x"),
    ({"function": "no_colon", "seeds": 1}, "function"),
    ({"function": "m:f", "methods": ["fast"]}, "methods"),
    ({**SMALL, "output": 3}, "output"),
    ({**SMALL, "grid": {"seed": [1, 2]}}, "grid.seed"),
    ({"problem": "no-such-problem"}, "problem"),
])
def test_bad_config_names_the_field(doc, field):
    with pytest.raises(InputError) as exc:
        parse_config(doc)
    assert str(exc.value).startswith(field)


def test_a_bad_generator_value_stops_before_the_run(tmp_path):
    cfg = parse_config({**SMALL, "grid": {"points": [5, -3]}})
    with pytest.raises(InputError, match=r"^grid\.points: .*found -3.*grid point"):
        run_sweep(cfg, tmp_path, show_progress=False)
    assert not (tmp_path / "results.jsonl").exists()


def test_grid_cases_and_seeds_expand_in_order():
    cfg = parse_config({"function": "crowdopt.experiments.executor:busy_task",
                        "seeds": {"start": 5, "count": 2}, "cases": [{"work": 1}, {"work": 2}],
                        "grid": {"x": [0, 1]}, "params": {"y": "z"}})
    tasks = cfg.tasks()
    assert [(t.params["work"], t.params["x"], t.seed) for t in tasks] == [
        (w, x, s) for w in (1, 2) for x in (0, 1) for s in (5, 6)]
    assert all(t.params["y"] == "z" for t in tasks)
    assert cfg.group_by == ["work", "x"]
    assert parse_config({"function": "m:f", "seeds": 3}).seeds == [0, 1, 2]


def test_problem_sweep_writes_results_summary_csv_and_markdown(tmp_path):
    pytest.importorskip("matplotlib", reason="report plots need the plot extra")
    cfg = parse_config({**SMALL, "plot": {"x": "points", "y": ["fast_time_s", "exact_time_s"]}})
    run = run_sweep(cfg, tmp_path, jobs=1, show_progress=False, command="crowdopt sweep x")
    assert len(run.records) == 4 and not run.errors
    for rec in run.records:
        r = rec["result"]
        spec = get_problem("olas-assign")
        inst = spec.generate(rec["seed"], **rec["params"]["generator"])
        assert r["size"] == spec.size(inst)
        assert r["exact_status"] == "optimal" and r["exact_gap"] == 0.0
        assert abs(r["fast_objective"] - r["exact_objective"]) <= 1e-7  # Theorem 1
        assert r["fast_ratio"] == 1.0 and r["speedup"] > 0
    assert [(row["points"], row["n"], row["errors"]) for row in run.rows] == [(6, 2, 0), (9, 2, 0)]
    with (tmp_path / "summary.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 and float(rows[0]["max(fast_gap)"]) == 0.0
    assert rows[1]["size"] == "N=9 M=3"
    md = (tmp_path / "summary.md").read_text()
    assert "crowdopt sweep x" in md and "Seeds: 0, 1" in md and "| 9 |" in md
    assert (tmp_path / "plot.png").stat().st_size > 1000
    assert len(read_results(tmp_path / "results.jsonl")) == 4


@pytest.mark.parametrize("problem", problem_names())
def test_every_registered_problem_sweeps(problem, tmp_path):
    spec = get_problem(problem)
    cfg = parse_config({"problem": problem, "methods": ["fast"], "seeds": [0, 1]})
    run = run_sweep(cfg, tmp_path, jobs=1, show_progress=False)
    assert not run.errors, run.errors[0]["error"] if run.errors else ""
    for rec in run.records:
        inst = spec.generate(rec["seed"])
        assert rec["result"]["size"] == spec.size(inst)
        objective = rec["result"]["fast_objective"]
        if objective is not None:
            sol = spec.default("fast").run(inst, RunOptions(seed=rec["seed"]))
            assert abs(spec.evaluate(inst, sol.solution).objective - objective) <= 1e-7


@pytest.mark.slow
def test_jobs_and_dask_give_identical_results(tmp_path):
    distributed = pytest.importorskip("distributed")
    cfg = parse_config(SMALL)
    one = run_sweep(cfg, tmp_path / "one", jobs=1, show_progress=False)
    two = run_sweep(cfg, tmp_path / "two", jobs=2, show_progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        dask = run_sweep(cfg, tmp_path / "dask", scheduler=cluster.scheduler_address,
                         show_progress=False)
    assert _outcomes(one.records) == _outcomes(two.records) == _outcomes(dask.records)
    assert "Dask scheduler" in (tmp_path / "dask" / "summary.md").read_text()


def test_failed_tasks_are_counted_and_exit_1(tmp_path, capsys):
    cfg = tmp_path / "f.toml"
    cfg.write_text('function = "crowdopt.experiments.executor:busy_task"\nseeds = [0, 1]\n'
                   "[grid]\nwork = [10, -1]\n")
    code = main(["sweep", str(cfg), "-o", str(tmp_path / "out"), "--json"])
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert code == 1 and doc["errors"] == 2 and "ValueError" in err
    assert [(r["work"], r["n"], r["errors"]) for r in doc["summary"]] == [(10, 2, 0), (-1, 2, 2)]
    assert doc["summary"][0]["mean(work)"] == 10.0
    assert "Failed tasks" in (tmp_path / "out" / "summary.md").read_text()


def test_example_configs_are_valid():
    files = sorted(EXAMPLES.glob("*.toml"))
    assert files
    for f in files:
        cfg = load_config(f)
        assert cfg.tasks()
        if cfg.kind == "function":  # the simulation API the example names still exists
            assert callable(resolve(cfg.target))


def test_cli_progress_on_stderr_only_and_off_with_quiet_or_json(tmp_path, capsys):
    pytest.importorskip("tqdm", reason="the progress bar needs the progress extra")
    cfg = tmp_path / "b.toml"
    cfg.write_text('function = "crowdopt.experiments.executor:busy_task"\nseeds = 3\n'
                   "[grid]\nwork = [1000, 2000]\n")
    base = ["sweep", str(cfg), "-o", str(tmp_path / "o")]
    assert main(base) == 0
    out, err = capsys.readouterr()
    assert "%|" in err and "%|" not in out and "mean(sum)" in out
    assert main([*base, "--quiet"]) == 0  # the same configuration again: resumed, nothing lost
    assert "6 tasks" in capsys.readouterr().out
    cfg.write_text(cfg.read_text().replace("2000]", "3000]"))  # other parameters: refused
    assert main([*base, "--quiet"]) == 2
    assert "--fresh" in capsys.readouterr().err
    cfg.write_text(cfg.read_text().replace("3000]", "2000]"))
    assert main([*base, "--quiet", "--fresh"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "mean(sum)" in out
    assert main([*base, "--json", "--resume"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["tasks"] == 6


@pytest.mark.slow
def test_cli_interrupted_sweep_resumes_only_missing_tasks(tmp_path):
    cfg = tmp_path / "slow.toml"
    cfg.write_text('function = "crowdopt.experiments.executor:busy_task"\nseeds = 16\n'
                   "[grid]\nwork = [12000000, 12000001]\n")  # ~0.2 s a task: room to interrupt
    out = tmp_path / "o"
    results = out / "results.jsonl"
    cmd = [CROWDOPT, "sweep", str(cfg), "--jobs", "2", "-o", str(out), "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while len(read_results(results)) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == 130, "the sweep finished before it could be interrupted"
    kept = read_results(results)
    assert 3 <= len(kept) < 32
    again = subprocess.run([*cmd, "--resume", "--json"], capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0 and json.loads(again.stdout)["tasks"] == 32
    lines = read_results(results)
    assert len(lines) == 32 and len({r["key"] for r in lines}) == 32  # nothing ran twice
    assert lines[: len(kept)] == kept


@pytest.mark.slow
def test_certify_dir_jobs_2_json(tmp_path):
    for seed in (1, 2, 3):
        assert main(["generate", "olas-assign", "--seed", str(seed), "--param", "points=10",
                     "-o", str(tmp_path / f"i{seed}.json")]) == 0
    (tmp_path / "zz_bad.json").write_text('{"problem": "olas-assign", "accuracies": [2]}')
    run = subprocess.run([CROWDOPT, "certify", str(tmp_path), "--jobs", "2", "--json"],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 5  # one file fails; the others are still certified
    assert "%|" not in run.stderr
    certs = json.loads(run.stdout)["certificates"]
    assert [Path(c["instance"]).name for c in certs] == ["i1.json", "i2.json", "i3.json",
                                                         "zz_bad.json"]
    assert [c["certified"] for c in certs] == [True, True, True, False]
    assert "capacities" in certs[3]["failures"][0]
    for a in certs[:3]:  # the same certificate as in this process
        b = certify_one(a["instance"], None, None, 1, 0)
        assert (a["lower"], a["upper"], a["gap"], a["ratio"]) == (
            b["lower"], b["upper"], b["gap"], b["ratio"])
    for c in certs[:3]:
        assert c["gap"] == 0.0 and c["ratio"] == 1.0 and c["times"]["total_s"] > 0


def test_summarize_aggregates_over_seeds():
    cfg = parse_config({"function": "m:f", "seeds": [0, 1, 2], "grid": {"a": [1, 2]},
                        "summary": {"metrics": ["v", "v:max", "v:std", "ok:mean"]}})
    recs = [{"params": {"a": a}, "seed": s, "error": None,
             "result": {"v": float(a * 10 + s), "ok": s != 1}} for a in (1, 2) for s in (0, 1, 2)]
    recs[-1] = {**recs[-1], "error": "ValueError: x", "result": None}
    rows, cols = summarize(cfg, recs)
    assert cols == ["a", "n", "errors", "mean(v)", "max(v)", "std(v)", "mean(ok)"]
    assert rows[0] == {"a": 1, "n": 3, "errors": 0, "mean(v)": 11.0, "max(v)": 12.0,
                       "std(v)": 1.0, "mean(ok)": 2 / 3}
    assert rows[1]["errors"] == 1 and rows[1]["mean(v)"] == 20.5


def test_problem_tasks_time_after_a_warm_up():
    """A sweep's first task carries no one-off warm-up in its method times."""
    from crowdopt.experiments.sweep import problem_task

    out = problem_task("labeler-set", {}, ["top-k", "milp"], seed=0)
    assert out["warmup_s"] > 0
