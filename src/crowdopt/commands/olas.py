"""OLAS commands (paper 000): noise estimation, beta tuning, the AL simulation, the reproduction.

- `crowdopt olas estimate-noise --golden G.csv [--features F.csv]`: logistic eps_hat (Sec. 3.4).
- `crowdopt olas tune-beta --golden G.csv --features F.csv [--grid lo:hi:step]` (Sec. 3.4).
- `crowdopt simulate olas --preset heart | --data F.csv --target y`: the AL loop (Sec. 4.1).
- `crowdopt reproduce olas [--scale smoke|paper] [-o DIR]`: Tables 3-4 and F1-per-cycle plots.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..cli import emit_json, format_table
from ..cliargs import add_batch_flags, add_runs
from ..errors import InputError


def _common(p: argparse.ArgumentParser, *, jobs: bool = True) -> None:
    p.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    if jobs:
        p.add_argument("--jobs", type=int, default=1, help="parallel worker processes")
    p.add_argument("--json", action="store_true", help="print JSON on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _progress_on(args: argparse.Namespace) -> bool:
    return not (args.json or args.quiet)


# ----------------------------------------------------------------------------- olas estimate-noise
def cmd_estimate_noise(args: argparse.Namespace) -> int:
    """`crowdopt olas estimate-noise`: fit the logistic noise model."""
    from ..sim.olas_estimate import estimate_noise, read_features, read_golden
    from ..validate import integer

    integer(args.folds, "--folds", lo=2)  # checked even when a table entropy makes it unused
    golden = read_golden(args.golden)
    feats = read_features(args.features) if args.features else None
    fit, source = estimate_noise(golden, features=feats, classifier=args.classifier,
                                 folds=args.folds, normalize=args.entropy_normalize,
                                 monotone=args.monotone, seed=args.seed)
    out = {**fit.to_dict(), "entropy_source": source, "rows": len(golden.sample),
           "samples": len(golden.samples()), "labelers": len(golden.labelers()[0])}
    if args.output:
        emit_json(out, args.output, stdout=False, force=args.force)
    if args.json:
        emit_json(out)
        return 0
    print(f"golden rows {out['rows']} ({out['samples']} samples x {out['labelers']} labelers), "
          f"{fit.n_correct} correct; entropies: {source}")
    print("eps_hat(a, e) = 1 - sigmoid(w0 + we*e + wa*a)")
    print(format_table([{"w0": fit.noise.w0, "we": fit.noise.we, "wa": fit.noise.wa,
                         "monotone": fit.monotone, "log_loss": fit.log_loss}],
                       ["w0", "we", "wa", "monotone", "log_loss"]))
    for w in fit.warnings:
        print(f"warning: {w}")
    print(f"noise spec: {out['spec']}")
    return 0


# ----------------------------------------------------------------------------- olas tune-beta
def cmd_tune_beta(args: argparse.Namespace) -> int:
    """`crowdopt olas tune-beta`: pick beta by an offline replay."""
    from ..problems.olas_noise import noise_from_spec
    from ..sim.olas_estimate import (
        estimate_noise,
        parse_grid,
        read_features,
        read_golden,
        tune_beta,
    )

    golden = read_golden(args.golden)
    feats = read_features(args.features)
    fit_info: dict[str, Any] | None = None
    if args.noise == "fit":
        fit, source = estimate_noise(golden, features=feats, classifier=args.classifier,
                                     normalize=args.entropy_normalize, monotone=args.monotone,
                                     seed=args.seed)
        if not fit.monotone:
            raise InputError("--noise fit", "a monotone fitted noise model (we <= 0 <= wa)",
                             f"we={fit.noise.we:.4g}, wa={fit.noise.wa:.4g}",
                             note="use --monotone clip")
        noise = fit.noise
        fit_info = {**fit.to_dict(), "entropy_source": source}
    else:
        noise = noise_from_spec(args.noise, "--noise")
    betas = parse_grid(args.grid)
    res = tune_beta(golden, feats, noise, betas, splits=args.splits, eval_frac=args.eval_frac,
                    init_frac=args.init_frac, capacity=args.capacity, budget=args.budget,
                    classifier=args.classifier, normalize=args.entropy_normalize,
                    pos_label=args.pos_label, seed=args.seed, show_progress=_progress_on(args))
    best = next(r for r in res.rows if r["beta"] == res.best_beta)
    out = {"best_beta": res.best_beta, "f1": best["f1_mean"], "accuracy": best["accuracy"],
           "noise": noise.to_spec(), "fit": fit_info, "grid": res.rows, "splits": args.splits,
           "seed": args.seed}
    if args.output:
        emit_json(out, args.output, stdout=False, force=args.force)
    if args.json:
        emit_json(out)
        return 0
    print(format_table(res.rows, ["beta", "f1_mean", "f1_sd", "accuracy", "selected_mean",
                                  "wrong_mean", "missing_mean"]))
    print(f"best beta {res.best_beta} (mean F1 {best['f1_mean']:.4f} over {args.splits} "
          f"split(s); ties go to the smaller beta)")
    return 0


# ----------------------------------------------------------------------------- simulate olas
SIM_DEFAULTS = {"budget": None, "labelers": 5, "capacity": 3, "entropy_normalize": "lnC"}


def cmd_simulate(args: argparse.Namespace) -> int:
    """`crowdopt simulate olas`: the active-learning loop, simulated labelers."""
    from ..experiments.executor import Task, run_tasks
    from ..sim.olas_loop import check_strategies, make_config, summarize_replications
    from ..sim.uci import load_dataset, preset_settings

    if (args.preset is None) == (args.data is None):
        raise InputError("--preset/--data", "exactly one of --preset NAME or --data FILE",
                         "both" if args.preset else "neither")
    if args.data is not None:
        if not args.target:
            raise InputError("--target", "the label column of --data", "nothing")
        dataset: Any = {"csv": args.data, "target": args.target, "pos_label": args.pos_label}
        base = dict(SIM_DEFAULTS)
    else:
        dataset = args.preset
        base = {**SIM_DEFAULTS, **preset_settings(args.preset)}
    given = {k: getattr(args, k) for k in SIM_DEFAULTS if getattr(args, k) is not None}
    from ..sim.olas_estimate import parse_grid

    betas = parse_grid(args.beta)
    config = {**base, **given, "noise": args.noise, "alpha": args.alpha, "beta": betas[0],
              "cycles": args.cycles, "acc_min": args.acc_range[0], "acc_max": args.acc_range[1],
              "init_frac": args.init_frac, "test_frac": args.test_frac,
              "classifier": args.classifier, "noise_mode": args.noise_mode}
    cfg = make_config(**config)
    strategies = check_strategies(args.strategies)
    if len(betas) > 1 and "OLAS" not in strategies:
        raise InputError("--beta", "one value unless OLAS is among --strategies", args.beta)
    data = load_dataset(dataset)  # fail fast on a bad file, before any process starts
    if args.runs < 1:
        raise InputError("--runs", "an integer >= 1", args.runs)
    if args.jobs < 1:
        raise InputError("--jobs", "an integer >= 1", args.jobs)
    # a beta sweep re-runs only OLAS: the baselines do not depend on beta (same seeds)
    tasks = [Task("crowdopt.sim.olas_loop:replication_task",
                  {"dataset": dataset, "strategies": strategies if k == 0 else ["OLAS"],
                   "config": {**cfg.to_dict(), "beta": b}}, seed=args.seed + r)
             for k, b in enumerate(betas) for r in range(args.runs)]
    from ..cliargs import check_batch_args

    check_batch_args(args, args.output)
    results_path = None
    if args.output:
        from pathlib import Path

        results_path = Path(args.output) / "results.jsonl"
    records = run_tasks(tasks, jobs=args.jobs, results_path=results_path, resume=args.resume,
                        fresh=args.fresh, scheduler=args.scheduler,
                        show_progress=_progress_on(args), desc="simulate olas")
    errors = [r for r in records if r.get("error")]
    if errors:
        raise InputError("simulate olas", "replications without errors", errors[0]["error"])
    rows = []
    for k, b in enumerate(betas):
        part = summarize_replications([r["result"] for r in records
                                       if r["params"]["config"]["beta"] == b])
        for row in part:
            row["beta"] = b if row["strategy"] == "OLAS" else None
        rows += [row for row in part if k == 0 or row["strategy"] == "OLAS"]
    olas_row = next((r for r in rows if r["strategy"] == "OLAS"), rows[0])
    out = {"dataset": dataset, "n": int(len(data.y)), "classes": data.classes,
           "config": cfg.to_dict(), "betas": betas, "reps": args.runs,
           "seeds": sorted({t.seed for t in tasks}), "accuracy": olas_row["accuracy"],
           "strategies": rows,
           "replications": [r["result"] for r in records] if args.per_rep else None}
    if args.output:
        emit_json(out, str(results_path.parent / "summary.json"), stdout=False, force=True)
    if args.json:
        emit_json(out)
        return 0
    name = dataset if isinstance(dataset, str) else args.data
    print(f"{name}: n={len(data.y)}, {args.runs} replication(s), {cfg.cycles} cycles, "
          f"B={cfg.per_cycle}, M={cfg.labelers}, c={cfg.capacity}, noise={args.noise}, "
          f"{cfg.noise_mode} alpha={cfg.alpha}")
    print(format_table(rows, ["strategy", "beta", "reps", "f1_initial", "f1_mean", "f1_sd",
                              "accuracy", "selected_mean", "wrong_mean"]))
    return 0


# ----------------------------------------------------------------------------- reproduce olas
def cmd_reproduce(args: argparse.Namespace) -> int:
    """`crowdopt reproduce olas`: paper 000 Tables 3-4."""
    from ..experiments.olas_repro import reproduce

    grid: dict[str, Any] = {"beta": args.beta, "alpha": args.alpha, "noise_mode": args.noise_mode,
                            "entropy_normalize": args.entropy_normalize}
    if args.datasets:
        grid["datasets"] = [d.strip() for d in args.datasets.split(",") if d.strip()]
    if args.noises:
        grid["noises"] = [n.strip() for n in args.noises.split(",") if n.strip()]
    if args.runs is not None:
        grid["reps"] = args.runs
    if args.cycles is not None:
        grid["cycles"] = args.cycles
    out_dir = args.output or f"olas-{args.scale}"
    res = reproduce(out_dir, scale=args.scale, jobs=args.jobs, seed=args.seed,
                    resume=args.resume, fresh=args.fresh, scheduler=args.scheduler,
                    show_progress=_progress_on(args), **grid)
    if args.json:
        emit_json(res)
        return 0
    print(format_table(res["rows"], ["dataset", "noise", "method", "reps", "f1_mean", "f1_sd",
                                     "paper_mean", "diff", "wrong_mean"]))
    print()
    print(format_table(res["checks"], ["claim", "ours", "paper"]))
    print(f"\nreport: {res['report']}")
    if res["failed"]:
        print(f"warning: {res['failed']} replication(s) failed; see {out_dir}/results.jsonl")
    return 0


# ----------------------------------------------------------------------------- registration
def register(cli: Any) -> None:
    """Add the OLAS tools and the simulate and reproduce commands to the CLI."""
    from ..sim.olas_loop import CLASSIFIERS, NOISE_MODES, STRATEGIES
    from ..sim.uci import PRESETS

    olas = cli.top.add_parser("olas", help="OLAS tools: noise estimation, beta tuning")
    sub = olas.add_subparsers(dest="olas_command", metavar="COMMAND",
                              parser_class=type(olas))
    olas.set_defaults(func=lambda a: (olas.print_help(), 2)[1])

    p = sub.add_parser("estimate-noise", help="fit the logistic noise model from a golden table",
                       description="Fit eps_hat(a, e) = 1 - sigmoid(w0 + we*e + wa*a) to a golden"
                       " table (sample, labeler, labeler_accuracy, given_label, true_label"
                       "[, entropy]); paper 000 Sec. 3.4.")
    p.add_argument("--golden", required=True, help="golden table CSV/TSV")
    p.add_argument("--features", default=None,
                   help="features CSV (sample + numeric columns) when there is no entropy column")
    p.add_argument("--classifier", choices=CLASSIFIERS, default="rf",
                   help="classifier of the noise model (default rf)")
    p.add_argument("--folds", type=int, default=5, help="folds for out-of-fold entropies")
    p.add_argument("--entropy-normalize", choices=["none", "lnC"], default="lnC",
                   help="entropy term: none (literal eq. 1) or lnC (e / ln C; default lnC)")
    p.add_argument("--monotone", choices=["warn", "clip", "error"], default="warn",
                   help="what to do if the fit is not monotone (default warn)")
    p.add_argument("-o", "--output", default=None, metavar="FILE", help="also write the JSON document to this FILE")
    _common(p, jobs=False)
    p.set_defaults(func=cmd_estimate_noise)

    p = sub.add_parser("tune-beta", help="pick beta by an offline replay on the golden set",
                       description="For each beta: split the golden samples into pool and "
                       "evaluation parts, run Model 10 (Algorithm 1) on the pool, replay the "
                       "recorded labels, retrain and score F1 (paper 000 Sec. 3.4).")
    p.add_argument("--golden", required=True, help="golden table CSV/TSV")
    p.add_argument("--features", required=True, help="features CSV (sample + numeric columns)")
    p.add_argument("--noise", default="fit",
                   help="'fit' (estimate from the golden table), linear, superellipse or "
                   "logistic:w0,we,wa")
    p.add_argument("--grid", default="0.02:0.5:0.02", help="lo:hi:step or a comma list")
    p.add_argument("--splits", type=int, default=5,
                   help="random train/evaluation splits (default 5)")
    p.add_argument("--eval-frac", type=float, default=0.3,
                   help="share of the data held out to evaluate each beta (default 0.3)")
    p.add_argument("--init-frac", type=float, default=0.2,
                   help="clean initial labeled share of the pool part")
    p.add_argument("--capacity", type=int, default=None,
                   help="capacity per labeler (default: pool size / labelers, rounded up)")
    p.add_argument("--budget", type=int, default=None, help="cap on selected points")
    p.add_argument("--classifier", choices=CLASSIFIERS, default="rf",
                   help="classifier of the noise model (default rf)")
    p.add_argument("--entropy-normalize", choices=["none", "lnC"], default="lnC",
                   help="entropy term: none (literal eq. 1) or lnC (e / ln C; default lnC)")
    p.add_argument("--monotone", choices=["warn", "clip", "error"], default="clip",
                   help="for --noise fit (default clip)")
    p.add_argument("--pos-label", default=None, help="F1 positive class (default: minority)")
    p.add_argument("-o", "--output", default=None, metavar="FILE", help="also write the JSON document to this FILE")
    _common(p, jobs=False)
    p.set_defaults(func=cmd_tune_beta)

    p = cli.simulate.add_parser("olas", help="OLAS active-learning loop with simulated labelers",
                                description="Active learning with imperfect labelers (paper 000"
                                " Sec. 4.1): strategies OLAS, ES+OLA, ES+RLA, RS+OLA, RS+RLA.")
    p.add_argument("--preset", choices=sorted(PRESETS), default=None,
                   help="UCI set (crowdopt datasets list) with the Table 2 settings")
    p.add_argument("--data", default=None, help="CSV with a header and numeric features")
    p.add_argument("--target", default=None, help="label column of --data")
    p.add_argument("--pos-label", default=None, help="F1 positive class of --data")
    p.add_argument("--strategies", default=",".join(STRATEGIES),
                   help="comma list of strategies to run (default all)")
    p.add_argument("--noise", default="linear",
                   help="linear (NM1), superellipse (NM2) or logistic:w0,we,wa")
    p.add_argument("--alpha", type=float, default=0.2, help="label simulator threshold")
    p.add_argument("--beta", default="0.2",
                   help="OLAS noise bound; a comma list or lo:hi:step sweeps it (OLAS only)")
    p.add_argument("--cycles", type=int, default=10, help="active-learning cycles (default 10)")
    p.add_argument("--budget", type=int, default=None,
                   help="points per cycle (default: preset, else labelers x capacity)")
    p.add_argument("--labelers", type=int, default=None,
                   help="labelers M (default: the preset's, else 5)")
    p.add_argument("--capacity", type=int, default=None,
                   help="capacity c of each labeler per cycle (default: the preset's, else 3)")
    p.add_argument("--acc-range", type=float, nargs=2, default=[0.5, 0.95], metavar=("LO", "HI"),
                   help="range of the labelers' accuracies (default 0.5 0.95)")
    p.add_argument("--init-frac", type=float, default=0.16,
                   help="clean initial labeled share of the pool (default 0.16)")
    p.add_argument("--test-frac", type=float, default=0.2, help="held-out test share (default 0.2)")
    p.add_argument("--classifier", choices=CLASSIFIERS, default="rf",
                   help="classifier (default rf)")
    p.add_argument("--noise-mode", choices=NOISE_MODES, default="threshold",
                   help="noise model to labels: threshold or bernoulli (default threshold)")
    p.add_argument("--entropy-normalize", choices=["none", "lnC"], default=None,
                   help="default: none with --preset (literal eq. 1), else lnC")
    add_runs(p, 1, "replications, run r with seed + r (default 1)")
    p.add_argument("--per-rep", action="store_true", help="include every replication in JSON")
    p.add_argument("-o", "--output", default=None,
                   metavar="DIR", help="output DIRECTORY: results.jsonl and summary.json")
    add_batch_flags(p)
    _common(p)
    p.set_defaults(func=cmd_simulate)

    p = cli.reproduce.add_parser("olas", help="paper 000 Tables 3-4 (UCI, 5 methods)",
                                 description="4 UCI sets x 2 noise models x 5 methods: F1 mean "
                                 "and sd next to the paper's, report.md and F1-per-cycle PNGs.")
    p.add_argument("--scale", choices=["smoke", "paper"], default="smoke",
                   help="smoke: 2 replications (~1 min on 2 cores); paper: 100 replications")
    p.add_argument("-o", "--output", default=None, metavar="DIR", help="output DIRECTORY (default olas-SCALE)")
    p.add_argument("--datasets", default=None, help="comma list (default all four)")
    p.add_argument("--noises", default=None, help="comma list of linear,superellipse")
    add_runs(p, None, "replications (default: the scale's)")
    p.add_argument("--cycles", type=int, default=None, help="override the scale's cycles")
    p.add_argument("--alpha", type=float, default=0.2,
                   help="label simulator threshold (default 0.2)")
    p.add_argument("--beta", type=float, default=0.2, help="noise bound of Model 10 (default 0.2)")
    p.add_argument("--noise-mode", choices=NOISE_MODES, default="threshold",
                   help="noise model to labels: threshold or bernoulli (default threshold)")
    p.add_argument("--entropy-normalize", choices=["none", "lnC"], default="none",
                   help="none = literal eq. 1 (paper, default); lnC = e / ln C")
    add_batch_flags(p)
    _common(p)
    p.set_defaults(func=cmd_reproduce)
