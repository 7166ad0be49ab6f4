"""CLI of Opt-KG (paper 002): `crowdopt simulate optkg`, `crowdopt replay optkg`,
`crowdopt reproduce optkg`."""

from __future__ import annotations

import argparse

import numpy as np

from ..cliargs import add_alias, add_batch_flags, add_runs
from ..errors import InputError

HELP_POLICIES = ("homogeneous: optkg, kg, pessimistic, cvar, nlu, uniform, gittins, "
                 "gittins-finite; heterogeneous: optkg, kg, uniform; suffix -det = "
                 "deterministic ties (smallest index)")


def _floats(text: str, field: str, n: int | None = 2) -> list[float]:
    from ..validate import real_text

    vals = [real_text(x, f"{field} item {k + 1}") for k, x in enumerate(str(text).split(","))
            if x.strip()]
    if n is not None and len(vals) != n:
        raise InputError(field, f"{n} comma-separated numbers", text)
    return vals


def _beta(text: str, field: str) -> list[float]:
    """a,b of a Beta distribution: two numbers > 0."""
    vals = _floats(text, field)
    if min(vals) <= 0:
        raise InputError(field, "two positive numbers a,b (Beta parameters)", text)
    return vals


def _prior(text: str, field: str):
    if text in ("uniform", "true"):
        return text
    if text == "jeffreys":
        return [0.5, 0.5]
    return _beta(text, field)


MAX_BUDGETS = 10_000  # budgets of one --budgets range (each is a row of the results)


def _budget_list(text: str, K: int) -> list[int]:
    """'2K:20K:1K' (multiples of K), '100,200' or a single number."""
    from ..validate import MAX_INT, integer_text, real_text

    def one(tok: str) -> int:
        tok = tok.strip()
        try:
            if tok.upper().endswith("K"):
                return integer_text(round(real_text(tok[:-1], "--budgets") * K), "--budgets",
                                    hi=MAX_INT)
            return integer_text(tok, "--budgets", hi=MAX_INT)
        except InputError:
            raise InputError("--budgets", "integers (<= 2^53), nK, or START:STOP:STEP",
                             text) from None
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise InputError("--budgets", "START:STOP:STEP", text)
        a, b, s = (one(p) for p in parts)
        if s <= 0 or a <= 0 or b < a:
            raise InputError("--budgets", "0 < START <= STOP and STEP > 0", text)
        if (b - a) // s >= MAX_BUDGETS:
            raise InputError("--budgets", f"at most {MAX_BUDGETS} budgets", text)
        return list(range(a, b + 1, s))
    out = [one(t) for t in text.split(",") if t.strip()]
    if not out or min(out) < 1:
        raise InputError("--budgets", "positive budgets", text)
    return out


