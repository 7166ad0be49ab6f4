"""The `crowdopt` command line (contract in DESIGN.md: exit codes, JSON keys).

Exit codes: 0 ok, 2 bad input (one line, no traceback), 3 infeasible, 4 time limit without
proof, 5 certification failed. Core commands live here; data and experiment commands register
themselves from the modules of `crowdopt.commands` (each defines `register(cli)`), so a new
command never edits this file.
"""

from __future__ import annotations

import argparse
import contextvars
import importlib
import json
import os
import pkgutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cliargs import (
    add_batch_flags,
    add_to_every_command,
    apply_boundary_types,
    limit_seconds,
    nonneg_float,
    positive_float,
    positive_int,
)
from .errors import CrowdoptError, InputError

EXIT_OK, EXIT_INPUT, EXIT_INFEASIBLE, EXIT_TIME_LIMIT, EXIT_CERT = 0, 2, 3, 4, 5
EXIT_MEANING = {
    EXIT_INFEASIBLE: "infeasible (no solution satisfies the constraints)",
    EXIT_TIME_LIMIT: "time limit reached without proof (the incumbent and bound are in the "
                     "output; raise --time-limit)",
    EXIT_CERT: "a certificate check failed, a method errored or a replication failed (see "
               "the output)",
}


@dataclass
class Cli:
    """What a command module gets: the top-level subparsers and the target groups."""

    top: Any  # argparse subparsers action for top-level commands
    simulate: Any  # subparsers of `crowdopt simulate TARGET`
    replay: Any  # subparsers of `crowdopt replay POLICY`
    reproduce: Any  # subparsers of `crowdopt reproduce PAPER`


# the options given so far in the command line being parsed (the top parser and the
# subparsers of its command share it): key (dest or option string) -> how it was given
_GIVEN: contextvars.ContextVar[dict | None] = contextvars.ContextVar("crowdopt_given",
                                                                    default=None)


class _Once:
    """Mixin of every option action that is not documented as repeatable (argparse's store,
    store_const, store_true, store_false and BooleanOptionalAction, whose `--x` and `--no-x`
    are one option; `append` options say "repeatable" in their help):
    given a second time in one command line, under any of its spellings (`-o`/`--output`, an
    old alias, the same global option before and after the command), it is refused in one
    line naming it, never "the last one wins"."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = _GIVEN.get()
        if self.option_strings and given is not None:
            shown = " ".join([option_string, *getattr(parser, "_raw", [])])
            keys = (("dest", self.dest), *(("option", s) for s in self.option_strings))
            first = next((given[k] for k in keys if k in given), None)
            if first is not None:
                parser.error(f"argument {'/'.join(self.option_strings)}: expected once, found "
                             f"twice ({first!r} and {shown!r})")
            given.update(dict.fromkeys(keys, shown))
        super().__call__(parser, namespace, values, option_string)


_ONCE_ACTIONS = {name: type(f"Once{cls.__name__}", (_Once, cls), {})
                 for name, cls in ((None, argparse._StoreAction),
                                   ("store", argparse._StoreAction),
                                   ("store_const", argparse._StoreConstAction),
                                   ("store_true", argparse._StoreTrueAction),
                                   ("store_false", argparse._StoreFalseAction),
                                   (argparse.BooleanOptionalAction,
                                    argparse.BooleanOptionalAction))}


class _Parser(argparse.ArgumentParser):
    """argparse with the command line's rules: an error is one line and exit 2, and an option
    is given at most once unless it is repeatable (`_Once`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, cls in _ONCE_ACTIONS.items():
            self.register("action", name, cls)

    def parse_known_args(self, args=None, namespace=None):
        token = _GIVEN.set({}) if _GIVEN.get() is None else None  # the outermost parse
        try:
            return super().parse_known_args(args, namespace)
        finally:
            if token is not None:
                _GIVEN.reset(token)

    def _get_values(self, action, arg_strings):
        self._raw = arg_strings  # the words as typed, for `_Once`'s message
        return super()._get_values(action, arg_strings)

    def error(self, message: str) -> None:  # one line, exit 2
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message}\n")


