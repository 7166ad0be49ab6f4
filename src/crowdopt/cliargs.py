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
def _checked(text: str, check, **bounds):
    """Parse `text` with a validate.py rule (`integer_text` / `real_text`: the one rule for
    every number, also on the command line); its InputError becomes argparse's one line."""
    from .errors import InputError, _short

    try:
        return check(text, "", **bounds)
    except InputError as exc:
        raise argparse.ArgumentTypeError(f"expected {exc.expected}, found {_short(text)}") from None


def nonneg_int(text: str) -> int:
    """argparse type of every plain integer option (counts, sizes, seeds, jobs): an integer
    in [0, 2^53] (a seed or count past it would not survive JSON or the campaign store)."""
    from .validate import MAX_INT, integer_text

    return _checked(text, integer_text, lo=0, hi=MAX_INT)


def positive_int(text: str) -> int:
    """argparse type: an integer in [1, 2^53] (threads)."""
    from .validate import MAX_INT, integer_text

    return _checked(text, integer_text, lo=1, hi=MAX_INT)


def port(text: str) -> int:
    """argparse type of a TCP port: an integer in [0, 65535] (0 = any free port)."""
    from .validate import integer_text

    return _checked(text, integer_text, lo=0, hi=65535)


def nonneg_float(text: str) -> float:
    """argparse type of every plain number option (probabilities, costs, rates, levels):
    finite and >= 0 (none of crowdopt's numbers is negative, NaN or infinite)."""
    from .validate import real_text

    return _checked(text, real_text, lo=0.0)


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    from .validate import real_text

    return _checked(text, real_text, lo=0.0, lo_open=True)


def limit_seconds(text: str) -> float:
    """argparse type of every time limit and timeout: a finite number of seconds > 0. The
    command hands it to `validate.time_limit` (in the API), where a year (31,536,000 s) or
    more becomes no limit."""
    from .validate import real_text

    return _checked(text, real_text, lo=0.0, lo_open=True)


MAX_SECONDS = 1e9  # ~31 years: a longer duration overflows the clock arithmetic it feeds


def seconds(text: str) -> float:
    """argparse type of a duration added to the clock (a lease): a number in (0, 1e9]."""
    from .validate import real_text

    return _checked(text, real_text, lo=0.0, lo_open=True, hi=MAX_SECONDS)


def nonneg_seconds(text: str) -> float:
    """argparse type of a duration that may be zero (a late window): a number in [0, 1e9]."""
    from .validate import real_text

    return _checked(text, real_text, lo=0.0, hi=MAX_SECONDS)


def separator(text: str) -> str:
    """argparse type of --sep: one character, or tab (also '\\t'), comma, semicolon or
    whitespace by name; csv needs a single-character delimiter."""
    from .validate import separator as check

    try:
        return check(text, "--sep")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--sep: ")) from None


def new_file(text: str) -> str:
    """argparse type of a file crowdopt creates (a campaign store): its folder exists; a
    postgresql:// URL names a campaign in a database instead (checked when opened)."""
    if text.startswith(("postgresql://", "postgres://")):
        return text
    return output_file(text)


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


FORCE_HELP = ("replace an existing regular output FILE (a FIFO, device, directory or socket "
              "is refused either way)")


def apply_boundary_types(parser: argparse.ArgumentParser) -> None:
    """One rule for the whole command line, applied to every option of every command: plain
    `int`/`float` options become `nonneg_int`/`nonneg_float`, and `-o` checks its path
    by its metavar (FILE or DIR), so bad values fail in argparse with one line (exit 2)
    before any work starts. A command that writes an output FILE (written by
    `files.write_file`: an existing file only with --force) gets `--force` if it has none."""
    files = False
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
        files |= a.dest in OUTPUTS and a.metavar == "FILE"
    if files and "--force" not in parser._option_string_actions:
        parser.add_argument("--force", action="store_true", help=FORCE_HELP)


def add_to_every_command(parser: argparse.ArgumentParser, options: list) -> None:
    """Give every (sub)command of `parser` the top-level `options` ((flags, kwargs) pairs), so
    that they are accepted before or after the command word. A command's copy has no default
    of its own (the top level's stays unless the option is given after the command), and a
    command that has an option of that name keeps its own (`datasets fetch --mirror`)."""
    seen: set[int] = set()

    def walk(p: argparse.ArgumentParser, top: bool) -> None:
        if id(p) in seen:
            return
        seen.add(id(p))
        if not top:
            new = [(f, kw) for f, kw in options
                   if not any(x in p._option_string_actions for x in f)]
            if new:
                group = p.add_argument_group("global options (also before the command)")
                for flags, kw in new:
                    group.add_argument(*flags, **{**kw, "default": argparse.SUPPRESS})
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for sp in a.choices.values():
                    walk(sp, False)

    walk(parser, True)
