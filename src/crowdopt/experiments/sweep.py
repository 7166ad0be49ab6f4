"""Parameter sweeps from a TOML file: a grid over a problem generator or a simulation function.

A sweep is a list of tasks (grid point x seed) run through the one execution layer
(`executor.run_tasks`), so it uses every core (`jobs`), runs on a Dask cluster (`scheduler`),
and resumes after an interruption. Two kinds:

- `problem = "NAME"`: each task draws `get_problem(NAME).generate(seed, **point)` and runs the
  listed methods (default fast and exact) side by side through `api.compare`: objective, bound,
  gap and ratio against the best bound of the task, time per method, exact/fast time.
- `function = "module:function"`: each task calls `function(**point, seed=seed)` (a simulation
  returning a dict of numbers).

Outputs in DIR: results.jsonl (one line per task), summary.csv and summary.md (one row per grid
point, aggregated over seeds), sweep.toml (the configuration used), plot.png if `[plot]` asks.
The configuration format is documented in `examples/README.md`.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import math
import statistics
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files import read_input
from ..validate import MAX_INT, float_hook, integer, refuse_out_of_range, utf8_text
from .executor import Task, run_tasks

TOP_KEYS = {"name", "problem", "function", "seeds", "methods", "time_limit", "jobs", "output",
            "grid", "cases", "params", "summary", "plot"}
AGGREGATES: dict[str, Callable[[list[float]], float]] = {
    "mean": statistics.fmean,
    "min": min,
    "max": max,
    "median": statistics.median,
    "std": lambda v: statistics.stdev(v) if len(v) > 1 else 0.0,
    "sum": math.fsum,
    "count": len,
}
PROBLEM_TASK = "crowdopt.experiments.sweep:problem_task"
MAX_TASKS = 100_000  # grid points x seeds of one sweep: counted before any list is built


@dataclass
class SweepConfig:
    """A validated sweep: what to run (problem or function), the grid points and the seeds."""

    name: str
    kind: str  # "problem" | "function"
    target: str  # problem name or "module:function"
    points: list[dict[str, Any]]  # the varying parameters of each grid point, in order
    group_by: list[str]  # the keys that vary (summary rows)
    fixed: dict[str, Any]  # parameters shared by every point
    seeds: list[int]
    methods: list[str] = field(default_factory=list)
    time_limit: float | None = None
    metrics: list[tuple[str, str]] | None = None  # (metric, aggregate); None = default
    plot: dict[str, Any] | None = None
    jobs: int | None = None
    output: str | None = None
    source: Path | None = None
    text: str = ""

    def tasks(self) -> list[Task]:
        """One task per (grid point, seed), grid-major."""
        out = []
        for point in self.points:
            params = {**self.fixed, **point}
            for seed in self.seeds:
                if self.kind == "problem":
                    out.append(Task(PROBLEM_TASK, {"problem": self.target, "generator": params,
                                                   "methods": self.methods,
                                                   "time_limit": self.time_limit}, seed))
                else:
                    out.append(Task(self.target, params, seed))
        return out


# ----------------------------------------------------------------------------- config
def load_config(path: str | Path) -> SweepConfig:
    """Read and validate a sweep TOML file (errors name the field, the expected and the found)."""
    p = Path(path)
    text = utf8_text(read_input(p, "CONFIG"), "CONFIG", p.name)  # TOML is UTF-8; BOM accepted
    try:
        doc = tomllib.loads(text, parse_float=float_hook)
    except tomllib.TOMLDecodeError as exc:
        raise InputError("CONFIG", "valid TOML", f"{p.name}: {exc}") from None
    refuse_out_of_range(doc, "")  # 1e-400 and 1e400 alike, named by their key
    cfg = parse_config(doc, name=p.stem)
    cfg.source, cfg.text = p, text
    return cfg


def parse_config(doc: dict[str, Any], name: str = "sweep") -> SweepConfig:
    """A SweepConfig from the parsed TOML document (see `load_config`)."""
    unknown = sorted(set(doc) - TOP_KEYS)
    if unknown:
        raise InputError(unknown[0], "a sweep key (" + ", ".join(sorted(TOP_KEYS)) + ")",
                         "an unknown key")
    if ("problem" in doc) == ("function" in doc):
        raise InputError("problem/function", "exactly one of `problem = NAME` or "
                         "`function = \"module:function\"`", "both" if "problem" in doc else "none")
    if "function" in doc:
        for key in ("methods", "time_limit"):
            if key in doc:
                raise InputError(key, "a key of problem sweeps only (a function sweep passes "
                                 "its options in [params])", doc[key])
    if not isinstance(doc.get("output", ""), str):
        raise InputError("output", "a folder path (a string)", doc["output"])
    grid = _table(doc, "grid")
    fixed = _table(doc, "params")
    cases = doc.get("cases", [{}])
    if not isinstance(cases, list) or not cases or not all(isinstance(c, dict) for c in cases):
        raise InputError("cases", "a non-empty array of tables ([[cases]])", cases)
    axes = {k: (v if isinstance(v, list) else [v]) for k, v in grid.items()}
    for k, v in axes.items():
        if not v:
            raise InputError(f"grid.{k}", "a non-empty list of values", v)
    n_points = len(cases) * math.prod(len(v) for v in axes.values())
    seeds = _seeds(doc.get("seeds", [0]))
    if n_points * len(seeds) > MAX_TASKS:
        raise InputError("grid x seeds", f"at most {MAX_TASKS} tasks",
                         f"{n_points} grid point(s) x {len(seeds)} seed(s)",
                         note="split the sweep or use fewer seeds")
    points = []
    for case in cases:
        for combo in itertools.product(*axes.values()):
            points.append({**case, **dict(zip(axes, combo))})
    varying = list(dict.fromkeys(k for c in cases for k in c)) + list(axes)
    group_by = [k for k in varying if len({_hashable(pt.get(k)) for pt in points}) > 1] or varying
    clash = sorted(set(fixed) & set(varying))
    if clash:
        raise InputError(f"params.{clash[0]}", "a parameter not also in [grid] or [[cases]]",
                         clash[0])
    cfg = SweepConfig(name=str(doc.get("name", name)), kind="problem" if "problem" in doc
                      else "function", target=doc.get("problem") or doc.get("function"),
                      points=points, group_by=group_by, fixed=fixed,
                      seeds=list(seeds),
                      time_limit=_time_limit(doc.get("time_limit")),
                      jobs=_jobs(doc.get("jobs")), output=doc.get("output"))
    keys = set(fixed) | set(varying)
    if cfg.kind == "problem":
        _check_problem(cfg, doc, keys)
    else:
        _check_function(cfg, keys)
    cfg.metrics = _metrics(_table(doc, "summary").get("metrics"))
    summary = _table(doc, "summary")
    if "group_by" in summary:
        gb = summary["group_by"]
        if not isinstance(gb, list) or not all(isinstance(g, str) and g in keys for g in gb):
            raise InputError("summary.group_by", "a list of grid/case parameter names", gb)
        cfg.group_by = gb
    extra = sorted(set(summary) - {"metrics", "group_by"})
    if extra:
        raise InputError(f"summary.{extra[0]}", "metrics or group_by", "an unknown key")
    cfg.plot = _plot(doc.get("plot"), keys)
    return cfg


def _table(doc: dict, key: str) -> dict:
    v = doc.get(key, {})
    if not isinstance(v, dict):
        raise InputError(key, f"a table ([{key}])", type(v).__name__)
    return v


def _hashable(v: Any) -> Any:
    return repr(v)


def _seeds(v: Any) -> range | list[int]:
    """A list of seeds, a count n (seeds 0..n-1), or {start, count}: every seed an integer in
    [0, 2^53] (what --seed accepts); a count is a lazy range, so its size is checked before
    any list of that length exists."""
    if isinstance(v, bool):
        raise InputError("seeds", "a list of integers, a count, or {start, count}", v)
    if isinstance(v, int):
        if v < 1:
            raise InputError("seeds", "a count >= 1", v)
        return range(min(v, MAX_TASKS + 1))  # past MAX_TASKS only its size matters
    if isinstance(v, dict) and set(v) <= {"start", "count"} and "count" in v:
        start, count = v.get("start", 0), v["count"]
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, count)) \
                or count < 1:
            raise InputError("seeds", "{start = INT, count = INT >= 1}", v)
        integer(start, "seeds.start", lo=0, hi=MAX_INT)
        if start + min(count, MAX_TASKS + 1) - 1 > MAX_INT:
            raise InputError("seeds", "seeds <= 2^53 (start + count - 1)", v)
        return range(start, start + min(count, MAX_TASKS + 1))
    if isinstance(v, list) and v and all(isinstance(s, int) and not isinstance(s, bool)
                                         for s in v):
        for k, s in enumerate(v):
            integer(s, f"seeds[{k}]", lo=0, hi=MAX_INT)
        if len(set(v)) != len(v):
            raise InputError("seeds", "distinct seeds", v)
        return list(v)
    raise InputError("seeds", "a list of integers, a count, or {start, count}", v)


def _time_limit(v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v <= 0:
        raise InputError("time_limit", "seconds > 0 (finite)", v)
    return float(v)


def _jobs(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_INT:
        raise InputError("jobs", "an integer >= 0 (0 = all cores)", v)
    return v


def _check_problem(cfg: SweepConfig, doc: dict, keys: set[str]) -> None:
    from ..registry import get_problem

    spec = get_problem(cfg.target)
    bad = sorted(keys - set(spec.generator_params))
    if bad:
        raise InputError(f"grid.{bad[0]}", f"a generator parameter of {spec.name} ("
                         + ", ".join(sorted(spec.generator_params)) + ")", bad[0])
    methods = doc.get("methods", ["fast", "exact"])
    if not isinstance(methods, list) or not methods or not all(isinstance(m, str) for m in methods):
        raise InputError("methods", "a non-empty list of method names", methods)
    if len(set(methods)) != len(methods):
        raise InputError("methods", "distinct method names", methods)
    for m in methods:
        spec.method(m)  # raises InputError naming the known methods
    cfg.methods = methods


def _check_function(cfg: SweepConfig, keys: set[str]) -> None:
    if not isinstance(cfg.target, str) or ":" not in cfg.target:
        raise InputError("function", "\"package.module:function\"", cfg.target)
    if "seed" in keys:
        raise InputError("grid.seed", "seeds in the `seeds` key, not in the grid", "seed")


def _metrics(v: Any) -> list[tuple[str, str]] | None:
    if v is None:
        return None
    if not isinstance(v, list) or not all(isinstance(m, str) for m in v):
        raise InputError("summary.metrics", "a list of \"metric\" or \"metric:aggregate\"", v)
    out = []
    for item in v:
        metric, _, agg = item.partition(":")
        agg = agg or "mean"
        if agg not in AGGREGATES:
            raise InputError("summary.metrics", "an aggregate in " + ", ".join(AGGREGATES), item)
        out.append((metric, agg))
    return out


def _plot(v: Any, keys: set[str]) -> dict[str, Any] | None:
    if v is None:
        return None
    if not isinstance(v, dict):
        raise InputError("plot", "a table ([plot])", v)
    extra = sorted(set(v) - {"x", "y", "logx", "logy", "title", "ylabel"})
    if extra:
        raise InputError(f"plot.{extra[0]}", "x, y, logx, logy, title, ylabel", "an unknown key")
    if v.get("x") not in keys:
        raise InputError("plot.x", "a grid parameter", v.get("x"))
    y = v.get("y")
    y = [y] if isinstance(y, str) else y
    if not isinstance(y, list) or not y or not all(isinstance(s, str) for s in y):
        raise InputError("plot.y", "a result metric or a list of them", v.get("y"))
    return {**v, "y": y}


def check_points(cfg: SweepConfig) -> None:
    """Problem sweeps: every grid point must generate an instance (first seed), so a bad
    parameter value stops the sweep with exit 2 before any work instead of failing every task."""
    if cfg.kind != "problem":
        return
    from ..registry import get_problem

    spec = get_problem(cfg.target)
    for point in cfg.points:
        try:
            spec.generate(cfg.seeds[0], **{**cfg.fixed, **point})
        except InputError as exc:
            raise InputError(f"grid.{exc.field}", exc.expected, exc.found,
                             note=f"grid point {point}") from None


# ----------------------------------------------------------------------------- the problem task
def problem_task(problem: str, generator: dict, methods: list[str],
                 time_limit: float | None = None, seed: int = 0) -> dict:
    """Generate one instance and run `methods` on it side by side (one HiGHS thread).

    Returns flat numbers per method label M: M_algorithm, M_status, M_objective, M_bound,
    M_gap, M_rel_gap, M_ratio (against the best bound of the task), M_time_s; plus the task's
    best `bound`, `bound_source`, `size`, `warmup_s` (the one-off costs, paid before any method
    is timed, so the first row of a sweep carries no import bump) and `speedup` = exact time /
    fast time when both ran.
    """
    from ..api import compare
    from ..registry import get_problem

    spec = get_problem(problem)
    t0 = time.perf_counter()
    inst = spec.generate(seed, **generator)
    out: dict[str, Any] = {"size": spec.size(inst), "generate_s": time.perf_counter() - t0}
    results = compare(inst, time_limit=time_limit, threads=1, seed=seed,
                      algorithms=methods)
    for label, r in zip(methods, results):
        cert = r.certificate or {}
        out.update({f"{label}_algorithm": r.algorithm, f"{label}_status": r.status,
                    f"{label}_objective": r.objective, f"{label}_bound": r.bound,
                    f"{label}_gap": r.gap, f"{label}_rel_gap": cert.get("rel_gap"),
                    f"{label}_ratio": cert.get("ratio"), f"{label}_time_s": r.time_s})
        if cert.get("bound") is not None:
            out["bound"], out["bound_source"] = cert["bound"], cert.get("bound_source")
    out.setdefault("bound", None)
    out["warmup_s"] = results.warmup_s  # one-off costs paid before timing, reported apart
    fast, exact = out.get("fast_time_s"), out.get("exact_time_s")
    out["speedup"] = exact / fast if fast and exact is not None and fast > 0 else None
    return out


# ----------------------------------------------------------------------------- summary
def default_metrics(cfg: SweepConfig, records: list[dict]) -> list[tuple[str, str]]:
    """Problem sweeps: per method mean objective, worst gap and ratio, mean time, speed-up.
    Function sweeps: the mean of every numeric result."""
    if cfg.kind == "problem":
        out = []
        for m in cfg.methods:
            out += [(f"{m}_objective", "mean"), (f"{m}_gap", "max"), (f"{m}_ratio", "min"),
                    (f"{m}_time_s", "mean")]
        if "fast" in cfg.methods and "exact" in cfg.methods:
            out.append(("speedup", "mean"))
        return out
    names: dict[str, None] = {}
    for r in records:
        for k, v in flatten(r.get("result") or {}).items():
            if _number(v) is not None:
                names[k] = None
    return [(k, "mean") for k in names]


def flatten(result: dict, prefix: str = "") -> dict[str, Any]:
    """Nested result dicts as dotted keys ({"mv": {"regret": 1}} -> {"mv.regret": 1})."""
    out: dict[str, Any] = {}
    for k, v in result.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, int | float) and not (isinstance(v, float) and math.isnan(v)):
        return float(v)
    return None


def column(metric: str, agg: str) -> str:
    """The summary column name of a metric and its aggregate, e.g. 'mean(gap)'."""
    return f"{agg}({metric})"


def summarize(cfg: SweepConfig, records: list[dict]) -> tuple[list[dict], list[str]]:
    """One row per group (grid point): n, errors, and each metric aggregated over seeds."""
    metrics = cfg.metrics or default_metrics(cfg, records)
    groups: dict[tuple, list[dict]] = {}
    for rec in records:
        params = rec["params"]["generator"] if cfg.kind == "problem" else rec["params"]
        groups.setdefault(tuple(_hashable(params.get(k)) for k in cfg.group_by), []).append(
            {**rec, "params": params})
    rows = []
    for recs in groups.values():
        row: dict[str, Any] = {k: recs[0]["params"].get(k) for k in cfg.group_by}
        ok = [flatten(r["result"]) for r in recs
              if r.get("error") is None and isinstance(r.get("result"), dict)]
        row["n"] = len(recs)
        row["errors"] = len(recs) - len(ok)
        if cfg.kind == "problem" and ok and "size" in ok[0]:
            sizes = list(dict.fromkeys(str(r.get("size")) for r in ok))
            row["size"] = sizes[0] if len(sizes) == 1 else f"{sizes[0]} .. {sizes[-1]}"
        for metric, agg in metrics:
            vals = [x for x in (_number(r.get(metric)) for r in ok) if x is not None]
            row[column(metric, agg)] = AGGREGATES[agg](vals) if vals else None
        rows.append(row)
    columns = list(cfg.group_by) + ["n", "errors"]
    if any("size" in r for r in rows):
        columns.append("size")
    columns += [column(m, a) for m, a in metrics]
    return rows, columns


# ----------------------------------------------------------------------------- run + write
@dataclass
class SweepRun:
    config: SweepConfig
    out_dir: Path
    records: list[dict]
    rows: list[dict]
    columns: list[str]
    files: dict[str, Path]
    wall_s: float

    @property
    def errors(self) -> list[dict]:
        """The records of the tasks that failed."""
        return [r for r in self.records if r.get("error") is not None]


def run_sweep(cfg: SweepConfig, out_dir: str | Path, *, jobs: int = 1, scheduler: Any = None,
              resume: bool = False, show_progress: bool = True, command: str = "",
              fresh: bool = False) -> SweepRun:
    """Run every task (appending DIR/results.jsonl), then write the summary files."""
    check_points(cfg)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    records = run_tasks(cfg.tasks(), jobs=jobs, results_path=out / "results.jsonl",
                        resume=resume, fresh=fresh, scheduler=scheduler,
                        show_progress=show_progress,
                        desc=f"sweep {cfg.name}")
    wall = time.perf_counter() - t0
    rows, columns = summarize(cfg, records)
    files = write_outputs(cfg, out, records, rows, columns, command=command, wall_s=wall,
                          jobs=jobs, scheduler=scheduler)
    return SweepRun(cfg, out, records, rows, columns, files, wall)


def write_outputs(cfg: SweepConfig, out: Path, records: list[dict], rows: list[dict],
                  columns: list[str], *, command: str = "", wall_s: float = 0.0, jobs: int = 1,
                  scheduler: Any = None) -> dict[str, Path]:
    """Write a sweep's results.jsonl, summary.csv and summary.md into `out`."""
    from ..version import __version__
    from .report import markdown_table

    files = {"results": out / "results.jsonl", "csv": out / "summary.csv",
             "markdown": out / "summary.md"}
    with files["csv"].open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({c: ("" if r.get(c) is None else r.get(c)) for c in columns})
    if cfg.text:
        files["config"] = out / "sweep.toml"
        files["config"].write_text(cfg.text)
    what = (f"problem `{cfg.target}`, methods {', '.join(cfg.methods)}"
            + (f", time limit {cfg.time_limit:g} s" if cfg.time_limit else "")
            if cfg.kind == "problem" else f"function `{cfg.target}`")
    errors = sum(r.get("error") is not None for r in records)
    md = [f"# Sweep: {cfg.name}\n",
          f"Made by: `{command}`  " if command else "",
          f"Config: `{cfg.source}`  " if cfg.source else "",
          f"Runs: {what}; {len(cfg.points)} grid points x {len(cfg.seeds)} seeds = "
          f"{len(records)} tasks ({errors} failed)  ",
          f"Seeds: {_seed_text(cfg.seeds)}  ",
          f"Fixed parameters: {cfg.fixed or '-'}  ",
          f"Execution: {'Dask scheduler ' + str(scheduler) if scheduler else f'--jobs {jobs}'}, "
          f"{wall_s:.1f} s wall; crowdopt {__version__}, {time.strftime('%Y-%m-%d %H:%M:%S')}\n",
          "Each row aggregates the seeds of one grid point: `mean(x)` is the mean over seeds, "
          "`max(M_gap)` the worst gap of method M to the best bound of its task, `min(M_ratio)` "
          "the worst lower/upper ratio, `speedup` exact time / fast time. Per-task values: "
          "results.jsonl.\n",
          markdown_table(rows, columns)]
    if cfg.plot:
        png = _write_plot(cfg, out, records)
        if png is not None:
            files["plot"] = png
            md.append(f"\n![{cfg.plot.get('title') or cfg.name}]({png.name})\n")
    failed = [r for r in records if r.get("error") is not None][:5]
    if failed:
        md.append("\n## Failed tasks (first 5)\n")
        md += [f"- seed {r['seed']}, {r['params']}: `{r['error']}`" for r in failed]
    files["markdown"].write_text("\n".join(x for x in md if x != "") + "\n")
    return files


