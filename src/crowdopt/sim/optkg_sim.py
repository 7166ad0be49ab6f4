"""Synthetic experiments of paper 002 (Sec. 8.1; digest A16): accuracy vs budget.

One replication = one task for `experiments.executor.run_tasks`: draw theta (and rho) from the
generating distribution, then run every policy on common random numbers (the same theta, rho and
label streams). Policies that do not depend on T (Opt-KG, KG, NLU, Uniform, pessimistic, CVaR)
run once to the largest budget and report every prefix budget (digest A16: same distribution as
a fresh run per T); Gittins-Inf (delta = 1 - 1/T) and finite-horizon Gittins run once per T.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from ..policies.allocation import (
    HETEROGENEOUS,
    HOMOGENEOUS,
    WorkerPolicy,
    make_policy,
    parse_policy,
)

# the paper's generating distributions (Figs. 6, 8): name -> Beta parameters
THETA_DISTS = {"beta(1,1)": (1.0, 1.0), "beta(.5,.5)": (0.5, 0.5), "beta(2,2)": (2.0, 2.0),
               "beta(2,1)": (2.0, 1.0), "beta(4,1)": (4.0, 1.0)}
RHO_DISTS = {"beta(4,1)": (4.0, 1.0), "beta(3,1)": (3.0, 1.0), "beta(8,1)": (8.0, 1.0),
             "beta(5,2)": (5.0, 2.0)}
T_DEPENDENT = ("gittins", "gittins-finite")
NON_ADAPTIVE = ("kos",)  # heterogeneous baselines that spend the budget up front (digest A12)


def _pair(value, field: str) -> tuple[float, float]:
    arr = np.asarray(value, dtype=float).ravel()
    if arr.shape != (2,) or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise InputError(field, "two positive numbers (Beta parameters)", value)
    return float(arr[0]), float(arr[1])


def _budgets(budgets: Sequence[int]) -> list[int]:
    out = sorted({int(t) for t in budgets})
    if not out or out[0] < 1:
        raise InputError("budgets", "positive integers", budgets)
    return out


def _item_prior(prior, dist: tuple[float, float]) -> tuple[float, float]:
    """'true' = the generating Beta, 'uniform' = Beta(1, 1), else an explicit (a0, b0)."""
    return dist if prior == "true" else (1.0, 1.0) if prior == "uniform" else _pair(prior, "prior")


def _check_policies(policies: Sequence[str], allowed: Sequence[str]) -> None:
    for p in policies:
        if parse_policy(p)[0] not in allowed:
            raise InputError("policies", f"names from {', '.join(allowed)}", p)


def homogeneous_replication(*, theta_dist, K: int = 50, budgets: Sequence[int] = (100,),
                            policies: Sequence[str] = ("optkg", "uniform", "kg", "nlu"),
                            prior="uniform", alpha: float = 0.5, gittins_cap: int = 300,
                            seed: int = 0) -> dict:
    """One replication of Fig. 10: theta_i ~ Beta(theta_dist), labels y ~ Bern(theta_i),
    prior 'uniform' (1,1), 'true' (the generating Beta) or explicit (a0, b0)."""
    dist = _pair(theta_dist, "theta_dist")
    pri = _item_prior(prior, dist)
    budgets = _budgets(budgets)
    _check_policies(policies, HOMOGENEOUS)
    rng = np.random.default_rng(seed)
    theta = rng.beta(*dist, size=K)
    truth = theta >= 0.5
    # label k of item i is +1 iff stream[i, k] < theta_i; drawn label-major so that a smaller
    # largest budget sees the same first labels (common random numbers across budgets)
    stream = rng.random((budgets[-1], K)).T
    out = {"budgets": budgets, "accuracy": {}, "time_s": {}, "labels_max": {}}
    for k, name in enumerate(policies):
        runs = [[t] for t in budgets] if parse_policy(name)[0] in T_DEPENDENT else [budgets]
        acc, secs = {}, {}
        for marks in runs:
            pol = make_policy(name, K, prior=pri, seed=[seed, k], budget=marks[-1], alpha=alpha,
                              gittins_cap=gittins_cap)
            used = np.zeros(K, dtype=np.int64)
            t0 = time.perf_counter()
            mk = 0
            for t in range(1, marks[-1] + 1):
                i = pol.next()
                pol.observe(i, 1 if stream[i, used[i]] < theta[i] else -1)
                used[i] += 1
                if t == marks[mk]:
                    acc[t] = float(np.mean(pol.estimate() == truth))
                    secs[t] = time.perf_counter() - t0
                    mk += 1
        out["accuracy"][name] = [acc[t] for t in budgets]
        out["time_s"][name] = [secs[t] for t in budgets]
    return out


def heterogeneous_replication(*, theta_dist=(1.0, 1.0), rho_dist=(4.0, 1.0), K: int = 50,
                              M: int = 100, budgets: Sequence[int] = (100,),
                              policies: Sequence[str] = ("optkg", "uniform", "kg"),
                              prior=(1.0, 1.0), worker_prior=(4.0, 1.0),
                              seed: int = 0) -> dict:
    """One replication of Fig. 11: theta ~ Beta(theta_dist), rho_j ~ Beta(rho_dist), one-coin
    labels P(z = +1) = rho theta + (1 - rho)(1 - theta); repeated pairs allowed (digest 7.7);
    worker_prior 'true' uses rho_dist. Also returns the share of labels of the busiest worker.

    'kos' (Fig. 11's non-adaptive baseline, digest A12): for each budget T a fresh random
    (T/K, T/M)-biregular simple graph, each pair labelled once from the same label stream
    (stream[i, j, 0]), KOS inference to convergence, ties to +1 (policies.kos_baseline)."""
    dist = _pair(theta_dist, "theta_dist")
    rdist = _pair(rho_dist, "rho_dist")
    pri = _item_prior(prior, dist)
    wpri = rdist if worker_prior == "true" else _pair(worker_prior, "worker_prior")
    budgets = _budgets(budgets)
    _check_policies(policies, HETEROGENEOUS + NON_ADAPTIVE)
    rng = np.random.default_rng(seed)
    theta = rng.beta(*dist, size=K)
    rho = rng.beta(*rdist, size=M)
    truth = theta >= 0.5
    q_plus = rho[None, :] * theta[:, None] + (1 - rho[None, :]) * (1 - theta[:, None])
    depth = 4
    stream = rng.random((K, M, depth))  # per-(item, worker) label streams (common numbers)
    extra: dict = {}

    def draw(i: int, j: int, n: int) -> float:
        if n < depth:
            return float(stream[i, j, n])
        g = extra.get((i, j))
        if g is None:
            g = extra[(i, j)] = np.random.default_rng([seed, i, j, 7])
        return float(g.random())

    out = {"budgets": budgets, "accuracy": {}, "time_s": {}, "top_worker_share": {}}
    for k, name in enumerate(policies):
        base, tie = parse_policy(name)
        if base in NON_ADAPTIVE:
            out["accuracy"][name], out["time_s"][name], out["top_worker_share"][name] = \
                _kos_runs(K, M, budgets, theta, q_plus, stream, seed)
            continue
        extra.clear()
        pol = WorkerPolicy(K, M, base, prior=pri, worker_prior=wpri, tie=tie, seed=[seed, k])
        used = np.zeros((K, M), dtype=np.int64)
        per_worker = np.zeros(M, dtype=np.int64)
        acc, secs, share = [], [], []
        t0 = time.perf_counter()
        mk = 0
        for t in range(1, budgets[-1] + 1):
            i, j = pol.next()
            u = draw(i, j, int(used[i, j]))
            used[i, j] += 1
            per_worker[j] += 1
            pol.observe((i, j), 1 if u < q_plus[i, j] else -1)
            if t == budgets[mk]:
                acc.append(float(np.mean(pol.estimate() == truth)))
                secs.append(time.perf_counter() - t0)
                share.append(float(per_worker.max() / t))
                mk += 1
        out["accuracy"][name] = acc
        out["time_s"][name] = secs
        out["top_worker_share"][name] = share
    return out


def _kos_runs(K: int, M: int, budgets: list[int], theta: np.ndarray, q_plus: np.ndarray,
              stream: np.ndarray, seed: int) -> tuple[list, list, list]:
    """KOS at every budget: its own graph per T (non-adaptive), answers from stream[i, j, 0];
    the graph and the initial messages depend only on (seed, T)."""
    from ..policies.kos_baseline import biregular_graph, kos_estimate

    truth = theta >= 0.5
    acc, secs, share = [], [], []
    for T in budgets:
        g = np.random.default_rng([seed, 11, T])
        t0 = time.perf_counter()
        task, worker = biregular_graph(K, M, T, g)
        z = np.where(stream[task, worker, 0] < q_plus[task, worker], 1.0, -1.0)
        est = kos_estimate(task, worker, z, K, M, g)
        secs.append(time.perf_counter() - t0)
        acc.append(float(np.mean(est == truth)))
        share.append(float(np.bincount(worker, minlength=M).max() / T))
    return acc, secs, share


def mean_curves(records: list[dict]) -> dict:
    """Mean (and standard error) accuracy per policy over replication results."""
    ok = [r["result"] if "result" in r else r for r in records]
    ok = [r for r in ok if r]
    if not ok:
        return {}
    budgets = ok[0]["budgets"]
    out = {"budgets": budgets, "mean": {}, "se": {}, "reps": len(ok)}
    for name in ok[0]["accuracy"]:
        mat = np.array([r["accuracy"][name] for r in ok], dtype=float)
        out["mean"][name] = mat.mean(0).tolist()
        out["se"][name] = (mat.std(0, ddof=1) / np.sqrt(len(ok))).tolist() if len(ok) > 1 \
            else [0.0] * len(budgets)
    return out


def label_counts_replication(*, theta, rho=None, budgets: Sequence[int] = (105,),
                             prior=(1.0, 1.0), worker_prior=(4.0, 1.0), seed: int = 0) -> dict:
    """Figs. 4-5: labels per instance (and, with `rho`, instances per worker) under Opt-KG for
    fixed theta (and rho), at every budget (prefix of one run; Opt-KG does not depend on T)."""
    theta = np.asarray(theta, dtype=float)
    budgets = _budgets(budgets)
    rng = np.random.default_rng(seed)
    K = len(theta)
    out: dict = {"budgets": budgets, "per_instance": [], "per_worker": []}
    if rho is None:
        pol = make_policy("optkg", K, prior=_pair(prior, "prior"), seed=[seed, 1])
    else:
        rho = np.asarray(rho, dtype=float)
        pol = WorkerPolicy(K, len(rho), "optkg", prior=_pair(prior, "prior"),
                           worker_prior=_pair(worker_prior, "worker_prior"), seed=[seed, 1])
        per_worker = np.zeros(len(rho), dtype=np.int64)
    per_item = np.zeros(K, dtype=np.int64)
    mk = 0
    for t in range(1, budgets[-1] + 1):
        act = pol.next()
        if rho is None:
            i, q = act, theta[act]
        else:
            i, j = act
            q = rho[j] * theta[i] + (1 - rho[j]) * (1 - theta[i])
            per_worker[j] += 1
        per_item[i] += 1
        pol.observe(act, 1 if rng.random() < q else -1)
        if t == budgets[mk]:
            out["per_instance"].append(per_item.tolist())
            if rho is not None:
                out["per_worker"].append(per_worker.tolist())
            mk += 1
    return out
