"""Replay of LS_OL on a real label table (paper 001, Sec. 6.2; digest 6.2 and 7.25).

Labelers are the table's workers; tasks arrive in file order (or a seeded shuffle). A label
"query" reveals the stored label and costs one label. Exploration queries every active worker
(and so reveals every stored label of the task); exploitation queries the chosen set S_t. A
fixed table holds one label per (task, worker), so a tester cannot be re-assigned: D2 = 0 and
each tester counts once (digest 7.25). Labels may be K-ary (plurality, random ties; the binary
pi on p_hat is the selection surrogate and every set size is searched). In sparse tables
(20 of 85 workers per tweet) a chosen worker may not have labeled the task: the query then goes
to the next-best workers by p_hat who did, so that |S_t| labels are bought when they exist.

Baselines: majority vote of all stored labels, and the oracle best set (workers ranked by
their accuracy against gold, the best k in hindsight). Accuracies of the baselines are
expectations over random tie-breaking (ties split evenly, as in the data README).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..crowd.tables import Gold, LabelTable
from ..errors import InputError
from ..policies import lsol_em
from ..policies.lsol import LSOL, DisagreementFilter, Schedule
from ..validate import choice, real


def _expected_correct(counts: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """P(plurality with random ties = truth) per row of vote counts (rows with no votes: 1/K)."""
    top = counts == counts.max(axis=1, keepdims=True)
    n_top = top.sum(axis=1)
    return top[np.arange(len(truth)), truth] / n_top


def mv_all_baseline(D: np.ndarray, truth: np.ndarray, K: int) -> dict:
    """Majority vote of every stored label of each task."""
    counts = np.stack([(D == c).sum(axis=1) for c in range(K)], axis=1)
    g = truth >= 0
    return {"accuracy": float(_expected_correct(counts[g], truth[g]).mean()),
            "labels": int((D >= 0).sum()), "labels_per_task": float((D >= 0).sum(1).mean()),
            "gold_tasks_labelled": int(((D >= 0).any(axis=1) & g).sum())}


def ranked_prefix_curve(D: np.ndarray, truth: np.ndarray, K: int, score: np.ndarray
                        ) -> list[dict]:
    """Per k: accuracy of plurality over the first k workers, in decreasing score, who labeled
    each gold task (k = 1..W)."""
    g = truth >= 0
    tr = truth[g]
    rank = np.argsort(-score, kind="stable")
    L = D[g][:, rank]  # labels in score order
    avail = L >= 0
    pos = np.cumsum(avail, axis=1)  # how many available among the first j workers
    out = []
    for k in range(1, D.shape[1] + 1):
        use = avail & (pos <= k)
        counts = np.stack([((L == c) & use).sum(axis=1) for c in range(K)], axis=1)
        out.append({"k": k, "accuracy": float(_expected_correct(counts, tr).mean()),
                    "labels": int(use.sum()), "labels_per_task": float(use.sum(axis=1).mean()),
                    "gold_tasks_labelled": int(use.any(axis=1).sum()),
                    "workers": rank[:k].tolist()})
    return out


def _best(curve: list[dict]) -> dict:
    best = curve[0]
    for c in curve[1:]:
        if c["accuracy"] > best["accuracy"] + 1e-12:
            best = c
    return best


def gold_accuracy(D: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Each worker's accuracy against gold (0 without a gold task)."""
    g = truth >= 0
    lab, tr = D[g], truth[g]
    n_lab = (lab >= 0).sum(axis=0)
    return np.where(n_lab > 0, ((lab == tr[:, None]) & (lab >= 0)).sum(axis=0)
                    / np.maximum(n_lab, 1), 0.0)


def oracle_baseline(D: np.ndarray, truth: np.ndarray, K: int) -> dict:
    """Best top-k workers by gold accuracy (hindsight); per task the first k who labeled it."""
    return _best(ranked_prefix_curve(D, truth, K, gold_accuracy(D, truth)))


def label_only_scores(D: np.ndarray, K: int) -> np.ndarray:
    """Worker accuracies from every stored label without gold: one-coin MAP EM over the whole
    table (policies/lsol_em.py), the most a label-only learner could know at the end."""
    counts = np.stack([(D == c) for c in range(K)], axis=2).astype(float)
    return lsol_em.estimate(counts, None, int((D >= 0).sum()))


def capped_baselines(D: np.ndarray, truth: np.ndarray, K: int, cap: float) -> dict:
    """Best accuracy at cap or fewer labels per task of the hindsight top-k sets (by_k: every
    such k from 1): ranked by gold accuracy (oracle) and by the label-only EM fit of every
    stored label."""
    out = {}
    for name, score in (("oracle", gold_accuracy(D, truth)),
                        ("labels_only", label_only_scores(D, K))):
        pts = [c for c in ranked_prefix_curve(D, truth, K, score) if c["labels_per_task"] <= cap]
        b = _best(pts) if pts else None
        out[name] = None if b is None else {"k": b["k"], "accuracy": b["accuracy"],
                                            "labels_per_task": b["labels_per_task"],
                                            "by_k": [c["accuracy"] for c in pts]}
    return out


