"""Local search of paper 003 Sec. 4.3, made concrete as in digest 3.2 (decision C1).

Moves, always kept feasible: (i) internal swap of two annotations between two workplans;
(ii) external swap: remove (j, k) from a workplan (j's later iterations move up one to keep her
prefix) and append annotator j''s next iteration to a bottleneck task; (iii) addition of an
annotator's next iteration to a bottleneck task (if budget remains) and deletion of a pair that
precedes a bottleneck label of the same annotator. The objective min_i c' is flat, so moves are
ranked by the lexicographic f = (min_i c', -#{i at the min}, sum_i c') and only moves touching a
bottleneck task are generated (at most `max_moves` per step, sampled with the seed). The best move
is applied even if worse; after `patience` worsening moves in a row the best external swap is
forced; a short tabu list forbids re-adding a just-removed (task, annotator). Returns the best
assignment seen, so never worse than the start (P21).
"""

from __future__ import annotations

import time

import numpy as np

from ..problems.cltap import CltapInstance, CltapSolution

_EPS = 1e-12


def objective_key(c: np.ndarray) -> tuple[float, int, float]:
    """f = (min c', -#tasks at the min, sum c') (digest 3.2)."""
    m = float(c.min())
    return (m, -int((c <= m + _EPS).sum()), float(c.sum()))


def _better(f1: tuple, f2: tuple) -> bool:
    if f1[0] > f2[0] + 1e-12:
        return True
    if f1[0] < f2[0] - 1e-12:
        return False
    if f1[1] != f2[1]:
        return f1[1] > f2[1]
    return f1[2] > f2[2] + 1e-12


class _State:
    def __init__(self, inst: CltapInstance, z: np.ndarray) -> None:
        self.inst = inst
        self.z = z.copy()
        self.n = (z >= 0).sum(axis=1)
        used = z >= 0
        self.c = np.bincount(z[used], weights=inst.phi[used], minlength=inst.t)[:inst.t]
        self.lab = np.zeros((inst.a, inst.t), dtype=bool)
        for j, k in zip(*np.nonzero(used)):
            self.lab[j, z[j, k]] = True

    def removal_effect(self, j: int, k: int) -> list[tuple[int, float]]:
        """Changes of c when (j, k) is removed and j's later iterations move up one."""
        phi, z, n = self.inst.phi, self.z, int(self.n[j])
        eff = [(int(z[j, k]), -float(phi[j, k]))]
        for kk in range(k + 1, n):
            eff.append((int(z[j, kk]), float(phi[j, kk - 1] - phi[j, kk])))
        return eff

    def apply(self, move: tuple) -> None:
        kind = move[0]
        z, phi = self.z, self.inst.phi
        if kind == "swap":
            _, j1, k1, j2, k2 = move
            i1, i2 = int(z[j1, k1]), int(z[j2, k2])
            self.lab[j1, i1] = self.lab[j2, i2] = False
            z[j1, k1], z[j2, k2] = i2, i1
            self.lab[j1, i2] = self.lab[j2, i1] = True
            self.c[i1] += phi[j2, k2] - phi[j1, k1]
            self.c[i2] += phi[j1, k1] - phi[j2, k2]
            return
        if kind in ("ext", "del"):
            j, k = move[1], move[2]
            for task, d in self.removal_effect(j, k):
                self.c[task] += d
            self.lab[j, z[j, k]] = False
            n = int(self.n[j])
            z[j, k:n - 1] = z[j, k + 1:n].copy()
            z[j, n - 1] = -1
            self.n[j] -= 1
        if kind in ("ext", "add"):
            j2, i = move[-2], move[-1]
            k2 = int(self.n[j2])
            z[j2, k2] = i
            self.n[j2] += 1
            self.lab[j2, i] = True
            self.c[i] += phi[j2, k2]