# ----------------------------------------------------------------------------- output helpers
def fmt(v: Any, digits: int = 6) -> str:
    """A number for people (the one formatter, `crowdopt.results.fmt`)."""
    from .results import fmt as _fmt

    return _fmt(v, digits)


def format_table(rows: list[dict], columns: list[str]) -> str:
    """Rows as an aligned plain-text table of the given columns."""
    cells = [[fmt(r.get(c)) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[k]) for row in cells]) for k, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(out)


JSON_INDENT_MAX = 1 << 18  # a document longer than this (compact) stays on one line


def json_text(obj: Any) -> str:
    """`obj` as strict JSON text (see `results.jsonable`), indented by one space per level up
    to JSON_INDENT_MAX characters. Encoded by the json module's C encoder, which takes
    JSON types and float/int/str subclasses as they are and hands everything else (numpy
    integers and booleans, dataclasses, enums, paths) to `jsonable`; a document it refuses
    (a non-finite float, a key of another type) goes through `jsonable` whole. Python's
    indenting encoder is ten times slower: a finished 100,000-item campaign's status took
    1.7 s to indent."""
    from .results import jsonable

    def default(o: Any) -> Any:
        return jsonable(o, strict=True)

    try:
        text = json.dumps(obj, allow_nan=False, default=default)
    except (TypeError, ValueError):
        obj = jsonable(obj, strict=True)
        text = json.dumps(obj, allow_nan=False)
    if len(text) <= JSON_INDENT_MAX:
        return json.dumps(json.loads(text), indent=1)
    return text


def emit_json(obj: Any, path: str | None = None, stdout: bool = True,
              force: bool = False) -> None:
    """One JSON document to stdout (and/or `path`, through the one safe writer: a regular
    file only, an existing one only with `force`), strict: numpy values become Python ones
    (booleans true/false), non-finite numbers null; a value with no JSON form raises
    TypeError (a bug to fix at its source) instead of turning into text."""
    from .files import write_file

    text = json_text(obj)
    if path:
        write_file(path, text + "\n", force=force)
    if stdout:
        print(text)


COVERAGE_WARN = 0.9  # an accuracy resting on fewer of its items than this is flagged on stderr


def coverage(labelled: float, evaluated: int) -> dict:
    """What an accuracy rests on: items that got a label / items it is measured on (an item
    without a label counts as a guess). `labelled` may be a mean over runs."""
    return {"labelled": labelled, "evaluated": int(evaluated),
            "fraction": float(labelled / evaluated) if evaluated else None}


def coverage_text(cov: dict) -> str:
    """'coverage 336/790 = 42.5 %'."""
    if cov["fraction"] is None:
        return "coverage n/a (no items)"
    return f"coverage {fmt(cov['labelled'])}/{cov['evaluated']} = {100 * cov['fraction']:.1f} %"


def warn_coverage(command: str, cov: dict | None, what: str) -> None:
    """One stderr line when an accuracy rests on fewer than COVERAGE_WARN of its items."""
    if cov is not None and cov["fraction"] is not None and cov["fraction"] < COVERAGE_WARN:
        print(f"crowdopt {command}: warning: {coverage_text(cov)}: {what}", file=sys.stderr)


def parse_params(items: list[str] | None) -> dict[str, Any]:
    """--param k=v pairs; values parsed as JSON when possible (3, 0.5, true, [1,2]) else text.
    A key given twice is refused (never "the last one wins")."""
    from .validate import Shown, json_int, json_loads

    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise InputError("--param", "KEY=VALUE", item)
        k, v = item.split("=", 1)
        k = k.strip()
        if k in out:
            raise InputError(f"--param {k}", "one value (each key once)",
                             Shown(f"{k}={json.dumps(out[k])} and {item}"))
        try:
            out[k] = json_loads(v, f"--param {k}", parse_int=json_int)
        except (json.JSONDecodeError, RecursionError):
            out[k] = v
    return out


