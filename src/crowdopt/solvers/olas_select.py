"""Solvers of OLAS Model 10: the corrected Algorithm 1 fast path and exact references.

- `select_greedy` (Theorem 2 / digest A3'): scan the entropy-sorted pool once; labeler i (by
  accuracy) takes the c_i points starting at r_i = max(rho_i, r_{i-1} + c_{i-1}), where rho_i is
  its first allowed point; stop at the end of the pool or at the budget cap B (digest F3).
  O(u log u + M log M + M u) with numpy, the O(M u) part being the shared `allowed` matrix.
- `assign_theorem1`: the canonical (Theorem 1) assignment of a selected set; LP methods use it
  to turn a selection into the assignment that also satisfies (10e)-(10h) (digest F1).
"""

from __future__ import annotations

import numpy as np

from ..problems import olas_assign as P2
from ..problems import olas_select as P
from .olas_assign import assign_sorted


def select_greedy(inst: P.OlasSelectInstance) -> P.OlasSelectSolution:
    """Corrected Algorithm 1 (A3'): contiguous blocks r_i..r_i+c_i-1, truncated at B.

    `selected` lists pool indices in entropy order (descending, ties by pool order) and
    `assignment` the labeler index of each; the objective is optimal for (10a)-(10i) + B.
    """
    ol, op = inst.labeler_order(), inst.point_order()
    A = P.allowed(inst)[ol][:, op]  # staircase, validated by make_instance
    u = inst.n_points
    rho = np.where(A.any(axis=1), A.argmax(axis=1), u) if u else np.zeros(len(ol), np.int64)
    caps = inst.capacities[ol]
    limit = inst.max_selected
    pos: list[np.ndarray] = []
    lab: list[np.ndarray] = []
    v = taken = 0
    for k in range(len(ol)):
        if taken >= limit:
            break
        v = max(v, int(rho[k]))  # r_k: never move backwards (worse labelers are noisier)
        if v >= u:
            break  # r_k and every later r do not exist
        take = min(int(caps[k]), u - v, limit - taken)
        if take > 0:
            pos.append(np.arange(v, v + take))
            lab.append(np.full(take, ol[k], dtype=np.int64))
            taken += take
        v += int(caps[k])
    if not pos:
        return P.OlasSelectSolution(np.zeros(0, np.int64), np.zeros(0, np.int64))
    return P.OlasSelectSolution(op[np.concatenate(pos)].astype(np.int64), np.concatenate(lab))


def assign_theorem1(inst: P.OlasSelectInstance, selected: np.ndarray) -> P.OlasSelectSolution:
    """Theorem 1 assignment of a selected set (k-th highest entropy -> k-th capacity slot).

    For any selection that admits an assignment with all pairs allowed, this one is allowed too
    (bottleneck optimality of Theorem 1) and satisfies (10e)-(10h). `selected` is returned in
    entropy order (ties by pool order).
    """
    sel = np.sort(np.asarray(selected, dtype=np.int64))
    sub = P2.OlasAssignInstance(inst.accuracies, inst.capacities, inst.entropies[sel], inst.noise)
    z = assign_sorted(sub).assignment
    order = np.argsort(-inst.entropies[sel], kind="stable")
    return P.OlasSelectSolution(sel[order], z[order])
