"""Aggregation on real data: accuracy vs gold and wall time of every aggregator, and the speed
of the vectorized Dawid-Skene against a straightforward per-label Python-loop reference.

Usage: python benchmarks/bench_aggregation.py [--quick] [--repeat R]
Table 1: mv, wmv-log / wmv-linear (accuracies from held-out gold, 2-fold cross-fitting),
one-coin EM, Dawid-Skene on rte, temp, bluebirds, product, web, dog, face; accuracy with ties
split evenly (the data README's convention; its MV figures are repeated for comparison).
Table 2: Dawid-Skene on trec2010_relevance (default duplicates policy 'first', 96,883 labels):
iterations to tol 1e-6, time per iteration, and the loop reference run for the same number
of iterations from the same start, with the largest posterior difference.
Writes benchmarks/results/aggregation.json.
"""

from __future__ import annotations

import json
import math
import sys
import time

import numpy as np
from common import RESULTS, cached_versions, format_table, parse_args, timed

from crowdopt.crowd.aggregate import accuracy, dawid_skene, majority_vote, one_coin_em
from crowdopt.crowd.datasets import load_dataset
from crowdopt.crowd.reliability import cross_fitted_weighted_vote
from crowdopt.datapath import data_root

SETS = ["rte", "temp", "bluebirds", "product", "web", "dog", "face"]
README_MV = {"rte": 0.8969, "temp": 0.9361, "bluebirds": 0.7593, "product": 0.8966,
             "web": 0.7307, "dog": 0.8222, "face": 0.6367}
METHODS = {
    "mv": lambda tb, g: majority_vote(tb),
    "wmv-log": lambda tb, g: cross_fitted_weighted_vote(tb, g, scheme="log-odds"),
    "wmv-linear": lambda tb, g: cross_fitted_weighted_vote(tb, g, scheme="linear"),
    "one-coin": lambda tb, g: one_coin_em(tb),
    "dawid-skene": lambda tb, g: dawid_skene(tb),
}


def dawid_skene_loop(table, init_post, iterations, smoothing=0.01):
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


def accuracy_table(repeat: int) -> list[dict]:
    rows = []
    for name in SETS:
        tb, gold = load_dataset(name)
        row = {"dataset": name, "tasks": tb.n_tasks, "labels": tb.n_labels,
               "readme_mv": README_MV[name]}
        for m, fn in METHODS.items():
            t, res = timed(lambda fn=fn, tb=tb, gold=gold: fn(tb, gold), repeat)
            row[m] = round(accuracy(res, gold), 4)
            row[f"{m}_ms"] = round(1000 * t, 2)
            row[f"{m}_iter"] = res.iterations
        rows.append(row)
    return rows


def speed_table(loop_iterations: int, repeat: int) -> list[dict]:
    tb, gold = load_dataset("trec2010_relevance")
    t_conv, conv = timed(lambda: dawid_skene(tb, tol=1e-6, max_iter=100), repeat)
    init = majority_vote(tb, ties="first").posteriors
    t_vec, vec = timed(lambda: dawid_skene(tb, tol=0.0, max_iter=loop_iterations), repeat)
    t0 = time.perf_counter()
    ref = dawid_skene_loop(tb, init, loop_iterations)
    t_loop = time.perf_counter() - t0
    diff = float(np.max(np.abs(ref - vec.posteriors)))
    same = bool(np.array_equal(np.argmax(ref, 1), np.argmax(vec.posteriors, 1)))
    return [
        {"run": "vectorized, to tol 1e-6", "labels": tb.n_labels, "iterations":
         conv.iterations, "converged": conv.converged, "time_s": round(t_conv, 4),
         "ms_per_iter": round(1000 * t_conv / max(conv.iterations, 1), 3),
         "accuracy": round(accuracy(conv, gold), 4)},
        {"run": "vectorized, fixed iterations", "labels": tb.n_labels,
         "iterations": loop_iterations, "time_s": round(t_vec, 4),
         "ms_per_iter": round(1000 * t_vec / loop_iterations, 3),
         "accuracy": round(accuracy(vec, gold), 4)},
        {"run": "python loop reference", "labels": tb.n_labels, "iterations": loop_iterations,
         "time_s": round(t_loop, 4), "ms_per_iter": round(1000 * t_loop / loop_iterations, 3),
         "max_posterior_diff": diff, "same_labels": same,
         "loop/vectorized": round(t_loop / t_vec, 1)},
    ]


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    if data_root(required=False) is None:
        print("bench_aggregation: real data not found (set CROWDOPT_DATA); skipped")
        return 0
    repeat = 1 if args.quick else args.repeat
    loop_iterations = 2 if args.quick else 10
    acc_rows = accuracy_table(repeat)
    cols = ["dataset", "tasks", "labels", "readme_mv"] + list(METHODS)
    print("## aggregation: accuracy vs gold (ties split evenly)" +
          (" (quick)" if args.quick else ""))
    print(format_table(acc_rows, cols))
    print(f"\n## aggregation: wall time (ms, median of {repeat}) and EM iterations")
    tcols = ["dataset"] + [f"{m}_ms" for m in METHODS] + ["one-coin_iter", "dawid-skene_iter"]
    print(format_table(acc_rows, tcols))
    speed_rows = speed_table(loop_iterations, repeat)
    print("\n## Dawid-Skene on trec2010_relevance: vectorized vs per-label Python loop")
    print(format_table(speed_rows, ["run", "labels", "iterations", "converged", "time_s",
                                    "ms_per_iter", "accuracy", "max_posterior_diff",
                                    "same_labels", "loop/vectorized"]))
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "aggregation.json"
    path.write_text(json.dumps({"topic": "aggregation", "args": vars(args),
                                "accuracy": acc_rows, "dawid_skene_speed": speed_rows,
                                "versions": cached_versions()}, indent=1, default=str))
    print(f"(written {path})")
    ok = speed_rows[2]["max_posterior_diff"] < 1e-9 and speed_rows[2]["same_labels"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
