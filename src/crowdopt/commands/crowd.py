"""`crowdopt aggregate` and `crowdopt estimate`: truth inference and worker reliability.

LABELS is a label table file (CSV/TSV, `task,worker,label` or a header variant) or
`dataset:NAME` for a real data set under $CROWDOPT_DATA (its gold is used unless --gold).
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np

from ..errors import InputError

AGG_METHODS = ("mv", "wmv", "one-coin", "dawid-skene")


def register(cli) -> None:
    p = cli.top.add_parser(
        "aggregate", help="aggregate crowd labels (MV, weighted MV, one-coin EM, Dawid-Skene)",
        description="Infer one label per task from a label table. Prints accuracy vs gold "
        "when gold is given (ties split evenly, and with the seeded tie-break).")
    _add_input_opts(p)
    p.add_argument("--method", default="dawid-skene", choices=AGG_METHODS,
                   help="aggregator (default dawid-skene)")
    p.add_argument("--weights", default=None, metavar="FILE",
                   help="wmv: worker accuracies CSV (worker,accuracy; e.g. from `estimate`); "
                   "without it wmv estimates accuracies from --gold by cross-fitting")
    p.add_argument("--weighting", default="log-odds", choices=("log-odds", "linear"),
                   help="wmv weight of an accuracy w: logit(w)-logit(1/L) or L*w-1")
    p.add_argument("--folds", type=int, default=2, help="wmv cross-fitting folds (default 2)")
    p.add_argument("--ties", default="random", choices=("random", "first"),
                   help="tie-break: uniform among tied classes (seeded) or lowest class")
    p.add_argument("--seed", type=int, default=0, help="tie-break / fold seed (default 0)")
    p.add_argument("--tol", type=float, default=1e-6, help="EM: stop when no posterior "
                   "moves more than this (default 1e-6)")
    p.add_argument("--max-iter", type=int, default=100, help="EM iterations cap (default 100)")
    p.add_argument("--use-gold", action="store_true",
                   help="EM: clamp gold tasks to their gold label (accuracy is then not a "
                   "held-out figure)")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write task,label,confidence CSV")
    p.set_defaults(func=cmd_aggregate)

    p = cli.top.add_parser(
        "estimate", help="per-worker reliability from gold (Theorem 3) or from EM",
        description="Per-worker accuracy. With gold: counts, accuracy c/n, the unbiased "
        "variance w(1-w)/(n-1) and score G=(Lw-1)^2-L^2 var (Li & Liu Theorem 3). Without "
        "gold: the EM model's accuracy. -o writes the CSV other commands read as labeler "
        "accuracies.")
    _add_input_opts(p)
    p.add_argument("--method", default=None, choices=("gold", "one-coin", "dawid-skene"),
                   help="default: gold when gold is given, else dawid-skene")
    p.add_argument("--max-iter", type=int, default=100, help="EM iterations cap")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write worker,n,correct,accuracy,variance,score,source CSV")
    p.set_defaults(func=cmd_estimate)


def _add_input_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("labels", metavar="LABELS", help="label table file, or dataset:NAME")
    p.add_argument("--gold", default=None, metavar="GOLD", help="gold table (task,label)")
    p.add_argument("--duplicates", default=None, choices=("error", "first", "last", "all"),
                   help="repeated (worker, task) rows (default: error for files, first for "
                   "datasets)")
    p.add_argument("--columns", default=None, metavar="task=C,worker=C,label=C",
                   help="label column names (or 0-based positions)")
    p.add_argument("--gold-columns", default=None, metavar="task=C,label=C",
                   help="gold column names (or positions)")
    p.add_argument("--sep", default=None, help="field separator (default: sniff)")
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
        out[k] = int(v) if v.isdigit() else v
    return out


def load_inputs(args: argparse.Namespace):
    """(table, gold or None, source name) from LABELS / dataset:NAME and --gold."""
    from ..crowd.datasets import load_labels_and_gold

    sep = "\t" if args.sep in ("\\t", "tab") else args.sep
    return load_labels_and_gold(
        args.labels, args.gold, duplicates=args.duplicates, sep=sep, header=not args.no_header,
        columns=_parse_columns(args.columns, "--columns"),
        gold_columns=_parse_columns(args.gold_columns, "--gold-columns"))


def cmd_aggregate(args: argparse.Namespace) -> int:
    from ..cli import emit_json, format_table
    from ..crowd import aggregate as agg
    from ..crowd.reliability import accuracy_vector, cross_fitted_weighted_vote, read_accuracies

    table, gold, source = load_inputs(args)
    clamp = gold if args.use_gold else None
    if args.use_gold and gold is None:
        raise InputError("--use-gold", "a gold table (--gold or dataset:NAME)", "none")
    t0 = time.perf_counter()
    if args.method == "mv":
        res = agg.majority_vote(table, ties=args.ties, seed=args.seed)
    elif args.method == "wmv":
        if args.weights:
            acc = accuracy_vector(table, read_accuracies(args.weights))
            w = agg.weights_from_accuracy(acc, table.n_classes, args.weighting)
            res = agg.weighted_majority_vote(table, w, ties=args.ties, seed=args.seed)
        elif gold is not None:
            res = cross_fitted_weighted_vote(table, gold, scheme=args.weighting,
                                             folds=args.folds, ties=args.ties, seed=args.seed)
        else:
            raise InputError("--method wmv", "--weights FILE or gold to estimate weights from",
                             "neither")
    else:
        f = agg.one_coin_em if args.method == "one-coin" else agg.dawid_skene
        res = f(table, gold=clamp, tol=args.tol, max_iter=args.max_iter, ties=args.ties,
                seed=args.seed)
    elapsed = time.perf_counter() - t0
    out = {"labels": source, "method": args.method, "n_tasks": table.n_tasks,
           "n_workers": table.n_workers, "n_labels": table.n_labels,
           "n_classes": table.n_classes, "classes": table.classes.tolist(),
           "iterations": res.iterations, "converged": res.converged, "time_s": elapsed,
           "seed": args.seed, "ties": args.ties}
    if gold is not None:
        out.update(gold_tasks=gold.n, accuracy=agg.accuracy(res, gold),
                   accuracy_tie_broken=agg.accuracy(res, gold, ties="labels"),
                   gold_clamped=bool(args.use_gold))
    if args.output:
        _write_labels(args.output, table, res)
        out["output"] = args.output
    if args.json:
        emit_json(out)
        return 0
    keys = ["method", "n_tasks", "n_workers", "n_labels", "n_classes", "iterations",
            "converged", "time_s"]
    if gold is not None:
        keys += ["gold_tasks", "accuracy", "accuracy_tie_broken"]
    print(f"aggregate {source}")
    print(format_table([{k: out[k] for k in keys}], keys))
    if gold is not None:
        print("accuracy: ties split evenly; accuracy_tie_broken: with the seeded tie-break")
    if args.output:
        print(f"wrote {args.output}")
    return 0


def _write_labels(path: str, table, res) -> None:
    conf = res.posteriors[np.arange(table.n_tasks), res.labels]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task", "label", "confidence"])
        for t, lab, c in zip(table.task_ids.tolist(), res.label_values(table).tolist(),
                             conf.tolist(), strict=True):
            w.writerow([t, lab, f"{c:.6g}"])


def cmd_estimate(args: argparse.Namespace) -> int:
    from ..cli import emit_json, format_table
    from ..crowd import aggregate as agg
    from ..crowd.reliability import from_em, from_gold, write_reliability

    table, gold, source = load_inputs(args)
    method = args.method or ("gold" if gold is not None else "dawid-skene")
    if method == "gold":
        if gold is None:
            raise InputError("--method gold", "a gold table (--gold or dataset:NAME)", "none")
        rel = from_gold(table, gold)
    else:
        f = agg.one_coin_em if method == "one-coin" else agg.dawid_skene
        rel = from_em(table, f(table, max_iter=args.max_iter))
    rows = rel.to_rows()
    if args.output:
        write_reliability(rel, args.output)
    if args.json:
        emit_json({"labels": source, "source": rel.source, "n_classes": rel.n_classes,
                   "n_workers": table.n_workers, "workers": rows,
                   **({"output": args.output} if args.output else {})})
        return 0
    print(f"estimate {source}: {len(rows)} workers, reliability from {rel.source}")
    print(format_table(rows, ["worker", "n", "correct", "accuracy", "variance", "score"]))
    if args.output:
        print(f"wrote {Path(args.output)}")
    return 0