# ----------------------------------------------------------------------------- core commands
def _add_solver_opts(p: argparse.ArgumentParser, overall: bool = False) -> None:
    if overall:  # compare, certify: several methods in one run
        p.add_argument("--time-limit", type=limit_seconds, default=None, metavar="S",
                       help="wall-clock limit for the whole run, seconds (default: none; a year, "
                       "31536000, or more: none); each method gets at most what is left, a "
                       "method with nothing left is skipped; without a proof by then, or with "
                       "no method run, it exits 4")
        p.add_argument("--method-time-limit", type=limit_seconds, default=None, metavar="S",
                       help="wall-clock limit per method, seconds (default: 120 for MILP "
                       "methods, none for the others; a year, 31536000, or more: none for every "
                       "method); a MILP stopped by it reports its incumbent and bound")
    else:
        p.add_argument("--time-limit", type=limit_seconds, default=None, metavar="S",
                       help="wall-clock limit per exact solve, seconds (default: 120 for MILP "
                       "methods, none for the others; a year, 31536000, or more: none); a MILP "
                       "stopped by it reports its incumbent and bound and exits 4")
    p.add_argument("--threads", type=positive_int, default=1, help="HiGHS threads (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed for randomized methods")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("-o", "--output", default=None, metavar="FILE", help="also write the JSON document to this FILE")
    p.add_argument("--verbose", action="store_true",
                   help="HiGHS solver log on stderr (stdout keeps only the result)")
    p.add_argument("--force", action="store_true",
                   help="run exact methods past their time guards (predicted time over the "
                   "120 s default, fitted by benchmarks/bench_guards.py) under the time limit "
                   "(memory guards still refuse); and replace an existing regular -o FILE")
    p.add_argument("--search-time", type=positive_float, default=None, metavar="S",
                   help="seconds of a local-search heuristic's search (CL-TAP cbp+ls, best-of; "
                   "default $CROWDOPT_SEARCH_TIME, else 2); the time limits only cut it")


def cmd_generate(args: argparse.Namespace) -> int:
    """`crowdopt generate`: a random instance file of a problem (or its parameters)."""
    from .instances import dump_instance
    from .registry import get_problem

    spec = get_problem(args.problem)
    if args.show_params:
        print(f"{spec.name} generator parameters (--param KEY=VALUE), with defaults:")
        for k, v in spec.generator_params.items():
            print(f"  {k} = {json.dumps(v)}")
        return EXIT_OK
    params = parse_params(args.param)
    unknown = sorted(set(params) - set(spec.generator_params))
    if unknown:
        raise InputError("--param", "one of " + ", ".join(sorted(spec.generator_params)), unknown[0])
    inst = spec.generate(args.seed, **params)
    text = dump_instance(spec, inst)
    if args.output:
        from .files import write_file

        write_file(args.output, text + "\n", force=args.force)
    else:
        print(text)
    return EXIT_OK


def _exit_for(results: list, proven: bool = False,
              args: argparse.Namespace | None = None) -> int:
    """Exit code of method results: 5 a check failed or a method errored, 3 infeasible, 4 a
    time limit stopped a method and nothing closed the gap (`proven`), or no method ran at
    all (the reasons go to `args.exit_reason`, the one stderr line), else 0."""
    from .status import Status

    statuses = {r.status for r in results}
    if results and statuses == {Status.SKIPPED}:
        by_reason: dict[str, list[str]] = {}
        for r in results:
            by_reason.setdefault(r.message or "skipped", []).append(r.algorithm)
        if args is not None:
            args.exit_reason = "no method ran: " + "; ".join(
                f"{', '.join(algs)}: {why}" for why, algs in by_reason.items())
        return EXIT_TIME_LIMIT
    if any(r.failed for r in results) or Status.ERROR in statuses:
        return EXIT_CERT
    if Status.INFEASIBLE in statuses:
        return EXIT_INFEASIBLE
    if Status.TIME_LIMIT in statuses and not proven:
        return EXIT_TIME_LIMIT
    return EXIT_OK


