"""Opt-KG (paper 002): policy speed, Opt-KG vs Gittins-Inf time ratio, exact DP vs the MDP LP.

Usage: python benchmarks/bench_optkg.py [--quick]
Table 1: labels per second of each homogeneous policy (bucket heap, O(log K) per label) and of a
full-rescan reference (vectorized argmax over all K items per label) on the same label stream;
plus the heterogeneous pair policy (K = 50, M = 100).
Table 2: CPU time of an RTE replay, Opt-KG vs Gittins-Inf from a cold index cache (paper Table 4),
as a same-run ratio (skipped when the data are absent).
Table 3: exact DP (canonical states) vs the Pyomo/HiGHS MDP LP: value and time.
Writes benchmarks/results/optkg.json.
"""

from __future__ import annotations

import time

import numpy as np
from common import emit, interleaved, parse_args, warm_up

from crowdopt.policies import beta_posterior as bp
from crowdopt.policies.allocation import WorkerPolicy, make_policy
from crowdopt.policies.optkg_dp import clear_gittins_cache, mdp_lp, solve_dp


def _run(policy, theta, u, T):
    used = np.zeros(len(theta), dtype=np.int64)
    t0 = time.perf_counter()
    for _ in range(T):
        i = policy.next()
        policy.observe(i, 1 if u[i, used[i]] < theta[i] else -1)
        used[i] += 1
    return time.perf_counter() - t0


class FullRescan:
    """Reference: recompute every index and take a vectorized argmax each label."""

    def __init__(self, K, index):
        self.a, self.b, self.index = np.ones(K), np.ones(K), index

    def next(self):
        keys = bp.tie_keys(self.index(self.a, self.b))
        return int(np.flatnonzero(keys == keys.max())[0])

    def observe(self, i, y):
        if y > 0:
            self.a[i] += 1
        else:
            self.b[i] += 1


def policy_speed(args) -> list[dict]:
    rows = []
    sizes = [(800, 4000)] if args.quick else [(800, 8000), (20_000, 20_000)]
    for K, T in sizes:
        rng = np.random.default_rng(args.seed)
        theta = rng.random(K)
        u = rng.random((K, T + 1))
        for name, index in (("optkg", bp.optkg_index), ("kg", bp.kg_index),
                            ("nlu", bp.nlu_index), ("uniform", None)):
            fast = _run(make_policy(name + "-det", K), theta, u, T)
            row = {"policy": name, "K": K, "T": T, "labels/s": T / fast}
            if index is not None:
                t_ref = min(T, 2000)
                ref = _run(FullRescan(K, index), theta, u, t_ref)
                row["rescan labels/s"] = t_ref / ref
                row["speed-up"] = (T / fast) / (t_ref / ref)
            rows.append(row)
    rng = np.random.default_rng(args.seed)
    th, rho = rng.random(50), rng.beta(4, 1, 100)
    T = 300 if args.quick else 1000
    for rule in ("optkg", "kg", "uniform"):
        pol = WorkerPolicy(50, 100, rule, seed=0)
        t0 = time.perf_counter()
        for _ in range(T):
            i, j = pol.next()
            q = rho[j] * th[i] + (1 - rho[j]) * (1 - th[i])
            pol.observe((i, j), 1 if rng.random() < q else -1)
        rows.append({"policy": f"hetero-{rule}", "K": 50, "T": T,
                     "labels/s": T / (time.perf_counter() - t0)})
    return rows


def gittins_ratio(args) -> list[dict]:
    from crowdopt.datapath import missing_sets
    from crowdopt.sim.optkg_replay import load_table, replay

    if missing_sets(["rte"]):
        return []
    table, gold = load_table("rte")
    rows = []
    for T in ([1600, 3200] if args.quick else [1600, 3200, 4800, 8000]):
        t0 = time.process_time()
        r1 = replay(table, gold, policy="optkg", budgets=[T], seed=args.seed)
        t_opt = time.process_time() - t0
        clear_gittins_cache()
        t0 = time.process_time()
        r2 = replay(table, gold, policy="gittins", budgets=[T], seed=args.seed)
        t_git = time.process_time() - t0
        rows.append({"T": T, "optkg_s": t_opt, "gittins_s": t_git, "ratio": t_git / t_opt,
                     "optkg_acc": r1["accuracy"][0], "gittins_acc": r2["accuracy"][0]})
    return rows


def dp_vs_lp(args) -> list[dict]:
    rows = []
    for K, T in ([(2, 6), (3, 5)] if args.quick else [(2, 6), (3, 5), (2, 10), (3, 8)]):
        timing = interleaved({"dp": lambda K=K, T=T: solve_dp(K, T),
                              "lp": lambda K=K, T=T: mdp_lp(K, T)}, 1)
        (t_dp, dp), (t_lp, lp) = timing["dp"], timing["lp"]
        rows.append({"K": K, "T": T, "DP accuracy": float(dp.accuracy),
                     "LP accuracy": lp["accuracy"], "diff": abs(lp["accuracy"] - dp.accuracy),
                     "states": dp.states, "LP rows": lp["constraints"], "DP s": t_dp,
                     "LP s": t_lp, "LP/DP": t_lp / t_dp})
    return rows


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    warm_up()
    t1 = policy_speed(args)
    emit("optkg", t1, ["policy", "K", "T", "labels/s", "rescan labels/s", "speed-up"], args,
         note="speed-up = heap labels/s over full-rescan labels/s (same stream, same run)")
    t2 = gittins_ratio(args)
    t3 = dp_vs_lp(args)
    from common import RESULTS, format_table

    if t2:
        print("## Opt-KG vs Gittins-Inf, RTE replay CPU seconds (paper Table 4 ratio 14-24x)")
        print(format_table(t2, ["T", "optkg_s", "gittins_s", "ratio", "optkg_acc",
                                "gittins_acc"]))
    print("\n## exact DP vs MDP LP (Pyomo + HiGHS)")
    print(format_table(t3, ["K", "T", "DP accuracy", "LP accuracy", "diff", "states",
                            "LP rows", "DP s", "LP s", "LP/DP"]))
    import json

    path = RESULTS / "optkg.json"
    data = json.loads(path.read_text())
    data["gittins_ratio"] = t2
    data["dp_vs_lp"] = t3
    path.write_text(json.dumps(data, indent=1, default=str))


if __name__ == "__main__":
    main()
