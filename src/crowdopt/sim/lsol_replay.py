"""Replay of LS_OL on a real label table (paper 001, Sec. 6.2; digest 6.2 and 7.25).

Labelers are the table's workers; tasks arrive in file order (or a seeded shuffle). A label
"query" reveals the stored label and costs one label. Exploration queries every active worker
(and so reveals every stored label of the task); exploitation queries the chosen set S_t. A
fixed table holds one label per (task, worker), so a tester cannot be re-assigned: D2 = 0 and
each tester counts once (digest 7.25). Labels may be K-ary (plurality, random ties; the binary
pi on p_hat is the selection surrogate and every set size is searched). In sparse tables
(20 of 85 workers per tweet) a chosen worker may not have labeled the task: the query then goes
to the next-best workers by p_hat who did, so that |S_t| labels are bought when they exist.

Sequential exploitation (`exploit="sequential"`, the default of `replay lsol`): instead of the
set S_t, an exploitation step buys labels one at a time from the task's available workers in
decreasing p_hat until the one-coin posterior of the leading class (log-odds weights
log(p_hat (K-1) / (1 - p_hat)) floored at W_FLOOR, uniform class prior) reaches `confidence`
with at least `min_labels` labels, within a running label budget; the answer is that
posterior's mode. The estimator "answers" (replay only) scores each worker by the agreement of
every label the learner bought from it (testers and exploitation steps) with the answer that
the task's other bought labels gave when it was processed, so the exploitation labels inform
the ranking of the workers a sparse task offers. Exploration and its schedule are the paper's.

Baselines: majority vote of all stored labels, and the oracle best set (workers ranked by
their accuracy against gold, the best k in hindsight). Accuracies of the baselines are
expectations over random tie-breaking (ties split evenly, as in the data README).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..crowd.tables import Gold, LabelTable
from ..errors import InputError
from ..policies import lsol_em
from ..policies.lsol import ESTIMATORS, LSOL, DisagreementFilter, Schedule
from ..validate import choice, integer, labels_per_task, real

REPLAY_ESTIMATORS = ESTIMATORS + ("answers",)
EXPLOITS = ("set", "sequential")
# `replay lsol`'s defaults, by measurement (reproduce lsol, replay grid): at a third of the
# labels per task they reach majority vote of all labels on bluebirds, sentiment_possent and
# weather_cf_amt (the set S_t with the paper's estimators stays below it on weather)
REPLAY_DEFAULTS = {"estimator": "answers", "exploit": "sequential", "confidence": 0.9999,
                   "min_labels": 3}
# sequential vote weights are floored just above 0: a worker estimated at or below chance is not
# counted inverted (on a binary table a misled start would flip the answers, which then score
# the good workers low), and workers without information vote as in plurality
W_FLOOR = 0.01
OVERDRAFT_TASKS = 2  # early steps may borrow this many fully labeled tasks' worth of budget


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


class AnswerAgreement:
    """Estimator "answers": p_i = (agreements of i's bought labels with the answer the other
    labels of the same task give + prior) / (such labels + 2 prior); 1/2 without one. Leaving
    i's own label out keeps a worker from confirming itself (a worker bought first with a large
    weight would otherwise make the answer and agree with it); the answers use the weights at
    the time the task was processed (no re-aggregation in hindsight)."""

    def __init__(self, W: int, prior: float) -> None:
        self.agree = np.zeros(W)
        self.n = np.zeros(W)
        self.prior = prior

    def add(self, workers: np.ndarray, labels: np.ndarray, weights: np.ndarray, K: int) -> None:
        """Record one task's bought labels with their vote weights (1 = plurality): each label
        scores its share of the leave-one-out weighted vote's top classes."""
        if len(workers) < 2:
            return
        total = np.bincount(labels, weights=weights, minlength=K)
        others = total[None, :] - np.eye(K)[labels] * weights[:, None]
        top = others >= others.max(axis=1, keepdims=True) - 1e-9
        self.agree[workers] += top[np.arange(len(labels)), labels] / top.sum(axis=1)
        self.n[workers] += 1

    def p_hat(self) -> np.ndarray:
        """Current estimate (Beta(prior, prior) pseudo-counts, as the agreement estimators)."""
        return np.where(self.n > 0, (self.agree + self.prior)
                        / np.maximum(self.n + 2 * self.prior, 1e-300), 0.5)