def cmd_solve(args: argparse.Namespace) -> int:
    """`crowdopt solve`: one method on an instance file, certified."""
    from .api import load, solve

    inst = load(args.instance)
    r = solve(inst, args.method, time_limit=args.time_limit, threads=args.threads,
              seed=args.seed, force=args.force, search_time=args.search_time,
              started=STARTED.get())
    if args.json or args.output:
        emit_json(r.to_dict(), args.output, stdout=args.json, force=args.force)
    if not args.json:
        print(r.summary())
    return _exit_for([r], proven=r.proven_optimal, args=args)


def cmd_compare(args: argparse.Namespace) -> int:
    """`crowdopt compare`: every fast path and exact model side by side."""
    from .api import compare, load

    inst = load(args.instance)
    comp = compare(inst, time_limit=args.method_time_limit, threads=args.threads,
                   seed=args.seed, algorithms=args.algorithms,
                   total_time_limit=args.time_limit, force=args.force,
                   search_time=args.search_time, started=STARTED.get())
    if args.json or args.output:
        emit_json(comp.to_dict(), args.output, stdout=args.json, force=args.force)
    if not args.json:
        print(comp)
        for r in comp:
            if r.message:
                print(f"{r.algorithm}: {r.message}")
        if comp.warmup_s:
            print(f"(one-off warm-up before timing: {comp.warmup_s:.3g} s)")
    return _exit_for(list(comp), proven=comp.proven, args=args)


def certify_one(path: str, solution: str | None, time_limit: float | None, threads: int,
                seed: int, method_time_limit: float | None = None, gap: float = 0.0,
                force: bool = False, search_time: float | None = None,
                started: float | None = None) -> dict:
    """Certificate of one instance file (and optional solution file), JSON-ready. time_limit:
    the file's overall budget (--time-limit), counted from `started` (None: now, reading
    the file included); method_time_limit: each method's; force: past the time guards too."""
    from .api import certify, load, read_solution

    started = time.perf_counter() if started is None else started
    inst = load(path)
    # any document the package writes with a solution in it (solutions.SOLUTION_FORMATS)
    sol = read_solution(inst, solution) if solution is not None else None
    cert = certify(inst, sol, time_limit=method_time_limit, threads=threads, seed=seed,
                   total_time_limit=time_limit, gap=gap, force=force, search_time=search_time,
                   started=started)
    return cert.replace(instance=str(path)).to_dict()


def _cert_exit(certs: list[dict]) -> int:
    if any(c["failures"] for c in certs):
        return EXIT_CERT
    if any(c["details"].get("time_limit_hit") and c["gap"] != 0.0 for c in certs):
        return EXIT_TIME_LIMIT  # also without a solution: stopped, not proven infeasible
    if any(c.get("feasible") is None for c in certs):
        return EXIT_INFEASIBLE
    return EXIT_OK


