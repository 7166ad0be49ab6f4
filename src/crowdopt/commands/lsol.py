"""`crowdopt simulate lsol`, `crowdopt replay lsol`, `crowdopt reproduce lsol` (paper 001).

simulate: LS_OL on simulated labelers, replications run through the executor; regret R(T) and
cost regret R_C(T) vs T, average reward; with -o DIR a report with a log-scale regret plot.
replay: LS_OL on a real label table (a file or a data set name such as bluebirds), buying labels
until each answer is confident; accuracy vs gold beside majority vote of all and the oracle set.
reproduce: the paper's Sec. 6 experiments and the replay grid (DIR/report.md + PNG plots).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from ..cliargs import add_batch_flags, add_runs
from ..errors import InputError
from ..validate import integer, labels_per_task, probability_array, real, real_text

EXIT_OK, EXIT_CERT = 0, 5


def _floats(text: str, field: str) -> list[float]:
    """Comma-separated finite numbers (validate.real_text: 'nan', 'inf', '1e400' refused)."""
    return [real_text(x, f"{field} item {k + 1}") for k, x in enumerate(text.split(","))
            if x.strip()]


def _sim_tasks(args: argparse.Namespace) -> list:
    from ..experiments.executor import Task

    M = args.M if args.M is not None else (len(args.p.split(",")) if args.p else 5)
    if args.p and args.M is not None and len(args.p.split(",")) != args.M:
        raise InputError("--p", f"{args.M} qualities (one per labeler, --M {args.M})", args.p)
    if M < 1:
        raise InputError("--M", "an integer >= 1", M)
    args.M = M
    if args.contexts == "finite" and args.types < 1:
        raise InputError("--types", "an integer >= 1 (finite task types)", args.types)
    if args.em_labels != "testers" and (args.estimator != "em" or args.contexts != "none"):
        raise InputError("--em-labels", "testers unless --estimator em without --contexts",
                         args.em_labels)
    if args.contexts != "none":
        return [Task("crowdopt.sim.lsol_sim:context_task",
                     {"kind": args.contexts, "M": args.M, "T": args.T, "n_types": args.types,
                      "G1": args.G1, "G2": args.G2, "estimator": args.estimator},
                     args.seed + r) for r in range(args.runs)]
    rules = ["mv", "wmv"] if args.rule == "both" else [args.rule]
    params: dict[str, Any] = {"M": args.M, "T": args.T, "population": args.population,
                              "p_low": args.p_low, "p_high": args.p_high, "rules": rules,
                              "estimator": args.estimator, "G1": args.G1, "G2": args.G2,
                              "schedule": args.schedule, "cost": args.cost,
                              "use_filter": args.filter}
    if args.em_labels != "testers":
        params["em_labels"] = args.em_labels
    if args.p:
        params["p"] = probability_array(_floats(args.p, "--p"), "--p", min_len=1).tolist()
        params["M"] = len(params["p"])
    real(args.p_low, "--p-low", lo=0.0, hi=1.0)
    real(args.p_high, "--p-high", lo=args.p_low, hi=1.0)
    return [Task("crowdopt.sim.lsol_sim:run_task", params, args.seed + r)
            for r in range(args.runs)]


def _summarize_runs(runs: list[dict]) -> dict:
    grid = runs[0]["checkpoints"]
    reg = np.array([r["regret"] for r in runs])
    out = {"checkpoints": grid, "regret_mean": reg.mean(axis=0).tolist(),
           "regret_sd": (reg.std(axis=0, ddof=1) if len(runs) > 1
                         else np.zeros(len(grid))).tolist(),
           "final_regret": float(reg[:, -1].mean()),
           "avg_reward": float(np.mean([r["avg_reward"] for r in runs])),
           "explore_steps": float(np.mean([r["explore_steps"] for r in runs]))}
    if "cost_regret" in runs[0]:
        cr = np.array([r["cost_regret"] for r in runs])
        out.update(cost_regret_mean=cr.mean(axis=0).tolist(),
                   final_cost_regret=float(cr[:, -1].mean()),
                   avg_reward_realized=float(np.mean([r["avg_reward_realized"] for r in runs])),
                   u_star=float(np.mean([r["u_star"] for r in runs])),
                   wrong_exploit_steps=float(np.mean([r["wrong_exploit_steps"] for r in runs])))
    if "final_pi" in runs[0]:  # per-run diagnostics, averaged
        ex = [r["exploit_reward"] for r in runs if r["exploit_reward"] is not None]
        out.update(final_pi=float(np.mean([r["final_pi"] for r in runs])),
                   final_is_opt=float(np.mean([r["final_is_opt"] for r in runs])),
                   kendall_tau=float(np.mean([r["kendall_tau"] for r in runs])),
                   exploit_reward=float(np.mean(ex)) if ex else None,
                   explore_loss=float(np.mean([r["explore_loss"] for r in runs])),
                   exploit_loss=float(np.mean([r["exploit_loss"] for r in runs])))
        fp = [r["final_pi"] for r in runs]
        out["final_pi_sd"] = float(np.std(fp, ddof=1)) if len(fp) > 1 else 0.0
        out["reversed"] = float(np.mean([r["kendall_tau"] < 0 for r in runs]))
    if "final_pi_ceiling" in runs[0]:  # what the labels allow (orientation limit)
        for k in ("wrong_orientation_least", "final_pi_ceiling", "wrong_orientation_least_all",
                  "final_pi_ceiling_all", "final_pi_truth_oriented", "final_pi_truth_labels"):
            out[k] = float(np.mean([r[k] for r in runs]))
    return out


def cmd_simulate(args: argparse.Namespace) -> int:
    """`crowdopt simulate lsol`: LS_OL on simulated labelers."""
    from ..cli import emit_json, format_table
    from ..experiments.executor import run_tasks

    tasks = _sim_tasks(args)  # validates --M, --p, --types first
    if args.runs < 1 or args.T < 1:
        raise InputError("--runs/--T", "positive integers", (args.runs, args.T))
    out_dir = Path(args.output) if args.output else None
    from ..cliargs import check_batch_args

    check_batch_args(args, out_dir)
    records = run_tasks(tasks, jobs=args.jobs,
                        results_path=out_dir / "results.jsonl" if out_dir else None,
                        show_progress=not (args.quiet or args.json), desc="lsol runs",
                        resume=args.resume, fresh=args.fresh, scheduler=args.scheduler)
    bad = [r for r in records if r.get("error")]
    if bad and bad[0]["error"].startswith("InputError: "):
        raise InputError("simulate lsol", "valid parameters",
                         bad[0]["error"][len("InputError: "):])
    ok = [r["result"] for r in records if not r.get("error")]
    if not ok:
        raise InputError("simulate lsol", "at least one successful run", bad[0]["error"])
    doc: dict[str, Any] = {"target": "lsol", "runs": len(ok), "failed": len(bad),
                           "params": tasks[0].params, "seeds": [t.seed for t in tasks]}
    if args.contexts != "none":
        doc["results"] = {"context": _summarize_runs(ok)}
    else:
        doc["results"] = {r: _summarize_runs([x[r] for x in ok]) for r in tasks[0].params["rules"]}
        doc["pi_full_mv"] = float(np.mean([x["pi_full_mv"] for x in ok]))
    if out_dir:
        doc["report"] = str(_sim_report(out_dir, doc))
    if args.json:
        emit_json(doc)
        return EXIT_OK if not bad else EXIT_CERT
    rows = []
    for name, s in doc["results"].items():
        grid = s["checkpoints"]
        for T in sorted({g for g in grid if g in (10, 100, 1000, 10000, 100000)} | {grid[-1]}):
            i = grid.index(T)
            rows.append({"rule": name, "T": T, "R(T)": s["regret_mean"][i],
                         "sd": s["regret_sd"][i],
                         "R_C(T)": s.get("cost_regret_mean", [None] * len(grid))[i],
                         "R/log^2 T": s["regret_mean"][i] / max(np.log(T), 1e-9) ** 2})
    print(f"LS_OL simulation: {len(ok)} runs ({len(bad)} failed)")
    print(format_table(rows, ["rule", "T", "R(T)", "sd", "R_C(T)", "R/log^2 T"]))
    for name, s in doc["results"].items():
        print(f"{name}: average reward {s['avg_reward']:.4f}, exploration steps "
              f"{s['explore_steps']:.1f}" + (f", oracle U(S*) {s['u_star']:.4f}"
                                             if "u_star" in s else ""))
        if "final_pi" in s:
            print(f"{name}: final set pi(S_T) {s['final_pi']:.4f}, ends with S* in "
                  f"{s['final_is_opt']:.0%} of runs, Kendall tau {s['kendall_tau']:.3f}, "
                  f"regret/T {s['explore_loss']:.4f} exploration + {s['exploit_loss']:.4f} "
                  "estimation")
    if "report" in doc:
        print(f"wrote {doc['report']}")
    return EXIT_OK if not bad else EXIT_CERT


def _sim_report(out_dir: Path, doc: dict) -> Path:
    from ..experiments.report import Report, line_plot

    rep = Report(out_dir, "LS_OL simulation", seeds=doc["seeds"])
    rep.text(f"Parameters: `{doc['params']}`; {doc['runs']} runs.")
    series, errors = {}, {}
    for name, s in doc["results"].items():
        series[f"R(T) {name}"] = (s["checkpoints"], s["regret_mean"])
        errors[f"R(T) {name}"] = s["regret_sd"]
        if "cost_regret_mean" in s:
            series[f"R_C(T) {name}"] = (s["checkpoints"], s["cost_regret_mean"])
    rep.figure(line_plot(series, xlabel="T", ylabel="regret (mean over runs)", logx=True),
               "regret", "Regret and cost regret vs T (log-scale T)")
    rows = [{"rule": n, "final R(T)": s["final_regret"], "avg reward": s["avg_reward"],
             "explore steps": s["explore_steps"], "final pi(S_T)": s.get("final_pi"),
             "ends with S*": s.get("final_is_opt"), "Kendall tau": s.get("kendall_tau")}
            for n, s in doc["results"].items()]
    rep.table("Summary", rows)
    return rep.write()


def cmd_replay(args: argparse.Namespace) -> int:
    """`crowdopt replay lsol`: LS_OL on a real label table."""
    from ..cli import coverage, emit_json, format_table, warn_coverage
    from ..crowd.datasets import dataset_name, list_datasets
    from ..experiments.executor import Task, run_tasks
    from ..sim.lsol_replay import REPLAY_DEFAULTS

    for flag, value in (("--confidence", args.confidence), ("--min-labels", args.min_labels),
                        ("--budget", args.budget)):  # sequential's own: never silently ignored
        if value is not None and args.exploit != "sequential":
            raise InputError(flag, "only with --exploit sequential", value)
    if args.confidence is None:
        args.confidence = REPLAY_DEFAULTS["confidence"]
    if args.min_labels is None:
        args.min_labels = REPLAY_DEFAULTS["min_labels"]
    real(args.confidence, "--confidence", lo=0.0, hi=1.0)
    integer(args.min_labels, "--min-labels", lo=1)
    if args.budget is not None:
        labels_per_task(args.budget, "--budget")
    params: dict[str, Any] = {"rule": args.rule, "estimator": args.estimator, "G1": args.G1,
                              "cost_weight": args.price, "prior": args.prior,
                              "use_filter": args.filter, "order": args.order,
                              "exploit": args.exploit, "confidence": args.confidence,
                              "min_labels": args.min_labels, "budget": args.budget}
    name = dataset_name(args.labels)
    if name is not None:
        if args.gold:
            raise InputError("--gold", "no gold file with a named data set", args.gold)
        params["dataset"] = name
        from ..datapath import require_sets

        require_sets([name], progress=not (args.quiet or args.json))  # once, not per run
    elif Path(args.labels).is_file():
        params.update(labels=args.labels, gold=args.gold, duplicates=args.duplicates)
    else:
        raise InputError("LABELS", "a label table file or a data set name ("
                         + ", ".join(list_datasets()) + ")", args.labels)
    runs = args.runs if args.runs is not None else (1 if args.order == "file" else 10)
    if runs < 1:
        raise InputError("--runs", "an integer >= 1", runs)
    if args.order == "file" and runs > 1:  # every run would replay the same arrival order
        raise InputError("--runs", "1 with --order file (the file's order makes every run "
                         "identical; drop --order file for seeded shuffles)", runs)
    tasks = [Task("crowdopt.sim.lsol_replay:replay_task", params, args.seed + r)
             for r in range(runs)]
    records = run_tasks(tasks, jobs=args.jobs, show_progress=not (args.quiet or args.json),
                        desc="replays")
    bad = [r for r in records if r.get("error")]
    if bad:
        err = bad[0]["error"]
        if err.startswith(("InputError: ", "DataError: ")):  # the run's own line, whole
            exc = InputError("replay", "valid input")
            exc.args = (err.partition(": ")[2],)
            raise exc
        raise InputError("replay", "a run without error", err)
    res = [r["result"] for r in records]
    first = res[0]
    acc = [r["accuracy"] for r in res if r["accuracy"] is not None]
    doc = {"policy": "lsol", "params": params, "runs": len(res), "seeds": [t.seed for t in tasks],
           "accuracy": float(np.mean(acc)) if acc else None,
           "accuracy_sd": float(np.std(acc, ddof=1)) if len(acc) > 1 else None,
           "coverage": coverage(float(np.mean([r["gold_tasks_labelled"] for r in res])),
                                first["gold_tasks"]),
           "labels_spent": float(np.mean([r["labels_spent"] for r in res])),
           "labels_per_task": float(np.mean([r["labels_per_task"] for r in res])),
           "budget": first["budget"],  # sequential: labels per task the runs were held to
           "tasks": first["tasks"], "workers": first["workers"],
           "mv_all": first.get("mv_all"), "oracle": first.get("oracle"),
           "per_run": [{k: r[k] for k in ("accuracy", "gold_tasks_labelled", "labels_spent",
                                          "testers", "selected", "removed")} for r in res],
           "curve": first["curve"]}
    if doc["accuracy"] is not None:
        warn_coverage("replay lsol", doc["coverage"], "only these gold tasks got a label from "
                      "LS_OL's workers; the others are guesses")
    if args.json or args.output:
        emit_json(doc, args.output, stdout=args.json, force=args.force)
    if not args.json:
        rows = [{"method": "LS_OL", "accuracy": doc["accuracy"],
                 "coverage": doc["coverage"]["fraction"],
                 "labels_per_task": doc["labels_per_task"], "runs": len(res)}]
        if doc["mv_all"]:
            rows.append({"method": "majority vote of all", **_pick(doc["mv_all"], first),
                         "runs": 1})
        if doc["oracle"]:
            rows.append({"method": f"oracle best set (k={doc['oracle']['k']})",
                         **_pick(doc["oracle"], first), "runs": 1})
        print(f"LS_OL replay: {first['tasks']} tasks, {first['workers']} workers, "
              f"{first['gold_tasks']} with gold (coverage: share of those that got a label)")
        print(format_table(rows, ["method", "accuracy", "coverage", "labels_per_task", "runs"]))
        print(f"final set (run 1): {len(first['selected'])} workers"
              + (f"; removed {first['removed']}" if first["removed"] else ""))
    return EXIT_OK


def _pick(b: dict, run: dict) -> dict:
    return {"accuracy": b["accuracy"], "labels_per_task": b["labels_per_task"],
            "coverage": b["gold_tasks_labelled"] / run["gold_tasks"]}


def cmd_reproduce(args: argparse.Namespace) -> int:
    """`crowdopt reproduce lsol`: paper 001 Sec. 6 and the real-data replay."""
    from ..cli import emit_json
    from ..experiments.lsol_repro import reproduce

    lo, hi = _floats(args.quality, "--quality") if args.quality else (0.0, 1.0)
    res = reproduce(args.output, scale=args.scale, parts=args.parts, jobs=args.jobs,
                    seed=args.seed, resume=args.resume, fresh=args.fresh,
                    scheduler=args.scheduler,
                    show_progress=not (args.quiet or args.json), p_low=lo, p_high=hi,
                    population=args.population, estimators=args.estimators,
                    em_labels=args.em_labels)
    if args.json:
        emit_json(res)
    else:
        print(f"wrote {res['report']} ({res['tasks']} tasks, {res['failed']} failed)")
    return EXIT_OK if not res["failed"] else EXIT_CERT


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", type=int, default=1, help="parallel processes (default 1)")
    p.add_argument("--seed", type=int, default=0, help="run r uses seed + r")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print JSON")


ESTIMATOR_HELP = ("quality estimate: first (the paper: agreement of each tester's first labels "
                  "with its majority), pooled (agreement of all repeated labels), em (one-coin "
                  "EM on all tester labels, spectral start; default em)")
EM_LABELS_HELP = ("labels the em estimator fits: testers (the tester labels, default) or all "
                  "(also every label bought on exploitation steps)")


def register(cli: Any) -> None:
    """Add the LS_OL simulate, replay and reproduce commands to the CLI."""
    from ..policies.lsol_options import DEFAULT_ESTIMATOR, EM_LABELS, ESTIMATORS
    from ..sim.lsol_replay import EXPLOITS, REPLAY_DEFAULTS, REPLAY_ESTIMATORS
    from ..sim.lsol_sim import POPULATIONS

    doc = __doc__.split("\n\n")[1].splitlines()
    s = cli.simulate.add_parser("lsol", help="LS_OL online labeler selection (paper 001)",
                                description=doc[0] + " " + doc[1])
    s.add_argument("--M", type=int, default=None,
                   help="labelers (default 5, or the number of --p qualities)")
    s.add_argument("--T", type=int, default=2000, help="steps per run (default 2000)")
    add_runs(s, 20, "replications, run r with seed + r (default 20)")
    s.add_argument("--population", choices=POPULATIONS, default="table1",
                   help="qualities: table1 (Table 1's five, default), uniform U(p-low, p-high), "
                   "uniform_good (conditioned on mean p > 1/2), spammers")
    s.add_argument("--p-low", type=float, default=0.6,
                   help="lowest labeler quality drawn (default 0.6)")
    s.add_argument("--p-high", type=float, default=1.0,
                   help="highest labeler quality drawn (default 1.0)")
    s.add_argument("--p", default=None, metavar="P1,P2,...", help="fixed qualities")
    s.add_argument("--rule", choices=("mv", "wmv", "both"), default="mv",
                   help="aggregation of the chosen subset: mv, wmv (weighted) or both (default mv)")
    s.add_argument("--estimator", choices=ESTIMATORS, default=DEFAULT_ESTIMATOR,
                   help=ESTIMATOR_HELP)
    s.add_argument("--em-labels", choices=EM_LABELS, default="testers", help=EM_LABELS_HELP)
    s.add_argument("--G1", type=float, default=2.0, help="D1(t) = G1 log t (default 2)")
    s.add_argument("--G2", type=float, default=2.0, help="D2(t) = G2 log t (default 2)")
    s.add_argument("--schedule", choices=("log", "param_free"), default="log",
                   help="exploration schedule: log (D(t) = G log t) or param_free (default log)")
    s.add_argument("--cost", type=float, default=0.02, help="cost per label (default 0.02)")
    s.add_argument("--filter", action="store_true", help="disagreement filter (Sec. 3.5.3)")
    s.add_argument("--contexts", choices=("none", "finite", "continuous"), default="none",
                   help="task types (Sec. 5); uses the pooled/first estimator given")
    s.add_argument("--types", type=int, default=3, help="finite task types (default 3)")
    s.add_argument("-o", "--output", default=None, metavar="DIR",
                   help="output DIRECTORY: results.jsonl, report.md and the regret plot")
    _common(s)
    add_batch_flags(s)
    s.set_defaults(func=cmd_simulate)

    r = cli.replay.add_parser("lsol", help="LS_OL on a real label table",
                              description=doc[2] + " " + doc[3])
    r.add_argument("labels", metavar="LABELS", help="label table file, or a data set name")
    r.add_argument("--gold", default=None, metavar="GOLD",
                   help="gold table task,label, or dataset:NAME")
    r.add_argument("--rule", choices=("mv", "wmv"), default="mv",
                   help="set: aggregation of the chosen subset: mv or wmv (weighted; default "
                   "mv)")
    r.add_argument("--estimator", choices=REPLAY_ESTIMATORS,
                   default=REPLAY_DEFAULTS["estimator"],
                   help=ESTIMATOR_HELP.replace(
                       "; default em)", "), answers (agreement of every label bought, testers "
                       "and exploitation steps, with the vote of the task's other bought "
                       "labels; default answers)"))
    r.add_argument("--exploit", choices=EXPLOITS, default=REPLAY_DEFAULTS["exploit"],
                   help="exploitation step: set (the paper: query S_t, topped up by p_hat) "
                   "or sequential (default: buy from the task's workers in decreasing p_hat "
                   "until the posterior of the answer reaches --confidence, within --budget; "
                   "answer: the posterior's mode)")
    r.add_argument("--confidence", type=float, default=None,
                   help="sequential: posterior probability of the answer that stops buying "
                   "(default 0.9999)")
    r.add_argument("--min-labels", type=int, default=None,
                   help="sequential: labels bought before the posterior may stop (default 3)")
    r.add_argument("--budget", type=float, default=None,
                   help="sequential: labels per task on average over the run, at least 1 "
                   "(every task is answered; default: a third of the table's labels per task, "
                   "at least 1)")
    r.add_argument("--G1", type=float, default=2.0, help="testers D1(t) = G1 log t")
    r.add_argument("--price", type=float, default=0.01,
                   help="set: lambda per label in pi(S) - lambda |S| (default 0.01; 0 = paper)")
    r.add_argument("--prior", type=float, default=1.0, help="Beta pseudo-counts on p_hat")
    r.add_argument("--filter", action="store_true", help="disagreement filter (Sec. 3.5.3)")
    r.add_argument("--order", choices=("file", "shuffle"), default="shuffle",
                   help="task arrival order: shuffle (default; run r draws its own order from "
                   "seed + r, so replicates differ) or file (the file's order; one run)")
    r.add_argument("--file-order", dest="order", action="store_const", const="file",
                   help="same as --order file")
    add_runs(r, None, "replications (default 10; must be 1 with --order file)")
    r.add_argument("--duplicates", choices=("error", "first", "last"), default="first",
                   help="repeated (worker, task) rows (default first)")
    r.add_argument("-o", "--output", default=None, metavar="FILE", help="also write the JSON document to this FILE")
    _common(r)
    r.set_defaults(func=cmd_replay)

    p = cli.reproduce.add_parser("lsol", help="paper 001 Sec. 6 + real-data replay",
                                 description=doc[4])
    p.add_argument("--scale", choices=("smoke", "paper"), default="smoke",
                   help="smoke: ~20 runs per cell; paper: 100 / 500 runs (Table 2)")
    p.add_argument("--parts", nargs="+", default=None,
                   choices=("fig2", "fig4", "table2", "context", "replay"),
                   help="only these parts of the report (default all)")
    p.add_argument("--population", choices=("uniform", "uniform_good"), default="uniform_good",
                   help="Table 2 qualities (default uniform_good: mean p > 1/2)")
    p.add_argument("--quality", default=None, metavar="LO,HI",
                   help="Table 2 quality range (default 0,1)")
    p.add_argument("--estimators", nargs="+", default=None, choices=ESTIMATORS,
                   help="estimators compared side by side (default all)")
    p.add_argument("--em-labels", nargs="+", default=None, choices=EM_LABELS,
                   help="fig2 and Table 2: em fitted on these labels, side by side: testers "
                   "(default) and/or all (also the exploitation steps' labels)")
    add_batch_flags(p)
    p.add_argument("-o", "--output", default="reproduce-lsol", metavar="DIR",
                   help="output DIRECTORY for report.md, PNGs and results.jsonl (default reproduce-lsol)")
    _common(p)
    p.set_defaults(func=cmd_reproduce)
