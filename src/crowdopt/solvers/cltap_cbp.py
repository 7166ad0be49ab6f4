"""CBP, the correctness-based policy of paper 003 (Algorithm 1, reconstructed in digest 3.1).

Until the budget is spent: for every annotator take her maximal non-decreasing run of accuracies
from her next iteration (capped by the remaining budget); pick the annotator j* whose run has the
highest average accuracy (ties: smallest j); give the run's h* pairs to the h* tasks with the
lowest c' that j* has not labelled yet (ties: lowest index), the most accurate pair to the
neediest task. Incremental: run ends are precomputed, each step costs O(a + t log t) in numpy.
`start` lets column generation's heuristic search continue CBP from a partial assignment.
"""

from __future__ import annotations

import numpy as np

from ..problems.cltap import CltapInstance, CltapSolution, empty_solution


def run_ends(p: np.ndarray) -> np.ndarray:
    """end[j, k] = last iteration of the maximal non-decreasing run of p[j] starting at k."""
    a, K = p.shape
    end = np.empty((a, K), dtype=np.int64)
    end[:, K - 1] = K - 1
    for k in range(K - 2, -1, -1):
        end[:, k] = np.where(p[:, k + 1] >= p[:, k], end[:, k + 1], k)
    return end


def cbp(inst: CltapInstance, *, avg_on: str = "p", start: CltapSolution | None = None,
        budget: int | None = None) -> CltapSolution:
    """Algorithm 1 (digest 3.1). avg_on='p' (paper) or 'phi' (digest B2 option)."""
    sol = start if start is not None else empty_solution(inst)
    z = sol.task_of.copy()
    a, K, t = inst.a, inst.K, inst.t
    vals = inst.p if avg_on == "p" else inst.phi
    csum = np.concatenate([np.zeros((a, 1)), np.cumsum(vals, axis=1)], axis=1)
    end = run_ends(inst.p)
    used = z >= 0
    kappa = used.sum(axis=1)  # next free iteration (0-based) = prefix length
    c = np.bincount(z[used], weights=inst.phi[used], minlength=t)[:t].astype(float)
    labelled = np.zeros((a, t), dtype=bool)
    for j, k in zip(*np.nonzero(used)):
        labelled[j, z[j, k]] = True
    B = (inst.b if budget is None else budget) - int(used.sum())
    rows = np.arange(a)
    idx = np.arange(t)
    while B > 0:
        open_ = kappa < K
        if not open_.any():
            break
        kap = np.minimum(kappa, K - 1)
        e = np.minimum(end[rows, kap], kap + B - 1)
        avg = (csum[rows, e + 1] - csum[rows, kap]) / (e - kap + 1)
        avg[~open_] = -np.inf
        js = int(np.argmax(avg))  # first maximum = smallest j on ties
        k0, k1 = int(kappa[js]), int(e[js])
        h = k1 - k0 + 1
        if h == 1:
            key = np.where(labelled[js], np.inf, c)
            chosen = np.array([int(np.argmin(key))])  # first minimum = lowest index
        else:
            free = idx[~labelled[js]]
            order = np.lexsort((free, c[free]))
            chosen = free[order[:h]]
        ks = np.arange(k1, k0 - 1, -1)  # best (latest) pair of a non-decreasing run first
        z[js, ks] = chosen
        c[chosen] += inst.phi[js, ks]
        labelled[js, chosen] = True
        kappa[js] = k1 + 1
        B -= h
    return CltapSolution(z)
