"""KOS, the non-adaptive heterogeneous baseline of Opt-KG's Fig. 11 (digest 002 A12).

Karger, Oh & Shah (Operations Research 2014): spend the budget T up front on a random
(l, r)-biregular simple bipartite graph between the K tasks and the M workers (l = T/K labels
per task, r = T/M tasks per worker, distributed as floor/ceil when they are not integers), ask
every edge once, then run KOS message passing (`crowd.messages.kos_scores`) from
y ~ N(1, 1) until the rescaled messages stop moving (change <= 1e-6, at most 200 iterations:
`crowd.messages`' defaults); label +1 where x_t >= 0 (ties to +1, as H_T). The digest's
"k_max = 10-20" is not enough at K = 50, M = 100: the messages still rotate there (one seed
at T = 20K: accuracy 0.78 after 1 iteration, 0.24 after 19, 0.72 after 50).

The graph: the configuration model (a random matching of task stubs to worker stubs), after
which every repeated (task, worker) pair is repaired by swapping its worker with that of a
random other edge when the swap creates no new repeat (degree-preserving edge switches; the
digest's "rejection of multi-edges" would almost never succeed at l = 20, r = 10, where the
expected number of repeats is about (l - 1)(r - 1)/2 = 85).
"""

from __future__ import annotations

import numpy as np

from ..crowd.messages import KOS_MAX_ITER, KOS_TOL, kos_scores
from ..errors import InputError
from ..validate import labels_for_tasks


def degrees(total: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n nonnegative integers summing to `total`, each floor(total/n) or ceil (the ceil ones
    at random)."""
    base, extra = divmod(int(total), int(n))
    d = np.full(n, base, dtype=np.int64)
    d[rng.permutation(n)[:extra]] += 1
    return d


def biregular_graph(K: int, M: int, T: int, rng: np.random.Generator
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(task, worker) arrays of T distinct edges with task degrees ~T/K and worker degrees
    ~T/M (module docstring)."""
    if T > K * M:
        raise InputError("budget", f"at most K * M = {K * M} distinct (task, worker) pairs", T)
    labels_for_tasks(T, "budget", K)  # every task gets T/K >= 1 labels (none: a tie guess)
    if T == K * M:  # every pair once: the complete graph
        task, worker = np.divmod(np.arange(T), M)
        return task, worker
    task = np.repeat(np.arange(K), degrees(T, K, rng))
    worker = rng.permutation(np.repeat(np.arange(M), degrees(T, M, rng)))
    count: dict[tuple[int, int], int] = {}
    for t, w in zip(task.tolist(), worker.tolist(), strict=True):
        count[(t, w)] = count.get((t, w), 0) + 1
    bad = [e for e in range(T) if count[(int(task[e]), int(worker[e]))] > 1]
    tries = 0
    while bad:
        tries += 1
        if tries > 1000 * (len(bad) + 10):
            raise InputError("budget", "a degree sequence with a simple bipartite graph", T)
        e = bad[-1]
        f = int(rng.integers(T))
        t1, w1, t2, w2 = int(task[e]), int(worker[e]), int(task[f]), int(worker[f])
        if t1 == t2 or (t1, w2) in count or (t2, w1) in count:
            continue
        for pair, d in (((t1, w1), -1), ((t2, w2), -1), ((t1, w2), 1), ((t2, w1), 1)):
            count[pair] = count.get(pair, 0) + d
            if count[pair] == 0:
                del count[pair]
        worker[e], worker[f] = w2, w1
        bad = [g for g in bad if count.get((int(task[g]), int(worker[g])), 0) > 1]
    return task, worker


def kos_estimate(task: np.ndarray, worker: np.ndarray, z: np.ndarray, K: int, M: int,
                 rng: np.random.Generator, *, tol: float = KOS_TOL,
                 max_iter: int = KOS_MAX_ITER) -> np.ndarray:
    """Boolean estimate (True = +1) of every task from answers z in {+1, -1} on the edges:
    KOS from y ~ N(1, 1) (module docstring), ties to +1."""
    x, _, _, _ = kos_scores(task, worker, np.asarray(z, dtype=float), K, M,
                            init=rng.normal(1.0, 1.0, size=len(task)), tol=tol,
                            max_iter=max_iter)
    return x >= 0
