"""`crowdopt sweep CONFIG.toml`: a parameter grid x seeds through the one execution layer.

Writes DIR/results.jsonl (one line per task, appended as tasks finish), DIR/summary.csv and
DIR/summary.md (one row per grid point). `--resume` re-runs only the tasks without a result;
existing results are never overwritten without `--fresh`.
Exit 0 when every task ran, 1 when some task raised (its error is in results.jsonl), 2 on bad
input.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from ..cliargs import add_batch_flags, check_batch_args


def cmd_sweep(args: argparse.Namespace) -> int:
    """`crowdopt sweep`: run a TOML sweep configuration."""
    import sys

    from ..cli import emit_json, format_table
    from ..experiments.sweep import load_config, run_sweep

    cfg = load_config(args.config)
    jobs = args.jobs if args.jobs is not None else (cfg.jobs if cfg.jobs is not None else 1)
    out_dir = Path(args.output or cfg.output or Path("runs") / Path(args.config).stem)
    check_batch_args(args, out_dir)
    command = _command(args, out_dir)
    run = run_sweep(cfg, out_dir, jobs=jobs, scheduler=args.scheduler, resume=args.resume,
                    fresh=args.fresh,
                    show_progress=not (args.quiet or args.json), command=command)
    errors = run.errors
    if args.json:
        emit_json({"sweep": cfg.name, "config": str(args.config), "dir": str(out_dir),
                   "tasks": len(run.records), "errors": len(errors), "wall_s": run.wall_s,
                   "columns": run.columns, "summary": run.rows,
                   "files": {k: str(v) for k, v in run.files.items()}})
    else:
        print(f"sweep {cfg.name}: {len(run.records)} tasks, {len(errors)} failed, "
              f"{run.wall_s:.1f} s")
        print(format_table(run.rows, run.columns))
        print("wrote " + ", ".join(str(p) for p in run.files.values()))
    if errors:
        print(f"crowdopt sweep: {len(errors)} of {len(run.records)} tasks failed; first: "
              f"{errors[0]['error']} (all in {run.files['results']}; fix, then rerun with "
              "--resume)", file=sys.stderr)
        return 1
    return 0


def _command(args: argparse.Namespace, out_dir: Path) -> str:
    parts = ["crowdopt", "sweep", str(args.config)]
    if args.jobs is not None:
        parts += ["--jobs", str(args.jobs)]
    if args.scheduler:
        parts += ["--scheduler", args.scheduler]
    parts += ["-o", str(out_dir)]
    return shlex.join(parts)


def register(cli) -> None:
    """Add `crowdopt sweep` to the CLI."""
    p = cli.top.add_parser(
        "sweep", help="run a parameter grid x seeds (problem fast vs exact, or a simulation)",
        description="Run a sweep configuration (TOML; see examples/README.md): every grid point "
        "x seed is one task. Results are appended to DIR/results.jsonl as tasks finish; "
        "DIR/summary.csv and DIR/summary.md hold one row per grid point. Exit 0 ok, 1 some "
        "tasks failed (errors recorded), 2 bad input.")
    p.add_argument("config", metavar="CONFIG.toml", help="sweep configuration file")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="parallel worker processes (0 = all cores; default: the config's "
                   "`jobs`, else 1); one HiGHS thread per task")
    p.add_argument("-o", "--output", default=None, metavar="DIR",
                   help="output DIRECTORY (default: the config's `output`, else runs/<config name>)")
    add_batch_flags(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=cmd_sweep)
