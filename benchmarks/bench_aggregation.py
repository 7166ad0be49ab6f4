"""Aggregation on the shared real data: accuracy, convergence and speed of every method, the
`--method auto` choice against the gold-best method, and (with --peer) crowd-kit side by side.

Usage: python benchmarks/bench_aggregation.py [--quick] [--repeat R] [--peer] [--sets a,b,...]
                                              [--peer-methods A,B] [--peer-timeout S]

Table 1: accuracy vs gold (ties split evenly: the expectation under random tie-breaking) of
every unsupervised method at its defaults on the 25 shared sets with gold (--quick: 7), with
`wmv` (accuracies from held-out gold, 2-fold cross-fitting) apart as it uses gold.
Table 2: convergence on all 27 shared sets (the 25 and the two without gold): iterations,
`converged`, and whether the objective trace is non-decreasing, per iterative method.
Table 3: `--method auto` (held-out label likelihood, no gold) against the gold-best method.
Table 4: Dawid-Skene on trec2010_relevance, vectorized vs a per-label Python loop.
Table 5: the duplicate-answer check every table build runs (`tables._pairs_repeat`): its sort
choice against numpy's default sort of the same keys, on the rows as given and shuffled.
--peer (needs crowd-kit: `make bench-peer`): every crowd-kit 1.4.2 classification method
(MajorityVote, Wawa, ZeroBasedSkill, OneCoinDawidSkene, DawidSkene, GLAD, MACE, KOS, MMSR)
at its defaults on the same DataFrame, one subprocess per (method, set) (benchmarks/
peer_crowdkit.py; a crash, NaN or running out of memory costs that cell only), with crowdopt's
estimator class of the same method timed in the same run around it (one untimed warm call,
then the median of R runs before and R after; both time only fit_predict on the DataFrame,
crowd-kit's as the median of R warm calls when its first call takes under 5 s). Prints
accuracy of both (ties split evenly on both sides: crowd-kit's ties read from its probas_;
its printed labels apart), the time ratio crowd-kit / crowdopt, the summary figures
of the method study, and a diagnostic column: ours with crowd-kit's model options stopped after
crowd-kit's iteration count.
Writes benchmarks/results/aggregation.json (and aggregation_peer.json with --peer).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from common import RESULTS, cached_versions, format_table, nondecreasing, timed

from crowdopt.crowd import estimators as est
from crowdopt.crowd import run_method
from crowdopt.crowd.aggregate import accuracy, dawid_skene, majority_vote
from crowdopt.crowd.auto import AUTO_CANDIDATES, AUTO_Z, choose_method
from crowdopt.crowd.datasets import list_datasets, load_table
from crowdopt.crowd.methods import METHODS, UNSUPERVISED
from crowdopt.crowd.reliability import cross_fitted_weighted_vote
from crowdopt.datapath import missing_sets

HERE = Path(__file__).resolve().parent
QUICK_SETS = ["rte", "temp", "bluebirds", "product", "web", "dog", "face"]
OURS = list(UNSUPERVISED)  # every method of the registry that needs nothing but the labels
PEER = {"MajorityVote": ("mv", est.MajorityVote), "Wawa": ("wawa", est.Wawa),
        "ZeroBasedSkill": ("zbs", est.ZeroBasedSkill),
        "OneCoinDawidSkene": ("one-coin", est.OneCoinDawidSkene),
        "DawidSkene": ("dawid-skene", est.DawidSkene), "GLAD": ("glad", est.GLAD),
        "MACE": ("mace", est.MACE), "KOS": ("kos", est.KOS), "MMSR": ("mmsr", est.MMSR)}
SPEED_SETS = ["rte", "web", "product", "trec2010_relevance"]
# crowdopt's options for crowd-kit's model of the same method (its defaults), used for the
# diagnostic column `ours@ck`: ours with those options, stopped after crowd-kit's iterations
CK_SETTINGS = {"dawid-skene": {"smoothing": 0.0, "priors": "learn"},
               "one-coin": {"smoothing": 0.0, "priors": "learn"},
               "glad": {"priors": "uniform"},
               "mace": {"priors": "uniform", "restarts": 0}}
CK_FIXED_ITER = {"mace": 50}   # crowd-kit's MACE runs n_iter = 50 iterations, no stopping rule
ONE_START = "10 restarts = 1 start"   # note of a crowd-kit MACE cell equal to n_restarts=1


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="7 sets, no peer, short loop check")
    p.add_argument("--repeat", type=int, default=3, help="timing repetitions (median kept)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--peer", action="store_true", help="crowd-kit side by side (slow: ~1 h)")
    p.add_argument("--sets", default=None, help="comma-separated data sets (default: all)")
    p.add_argument("--peer-methods", default=None, help="comma-separated crowd-kit classes")
    p.add_argument("--peer-timeout", type=float, default=1800.0,
                   help="seconds per crowd-kit cell (default 1800)")
    p.add_argument("--peer-memory-gb", type=float, default=6.0,
                   help="address-space limit of a crowd-kit cell (default 6 GB)")
    return p.parse_args()


# ----------------------------------------------------------------------------- ours
def ours_table(sets: list[str], data: dict, repeat: int) -> tuple[list[dict], list[dict]]:
    acc_rows, conv_rows = [], []
    for name in sets:
        tb, gold = data[name]
        row = {"dataset": name, "tasks": tb.n_tasks, "labels": tb.n_labels,
               "classes": tb.n_classes}
        for m in OURS:
            t, res = timed(lambda m=m, tb=tb: run_method(tb, m), repeat)
            info = METHODS[m]
            row[f"{m}_s"] = t
            if gold is not None:
                row[m] = accuracy(res, gold)
            if info.iterative:
                conv_rows.append({"dataset": name, "method": m, "iterations": res.iterations,
                                  "converged": res.converged,
                                  "objective": "none" if not info.objective else
                                  ("non-decreasing" if nondecreasing(res.objective)
                                   else "DECREASES")})
        if gold is not None:
            row["wmv (gold)"] = accuracy(cross_fitted_weighted_vote(tb, gold), gold)
            row["best"] = max(OURS, key=lambda m: row[m])
            acc_rows.append(row)
    return acc_rows, conv_rows


def auto_table(sets: list[str], data: dict, acc_rows: list[dict], seed: int) -> list[dict]:
    by = {r["dataset"]: r for r in acc_rows}
    rows = []
    for name in sets:
        tb, gold = data[name]
        if gold is None:
            continue
        choice = choose_method(tb, seed=seed)
        accs = {m: by[name][m] for m in AUTO_CANDIDATES}
        best = max(accs.values())
        rows.append({"dataset": name, "picked": choice.method, "picked_acc": accs[choice.method],
                     "gold_best": ",".join(m for m in AUTO_CANDIDATES if accs[m] == best),
                     "best_acc": best, "hit": accs[choice.method] == best,
                     "shortfall": best - accs[choice.method],
                     "dawid-skene_acc": accs["dawid-skene"]})
    return rows


# ----------------------------------------------------------------------------- loop reference
def dawid_skene_loop(table, init_post, iterations, smoothing):
    """Reference Dawid-Skene: the same M- and E-steps as `dawid_skene`, one label at a time
    in plain Python (the textbook implementation this module is measured against)."""
    n_t, n_w, n_c = table.n_tasks, table.n_workers, table.n_classes
    rows = list(zip(table.task.tolist(), table.worker.tolist(), table.label.tolist(),
                    strict=True))
    post = init_post.tolist()
    for _ in range(iterations):
        counts = [[[smoothing] * n_c for _ in range(n_c)] for _ in range(n_w)]
        for t, w, lab in rows:
            pt, cw = post[t], counts[w]
            for k in range(n_c):
                cw[k][lab] += pt[k]
        logc = [[[math.log(x / sum(row)) for x in row] for row in cw] for cw in counts]
        priors = [sum(p[k] for p in post) / n_t for k in range(n_c)]
        score = [[math.log(priors[k]) for k in range(n_c)] for _ in range(n_t)]
        for t, w, lab in rows:
            st, lw = score[t], logc[w]
            for k in range(n_c):
                st[k] += lw[k][lab]
        post = []
        for st in score:
            m = max(st)
            e = [math.exp(s - m) for s in st]
            z = sum(e)
            post.append([x / z for x in e])
    return np.array(post)


def speed_table(loop_iterations: int, repeat: int) -> list[dict]:
    tb, gold = load_table("trec2010_relevance")
    t_conv, conv = timed(lambda: dawid_skene(tb), repeat)
    init = majority_vote(tb, ties="first").posteriors
    t_vec, vec = timed(lambda: dawid_skene(tb, tol=0.0, max_iter=loop_iterations), repeat)
    t0 = time.perf_counter()
    ref = dawid_skene_loop(tb, init, loop_iterations, 0.1)
    t_loop = time.perf_counter() - t0
    diff = float(np.max(np.abs(ref - vec.posteriors)))
    same = bool(np.array_equal(np.argmax(ref, 1), np.argmax(vec.posteriors, 1)))
    return [
        {"run": "vectorized, defaults", "labels": tb.n_labels, "iterations": conv.iterations,
         "converged": conv.converged, "time_s": t_conv,
         "ms_per_iter": 1000 * t_conv / max(conv.iterations, 1), "accuracy": accuracy(conv, gold)},
        {"run": "vectorized, fixed iterations", "labels": tb.n_labels,
         "iterations": loop_iterations, "time_s": t_vec,
         "ms_per_iter": 1000 * t_vec / loop_iterations, "accuracy": accuracy(vec, gold)},
        {"run": "python loop reference", "labels": tb.n_labels, "iterations": loop_iterations,
         "time_s": t_loop, "ms_per_iter": 1000 * t_loop / loop_iterations,
         "max_posterior_diff": diff, "same_labels": same, "loop/vectorized": t_loop / t_vec},
    ]


def duplicate_check_table(data: dict, repeat: int) -> list[dict]:
    """Time of the (task, worker) repeat check as built (stable sort for rows grouped by task
    or worker, the default sort otherwise) vs numpy's default sort of the keys alone, on each
    set's rows as given and shuffled, with the answers compared."""
    from crowdopt.crowd.tables import _pairs_repeat

    def default_sort(t, w, n_w):
        key = np.sort(t * n_w + w)
        return bool(np.any(key[1:] == key[:-1]))

    rows, rng = [], np.random.default_rng(0)
    for name, (tb, _) in data.items():
        row = {"dataset": name, "labels": tb.n_labels}
        for order, perm in (("given", slice(None)), ("shuffled", rng.permutation(tb.n_labels))):
            t, w, n_w = tb.task[perm], tb.worker[perm], tb.n_workers
            ours = timed(lambda t=t, w=w, n_w=n_w: _pairs_repeat(t, w, n_w), max(repeat, 5))
            base = timed(lambda t=t, w=w, n_w=n_w: default_sort(t, w, n_w), max(repeat, 5))
            if ours[1] != base[1]:
                raise AssertionError(f"{name} {order}: the two checks disagree")
            row[f"{order}_ms"] = 1000 * ours[0]
            row[f"{order}_default_ms"] = 1000 * base[0]
            row[f"{order}_speedup"] = base[0] / ours[0]
        rows.append(row)
    return rows