def cmd_certify(args: argparse.Namespace) -> int:
    """`crowdopt certify`: the certificate of an instance file or of every file in a folder."""
    target = Path(args.instance)
    force = args.force  # replace an existing -o FILE ...
    if args.instance != "-" and target.is_dir():
        files = sorted(str(p) for p in target.glob("*.json"))
        if not files:
            raise InputError("INSTANCE", "a directory with *.json instance files", str(target))
        if args.solution:
            raise InputError("--solution", "no solution file when certifying a directory", args.solution)
        from .cliargs import check_batch_args

        check_batch_args(args, args.output)
        # ... or the FILE of a resumed run (its FILE.tasks.jsonl is there): its own output
        force |= bool(args.output) and Path(f"{args.output}.tasks.jsonl").is_file()
        certs = certify_many(files, args)
    else:
        for flag in ("scheduler", "resume", "fresh"):
            if getattr(args, flag):
                raise InputError(f"--{flag}", "a folder of instances (one file is certified "
                                 "here, in this process)", args.instance)
        certs = [certify_one(args.instance, args.solution, args.time_limit, args.threads,
                             args.seed, args.method_time_limit, args.gap, args.force,
                             args.search_time, started=STARTED.get())]
    doc = certs[0] if len(certs) == 1 and not target.is_dir() else {"certificates": certs}
    if args.json or args.output:
        emit_json(doc, args.output, stdout=args.json, force=force)
    if not args.json:
        rows = [{"instance": Path(c["instance"]).name, "problem": c["problem"],
                 "size": c.get("problem_size"), "primal": c["primal_source"],
                 "lower": c["lower"], "upper": c["upper"], "gap": c["gap"], "ratio": c["ratio"],
                 "bound_source": c["bound_source"], "certified": c["certified"],
                 "time_s": c["times"]["total_s"]} for c in certs]
        print(format_table(rows, list(rows[0])))
        from .results import verdict_of

        for c in certs:
            for f in c["failures"]:
                print(f"{Path(c['instance']).name}: FAILED: {f}")
            if not c["failures"]:
                print(f"{Path(c['instance']).name}: {verdict_of(c)}")
    return _cert_exit(certs)


def certify_many(files: list[str], args: argparse.Namespace) -> list[dict]:
    """Certify a folder of instances (one row each) in parallel through the execution layer
    (`--jobs N` spawn workers, one HiGHS thread each); an error in one file is a failed row."""
    from .experiments.executor import Task, run_tasks

    tasks = [Task("crowdopt.cli:certify_one", {"path": f, "solution": None,
                                              "time_limit": args.time_limit,
                                              "threads": args.threads,
                                              "method_time_limit": args.method_time_limit,
                                              "gap": args.gap, "force": args.force,
                                              "search_time": args.search_time},
                  seed=args.seed)
             for f in files]
    quiet = args.json or getattr(args, "quiet", False)
    # with -o FILE the task records are kept next to it (FILE.tasks.jsonl): a rerun resumes
    sidecar = f"{args.output}.tasks.jsonl" if getattr(args, "output", None) else None
    records = run_tasks(tasks, jobs=getattr(args, "jobs", 1), show_progress=not quiet,
                        scheduler=getattr(args, "scheduler", None), desc="certify",
                        results_path=sidecar, resume=getattr(args, "resume", False),
                        fresh=getattr(args, "fresh", False))
    out = []
    for f, rec in zip(files, records):
        if rec["error"] is None:
            out.append(rec["result"])
            continue
        message = rec["error"].removeprefix("InputError: ").removeprefix("InstanceError: ")
        out.append({"instance": f, "problem": None, "primal_source": None, "lower": None,
                    "upper": None, "gap": None, "ratio": None, "bound_source": None,
                    "certified": False, "failures": [message],
                    "times": {"total_s": rec["time_s"]}, "details": {}, "feasible": None})
    return out


