"""Baselines of paper 003 Sec. 6.2.1, implemented as digest 3.7 decides (approximations, F1).

- `random_policy` (RND): every task first gets one random annotator, then random feasible
  (task, annotator) pairs until the budget is spent; iteration = order of assignment.
- `regular_policy` (RGL, Karger-Oh-Shah): a random (l, r)-regular bipartite graph by the
  configuration model (retries, then repair), random iteration order per annotator.
- `primal_approximation` (PA, offline Ho-Jabbari-Vaughan, NOT verified against the original):
  one accuracy per annotator (mean over her iterations), tasks covered greedily up to an
  error-proxy level C = sum (2 p_j - 1)^2, C binary-searched to the largest level the budget buys.
- `top_annotators` (TA): floor(b/t) labels per task (+1 for the first b mod t tasks), each from the
  annotators with the highest accuracy at their next iteration.
Every policy uses min(b, aK) labels at most and returns a feasible `CltapSolution`.
"""

from __future__ import annotations

import numpy as np

from ..problems.cltap import CltapInstance, CltapSolution, empty_solution


def _from_lists(inst: CltapInstance, tasks_of: list[list[int]]) -> CltapSolution:
    z = empty_solution(inst).task_of
    for j, tasks in enumerate(tasks_of):
        z[j, :len(tasks)] = tasks
    return CltapSolution(z)


def random_policy(inst: CltapInstance, seed: int = 0) -> CltapSolution:
    """RND (digest 3.7)."""
    rng = np.random.default_rng(seed)
    a, t, K = inst.a, inst.t, inst.K
    total = inst.capacity
    lab = np.zeros((a, t), dtype=bool)
    tasks_of: list[list[int]] = [[] for _ in range(a)]
    used = 0
    for i in rng.permutation(t):
        if used >= total:
            break
        free = [j for j in range(a) if len(tasks_of[j]) < K]
        if not free:
            break
        j = int(rng.choice(free))
        tasks_of[j].append(int(i))
        lab[j, i] = True
        used += 1
    while used < total:
        open_ = [j for j in range(a) if len(tasks_of[j]) < K and not lab[j].all()]
        if not open_:
            break
        j = int(rng.choice(open_))
        i = int(rng.choice(np.flatnonzero(~lab[j])))
        tasks_of[j].append(i)
        lab[j, i] = True
        used += 1
    return _from_lists(inst, tasks_of)


def _even(total: int, n: int, rng: np.random.Generator) -> np.ndarray:
    deg = np.full(n, total // n)
    deg[rng.permutation(n)[: total - deg.sum()]] += 1
    return deg


def regular_policy(inst: CltapInstance, seed: int = 0, retries: int = 50) -> CltapSolution:
    """RGL: (l, r)-regular random bipartite graph, l_i in {floor, ceil}(b/t), r_j likewise."""
    rng = np.random.default_rng(seed)
    a, t = inst.a, inst.t
    total = min(inst.capacity, a * t)
    l_deg, r_deg = _even(total, t, rng), _even(total, a, rng)
    task_stubs = np.repeat(np.arange(t), l_deg)
    ann_stubs = np.repeat(np.arange(a), r_deg)
    for _ in range(retries):
        perm = rng.permutation(ann_stubs)
        if len(set(zip(task_stubs.tolist(), perm.tolist()))) == total:
            break
    edges = list(zip(task_stubs.tolist(), perm.tolist()))
    have: dict[tuple[int, int], int] = {}
    for e in edges:
        have[e] = have.get(e, 0) + 1
    for q, (i, j) in enumerate(edges):  # repair duplicates by swapping annotator endpoints
        if have[(i, j)] <= 1:
            continue
        for r in rng.permutation(len(edges)):
            i2, j2 = edges[r]
            if (i, j2) not in have and (i2, j) not in have and i2 != i and j2 != j:
                have[(i, j)] -= 1
                have[(i2, j2)] -= 1
                if have[(i2, j2)] == 0:
                    del have[(i2, j2)]
                edges[q], edges[r] = (i, j2), (i2, j)
                have[(i, j2)] = 1
                have[(i2, j)] = 1
                break
    tasks_of: list[list[int]] = [[] for _ in range(a)]
    for i, j in sorted(set(edges)):
        tasks_of[j].append(i)
    return _from_lists(inst, [list(rng.permutation(ts)) for ts in tasks_of])


def _pa_cover(q: np.ndarray, order: np.ndarray, t: int, K: int, level: float
              ) -> list[list[int]] | None:
    cap = np.full(len(q), K)
    tasks_of: list[list[int]] = [[] for _ in range(len(q))]
    for i in range(t):
        got = 0.0
        for j in order:
            if got >= level:
                break
            if cap[j] > 0:
                tasks_of[j].append(i)
                cap[j] -= 1
                got += q[j]
        if got < level:
            return None
    return tasks_of


def primal_approximation(inst: CltapInstance, seed: int = 0) -> CltapSolution:
    """PA (digest 3.7, an approximation): largest coverage level affordable with the budget."""
    rng = np.random.default_rng(seed)
    q = (2.0 * inst.p.mean(axis=1) - 1.0) ** 2
    order = np.argsort(-q, kind="stable")
    lo, hi = 0.0, float(q.sum())
    best = _pa_cover(q, order, inst.t, inst.K, 0.0) or [[] for _ in range(inst.a)]
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        cover = _pa_cover(q, order, inst.t, inst.K, mid)
        if cover is not None and sum(map(len, cover)) <= inst.b:
            lo, best = mid, cover
        else:
            hi = mid
    return _from_lists(inst, [list(rng.permutation(ts)) for ts in best])


def top_annotators(inst: CltapInstance, seed: int = 0) -> CltapSolution:
    """TA: each task (in order) takes the annotators with the best accuracy at their next iteration."""
    a, t, K = inst.a, inst.t, inst.K
    per = inst.b // t
    extra = inst.b - per * t
    n = np.zeros(a, dtype=np.int64)
    tasks_of: list[list[int]] = [[] for _ in range(a)]
    for i in range(t):
        need = min(per + (1 if i < extra else 0), a)
        nxt = np.where(n < K, inst.p[np.arange(a), np.minimum(n, K - 1)], -np.inf)
        for j in np.argsort(-nxt, kind="stable")[:need]:
            if nxt[j] == -np.inf:
                break
            tasks_of[j].append(i)
            n[j] += 1
    return _from_lists(inst, tasks_of)


BASELINES = {"rnd": random_policy, "rgl": regular_policy, "pa": primal_approximation,
             "ta": top_annotators}