def sequential_query(row: np.ndarray, cand: np.ndarray, p: np.ndarray, w: np.ndarray, K: int,
                     confidence: float, min_labels: int, n_max: int
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Workers of `cand` (those who labeled the task) in decreasing p, bought one at a time
    until the one-coin posterior max_l q_l >= confidence with >= min_labels labels, or n_max
    labels; returns (workers bought, weighted vote scores log q + const)."""
    order = cand[np.argsort(-p[cand], kind="stable")][:max(n_max, 0)]
    score = np.zeros(K)
    for j, i in enumerate(order, start=1):
        score[row[i]] += w[i]
        if j >= min_labels:
            q = np.exp(score - score.max())
            if q.max() / q.sum() >= confidence:
                return order[:j], score
    return order, score


def replay(table: LabelTable, gold: Gold | None, *, rule: str = "mv", estimator: str = "first",
           G1: float = 2.0, cost_weight: float = 0.0, prior: float = 1.0,
           use_filter: bool = False, delta_rank: float = 0.1, order: str = "file",
           exploit: str = "set", confidence: float = 0.9999, min_labels: int = 3,
           budget: float | None = None, n_checkpoints: int = 20, seed: int = 0) -> dict:
    """Run LS_OL over the table's tasks; accuracy against gold vs labels spent.

    cost_weight: lambda per label in the selection objective pi(S) - lambda |S| (trades
    accuracy for labels); prior: Beta pseudo-counts on p_hat (1 = Laplace; decision: with one
    label per tester and sparse tables the paper's raw share gives p_hat = 1 after one tester).
    exploit "sequential": buy until the posterior reaches `confidence` (module docstring), at
    most B t - spent + overdraft (1 - t / T) labels at step t (overdraft = two fully labeled
    tasks, so the steps right after the testers are not starved), and never more than the
    run's B T leaves once the testers still due (a fully labeled task each) and one label for
    each later step are reserved; B = `budget` labels per task. The run keeps B and answers
    every task: a budget below `min_budget` (the testers plus one label per other task) is
    refused naming it; the default is a third of the table's labels per task, raised to it.
    """
    choice(order, "order", ("file", "shuffle"))
    choice(estimator, "estimator", REPLAY_ESTIMATORS)
    choice(exploit, "exploit", EXPLOITS)
    real(G1, "G1", lo=0.0)
    real(confidence, "confidence", lo=0.0, hi=1.0)
    integer(min_labels, "min_labels", lo=1)
    if budget is not None and exploit != "sequential":  # S_t is bought whole: no budget
        raise InputError("budget", "None unless exploit is 'sequential'", budget)
    D = table.dense()
    n_tasks, W = D.shape
    K = table.n_classes
    if W < 1 or n_tasks < 1:
        raise InputError("labels", "a table with at least one task and one worker", D.shape)
    per_task = (D >= 0).sum(axis=1)
    per_task_max = int(per_task.max())
    schedule = Schedule(G1, 0.0)
    n_explore = tester_steps(schedule, n_tasks)
    # the run keeps its budget and answers every task: the testers (each at most a fully
    # labeled task) and one label for every other task must fit in it; a budget below that is
    # refused naming the minimum, and the default (a third of the labels per task) is raised
    # to it
    need = min_budget(n_tasks, n_explore, per_task_max)
    if budget is None:
        B = max(1.0, float(per_task.mean()) / 3, need)
    else:
        B = labels_per_task(budget, "budget")
        if B < need:
            raise InputError("budget", f"a number >= {math.ceil(need * 1000) / 1000:g} labels "
                             f"per task on this table ({n_explore} testers of up to "
                             f"{per_task_max} labels each, and one label for each of the "
                             f"other {n_tasks - n_explore} tasks)", budget)
    overdraft = OVERDRAFT_TASKS * float(per_task_max)
    truth = gold.truth(n_tasks) if gold is not None else np.full(n_tasks, -1)
    rng = np.random.default_rng([seed, 7])
    seq = np.arange(n_tasks) if order == "file" else rng.permutation(n_tasks)
    flt = DisagreementFilter(delta_rank=delta_rank) if use_filter else None
    answers = AnswerAgreement(W, prior) if estimator == "answers" else None
    learner = LSOL(W, n_classes=K, rule=rule,
                   estimator="pooled" if answers is not None else estimator,
                   schedule=schedule, filter=flt, costs=np.ones(W),
                   cost_weight=real(cost_weight, "cost_weight", lo=0.0), prior=prior,
                   seed=seed)  # D2 = 0: a stored table cannot re-label a tester
    outputs = np.empty(n_tasks, dtype=np.int64)
    spent = np.empty(n_tasks, dtype=np.int64)
    for t, task in enumerate(seq, start=1):
        row = D[task]
        a = learner.select(t)
        if a.kind == "exploit":
            p = learner.p_hat() if answers is None else answers.p_hat()
            if exploit == "sequential":
                n_max = _sequential_allowance(B, t, n_tasks, float(spent[: t - 1].sum()),
                                              overdraft, per_task_max,
                                              max(0, n_explore - learner.n))
                cand = np.flatnonzero((row >= 0) & learner.active)
                w_all = np.maximum(learner._weights(p), W_FLOOR)
                labelers, _ = sequential_query(row, cand, p, w_all, K, confidence,
                                               min_labels, n_max)
                labels = row[labelers]
                w_used = w_all[labelers]
                outputs[t - 1] = learner._weighted(labels, w_used, learner.vote_rng)
            else:
                chosen = a.labelers if answers is None else learner.choose(p)[0]
                labelers, w = _exploit_query(learner, row, chosen, p)
                labels = row[labelers]
                outputs[t - 1] = learner.vote(labels, w)
                w_used = np.ones(len(labelers)) if w is None else w
            learner.steps["exploit"] += 1
            spent[t - 1] = len(labelers)
        else:
            labels = row[a.labelers]
            outputs[t - 1] = learner.observe(a, labels)
            labelers = a.labelers[labels >= 0]
            labels = labels[labels >= 0]
            w_used = np.ones(len(labelers))  # the testers' consensus is a plurality
            spent[t - 1] = len(labelers)
        if answers is not None:
            answers.add(labelers, labels, w_used, K)
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
        "selected": [_id(ids[i]) for i in (st["selected"] if answers is None
                                           else learner.choose(answers.p_hat())[0])],
        "exploit": exploit, "estimator": estimator,
        "budget": B if exploit == "sequential" else None,
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


def tester_steps(schedule: Schedule, n_tasks: int) -> int:
    """How many of `n_tasks` steps explore (take a new tester) under `schedule` with D2 = 0, as
    LSOL.explores decides it: step t explores while the testers so far are at most D1(t)."""
    n = 0
    for t in range(1, n_tasks + 1):
        if n <= schedule.d1(t):
            n += 1
    return n


def min_budget(n_tasks: int, n_explore: int, per_task_max: int) -> float:
    """The smallest budget (labels per task) a sequential replay keeps while answering every
    task: its testers, each at most a fully labeled task, and one label for each other task."""
    return (n_explore * per_task_max + (n_tasks - n_explore)) / n_tasks


def _sequential_allowance(B: float, t: int, n_tasks: int, spent: float, overdraft: float,
                          per_task_max: int, testers_due: int) -> int:
    """Labels exploitation step t may buy: the running allowance B t - spent + overdraft
    (1 - t / T) (at least one, borrowed from the later steps), capped by what the whole run's
    B T leaves once the testers still due (each at most a fully labeled task) and one label for
    each later exploitation step are reserved: with B >= `min_budget` every step gets at least
    one label and the run ends within B per task."""
    B = min(B, per_task_max)  # never binding beyond (no task has more), and B T stays finite
    running = max(1, math.floor(B * t - spent + overdraft * (1 - t / n_tasks) + 1e-9))
    testers_due = min(n_tasks - t, testers_due)
    later = n_tasks - t - testers_due
    left = math.floor(B * n_tasks - spent - testers_due * per_task_max - later + 1e-9)
    return max(0, min(running, left))


def _id(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x


def _exploit_query(learner: LSOL, row: np.ndarray, chosen: np.ndarray, ph: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray | None]:
    """Workers to query: the chosen set, topped up with the next-best by p_hat who labeled."""
    have = chosen[row[chosen] >= 0]
    if len(have) < len(chosen):
        cand = np.flatnonzero((row >= 0) & learner.active)
        cand = cand[~np.isin(cand, have)]
        extra = cand[np.argsort(-ph[cand], kind="stable")][: len(chosen) - len(have)]
        have = np.concatenate([have, extra])
    w = learner._weights(ph)[have] if learner.rule == "wmv" else None
    return have, w


def replay_task(dataset: str | None = None, labels: str | None = None, gold: str | None = None,
                rule: str = "mv", estimator: str = "first", G1: float = 2.0,
                cost_weight: float = 0.0, prior: float = 1.0, use_filter: bool = False,
                order: str = "file", duplicates: str = "first", exploit: str = "set",
                confidence: float = 0.9999, min_labels: int = 3, budget: float | None = None,
                seed: int = 0) -> dict:
    """Executor task: load a named data set (crowd.datasets) or label/gold files, replay."""
    from ..crowd.datasets import load_table, read_gold_arg
    from ..crowd.tables import read_labels

    if dataset:
        table, g = load_table(dataset)
    else:
        table = read_labels(labels, duplicates=duplicates)
        g = read_gold_arg(gold, table) if gold else None
    return replay(table, g, rule=rule, estimator=estimator, G1=G1, cost_weight=cost_weight,
                  prior=prior, use_filter=use_filter, order=order, exploit=exploit,
                  confidence=confidence, min_labels=min_labels, budget=budget, seed=seed)