def cmd_demo(args: argparse.Namespace) -> int:
    """`crowdopt demo`: each problem's example, fast path against exact model."""
    from .api import solve, warm_up
    from .registry import get_problem, problem_names
    from .solvers.certify import gap_ratio, lower_upper

    rows, results = [], []
    for name in problem_names():
        spec = get_problem(name)
        inst = spec.example()
        # one-off imports and the first HiGHS solve are not part of either method's time
        warm_up(spec, inst, [spec.resolve("fast", inst), spec.resolve("exact", inst)])
        fast = solve(inst, "fast", time_limit=args.time_limit)
        exact = solve(inst, "exact", time_limit=args.time_limit)
        bound = exact.bound
        for r in (fast, exact):
            lower, upper = lower_upper(spec.sense, r.objective, bound)
            gap, _, ratio = gap_ratio(lower, upper)
            rows.append({"problem": name, "size": spec.size(inst), "method": r.method,
                         "algorithm": r.algorithm, "objective": r.objective, "bound": bound,
                         "gap": gap, "ratio": ratio, "time_s": r.time_s,
                         "speed-up": (exact.time_s / fast.time_s) if r is fast and fast.time_s > 0 else None})
            results.append(r)
    if args.json:
        emit_json({"demo": rows})
    else:
        print("crowdopt demo: each problem's built-in example, fast path vs the exact method "
              "(Pyomo+HiGHS model or polynomial algorithm)")
        print("(bound = the exact method's proven bound; gap = distance of each objective to it; "
              "times after a warm-up)\n")
        print(format_table(rows, ["problem", "size", "method", "algorithm", "objective", "bound",
                                  "gap", "ratio", "time_s", "speed-up"]))
    return _exit_for(results)


# ----------------------------------------------------------------------------- parser
class _Version(argparse.Action):
    """`--version`: the package metadata is read when asked for, not for every command."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from .version import __version__

        parser.exit(message=f"crowdopt {__version__}\n")


def _command_of(argv: list[str]) -> str | None:
    """The command word of a command line (the first word that is not a global option)."""
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif a == "--mirror":
            skip = True
        elif not a.startswith("-"):
            return a
    return None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The `crowdopt` argument parser, with every command plugin registered; with `command`
    the name of a plugin module that registers that command (campaign, lsol, ...), only that
    one: a command line imports what it runs, not every command's dependencies."""
    if command is not None:
        lean = _one_command_parser(command)
        if lean is not None:
            return lean
    from .registry import problem_names
    from .solutions import SOLUTION_FORMATS

    parser, sub = _top_parser()

    p = sub.add_parser("demo", help="built-in examples: fast vs exact, certified")
    p.add_argument("--time-limit", type=limit_seconds, default=60.0,
                   help="per exact solve (s)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON document on stdout (logs on stderr)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("generate", help="write a random instance as JSON",
                       description="Problems: " + ", ".join(problem_names()) +
                       ". Parameters per problem: `crowdopt generate PROBLEM --show-params`.")
    p.add_argument("problem", metavar="PROBLEM", help="one of: " + ", ".join(problem_names()))
    p.add_argument("--seed", type=int, default=0,
                   help="random seed of the instance (an integer >= 0)")
    p.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="generator parameter (repeatable)")
    p.add_argument("--show-params", action="store_true",
                   help="list the problem's generator parameters and defaults, then exit")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write the instance to this FILE (default: stdout)")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("solve", help="solve an instance (fast path or exact model)")
    p.add_argument("instance", metavar="INSTANCE", help="instance JSON file, or - for stdin")
    p.add_argument("--method", default="fast",
                   help="fast | exact | bound | an algorithm name (default fast); a kind runs "
                   "its first method that applies to the instance (none: exit 2)")
    _add_solver_opts(p)
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("compare", help="fast paths vs exact model side by side")
    p.add_argument("instance", metavar="INSTANCE", help="instance JSON file, or - for stdin")
    p.add_argument("--algorithms", nargs="+", default=None, metavar="ALG",
                   help="only these algorithms (default: every fast and exact one)")
    _add_solver_opts(p, overall=True)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("certify", help="lower and upper bounds, gap, ratio of a solution")
    p.add_argument("instance", metavar="INSTANCE|DIR", help="instance file, - , or a folder of *.json")
    p.add_argument("--solution", default=None, metavar="FILE",
                   help="certify this solution (JSON): " + SOLUTION_FORMATS)
    p.add_argument("--jobs", type=int, default=1, help="parallel workers for a folder")
    add_batch_flags(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--gap", type=nonneg_float, default=0.0, metavar="G",
                   help="stop running bound methods once the relative gap is at most G "
                   "(default 0: only a proof stops early); the methods not run are listed "
                   "with the reason")
    _add_solver_opts(p, overall=True)
    p.set_defaults(func=cmd_certify)

    groups = {}
    for name, help_ in (("simulate", "simulate a policy or problem"),
                        ("replay", "replay a policy on a real label table"),
                        ("reproduce", "reproduce a paper's experiments (report.md + plots)")):
        gp = sub.add_parser(name, help=help_)
        groups[name] = gp.add_subparsers(dest="target", metavar="TARGET", parser_class=_Parser)
        gp.set_defaults(func=_missing_target(gp))
    cli = Cli(top=sub, **groups)
    import crowdopt.commands as commands_pkg

    for info in sorted(pkgutil.iter_modules(commands_pkg.__path__), key=lambda i: i.name):
        mod = importlib.import_module(f"crowdopt.commands.{info.name}")
        if hasattr(mod, "register"):
            mod.register(cli)
    apply_boundary_types(parser)
    add_to_every_command(parser, GLOBAL_OPTIONS)
    return parser


