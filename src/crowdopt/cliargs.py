"""Argument helpers every command shares, so one idea has one flag name and one meaning.

- `add_runs`: the replicate count is `--runs` everywhere; older spellings (`--reps`,
  `--trials`) still parse as hidden aliases for one release.
- `add_alias`: any other hidden alias of a flag (e.g. `--mode` for `--model`).
"""

from __future__ import annotations

import argparse


def add_alias(p: argparse.ArgumentParser, alias: str, dest: str, **kw) -> None:
    """A hidden old spelling of an option: same destination, not shown in --help, no default
    of its own (the visible option's default stays)."""
    p.add_argument(alias, dest=dest, help=argparse.SUPPRESS, default=argparse.SUPPRESS, **kw)


def add_runs(p: argparse.ArgumentParser, default: int | None, help: str,
             aliases: tuple[str, ...] = ("--reps", "--trials")) -> None:
    """`--runs N`: replications, each with its own seed (seed + r)."""
    p.add_argument("--runs", type=int, default=default, metavar="N", help=help)
    for a in aliases:
        add_alias(p, a, "runs", type=int, metavar="N")


def add_batch_flags(p: argparse.ArgumentParser, *, jobs_help: str | None = None) -> None:
    """The execution flags of every batch command (simulate, reproduce, sweep, certify DIR),
    one meaning everywhere: --jobs, --resume, --fresh, --scheduler. Without --resume or
    --fresh, a second run of the same command into the same DIR resumes it, and a run with
    other parameters is refused (experiments.executor.run_tasks)."""
    if jobs_help is not None:
        p.add_argument("--jobs", type=int, default=1, metavar="N", help=jobs_help)
    p.add_argument("--resume", action="store_true",
                   help="keep DIR's finished results, also of other parameters, and run only "
                        "the missing tasks")
    p.add_argument("--fresh", action="store_true",
                   help="replace the results already in DIR (the only way to overwrite them)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the tasks on this Dask cluster (extra: dask; default: "
                        "$CROWDOPT_SCHEDULER, else local processes)")


def check_batch_args(args: argparse.Namespace, out_dir) -> None:
    """--resume/--fresh need an output directory; together they contradict each other."""
    from .errors import InputError

    if args.resume and args.fresh:
        raise InputError("--resume / --fresh", "one of them", "both")
    if (args.resume or args.fresh) and not out_dir:
        raise InputError("--resume / --fresh", "an output directory (-o DIR) to resume or "
                         "replace", None)


# ----------------------------------------------------------------------------- boundary types
def _number(text: str, conv, ok, expected: str):
    """Parse `text` with `conv` and check `ok`; the one-line argparse error names both."""
    try:
        v = conv(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, found {text!r}") from None
    if not ok(v):
        raise argparse.ArgumentTypeError(f"expected {expected}, found {text!r}")
    return v


def _finite(v: float) -> bool:
    import math

    return math.isfinite(v)


def nonneg_int(text: str) -> int:
    """argparse type of every plain integer option (counts, sizes, seeds, jobs): >= 0."""
    return _number(text, int, lambda v: v >= 0, "an integer >= 0")


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (threads)."""
    return _number(text, int, lambda v: v >= 1, "an integer >= 1")


def nonneg_float(text: str) -> float:
    """argparse type of every plain number option (probabilities, costs, rates, levels):
    finite and >= 0 (none of crowdopt's numbers is negative, NaN or infinite)."""
    return _number(text, float, lambda v: _finite(v) and v >= 0, "a finite number >= 0")


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (time limits)."""
    return _number(text, float, lambda v: _finite(v) and v > 0, "a number > 0")


def output_file(text: str) -> str:
    """argparse type of a FILE output: not a directory, its folder exists ('-' = stdout)."""
    from pathlib import Path

    if text == "-":
        return text
    p = Path(text)
    if not text or p.is_dir():
        raise argparse.ArgumentTypeError(f"expected a file path, found directory {text!r}"
                                         if text else "expected a file path, found ''")
    if not p.parent.is_dir():
        raise argparse.ArgumentTypeError(f"expected a file in an existing folder, found {text!r} "
                                         f"(no folder {str(p.parent)!r})")
    return text


def output_dir(text: str) -> str:
    """argparse type of a DIRECTORY output: not an existing file (created when missing)."""
    from pathlib import Path

    if not text or Path(text).exists() and not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"expected a directory, found "
                                         f"{'file ' if text else ''}{text!r}")
    return text


OUTPUTS = {"output", "posteriors", "confusion"}  # the options that name a file crowdopt writes


def apply_boundary_types(parser: argparse.ArgumentParser) -> None:
    """One rule for the whole command line, applied to every option of every command: plain
    `int`/`float` options become `nonneg_int`/`nonneg_float`, and `-o` checks its path
    by its metavar (FILE or DIR), so bad values fail in argparse with one line (exit 2)
    before any work starts."""
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sp in a.choices.values():
                apply_boundary_types(sp)
            continue
        if a.type is int:
            a.type = nonneg_int
        elif a.type is float:
            a.type = nonneg_float
        if a.dest in OUTPUTS and a.option_strings and a.type is None:
            a.type = {"FILE": output_file, "DIR": output_dir}.get(a.metavar)