def replay(table: LabelTable, gold: Gold | None, *, rule: str = "mv", estimator: str = "first",
           G1: float = 2.0, cost_weight: float = 0.0, prior: float = 1.0,
           use_filter: bool = False, delta_rank: float = 0.1, order: str = "file",
           n_checkpoints: int = 20, seed: int = 0) -> dict:
    """Run LS_OL over the table's tasks; accuracy against gold vs labels spent.

    cost_weight: lambda per label in the selection objective pi(S) - lambda |S| (trades
    accuracy for labels); prior: Beta pseudo-counts on p_hat (1 = Laplace; decision: with one
    label per tester and sparse tables the paper's raw share gives p_hat = 1 after one tester).
    """
    choice(order, "order", ("file", "shuffle"))
    real(G1, "G1", lo=0.0)
    D = table.dense()
    n_tasks, W = D.shape
    K = table.n_classes
    if W < 1 or n_tasks < 1:
        raise InputError("labels", "a table with at least one task and one worker", D.shape)
    truth = gold.truth(n_tasks) if gold is not None else np.full(n_tasks, -1)
    rng = np.random.default_rng([seed, 7])
    seq = np.arange(n_tasks) if order == "file" else rng.permutation(n_tasks)
    flt = DisagreementFilter(delta_rank=delta_rank) if use_filter else None
    learner = LSOL(W, n_classes=K, rule=rule, estimator=estimator,
                   schedule=Schedule(G1, 0.0), filter=flt, costs=np.ones(W),
                   cost_weight=real(cost_weight, "cost_weight", lo=0.0), prior=prior,
                   seed=seed)  # D2 = 0: a stored table cannot re-label a tester
    outputs = np.empty(n_tasks, dtype=np.int64)
    spent = np.empty(n_tasks, dtype=np.int64)
    for t, task in enumerate(seq, start=1):
        row = D[task]
        a = learner.select(t)
        if a.kind == "exploit":
            labelers, w = _exploit_query(learner, row, a.labelers)
            labels = row[labelers]
            outputs[t - 1] = learner.vote(labels, w)
            learner.steps["exploit"] += 1
            spent[t - 1] = len(labelers)
        else:
            labels = row[a.labelers]
            outputs[t - 1] = learner.observe(a, labels)
            spent[t - 1] = int((labels >= 0).sum())
    tr = truth[seq]
    g = tr >= 0
    correct = (outputs == tr) & g
    grid = np.unique(np.geomspace(1, n_tasks, n_checkpoints).astype(np.int64))
    cum_g = np.cumsum(g)
    curve = [{"tasks": int(n), "labels": int(spent[:n].sum()),
              "accuracy": float(correct[:n].sum() / cum_g[n - 1]) if cum_g[n - 1] else None}
             for n in grid]
    st = learner.state()
    ids = table.worker_ids
    out: dict[str, Any] = {
        "tasks": int(n_tasks), "workers": int(W), "classes": int(K), "gold_tasks": int(g.sum()),
        "accuracy": float(correct.sum() / g.sum()) if g.any() else None,
        # what the accuracy rests on: gold tasks for which LS_OL obtained at least one label
        "gold_tasks_labelled": int(((spent > 0) & g).sum()),
        "labels_spent": int(spent.sum()), "labels_per_task": float(spent.mean()),
        "explore_steps": st["steps"]["explore_new"], "testers": st["testers"],
        "selected": [_id(ids[i]) for i in st["selected"]],
        "removed": [{"worker": _id(ids[r["labeler"]]), "t": r["t"]}
                    for r in st.get("removed", [])],
        "curve": curve,
    }
    if g.any():
        out["mv_all"] = mv_all_baseline(D, truth, K)
        out["within_third"] = capped_baselines(D, truth, K,
                                               out["mv_all"]["labels_per_task"] / 3)
        orc = oracle_baseline(D, truth, K)
        orc["workers"] = [_id(ids[i]) for i in orc["workers"]]
        out["oracle"] = orc
    return out


def _id(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x


def _exploit_query(learner: LSOL, row: np.ndarray, chosen: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    """Workers to query: the chosen set, topped up with the next-best by p_hat who labeled."""
    have = chosen[row[chosen] >= 0]
    if len(have) < len(chosen):
        ph = learner.p_hat()
        cand = np.flatnonzero((row >= 0) & learner.active)
        cand = cand[~np.isin(cand, have)]
        extra = cand[np.argsort(-ph[cand], kind="stable")][: len(chosen) - len(have)]
        have = np.concatenate([have, extra])
    w = learner._weights(learner.p_hat())[have] if learner.rule == "wmv" else None
    return have, w


def replay_task(dataset: str | None = None, labels: str | None = None, gold: str | None = None,
                rule: str = "mv", estimator: str = "first", G1: float = 2.0,
                cost_weight: float = 0.0, prior: float = 1.0, use_filter: bool = False,
                order: str = "file", duplicates: str = "first", seed: int = 0) -> dict:
    """Executor task: load a named data set (crowd.datasets) or label/gold files, replay."""
    from ..crowd.datasets import load_table, read_gold_arg
    from ..crowd.tables import read_labels

    if dataset:
        table, g = load_table(dataset)
    else:
        table = read_labels(labels, duplicates=duplicates)
        g = read_gold_arg(gold, table) if gold else None
    return replay(table, g, rule=rule, estimator=estimator, G1=G1, cost_weight=cost_weight,
                  prior=prior, use_filter=use_filter, order=order, seed=seed)