# options of the whole command line, accepted before or after the command word
# (`crowdopt --offline aggregate ...` = `crowdopt aggregate ... --offline`)
GLOBAL_OPTIONS = [
    (("--offline",), {"action": "store_true", "default": False,
                      "help": "never download a data set, `datasets fetch` included (as "
                      "CROWDOPT_OFFLINE=1); a set not on this machine is an error naming the "
                      "command that fetches it"}),
    (("--mirror",), {"default": None, "metavar": "URL", "dest": "global_mirror",
                     "help": "download data sets from this base URL (URL/FOLDER/FILE, as "
                     "CROWDOPT_DATASETS_MIRROR) instead of their public sources"}),
]


def _top_parser() -> tuple[argparse.ArgumentParser, Any]:
    """The top-level parser with the global options, and its command subparsers."""
    parser = _Parser(prog="crowdopt", description=(
        "Optimization for crowd labeling: exact Pyomo+HiGHS models beside fast paths, "
        "with certificates. Exit codes: 0 ok, 2 bad input, 3 infeasible, "
        "4 time limit without proof, 5 certification failed."))
    parser.add_argument("--version", action=_Version)
    for flags, kw in GLOBAL_OPTIONS:
        parser.add_argument(*flags, **kw)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    return parser, sub


def _one_command_parser(command: str) -> argparse.ArgumentParser | None:
    """A parser of the one command that plugin module `command` registers, or None when no
    module has that name or it registers no command of that name."""
    import importlib.util

    name = f"crowdopt.commands.{command}"
    if not command.isidentifier() or importlib.util.find_spec(name) is None:
        return None
    mod = importlib.import_module(name)
    if not hasattr(mod, "register"):
        return None
    parser, sub = _top_parser()
    mod.register(Cli(top=sub, simulate=_NoGroup(), replay=_NoGroup(), reproduce=_NoGroup()))
    if command not in sub.choices:
        return None
    apply_boundary_types(parser)
    add_to_every_command(parser, GLOBAL_OPTIONS)
    return parser


class _NoGroup:
    """A target group (simulate, replay, reproduce) that ignores what a plugin adds to it."""

    def add_parser(self, *a: Any, **k: Any) -> argparse.ArgumentParser:
        return _Parser(add_help=False)


def _missing_target(gp: argparse.ArgumentParser):
    def run(args: argparse.Namespace) -> int:
        gp.print_help()
        return EXIT_INPUT
    return run


