"""`crowdopt aggregate` and `crowdopt estimate`: truth inference and worker reliability.

LABELS is a label table file (CSV/TSV, `task,worker,label` or a header variant) or
`dataset:NAME` for a real data set (fetched and verified on first use; its gold is used unless
--gold).
The methods and their options come from `crowdopt.crowd.methods`; a model flag a method does
not use is refused with one line (never silently ignored). JSON output carries `iterations`,
`converged` and `objective` (name, final value, non_decreasing, trace) for every method.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ..cliargs import separator
from ..errors import InputError


def register(cli) -> None:
    """Add `crowdopt aggregate` and `crowdopt estimate` to the CLI."""
    from ..crowd.names import AUTO, AUTO_Z, DEFAULT_METHOD, METHOD_NAMES, UNSUPERVISED

    p = cli.top.add_parser(
        "aggregate", help="aggregate crowd labels (MV, WMV, Wawa, ZBS, one-coin, Dawid-Skene, "
        "GLAD, MACE, KOS, M-MSR, EBCC, or auto)",
        description="Infer one label per task from a label table. Prints accuracy vs gold "
        "when gold is given (ties split evenly, and with the seeded tie-break). Iterative "
        "methods report iterations, convergence and the objective they increase.")
    _add_input_opts(p)
    p.add_argument("--method", default=DEFAULT_METHOD, choices=METHOD_NAMES + (AUTO,),
                   help=f"aggregator (default {DEFAULT_METHOD}); auto picks one without gold: "
                   f"{DEFAULT_METHOD} unless another predicts 10%% held-out labels better by "
                   f"over {AUTO_Z:g} standard errors, and says why")
    p.add_argument("--weights", default=None, metavar="FILE",
                   help="wmv: worker accuracies CSV (worker,accuracy; e.g. from `estimate`); "
                   "without it wmv estimates accuracies from --gold by cross-fitting")
    p.add_argument("--weighting", default="log-odds", choices=("log-odds", "linear"),
                   help="wmv weight of an accuracy w: logit(w)-logit(1/L) or L*w-1")
    p.add_argument("--folds", type=int, default=2, help="wmv cross-fitting folds (default 2)")
    p.add_argument("--ties", default="random", choices=("random", "first"),
                   help="tie-break: uniform among tied classes (seeded) or lowest class")
    p.add_argument("--seed", type=int, default=0,
                   help="tie-break / fold / restart / start / hold-out seed (default 0)")
    _add_model_opts(p)
    p.add_argument("--use-gold", action="store_true",
                   help="EM methods: clamp gold tasks to their gold label (accuracy is then not "
                   "a held-out figure)")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="output FILE: task,label,confidence CSV")
    p.add_argument("--posteriors", default=None, metavar="FILE",
                   help="write task,label,probability CSV (long form: one row per task and "
                   "class)")
    p.set_defaults(func=cmd_aggregate)

    p = cli.top.add_parser(
        "estimate", help="per-worker reliability from gold (Theorem 3) or from a model",
        description="Per-worker accuracy. With gold: counts, accuracy c/n, the unbiased "
        "variance w(1-w)/(n-1) and score G=(Lw-1)^2-L^2 var (Li & Liu Theorem 3). Without "
        "gold: the fitted model's accuracy (with its iterations and convergence). -o writes "
        "the CSV other commands read as labeler accuracies; --confusion the confusion "
        "matrices.")
    _add_input_opts(p)
    p.add_argument("--method", default=None, choices=("gold", *UNSUPERVISED),
                   help="default: gold when gold is given, else dawid-skene")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of random starts (MACE restarts, EBCC subtypes, KOS messages)")
    _add_model_opts(p)
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="output FILE: worker,n,correct,accuracy,variance,score,source CSV")
    p.add_argument("--confusion", default=None, metavar="FILE",
                   help="write worker,true_label,label,probability CSV (long form)")
    p.set_defaults(func=cmd_estimate)


def _add_model_opts(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model options (a method that does not use one refuses it)")
    g.add_argument("--smoothing", type=float, default=None, metavar="S",
                   help="one-coin, dawid-skene: Dirichlet/Beta pseudo-count per parameter "
                   "cell, a prior that makes the EM a MAP EM (default 0.1)")
    g.add_argument("--priors", default=None, choices=("learn", "uniform"),
                   help="class priors: learned or fixed uniform (defaults: dawid-skene and "
                   "mace learn; one-coin and glad uniform)")
    g.add_argument("--tol", type=float, default=None, metavar="T",
                   help="iterative methods: stop when the objective rises by at most T*|F| in "
                   "an iteration (kos, mmsr: when the iterates move by at most T); default 1e-6")
    g.add_argument("--max-iter", type=int, default=None, metavar="N",
                   help="iteration cap (converged=false when reached)")
    g.add_argument("--init", default=None, choices=("mv", "gold"),
                   help="EM start: majority vote (default), or majority vote with gold tasks "
                   "set to their gold label (gold starts the EM, it is not clamped)")
    g.add_argument("--restarts", type=int, default=None, metavar="R",
                   help="mace: random restarts besides the majority-vote start (default 10)")


def _model_options(args: argparse.Namespace) -> dict:
    """The model flags as `run_method` options (None: not given)."""
    return {"smoothing": args.smoothing, "priors": args.priors, "tol": args.tol,
            "max_iter": args.max_iter, "init": args.init, "restarts": args.restarts}


def _add_input_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("labels", metavar="LABELS", help="label table file, or dataset:NAME")
    p.add_argument("--gold", default=None, metavar="GOLD",
                   help="gold table (task,label) or dataset:NAME (that set's gold)")
    p.add_argument("--duplicates", default=None, choices=("error", "first", "last", "all"),
                   help="repeated (worker, task) rows (default: error for files, first for "
                   "datasets)")
    p.add_argument("--columns", default=None, metavar="task=C,worker=C,label=C",
                   help="label column names (or 0-based positions)")
    p.add_argument("--gold-columns", default=None, metavar="task=C,label=C",
                   help="gold column names (or positions)")
    p.add_argument("--sep", type=separator, default=None,
                   help="field separator: one character, or tab, comma, semicolon, whitespace "
                   "(default: sniff)")
    p.add_argument("--no-header", action="store_true", help="files have no header row")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def _parse_columns(text: str | None, flag: str) -> dict | None:
    if not text:
        return None
    out: dict = {}
    for part in text.split(","):
        if "=" not in part:
            raise InputError(flag, "ROLE=COLUMN pairs separated by commas", part)
        k, v = (s.strip() for s in part.split("=", 1))
        out[k] = int(v) if v.isascii() and v.isdigit() and len(v) < 10 else v
    return out


def load_inputs(args: argparse.Namespace):
    """(table, gold or None, source name) from LABELS / dataset:NAME and --gold."""
    from ..crowd.datasets import load_labels_and_gold

    sep = args.sep
    return load_labels_and_gold(
        args.labels, args.gold, duplicates=args.duplicates, sep=sep, header=not args.no_header,
        columns=_parse_columns(args.columns, "--columns"),
        gold_columns=_parse_columns(args.gold_columns, "--gold-columns"))


def cmd_aggregate(args: argparse.Namespace) -> int:
    """`crowdopt aggregate`: one label per task through `crowd.run_method`."""
    from ..cli import emit_json, format_table
    from ..crowd.export import write_posteriors
    from ..crowd.reliability import read_accuracies
    from ..crowd.runner import AUTO, run_method

    table, gold, source = load_inputs(args)
    if args.method == AUTO:
        print("aggregate auto: fitting every method on 90% of the labels ...", file=sys.stderr)
    # --weights holds accuracies; with another method than wmv the door refuses it unread
    acc = (read_accuracies(args.weights) if args.method == "wmv" else args.weights
           ) if args.weights else None
    res = run_method(table, args.method, gold=gold, use_gold=args.use_gold, accuracies=acc,
                     weighting=args.weighting, folds=args.folds, ties=args.ties,
                     seed=args.seed, source=source, **_model_options(args))
    choice = res.choice
    if choice is not None:
        print(f"aggregate auto: {choice.reason()}", file=sys.stderr)
    if args.output:
        _write_labels(args.output, table, res, args.force)
    if args.posteriors:
        write_posteriors(args.posteriors, table, res.posteriors, force=args.force)
    out = res.with_files(output=args.output, posteriors=args.posteriors).to_dict()
    if args.json:
        emit_json(out)
        return 0
    keys = ["method", "n_tasks", "n_workers", "n_labels", "n_classes", "iterations",
            "converged", "time_s"]
    if gold is not None:
        keys += ["gold_tasks", "accuracy", "accuracy_tie_broken"]
    print(f"aggregate {source}")
    if choice is not None:
        print(f"auto: {choice.reason()}")
    print(format_table([{k: out[k] for k in keys}], keys))
    if out.get("objective"):
        print(f"objective ({out['objective']['name']}): {out['objective']['final']:.6g}, "
              f"non-decreasing: {out['objective']['non_decreasing']}")
    if gold is not None:
        print("accuracy: ties split evenly; accuracy_tie_broken: with the seeded tie-break")
    for key in ("output", "posteriors"):
        if out.get(key):
            print(f"wrote {out[key]}")
    return 0


def _write_labels(path: str, table, res, force: bool) -> None:
    from ..crowd.export import csv_text
    from ..files import write_file

    conf = res.posteriors[np.arange(table.n_tasks), res.labels]
    rows = [[t, lab, f"{c:.6g}"] for t, lab, c in zip(
        table.task_ids.tolist(), res.label_values(table).tolist(), conf.tolist(), strict=True)]
    write_file(path, csv_text(["task", "label", "confidence"], rows), force=force)


def cmd_estimate(args: argparse.Namespace) -> int:
    """`crowdopt estimate`: per-worker reliability from gold or a model."""
    from ..cli import emit_json, format_table
    from ..crowd.export import gold_confusion, model_confusion, write_confusion
    from ..crowd.reliability import from_em, from_gold, write_reliability
    from ..crowd.runner import objective_summary, run_method

    table, gold, source = load_inputs(args)
    method = args.method or ("gold" if gold is not None else "dawid-skene")
    opts = _model_options(args)
    extra: dict = {}
    if method == "gold":
        if gold is None:
            raise InputError("--method gold", "a gold table (--gold or dataset:NAME)", "none")
        used = [f for k, f in (("smoothing", "--smoothing"), ("priors", "--priors"),
                               ("tol", "--tol"), ("max_iter", "--max-iter"),
                               ("init", "--init"), ("restarts", "--restarts"))
                if opts.get(k) is not None]
        if used:
            raise InputError(used[0], "a model method (not --method gold)", "gold")
        rel = from_gold(table, gold)
        conf, conf_source = gold_confusion(table, gold), "gold answer counts"
        # counts, closed form: reported like every other method's fit
        extra = {"iterations": 0, "converged": True, "objective": None}
    else:
        res = run_method(table, method, gold=gold, seed=args.seed, **opts)
        rel = from_em(table, res)
        conf, conf_source = model_confusion(table, res)
        extra = {"iterations": res.iterations, "converged": res.converged,
                 **objective_summary(res)}
    rows = rel.to_rows()
    if args.output:
        write_reliability(rel, args.output, force=args.force)
    if args.confusion:
        write_confusion(args.confusion, table, conf, force=args.force)
    if args.json:
        emit_json({"labels": source, "method": method, "source": rel.source,
                   "n_classes": rel.n_classes, "n_workers": table.n_workers, **extra,
                   "workers": rows, **({"output": args.output} if args.output else {}),
                   **({"confusion": args.confusion, "confusion_source": conf_source}
                      if args.confusion else {})})
        return 0
    head = f"estimate {source}: {len(rows)} workers, reliability from {rel.source}"
    if extra:
        head += f" ({extra['iterations']} iterations, converged: {extra['converged']})"
    print(head)
    print(format_table(rows, ["worker", "n", "correct", "accuracy", "variance", "score"]))
    if args.output:
        print(f"wrote {Path(args.output)}")
    if args.confusion:
        print(f"wrote {Path(args.confusion)} (confusion from {conf_source})")
    return 0
