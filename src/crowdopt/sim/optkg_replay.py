"""Replay of Opt-KG and its baselines on a real binary label table (paper 002 Sec. 8.2; A15).

Homogeneous mode: buying a label for item i reveals one of its recorded labels drawn uniformly
without replacement (worker ignored); an item whose labels ran out leaves the action set
(digest 7.10). Heterogeneous mode: the actions are the recorded (item, worker) pairs, each used
once (a pair recorded twice keeps its labels in a random order). Accuracy is against gold on the
items that have gold. Class index 1 of the table is the positive class (+1); ties go positive.
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
from ..policies.optkg_dp import clear_gittins_cache
from .optkg_sim import T_DEPENDENT

MODES = ("homogeneous", "heterogeneous")


def load_table(labels: str, gold: str | None = None, columns: dict | None = None,
               gold_columns: dict | None = None):
    """(LabelTable, Gold) from a data-set name (crowdopt.crowd.datasets) or label/gold files."""
    from ..crowd.datasets import list_datasets, load_labels_and_gold

    table, g, _ = load_labels_and_gold(labels, gold, columns=columns or None,
                                       gold_columns=gold_columns or None)
    if g is None:
        raise InputError("--gold", f"a gold file (or LABELS one of {', '.join(list_datasets())})",
                         None)
    return table, g


def _check_binary(table, gold) -> tuple[np.ndarray, np.ndarray]:
    if table.n_classes != 2:
        raise InputError("labels", "a binary label table (2 classes)", table.n_classes)
    truth = gold.truth(table.n_tasks)
    if not np.any(truth >= 0):
        raise InputError("gold", "gold labels for at least one labelled task", 0)
    return truth, truth >= 0


def replay(table, gold, *, policy: str = "optkg", budgets: Sequence[int] = (800,),
           mode: str = "homogeneous", prior=(1.0, 1.0), worker_prior=(4.0, 1.0),
           alpha: float = 0.5, seed: int = 0) -> dict:
    """Accuracy after each budget in `budgets` for one policy and one seed (prefix budgets
    from a single run, except for the T-dependent Gittins policies: one run per budget)."""
    if mode not in MODES:
        raise InputError("mode", "'homogeneous' or 'heterogeneous'", mode)
    truth, has = _check_binary(table, gold)
    budgets = sorted({int(t) for t in budgets})
    if not budgets or budgets[0] < 1 or budgets[-1] > table.n_labels:
        raise InputError("budget", f"integers in [1, {table.n_labels}] (labels in the table)",
                         budgets)
    base, tie = parse_policy(policy)
    allowed = HOMOGENEOUS if mode == "homogeneous" else HETEROGENEOUS
    if base not in allowed:
        raise InputError("policy", f"one of {', '.join(allowed)} in {mode} mode", policy)
    runs = [[t] for t in budgets] if base in T_DEPENDENT else [budgets]
    acc, secs, labelled = {}, {}, {}
    for marks in runs:
        rng = np.random.default_rng(seed)
        if mode == "homogeneous":
            res = _run_homogeneous(table, policy, marks, prior, alpha, rng, seed)
        else:
            res = _run_heterogeneous(table, base, tie, marks, prior, worker_prior, rng, seed)
        for t, (est, s, seen) in res.items():
            pred = est.astype(np.int64)  # a >= b -> class 1
            acc[t] = float(np.mean(pred[has] == truth[has]))
            secs[t] = s
            labelled[t] = int(seen[has].sum())
    return {"policy": policy, "mode": mode, "budgets": budgets,
            "accuracy": [acc[t] for t in budgets], "time_s": [secs[t] for t in budgets],
            # what each accuracy rests on: gold items with at least one bought label (the
            # others are decided by the prior alone)
            "gold_items": int(has.sum()),
            "gold_items_labelled": [labelled[t] for t in budgets]}


def label_queues(table, rng: np.random.Generator, mode: str = "homogeneous"):
    """The order in which a replay reveals the table's labels: row indices per item
    (homogeneous) or per (item, worker) pair (heterogeneous), revealed by `pop()` (from the
    end) after one seeded permutation of all rows (uniform without replacement). A live
    campaign driven from the table (crowdopt.campaign.TableOracle) answers from the same
    queues, so it sees the replay's labels in the replay's order."""
    order = rng.permutation(table.n_labels)
    if mode == "homogeneous":
        rows_by_item: list[list[int]] = [[] for _ in range(table.n_tasks)]
        for r in order.tolist():
            rows_by_item[int(table.task[r])].append(r)
        return rows_by_item
    queue: dict[tuple[int, int], list[int]] = {}
    for r in order.tolist():
        queue.setdefault((int(table.task[r]), int(table.worker[r])), []).append(r)
    return queue


def _run_homogeneous(table, policy, marks, prior, alpha, rng, seed) -> dict:
    K = table.n_tasks
    rows_by_item = label_queues(table, rng, "homogeneous")
    signs = np.where(table.label == 1, 1, -1)
    t0 = time.perf_counter()
    pol = make_policy(policy, K, prior=prior, seed=[seed, 1], budget=marks[-1], alpha=alpha)
    for i in range(K):
        if not rows_by_item[i]:
            pol.exclude(i)
    out, mk = {}, 0
    seen = np.zeros(K, dtype=bool)  # items with a bought label
    for t in range(1, marks[-1] + 1):
        i = pol.next()
        r = rows_by_item[i].pop()
        pol.observe(i, int(signs[r]))
        seen[i] = True
        if not rows_by_item[i]:
            pol.exclude(i)
        if t == marks[mk]:
            out[t] = (pol.estimate().copy(), time.perf_counter() - t0, seen.copy())
            mk += 1
    return out


def _run_heterogeneous(table, rule, tie, marks, prior, worker_prior, rng, seed) -> dict:
    pairs = np.stack([table.task, table.worker], axis=1)
    queue = label_queues(table, rng, "heterogeneous")
    signs = np.where(table.label == 1, 1, -1)
    t0 = time.perf_counter()
    pol = WorkerPolicy(table.n_tasks, table.n_workers, rule, prior=prior,
                       worker_prior=worker_prior, pairs=pairs, tie=tie, seed=[seed, 1])
    out, mk = {}, 0
    seen = np.zeros(table.n_tasks, dtype=bool)  # items with a bought label
    for t in range(1, marks[-1] + 1):
        act = pol.next()
        q = queue[act]
        pol.observe(act, int(signs[q.pop()]))
        seen[act[0]] = True
        if not q:
            pol.exclude(act)
        if t == marks[mk]:
            out[t] = (pol.estimate().copy(), time.perf_counter() - t0, seen.copy())
            mk += 1
    return out


def replay_replication(*, dataset: str, policies: Sequence[str], budgets: Sequence[int],
                       mode: str = "homogeneous", prior=(1.0, 1.0), worker_prior=(4.0, 1.0),
                       gold: str | None = None, seed: int = 0) -> dict:
    """Executor task: every policy on one data set for one seed (`dataset` is a data-set name,
    or a label file when `gold` is given)."""
    table, gd = load_table(dataset, gold)
    out = {"budgets": sorted({int(t) for t in budgets}), "accuracy": {}, "time_s": {}}
    for k, name in enumerate(policies):
        res = replay(table, gd, policy=name, budgets=budgets, mode=mode, prior=prior,
                     worker_prior=worker_prior, seed=seed * 1000 + k)
        out["accuracy"][name] = res["accuracy"]
        out["time_s"][name] = res["time_s"]
    return out


def timing_replication(*, dataset: str = "rte", budgets: Sequence[int] = (1600, 3200),
                       seed: int = 0) -> dict:
    """Table 4: CPU time of Opt-KG and Gittins-Inf replays (homogeneous) in the same process,
    each Gittins run from a cold index cache (its index computation is part of its cost)."""
    table, gd = load_table(dataset)
    rows = []
    for t in sorted({int(b) for b in budgets}):
        t0 = time.process_time()
        r1 = replay(table, gd, policy="optkg", budgets=[t], seed=seed)
        opt_s = time.process_time() - t0
        clear_gittins_cache()
        t0 = time.process_time()
        r2 = replay(table, gd, policy="gittins", budgets=[t], seed=seed)
        git_s = time.process_time() - t0
        rows.append({"T": t, "optkg_s": opt_s, "gittins_s": git_s, "ratio": git_s / opt_s,
                     "optkg_accuracy": r1["accuracy"][0], "gittins_accuracy": r2["accuracy"][0]})
    return {"rows": rows}
