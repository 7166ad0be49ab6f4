"""`crowdopt select` (choose workers from gold answers) and `crowdopt reproduce selection`.

select: n control items are drawn (seeded) from the gold items; every worker's reliability is
estimated from them (w_hat = c/n, paper 004 eq. 10), the selection problem (eq. 11, optional
costs and budget) is solved, and the other items are aggregated with the chosen workers by
WMV-linear (eq. 2), WMV-log (eq. 1, w_hat clipped to [1/(2n), 1-1/(2n)]) and MV. Accuracy is
measured on the gold items that were not control items (null when every gold item is control),
with its coverage: the share of them that a selected worker labelled (the others are ties).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from ..cliargs import add_batch_flags, add_runs
from ..errors import InputError

EXIT_OK, EXIT_INFEASIBLE, EXIT_TIME_LIMIT, EXIT_CERT = 0, 3, 4, 5


def read_costs(path: str, worker_ids: list) -> np.ndarray:
    """Integer cost per worker from a CSV/TSV `worker,cost` (header required; ids by text)."""
    from ..files import read_input
    from ..validate import integer_text, utf8_text

    p = Path(path)
    lines = [ln.strip() for ln in utf8_text(read_input(p, "--costs"), "--costs",
                                             p.name).splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        raise InputError("--costs", "a header `worker,cost` and one row per worker", "empty file")
    sep = "\t" if "\t" in lines[0] else ","
    head = [h.strip().lower() for h in lines[0].split(sep)]
    if "worker" not in head or "cost" not in head:
        raise InputError(f"{p.name}: header", "columns worker and cost", lines[0])
    iw, ic = head.index("worker"), head.index("cost")
    costs: dict[str, int] = {}
    for r, line in enumerate(lines[1:], start=2):
        cells = [c.strip() for c in line.split(sep)]
        if len(cells) <= max(iw, ic):
            raise InputError(f"{p.name}: row {r}", "a worker and a cost", line)
        costs[cells[iw]] = integer_text(cells[ic], f"{p.name}: row {r} cost", lo=0)
    missing = [w for w in worker_ids if str(w) not in costs]
    if missing:
        raise InputError(f"{p.name}", "a cost for every worker of the label table",
                         f"no cost for worker {missing[0]!r} ({len(missing)} missing)")
    return np.array([costs[str(w)] for w in worker_ids], dtype=np.int64)


def select_from_gold(table: Any, gold: Any, *, max_workers: int, n_control: int | None,
                     estimator: str = "unbiased", costs: np.ndarray | None = None,
                     budget: int | None = None, method: str = "fast",
                     time_limit: float | None = None, seed: int = 0) -> dict:
    """The whole `select` pipeline on a LabelTable and Gold; returns the JSON-ready result."""
    from ..api import run_method
    from ..cli import coverage
    from ..crowd.aggregate import accuracy, majority_vote, weighted_majority_vote
    from ..crowd.aggregate import weights_from_accuracy as weights
    from ..crowd.reliability import from_gold
    from ..problems import worker_select as P
    from ..problems.worker_select import SPEC
    from ..registry import RunOptions

    if gold.n == 0:
        raise InputError("--gold", "at least one gold item", "none")
    rng = np.random.default_rng(seed)
    if n_control is None or n_control >= gold.n:
        control = np.sort(gold.task)
    else:
        control = np.sort(rng.choice(gold.task, n_control, replace=False))
    rest = np.setdiff1d(gold.task, control)
    rel = from_gold(table, gold, tasks=control)
    need = 2 if estimator == "unbiased" else 1
    eligible = np.flatnonzero(rel.n >= need)
    if len(eligible) == 0:
        raise InputError("--gold", f"a worker with at least {need} answered control items",
                         "none", note="raise --n-control or use --estimator plugin")
    ids = [w if isinstance(w, int | str) else str(w) for w in table.worker_ids[eligible].tolist()]
    inst = P.make_instance(max_workers=max_workers, classes=table.n_classes,
                           w_hat=rel.accuracy[eligible], n=rel.n[eligible], estimator=estimator,
                           costs=None if costs is None else costs[eligible], budget=budget,
                           worker_ids=ids)
    # a kind ('exact') runs its first method that applies (one-line InputError when none does)
    res = run_method(SPEC, inst, SPEC.resolve(method, inst),
                     RunOptions.with_limit(time_limit, "--time-limit", seed=seed))
    out: dict[str, Any] = {
        "accuracy": None, "accuracies": {}, "status": res.status, "method": res.method,
        "algorithm": res.algorithm, "objective": res.objective, "bound": res.bound,
        "gap": res.gap, "time_s": res.time_s,
        "certificate": res.certificate.to_dict() if res.certificate is not None else None,
        "message": res.message, "estimator": estimator, "classes": table.n_classes,
        "max_workers": max_workers, "budget": budget, "seed": seed,
        "control_items": int(len(control)), "evaluation_items": int(len(rest)),
        "workers": table.n_workers, "eligible_workers": int(len(eligible)),
        "unscored_workers": _unscored(rel.n, need, estimator),
        "coverage": None, "selected": [], "size": 0}
    if res.solution is None:
        return out
    chosen = eligible[res.solution.selected]
    ev = res.evaluation
    out.update(size=int(len(chosen)), cost=ev.extra.get("cost"),
               error_bound=ev.extra["error_bound"],
               error_bound_rigorous=ev.extra["error_bound_rigorous"])
    out["selected"] = [{"worker": ids[j], "n": int(rel.n[i]), "correct": int(rel.correct[i]),
                        "w_hat": float(rel.accuracy[i]), "score": float(inst.scores[j]),
                        **({"cost": int(costs[i])} if costs is not None else {})}
                       for j, i in zip(res.solution.selected.tolist(), chosen.tolist(),
                                       strict=True)]
    if len(rest):
        main = table.subset(tasks=rest, workers=chosen)
        eval_gold = gold.subset(rest)
        n_ctrl = max(int(rel.n[chosen].min()), 1)
        w = np.where(np.isnan(rel.accuracy), 0.5, rel.accuracy)
        runs = {"wmv-linear": weighted_majority_vote(main, weights(w, table.n_classes, "linear"),
                                                     seed=seed),
                "wmv-log": weighted_majority_vote(main, weights(
                    w, table.n_classes, "log-odds", clip=1.0 / (2 * n_ctrl)), seed=seed),
                "mv": majority_vote(main, seed=seed)}
        out["accuracies"] = {k: accuracy(r, eval_gold) for k, r in runs.items()}
        out["accuracy"] = out["accuracies"]["wmv-linear"]
        covered = np.bincount(main.task, minlength=table.n_tasks)[rest] > 0
        out["evaluation_items_labelled"] = int(covered.sum())
        # what the accuracy rests on: an item no selected worker labelled is a coin flip
        out["coverage"] = coverage(int(covered.sum()), len(rest))
        if covered.any():
            on = gold.subset(rest[covered])
            out["accuracies_labelled"] = {k: accuracy(r, on) for k, r in runs.items()}
    return out


def _unscored(n: np.ndarray, need: int, estimator: str) -> dict:
    """How many workers could not be scored, and why (too few answered control items)."""
    none, few = int(np.sum(n == 0)), int(np.sum((n > 0) & (n < need)))
    reasons = {}
    if none:
        reasons["answered no control item"] = none
    if few:
        reasons[f"answered fewer than {need} control items (the {estimator} score needs "
                f"{need})"] = few
    return {"count": none + few, "reasons": reasons}



def cmd_select(args: argparse.Namespace) -> int:
    """`crowdopt select`: the best workers under a size (and cost) budget."""
    from ..cli import coverage_text, emit_json, fmt, format_table, warn_coverage
    from ..crowd.datasets import load_labels_and_gold
    from ..validate import integer

    table, gold, _ = load_labels_and_gold(args.labels, args.gold, duplicates=args.duplicates)
    if gold is None:
        raise InputError("--gold", "a gold table (task,label), or LABELS = dataset:NAME", None)
    K = integer(args.max_workers, "--max-workers", lo=1)
    if (args.costs is None) != (args.budget is None):
        raise InputError("--costs / --budget", "both or neither",
                         "only --costs" if args.costs else "only --budget")
    costs = read_costs(args.costs, table.worker_ids.tolist()) if args.costs else None
    budget = integer(args.budget, "--budget", lo=0) if args.budget is not None else None
    n_control = None if args.n_control == "all" else integer(
        _int_or_text(args.n_control), "--n-control", lo=1)
    if n_control is not None and n_control > gold.n:
        raise InputError("--n-control", f"at most the {gold.n} gold items ('all' uses every one)",
                         n_control)
    out = select_from_gold(table, gold, max_workers=K, n_control=n_control,
                           estimator=args.estimator, costs=costs, budget=budget,
                           method=args.method, time_limit=args.time_limit, seed=args.seed)
    warn_coverage("select", out["coverage"], "only these held-out items have a label from the "
                  "selected workers; the accuracy counts the others as ties (raise "
                  "--max-workers or --n-control)")
    if args.json or args.output:
        emit_json(out, args.output, stdout=args.json, force=args.force)
    if not args.json:
        why = "; ".join(f"{v} {k}" for k, v in out["unscored_workers"]["reasons"].items())
        print(f"crowdopt select: {out['eligible_workers']} of {out['workers']} workers scored on "
              f"{out['control_items']} control items ({out['estimator']} G, L = "
              f"{out['classes']}); {out['algorithm']}: {out['status']}"
              + (f"\nnot scored: {why}" if why else ""))
        if out["selected"]:
            cols = ["worker", "n", "correct", "w_hat", "score"] + (
                ["cost"] if costs is not None else [])
            print(format_table(out["selected"], cols))
            print(f"\n|S| = {out['size']} (cap K = {K}), F_hat = {fmt(out['objective'])}, "
                  f"Theorem 1 error bound {fmt(out['error_bound'])}"
                  + (f", cost {out['cost']} of {budget}" if costs is not None else ""))
        if out["accuracies"]:
            acc = ", ".join(f"{k} {v:.4f}" for k, v in out["accuracies"].items())
            print(f"accuracy on {out['evaluation_items']} held-out gold items "
                  f"({coverage_text(out['coverage'])}): {acc}")
            if out.get("accuracies_labelled"):
                acc = ", ".join(f"{k} {v:.4f}" for k, v in out["accuracies_labelled"].items())
                print(f"accuracy on the {out['coverage']['labelled']} labelled ones: {acc}")
        elif out["selected"]:
            print("accuracy: none (every gold item was a control item; see --n-control)")
    if out["status"] == "infeasible":
        return EXIT_INFEASIBLE
    if out["status"] == "time_limit":
        return EXIT_TIME_LIMIT
    if out["status"] == "error" or (out["certificate"] and out["certificate"]["failures"]):
        return EXIT_CERT
    return EXIT_OK


def _int_or_text(v: str) -> Any:
    try:
        return int(v)
    except ValueError:
        return v


def cmd_reproduce(args: argparse.Namespace) -> int:
    """`crowdopt reproduce selection`: paper 004 Figs. 1 and 4(b)."""
    from ..cli import emit_json
    from ..experiments.selection_repro import reproduce

    res = reproduce(args.output, scale=args.scale, jobs=args.jobs, seed=args.seed,
                    resume=args.resume, fresh=args.fresh,
                    scheduler=args.scheduler, show_progress=not (args.quiet or args.json),
                    sources=args.sources, trials=args.runs)
    if args.json:
        emit_json(res)
    else:
        print(f"wrote {res['report']} ({res['tasks']} trials, {res['failed']} failed)")
    return EXIT_OK if not res["failed"] else EXIT_CERT


def register(cli: Any) -> None:
    """Add `crowdopt select` and `crowdopt reproduce selection` to the CLI."""
    from ..cli import limit_seconds

    p = cli.top.add_parser(
        "select", help="choose workers from gold answers (paper 004), then aggregate",
        description=__doc__.split("\n\n")[1])
    p.add_argument("labels", metavar="LABELS", help="label table task,worker,label (CSV/TSV)")
    p.add_argument("--gold", default=None, metavar="GOLD",
                   help="gold table task,label, or dataset:NAME (optional with LABELS "
                   "dataset:NAME)")
    p.add_argument("--max-workers", required=True, type=int, metavar="K",
                   help="cap K on the number of selected workers")
    p.add_argument("--costs", default=None, metavar="FILE",
                   help="CSV worker,cost (integer costs; needs --budget)")
    p.add_argument("--budget", default=None, type=int, metavar="B", help="money budget")
    p.add_argument("--n-control", default="10", metavar="N|all",
                   help="gold items drawn as control questions (default 10, the paper's n); "
                        "the other gold items measure accuracy; 'all' uses every gold item")
    p.add_argument("--estimator", choices=("unbiased", "plugin"), default="unbiased",
                   help="score G: Theorem 3's unbiased one (default) or the plugin (eq. 9)")
    p.add_argument("--method", default="fast",
                   help="fast (Algorithm 1 / cost DP) | exact (formulation A) | an algorithm")
    p.add_argument("--time-limit", type=limit_seconds, default=None, metavar="S",
                   help="limit per exact solve (s)")
    p.add_argument("--duplicates", default=None, choices=("error", "first", "last", "all"),
                   help="repeated (worker, task) rows in LABELS (default: error for a file, "
                   "first for a data set)")
    p.add_argument("--seed", type=int, default=0, help="control-item draw and vote tie-breaks")
    p.add_argument("--json", action="store_true", help="print JSON (has `accuracy`)")
    p.add_argument("-o", "--output", default=None, metavar="FILE", help="also write the JSON document to this FILE")
    p.set_defaults(func=cmd_select)

    r = cli.reproduce.add_parser(
        "selection", help="paper 004 Figs. 1 and 4(b): worker selection vs budget K",
        description="Simulation of Fig. 1 (31 workers, w ~ Beta(2.3, 2), 1000 binary items, "
                    "K = 3..31, 10 control items) and the bluebirds K sweep; accuracy and "
                    "workers used vs K as PNG plots and a markdown table in DIR/report.md.")
    r.add_argument("--scale", choices=("smoke", "paper"), default="smoke",
                   help="smoke: 3 trials, K every 7; paper: 100 trials, every K")
    add_runs(r, None, "trials (default: the scale's)")
    r.add_argument("--sources", nargs="+", default=None,
                   choices=("sim", "bluebirds", "fig2a", "fig2b"),
                   help="sim = Fig. 1, bluebirds = Fig. 4(b), fig2a/fig2b = Fig. 2 sweeps over "
                   "n and a at K = 20 (default all)")
    r.add_argument("--jobs", type=int, default=1, help="parallel processes (0 = all cores)")
    r.add_argument("--seed", type=int, default=0, help="trial t uses seed + t")
    add_batch_flags(r)
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.add_argument("--json", action="store_true", help="print the summary as JSON")
    r.add_argument("-o", "--output", default="reproduce-selection", metavar="DIR",
                   help="output DIRECTORY for report.md, PNGs and results.jsonl (default reproduce-selection)")
    r.set_defaults(func=cmd_reproduce)