# ----------------------------------------------------------------------------- crowd-kit
def peer_cell(method: str, dataset: str, timeout: float, memory_gb: float, repeat: int
              ) -> dict:
    def limit() -> None:
        cap = int(memory_gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    try:
        p = subprocess.run([sys.executable, str(HERE / "peer_crowdkit.py"), method, dataset,
                            str(repeat)],
                           capture_output=True, text=True, timeout=timeout, preexec_fn=limit,
                           env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout {timeout:.0f} s"}
    lines = p.stdout.strip().splitlines()
    if p.returncode or not lines:
        tail = p.stderr.strip().splitlines()[-1:] or [f"exit {p.returncode}"]
        oom = "MemoryError" in p.stderr or p.returncode in (-9, 137)
        return {"error": ("out of memory " if oom else "") + tail[0][:160]}
    return json.loads(lines[-1])


def peer_table(sets: list[str], data: dict, methods: list[str], repeat: int, timeout: float,
               memory_gb: float) -> list[dict]:
    rows = []
    for name in sets:
        tb, gold = data[name]
        df = tb.to_dataframe().infer_objects()
        for ck in methods:
            ours_name, cls = PEER[ck]
            cls().fit_predict(df)  # warm: first-call costs stay out of the timed runs
            before = [timed(lambda cls=cls, df=df: cls().fit_predict(df), 1)[0]
                      for _ in range(repeat)]
            cell = peer_cell(ck, name, timeout, memory_gb, repeat)
            # warm again: crowd-kit's subprocess evicted our caches, and its own timed calls
            # follow an untimed first call in the same way (peer_crowdkit.py)
            cls().fit_predict(df)
            after = [timed(lambda cls=cls, df=df: cls().fit_predict(df), 1)[0]
                     for _ in range(repeat)]
            t_ours = statistics.median(before + after)
            ours_res = run_method(tb, ours_name)
            row = {"dataset": name, "method": ck, "ours": accuracy(ours_res, gold),
                   "ours_s": t_ours}
            if "labels" in cell:
                row["crowdkit"] = peer_accuracy(cell, gold)
                row["crowdkit_labels"] = peer_accuracy(cell, gold, split=False)
                row["crowdkit_s"] = cell["time_s"]
                row["ratio"] = cell["time_s"] / t_ours
                row["diff"] = row["ours"] - row["crowdkit"]
                stop = cell.get("iterations") or CK_FIXED_ITER.get(ours_name)
                if ours_name in ("mv", "wawa", "zbs"):  # crowd-kit: ties to the first class
                    first = run_method(tb, ours_name, ties="first")
                    row["ours@ck"] = accuracy(first, gold, ties="labels")
                    # same method = same tie rule, also inside Wawa's / ZBS's agreement
                    # step: ours with ties to the first class against crowd-kit's labels
                    row["diff"] = row["ours@ck"] - row["crowdkit_labels"]
                elif stop and ours_name in CK_SETTINGS:
                    at = run_method(tb, ours_name, max_iter=int(stop), tol=0.0,
                                    **CK_SETTINGS[ours_name])
                    row["ck_iter"] = int(stop)
                    row["ours@ck"] = accuracy(at, gold)
                if cell.get("nan_labels"):
                    row["note"] = f"{cell['nan_labels']} NaN labels"
                if cell.get("same_as_one_restart"):
                    row["note"] = ONE_START
            else:
                row["crowdkit"] = None
                row["note"] = cell.get("error", "failed")
            rows.append(row)
            print(f"  {name:20s} {ck:18s} ours {row['ours']:.4f}  crowd-kit "
                  f"{row['crowdkit'] if row['crowdkit'] is not None else row['note']}",
                  file=sys.stderr, flush=True)
    return rows


def encoding_floor(data: dict, rows: list[dict], repeat: int) -> list[dict]:
    """How fast any aggregator could be from this DataFrame: the time to hash its task and
    label columns (pandas.factorize, what a group-by over tasks must do first), against
    crowd-kit's and crowdopt's MajorityVote in this run; `ceiling` = crowd-kit's MV time /
    that encoding time bounds the MV speed ratio any implementation can reach, and
    `ceiling_with_workers` the ratio of one that also reads the worker column (as both
    libraries' MV do: skills_, and crowdopt's check for repeated (task, worker) answers)."""
    import pandas as pd
    out = []
    for name in SPEED_SETS:
        mv = next((r for r in rows if r["dataset"] == name and r["method"] == "MajorityVote"
                   and r.get("crowdkit_s")), None)
        if mv is None or name not in data:
            continue
        df = data[name][0].to_dataframe().infer_objects()
        pd.factorize(df["task"])
        t_task = timed(lambda df=df: pd.factorize(df["task"]), max(repeat, 5))[0]
        t_both = timed(lambda df=df: (pd.factorize(df["task"]), pd.factorize(df["label"])),
                       max(repeat, 5))[0]
        t_all = timed(lambda df=df: [pd.factorize(df[c]) for c in ("task", "worker", "label")],
                      max(repeat, 5))[0]
        out.append({"dataset": name, "labels": len(df), "task_dtype": str(df["task"].dtype),
                    "encode_task_s": t_task, "encode_task_label_s": t_both,
                    "encode_all_s": t_all, "crowdkit_mv_s": mv["crowdkit_s"],
                    "ours_mv_s": mv["ours_s"], "ceiling": mv["crowdkit_s"] / t_both,
                    "ceiling_with_workers": mv["crowdkit_s"] / t_all, "ratio": mv["ratio"]})
    return out


def peer_accuracy(cell: dict, gold, *, split: bool = True) -> float:
    """Accuracy of crowd-kit's labels on the gold tasks; with `split` (the default, the rule
    crowdopt's accuracies use) a task whose top class in crowd-kit's probas_ is an m-way tie
    counts 1/m when the gold class is among the tied ones, whichever label crowd-kit printed."""
    lab = np.asarray(cell["labels"])
    hit = (lab[gold.task] == gold.label).astype(float)
    ties = cell.get("ties") or {}
    if split and ties:
        for i, (t, g) in enumerate(zip(gold.task.tolist(), gold.label.tolist(), strict=True)):
            tied = ties.get(str(t))
            if tied is not None:
                hit[i] = (g in tied) / len(tied)
    return float(np.mean(hit))


def peer_summary(peer_rows: list[dict], acc_rows: list[dict]) -> dict:
    by = {r["dataset"]: r for r in acc_rows}
    sets = sorted({r["dataset"] for r in peer_rows}, key=list(by).index)
    best_rows, wins = [], 0
    for s in sets:
        ck = [r for r in peer_rows if r["dataset"] == s and r["crowdkit"] is not None]
        ck_best = max((r["crowdkit"] for r in ck), default=None)
        ours_best = max(by[s][m] for m in OURS)
        ok = ck_best is None or ours_best >= ck_best
        wins += ok
        best_rows.append({"dataset": s, "crowdopt_best": ours_best,
                          "crowdopt_method": by[s]["best"], "crowdkit_best": ck_best,
                          "crowdkit_method": max(ck, key=lambda r: r["crowdkit"])["method"]
                          if ck else None, "ours >= theirs": ok})
    cells = [r for r in peer_rows if r["crowdkit"] is not None]
    within = [r for r in cells if r["diff"] >= -0.01]
    speed = [r for r in cells if r["dataset"] in SPEED_SETS]
    return {"best_rows": best_rows, "sets": len(sets), "best_ge": wins,
            "cells": len(cells), "within_0.01_or_better": len(within),
            "outside": [{k: r[k] for k in ("dataset", "method", "ours", "crowdkit", "diff")}
                        for r in cells if r["diff"] < -0.01],
            "min_speed_ratio_on_" + "/".join(SPEED_SETS):
                min((r["ratio"] for r in speed), default=None),
            "speed_below_10x": [{k: r[k] for k in ("dataset", "method", "ratio")}
                                for r in speed if r["ratio"] < 10]}


# ----------------------------------------------------------------------------- main
def main() -> int:
    args = parse()
    gold_sets = QUICK_SETS if args.quick else list_datasets(with_gold=True)
    all_sets = QUICK_SETS if args.quick else list_datasets()
    if missing_sets(all_sets):
        print("bench_aggregation: real data not found: run `crowdopt datasets fetch --all`; "
              "skipped")
        return 0
    unknown = [m for m in (args.peer_methods or "").split(",") if m and m not in PEER]
    if unknown:
        print(f"bench_aggregation: --peer-methods: expected crowd-kit classes "
              f"({', '.join(PEER)}), found {', '.join(unknown)}", file=sys.stderr)
        return 2
    if args.sets:
        want = args.sets.split(",")
        unknown = [s for s in want if s not in list_datasets()]
        if unknown:
            print(f"bench_aggregation: --sets: expected shared data sets "
                  f"({', '.join(list_datasets())}), found {', '.join(unknown)}", file=sys.stderr)
            return 2
        gold_sets = [s for s in gold_sets if s in want]
        all_sets = [s for s in all_sets if s in want]
    repeat = 1 if args.quick else args.repeat
    data = {n: load_table(n) for n in all_sets}
    t_start = time.perf_counter()
    acc_rows, conv_rows = ours_table(all_sets, data, repeat)
    print("## aggregation: accuracy vs gold at defaults (ties split evenly)"
          + (" (quick)" if args.quick else ""))
    print(format_table(acc_rows, ["dataset", "classes", *OURS, "best", "wmv (gold)"]))
    if acc_rows:  # each method against Dawid-Skene, the default, over the same sets
        ds = [r["dawid-skene"] for r in acc_rows]
        print(format_table([{"method": m, "mean": statistics.fmean(r[m] for r in acc_rows),
                             "sets_above_ds": sum(r[m] > d for r, d in zip(acc_rows, ds)),
                             "sets_below_ds": sum(r[m] < d for r, d in zip(acc_rows, ds))}
                            for m in OURS], ["method", "mean", "sets_above_ds",
                                             "sets_below_ds"]))
    print(f"\n## wall time (s, median of {repeat}) on the LabelTable")
    print(format_table(acc_rows, ["dataset", "labels", *[f"{m}_s" for m in OURS]]))
    bad = [r for r in conv_rows if not r["converged"] or r["objective"] == "DECREASES"]
    print(f"\n## convergence at defaults: {len(conv_rows)} (set, iterative method) runs on "
          f"{len(all_sets)} sets; not converged or decreasing: {len(bad)}")
    iters = {}
    for r in conv_rows:
        iters.setdefault(r["method"], []).append(r["iterations"])
    print(format_table([{"method": m, "runs": len(v), "max_iterations": max(v),
                         "median_iterations": statistics.median(v)} for m, v in iters.items()],
                       ["method", "runs", "max_iterations", "median_iterations"]))
    if bad:
        print(format_table(bad, ["dataset", "method", "iterations", "converged", "objective"]))
    auto_rows = auto_table(gold_sets, data, acc_rows, args.seed)
    hits = sum(r["hit"] for r in auto_rows)
    ds_hits = sum(r["dawid-skene_acc"] == r["best_acc"] for r in auto_rows)
    mean = {k: statistics.mean(r[k] for r in auto_rows) if auto_rows else float("nan")
            for k in ("picked_acc", "dawid-skene_acc", "best_acc")}
    print(f"\n## --method auto (held-out label likelihood, no gold; dawid-skene unless beaten by "
          f"{AUTO_Z:g} standard errors): picks a gold-best method on {hits} of "
          f"{len(auto_rows)} sets (always dawid-skene: {ds_hits}); mean accuracy "
          f"auto {mean['picked_acc']:.4f}, dawid-skene {mean['dawid-skene_acc']:.4f}, "
          f"gold-best {mean['best_acc']:.4f}")
    print(format_table(auto_rows, ["dataset", "picked", "picked_acc", "gold_best", "best_acc",
                                   "shortfall", "dawid-skene_acc"]))
    speed_rows = speed_table(2 if args.quick else 10, repeat) \
        if "trec2010_relevance" in data or not args.sets else []
    if speed_rows:
        print("\n## Dawid-Skene on trec2010_relevance: vectorized vs per-label Python loop")
        print(format_table(speed_rows, ["run", "labels", "iterations", "converged", "time_s",
                                        "ms_per_iter", "accuracy", "max_posterior_diff",
                                        "same_labels", "loop/vectorized"]))
    dup_rows = duplicate_check_table(data, repeat)
    print("\n## duplicate-answer check on every table build: as built vs numpy's default sort "
          "(ms, rows as given and shuffled)")
    print(format_table(dup_rows, ["dataset", "labels", "given_ms", "given_default_ms",
                                  "given_speedup", "shuffled_ms", "shuffled_default_ms",
                                  "shuffled_speedup"]))
    RESULTS.mkdir(exist_ok=True)
    out = {"topic": "aggregation", "args": vars(args), "accuracy": acc_rows,
           "convergence": conv_rows, "auto": auto_rows, "auto_hits": hits,
           "auto_mean_accuracy": mean,
           "dawid_skene_speed": speed_rows, "duplicate_check": dup_rows,
           "versions": cached_versions(),
           "time_s": time.perf_counter() - t_start}
    path = RESULTS / "aggregation.json"
    path.write_text(json.dumps(out, indent=1, default=str))
    print(f"(written {path.relative_to(HERE.parent)})")
    ok = not bad and (not speed_rows or (speed_rows[2]["max_posterior_diff"] < 1e-9
                                         and speed_rows[2]["same_labels"]))
    if args.peer:
        ok &= run_peer(args, gold_sets, data, acc_rows, repeat)
    return 0 if ok else 1


def run_peer(args, gold_sets, data, acc_rows, repeat) -> bool:
    try:
        import crowdkit
    except ImportError:
        print("--peer: crowd-kit is not installed (make bench-peer installs it)")
        return False
    methods = args.peer_methods.split(",") if args.peer_methods else list(PEER)
    print(f"\n## crowd-kit {crowdkit.__version__} side by side (progress on stderr)",
          flush=True)
    rows = peer_table(gold_sets, data, methods, repeat, args.peer_timeout, args.peer_memory_gb)
    summ = peer_summary(rows, acc_rows)
    floor = encoding_floor(data, rows, repeat)
    path = RESULTS / "aggregation_peer.json"
    path.write_text(json.dumps({"topic": "aggregation_peer", "args": vars(args),
                                "crowdkit": crowdkit.__version__, "rows": rows,
                                "summary": summ, "encoding_floor": floor,
                                "versions": cached_versions()},
                               indent=1, default=str))
    print(format_table(rows, ["dataset", "method", "ours", "crowdkit", "crowdkit_labels",
                              "diff", "ck_iter", "ours@ck", "ours_s", "crowdkit_s", "ratio",
                              "note"]))
    print("ours, crowdkit: accuracy with ties split evenly (the expectation under random "
          "tie-breaking; crowd-kit's ties read from its probas_), the same rule on both sides "
          "(used for the best of each library); crowdkit_labels: crowd-kit's printed labels as "
          "given (its ties go to the first class). diff: ours - crowdkit, for mv/wawa/zbs "
          "ours@ck - crowdkit_labels (both with ties to the first class, also inside the "
          "agreement step). ours@ck: crowdopt with crowd-kit's options - "
          "mv/wawa/zbs: ties to the first class, scored as labels; Dawid-Skene and one-coin: no "
          "smoothing, learned class priors; MACE: uniform class prior, the majority-vote start "
          "(crowd-kit's own single start is random) - stopped after "
          "crowd-kit's iteration count ck_iter: where it matches `crowdkit` and `ours` differs, "
          "the difference is crowd-kit's tie rule or where it stops, not the model.")
    print(f"\n## best method per set: crowdopt's {len(OURS)} vs crowd-kit's nine")
    print(format_table(summ["best_rows"], ["dataset", "crowdopt_best", "crowdopt_method",
                                           "crowdkit_best", "crowdkit_method",
                                           "ours >= theirs"]))
    print(f"\ncrowdopt's best >= crowd-kit's best on {summ['best_ge']} of {summ['sets']} sets; "
          f"same method within 0.01 or better in {summ['within_0.01_or_better']} of "
          f"{summ['cells']} cells where crowd-kit runs; time ratio crowd-kit/crowdopt on "
          f"{', '.join(SPEED_SETS)}: min {_fmt_ratio(summ['min_speed_ratio_on_' + '/'.join(SPEED_SETS)])}")
    mace = [r for r in rows if r["method"] == "MACE" and r.get("crowdkit") is not None]
    if mace:
        same = sum(r.get("note") == ONE_START for r in mace)
        print(f"crowd-kit's MACE with its 10 restarts equals its fit with n_restarts=1 on {same} "
              f"of {len(mace)} sets (every restart is drawn with the same random_state)")
    if summ["outside"]:
        print("more than 0.01 below crowd-kit:")
        print(format_table(summ["outside"], ["dataset", "method", "ours", "crowdkit", "diff"]))
    if summ["speed_below_10x"]:
        print("below 10x:")
        print(format_table(summ["speed_below_10x"], ["dataset", "method", "ratio"]))
    if floor:
        print("\n## MajorityVote from a DataFrame: the encoding floor (pandas.factorize of the "
              "task and label columns alone; ceiling = crowd-kit MV time / that floor; "
              "ceiling_with_workers: the same with the worker column too)")
        print(format_table(floor, ["dataset", "labels", "task_dtype", "encode_task_s",
                                   "encode_task_label_s", "encode_all_s", "crowdkit_mv_s",
                                   "ours_mv_s", "ceiling", "ceiling_with_workers", "ratio"]))
    print(f"(written {path.relative_to(HERE.parent)})")
    return True


def _fmt_ratio(r: float | None) -> str:
    return "n/a (none of these sets in this run)" if r is None else f"{r:.1f}x"


if __name__ == "__main__":
    sys.exit(main())