def cmd_simulate(args: argparse.Namespace) -> int:
    """`crowdopt simulate optkg`: Opt-KG budget allocation on synthetic data."""
    from ..cli import emit_json, format_table
    from ..experiments.executor import Task, run_tasks
    from ..policies.allocation import parse_policy
    from ..sim.optkg_sim import NON_ADAPTIVE, mean_curves
    from ..validate import labels_for_tasks

    if args.K < 1 or args.M < 1 or args.runs < 1:
        raise InputError("--K/--M/--runs", "positive integers", (args.K, args.M, args.runs))
    budgets = _budget_list(args.budgets, args.K)
    theta = _beta(args.theta_dist, "--theta-dist")
    if args.model == "homogeneous":
        pols = args.policies or ["optkg", "uniform", "kg", "nlu"]
        params = {"theta_dist": theta, "K": args.K, "budgets": budgets, "policies": pols,
                  "prior": _prior(args.prior, "--prior"), "alpha": args.alpha}
        fn = "crowdopt.sim.optkg_sim:homogeneous_replication"
    else:
        pols = args.policies or ["optkg", "uniform", "kg"]
        if any(parse_policy(p)[0] in NON_ADAPTIVE for p in pols):  # KOS: every task up front
            for t in budgets:
                labels_for_tasks(t, "--budgets", args.K)
        params = {"theta_dist": theta, "rho_dist": _beta(args.rho_dist, "--rho-dist"),
                  "K": args.K, "M": args.M, "budgets": budgets, "policies": pols,
                  "prior": _prior(args.prior, "--prior"),
                  "worker_prior": _prior(args.worker_prior, "--worker-prior")}
        fn = "crowdopt.sim.optkg_sim:heterogeneous_replication"
    tasks = [Task(fn, params, seed=args.seed + r) for r in range(args.runs)]
    quiet = args.json or args.quiet
    from ..cliargs import check_batch_args

    check_batch_args(args, args.output)
    results_path = f"{args.output}/results.jsonl" if args.output else None
    recs = run_tasks(tasks, jobs=args.jobs, results_path=results_path, show_progress=not quiet,
                     desc="optkg simulate", resume=args.resume, fresh=args.fresh,
                     scheduler=args.scheduler)
    errs = [r["error"] for r in recs if r.get("error")]
    if errs:
        raise InputError("simulation", "replications without error", errs[0])
    cur = mean_curves(recs)
    out = {"model": args.model, "params": params, "seeds": [t.seed for t in tasks],
           "budgets": cur["budgets"], "accuracy": cur["mean"], "se": cur["se"]}
    if args.json:
        emit_json(out)
    else:
        rows = [{"T": t, **{p: cur["mean"][p][k] for p in cur["mean"]}}
                for k, t in enumerate(cur["budgets"])]
        print(f"mean accuracy over {args.runs} replications ({args.model}, K={args.K})")
        print(format_table(rows, ["T", *cur["mean"]]))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    """`crowdopt replay optkg`: Opt-KG or a baseline on a binary label table."""
    from ..cli import coverage, coverage_text, emit_json, format_table, warn_coverage
    from ..sim.optkg_replay import load_table, replay

    cols = {k: v for k, v in (("task", args.task_col), ("worker", args.worker_col),
                              ("label", args.label_col)) if v}
    gcols = {k: v for k, v in (("task", args.gold_task_col), ("label", args.gold_label_col))
             if v}
    table, gold = load_table(args.labels, args.gold, cols, gcols)
    if args.budget is not None and args.budget < 1:
        raise InputError("--budget", "an integer >= 1 (labels to buy)", args.budget)
    budgets = [args.budget] if args.budget is not None else [table.n_labels]
    if args.runs < 1:
        raise InputError("--runs", "an integer >= 1", args.runs)
    rows, accs = [], []
    for r in range(args.runs):
        res = replay(table, gold, policy=args.policy, budgets=budgets, mode=args.model,
                     prior=_floats(args.prior, "--prior"),
                     worker_prior=_floats(args.worker_prior, "--worker-prior"),
                     alpha=args.alpha, seed=args.seed + r)
        accs.append(res["accuracy"][-1])
        rows.append({"seed": args.seed + r, "budget": budgets[-1], "accuracy": accs[-1],
                     "gold_items_labelled": res["gold_items_labelled"][-1],
                     "coverage": res["gold_items_labelled"][-1] / res["gold_items"],
                     "time_s": res["time_s"][-1]})
    cov = coverage(float(np.mean([r["gold_items_labelled"] for r in rows])), res["gold_items"])
    out = {"policy": args.policy, "mode": args.model, "budget": budgets[-1],
           "items": table.n_tasks, "labels": table.n_labels,
           "accuracy": float(np.mean(accs)), "coverage": cov, "runs": rows}
    warn_coverage("replay optkg", cov, "only these gold items got a bought label; the others "
                  "are decided by the prior alone (raise --budget)")
    if args.json:
        emit_json(out)
    else:
        print(f"{args.policy} ({args.model}) on {table.n_tasks} items, {table.n_labels} labels; "
              f"coverage: share of the {res['gold_items']} gold items with a bought label")
        print(format_table(rows, ["seed", "budget", "accuracy", "coverage", "time_s"]))
        if args.runs > 1:
            print(f"mean accuracy {out['accuracy']:.4f} ({coverage_text(cov)})")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    """`crowdopt reproduce optkg`: paper 002's report and plots."""
    from ..cli import emit_json
    from ..experiments.optkg_repro import reproduce

    only = None
    if args.only is not None:
        only = [x.strip() for x in args.only.split(",") if x.strip()]
        if not only:
            raise InputError("--only", "a comma list of sections (dp,fig45,fig10,fig11,replay,"
                             "table4)", args.only)
    summary = reproduce(args.output, scale=args.scale, jobs=args.jobs, seed=args.seed,
                        show_progress=not (args.json or args.quiet), resume=args.resume,
                        fresh=args.fresh, scheduler=args.scheduler,
                        only=only, sim_gittins=args.sim_gittins)
    if args.json:
        emit_json(summary)
    else:
        print(f"report: {summary['report']}")
        peak = summary.get("rte_het_optkg_peak")
        if peak:
            print(f"RTE heterogeneous Opt-KG peak {peak['accuracy']:.4f} at T = {peak['T']} "
                  f"(paper 0.9205 at T = 3200)")
        if summary["failed_tasks"]:
            print(f"{len(summary['failed_tasks'])} task(s) failed; see the report")
    return 0