# when this module was imported: as the process's command (`main()`), the start of a time
# limit's clock (imports, reading and building count against --time-limit)
IMPORTED = time.perf_counter()
STARTED: contextvars.ContextVar[float] = contextvars.ContextVar("crowdopt_started",
                                                                default=IMPORTED)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI on `argv`; returns the exit code (bad input: 2, one line on stderr).

    A time limit's clock starts when the command starts: at this module's import for the
    process's command (`argv` None), at this call otherwise (`STARTED`). As the process's
    command it does not wait for a HiGHS run the watchdog left behind (a presolve that ignores
    the time limit): once the output is flushed the process ends with the code
    (`exit_past_left_behind_runs`)."""
    token = STARTED.set(IMPORTED if argv is None else time.perf_counter())
    try:
        code = _run_cli(argv)
    finally:
        STARTED.reset(token)
    if argv is None:
        exit_past_left_behind_runs(code)
    return code


def exit_past_left_behind_runs(code: int) -> None:
    """If a HiGHS run left behind by the watchdog is still going, flush stdout and stderr and
    end the process now with `code` (the interpreter would otherwise wait for the run: its
    thread cannot be killed, and tearing HiGHS down under it aborts)."""
    highs = sys.modules.get("crowdopt.solvers.highs")
    if highs is None or not highs.runs_left_behind():
        return
    print(f"crowdopt: exit {code} without waiting for {highs.runs_left_behind()} HiGHS run(s) "
          "stopped by the watchdog", file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more to deliver
            pass
    os._exit(code)


def _run_cli(argv: list[str] | None) -> int:
    parser = build_parser(_command_of(sys.argv[1:] if argv is None else argv))
    try:
        args = _parse(parser, argv)
    except SystemExit as exc:  # a bad option: argparse printed its one line; --help exits 0
        if exc.code in (0, None):
            raise
        return int(exc.code)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_INPUT
    from .validate import ENV_FLAGS, env_flag

    try:
        for name in ENV_FLAGS:  # a flag of the environment is read by the flag rule, at once
            env_flag(name)
    except InputError as exc:
        print(f"crowdopt: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    if getattr(args, "verbose", False):
        os.environ["CROWDOPT_VERBOSE"] = "1"  # read by the HiGHS adapter (and spawned workers)
    if args.offline:  # read by crowdopt.datapath (and spawned workers)
        os.environ["CROWDOPT_OFFLINE"] = "1"
    if args.global_mirror:
        os.environ["CROWDOPT_DATASETS_MIRROR"] = args.global_mirror
    try:
        code = int(args.func(args) or 0)
        if code in EXIT_MEANING:  # every non-zero exit says why, in one stderr line
            why = getattr(args, "exit_reason", None) or EXIT_MEANING[code]
            print(f"crowdopt {args.command}: exit {code}: {why}", file=sys.stderr)
        return code
    except InputError as exc:
        print(f"crowdopt: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except CrowdoptError as exc:
        print(f"crowdopt: error: {exc}", file=sys.stderr)
        return int(getattr(exc, "exit_code", EXIT_CERT))  # a campaign store error: 6
    except MemoryError:
        print("crowdopt: error: out of memory: the instance or the parameters are too large",
              file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("crowdopt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # a file the command could not read or write (permissions, a folder)
        if exc.filename is None:
            raise
        print(f"crowdopt: error: {exc.filename}: expected a file this process may use, found "
              f"{exc.strerror or exc}", file=sys.stderr)
        return EXIT_INPUT


def _parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """The parsed command line. The words of a list argument may be split by options (`datasets
    fetch gal_toy --mirror URL sentiment`): a command that declares its list (set_defaults
    `intermixed=DEST`) gets the words argparse left over; any other leftover is refused as
    argparse refuses it."""
    args, extra = parser.parse_known_args(argv)
    dest = getattr(args, "intermixed", None)
    if extra and dest and not any(a.startswith("-") for a in extra):
        getattr(args, dest).extend(extra)
    elif extra:
        parser.error("unrecognized arguments: " + " ".join(extra))
    return args


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