def _seed_text(seeds: list[int]) -> str:
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}..{seeds[-1]} ({len(seeds)} seeds)"
    return ", ".join(map(str, seeds))


def _write_plot(cfg: SweepConfig, out: Path, records: list[dict]) -> Path | None:
    """Mean of each y metric over seeds vs the x parameter; one series per other grid value."""
    try:
        from .report import line_plot
        series: dict[str, tuple[list, list]] = {}
        errors: dict[str, list] = {}
        x = cfg.plot["x"]
        others = [k for k in cfg.group_by if k != x]
        for y in cfg.plot["y"]:
            sub = dataclasses.replace(cfg, group_by=[*others, x],
                                      metrics=[(y, "mean"), (y, "std")])
            rows, _ = summarize(sub, records)
            for r in rows:
                if r[column(y, "mean")] is None:
                    continue
                label = y + "".join(f", {k}={r[k]}" for k in others)
                xs, ys = series.setdefault(label, ([], []))
                xs.append(r[x])
                ys.append(r[column(y, "mean")])
                errors.setdefault(label, []).append(r[column(y, "std")] or 0.0)
        if not series:
            return None
        fig = line_plot(series, xlabel=x, ylabel=cfg.plot.get("ylabel", ", ".join(cfg.plot["y"])),
                        title=cfg.plot.get("title", cfg.name), logx=bool(cfg.plot.get("logx")),
                        logy=bool(cfg.plot.get("logy")),
                        errors=None if cfg.plot.get("logy") else errors)  # no +-std on a log axis
        path = out / "plot.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        import matplotlib.pyplot as plt

        plt.close(fig)
        return path
    except InputError:  # matplotlib missing (the `plot` extra): tables only
        return None