def register(cli) -> None:
    """Add the Opt-KG simulate, replay and reproduce commands to the CLI."""
    p = cli.simulate.add_parser("optkg", help="Opt-KG budget allocation on synthetic data "
                                "(paper 002, Sec. 8.1)",
                                description="Accuracy vs budget of allocation policies. "
                                + HELP_POLICIES)
    p.add_argument("--model", choices=["homogeneous", "heterogeneous"], default="homogeneous",
                   help="worker model: one crowd (homogeneous) or per-worker reliability (heterogeneous)")
    p.add_argument("--theta-dist", default="1,1", help="generating Beta of theta (a,b)")
    p.add_argument("--rho-dist", default="4,1", help="generating Beta of worker reliability")
    p.add_argument("--K", type=int, default=50, help="instances")
    p.add_argument("--M", type=int, default=100, help="workers (heterogeneous)")
    p.add_argument("--budgets", default="2K:20K:2K",
                   help="budgets: START:STOP:STEP or a list; nK = n times K")
    p.add_argument("--policies", nargs="+", default=None, help=HELP_POLICIES)
    p.add_argument("--prior", default="uniform", help="uniform | true | jeffreys | a,b")
    p.add_argument("--worker-prior", default="4,1", help="true | c,d")
    p.add_argument("--alpha", type=float, default=0.5, help="CVaR level of the cvar policy")
    add_runs(p, 20, "replications, run r with seed + r (default 20)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of replication 0 (run r uses seed + r)")
    p.add_argument("--jobs", type=int, default=1, help="parallel worker processes (default 1)")
    add_batch_flags(p)
    p.add_argument("-o", "--output", default=None, metavar="DIR", help="output DIRECTORY: keep results.jsonl there")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_simulate)

    p = cli.replay.add_parser("optkg", help="replay Opt-KG or a baseline on a binary label "
                              "table (paper 002, Sec. 8.2)",
                              description="Each query reveals a stored label of the item "
                              "(without replacement) or of the (item, worker) pair. "
                              + HELP_POLICIES)
    p.add_argument("labels", metavar="LABELS",
                   help="label file (task,worker,label) or a data-set name such as rte")
    p.add_argument("--gold", default=None,
                   help="gold file (task,label) or dataset:NAME; optional for names")
    p.add_argument("--budget", type=int, default=None, help="labels to buy (default all)")
    p.add_argument("--policy", default="optkg", help=HELP_POLICIES)
    p.add_argument("--model", choices=["homogeneous", "heterogeneous"], default="homogeneous",
                   help="worker model: one crowd (homogeneous) or per-worker reliability")
    add_alias(p, "--mode", "model", choices=["homogeneous", "heterogeneous"])
    p.add_argument("--prior", default="1,1",
                   help="Beta prior a,b of each item's theta (default 1,1)")
    p.add_argument("--worker-prior", default="4,1",
                   help="Beta prior c,d of each worker's reliability (heterogeneous; default 4,1)")
    p.add_argument("--alpha", type=float, default=0.5,
                   help="CVaR level of the cvar policy (default 0.5)")
    add_runs(p, 1, "replications, run r with seed + r (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of run 0 (run r uses seed + r)")
    p.add_argument("--task-col", default=None,
                   help="column of LABELS holding the task (default: detected from the header)")
    p.add_argument("--worker-col", default=None,
                   help="column of LABELS holding the worker (default: detected from the header)")
    p.add_argument("--label-col", default=None,
                   help="column of LABELS holding the label (default: detected from the header)")
    p.add_argument("--gold-task-col", default=None,
                   help="column of GOLD holding the task (default: detected from the header)")
    p.add_argument("--gold-label-col", default=None,
                   help="column of GOLD holding the label (default: detected from the header)")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(func=cmd_replay)

    p = cli.reproduce.add_parser("optkg", help="paper 002 (Opt-KG): report.md + plots")
    p.add_argument("--scale", choices=["smoke", "paper"], default="smoke",
                   help="smoke: minutes, few replications; paper: the paper's replications")
    p.add_argument("-o", "--output", default="optkg-report", metavar="DIR",
                   help="output DIRECTORY for report.md, PNGs and results.jsonl (default optkg-report)")
    p.add_argument("--jobs", type=int, default=1, help="parallel worker processes (default 1)")
    p.add_argument("--seed", type=int, default=2013,
                   help="seed of the first replication (default 2013)")
    add_batch_flags(p)
    p.add_argument("--only", default=None, metavar="LIST",
                   help="comma-separated sections: dp,fig45,fig10,fig11,replay,table4 (default all)")
    p.add_argument("--sim-gittins", action=argparse.BooleanOptionalAction, default=None,
                   help="Gittins-Inf in the synthetic panels (default: paper scale only)")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_reproduce)