def _moves(st: _State, rng: np.random.Generator, max_moves: int, tabu: dict, step: int
           ) -> list[tuple[tuple, list[tuple[int, float]]]]:
    """Candidate moves touching a bottleneck task, each with its c changes."""
    inst, z, phi = st.inst, st.z, st.inst.phi
    m = st.c.min()
    bott = np.flatnonzero(st.c <= m + _EPS)[:8]
    used = np.argwhere(z >= 0)
    labels = int(len(used))
    out: list[tuple[tuple, list[tuple[int, float]]]] = []
    for i1 in bott:
        i1 = int(i1)
        mine = [(int(j), int(k)) for j, k in used if z[j, k] == i1]
        for j1, k1 in mine:  # (i) internal swaps
            for j2, k2 in used:
                j2, k2 = int(j2), int(k2)
                i2 = int(z[j2, k2])
                if i2 == i1 or phi[j2, k2] <= phi[j1, k1]:
                    continue
                if j1 != j2 and (st.lab[j1, i2] or st.lab[j2, i1]):
                    continue
                d = float(phi[j2, k2] - phi[j1, k1])
                out.append((("swap", j1, k1, j2, k2), [(i1, d), (i2, -d)]))
        for j2 in range(inst.a):  # (iii) additions
            if labels < inst.b and st.n[j2] < inst.K and not st.lab[j2, i1] \
                    and tabu.get((i1, j2), -1) < step:
                out.append((("add", j2, i1), [(i1, float(phi[j2, st.n[j2]]))]))
        pool = used
        if len(used) * inst.a > max_moves:  # sample the removed pairs on large instances
            pool = used[rng.choice(len(used), size=max(1, max_moves // inst.a), replace=False)]
        for j, k in pool:  # (ii) external swaps and (iii) deletions
            j, k = int(j), int(k)
            eff = st.removal_effect(j, k)
            pos = [kk for kk in range(k + 1, int(st.n[j])) if z[j, kk] == i1]
            if pos:
                out.append((("del", j, k), eff))
            for j2 in range(inst.a):
                after_n = int(st.n[j2]) - (1 if j2 == j else 0)
                has = st.lab[j2, i1] and not (j2 == j and z[j, k] == i1)
                if after_n >= inst.K or has or tabu.get((i1, j2), -1) >= step:
                    continue
                # j2's next iteration after the removal (phi index shifts if j2 == j)
                out.append((("ext", j, k, j2, i1), eff + [(i1, float(phi[j2, after_n]))]))
    if len(out) > max_moves:
        pick = rng.choice(len(out), size=max_moves, replace=False)
        out = [out[q] for q in sorted(pick)]
    return out


def local_search(inst: CltapInstance, start: CltapSolution, *, time_limit: float = 10.0,
                 patience: int = 5, max_steps: int = 10_000, stall_steps: int = 50,
                 max_moves: int = 4000, tabu_len: int = 7, seed: int = 0) -> CltapSolution:
    """Best-move local search from `start` (digest 3.2); stops at the time limit, after
    `stall_steps` steps without a new best, or when no move exists. Returns the best seen."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    st = _State(inst, start.task_of)
    best_z, best_f = st.z.copy(), objective_key(st.c)
    cur_f = best_f
    neg = stall = 0
    tabu: dict[tuple[int, int], int] = {}
    for step in range(max_steps):
        if time.perf_counter() - t0 > time_limit or stall >= stall_steps:
            break
        moves = _moves(st, rng, max_moves, tabu, step)
        if not moves:
            break
        scored = []
        for mv, eff in moves:
            c = st.c.copy()
            for task, d in eff:
                c[task] += d
            scored.append((objective_key(c), mv))
        forced = neg >= patience
        pool = [s for s in scored if s[1][0] == "ext"] if forced else []
        pool = pool or scored
        f_new, mv = pool[0]
        for f, m in pool[1:]:
            if _better(f, f_new):
                f_new, mv = f, m
        removed = _removed_pairs(st, mv)
        st.apply(mv)
        for key in removed:
            tabu[key] = step + tabu_len
        neg = 0 if forced else (neg + 1 if _better(cur_f, f_new) else 0)
        cur_f = f_new
        if _better(f_new, best_f):
            best_z, best_f, stall = st.z.copy(), f_new, 0
        else:
            stall += 1
    return CltapSolution(best_z)


def _removed_pairs(st: _State, mv: tuple) -> list[tuple[int, int]]:
    """(task, annotator) pairs a move takes away (for the tabu list)."""
    if mv[0] == "swap":
        _, j1, k1, j2, k2 = mv
        return [(int(st.z[j1, k1]), j1), (int(st.z[j2, k2]), j2)]
    if mv[0] in ("ext", "del"):
        return [(int(st.z[mv[1], mv[2]]), mv[1])]
    return []
