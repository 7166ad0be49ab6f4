"""Local search of paper 003 Sec. 4.3, made concrete as in digest 3.2 (decision C1).

Moves, always kept feasible: (i) internal swap of two annotations between two workplans;
(ii) external swap: remove (j, k) from a workplan (j's later iterations move up one to keep her
prefix) and append annotator j''s next iteration to a bottleneck task; (iii) addition of an
annotator's next iteration to a bottleneck task (if budget remains) and deletion of a pair that
precedes a bottleneck label of the same annotator. The objective min_i c' is flat, so moves are
ranked by the lexicographic f = (min_i c', -#{i at the min}, sum_i c') and only moves touching a
bottleneck task are generated (the removals of external swaps and deletions are sampled, at most
`max_moves` per step, with the seed); every candidate is scored with numpy (the effect of a move
on c is a handful of tasks, or one annotator's re-indexed later labels). The best move
is applied even if worse; after `patience` worsening moves in a row the best external swap is
forced; a short tabu list forbids re-adding a just-removed (task, annotator). Returns the best
assignment seen, so never worse than the start (P21).

The search uses its whole time budget: after `stall_steps` steps without a new best it
widens the neighbourhood (4x the bottleneck tasks and moves); after another stall it restarts from
the best assignment with a random kick of `kick` feasible moves. It stops early only when the
incumbent reaches `target` (a valid upper bound: the incumbent is then proven optimal), when no
move exists, or after `max_steps`.
"""

from __future__ import annotations

import time

import numpy as np

from ..problems.cltap import CltapInstance, CltapSolution
from ..validate import integer

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
        jj, kk = np.nonzero(used)
        self.lab[jj, z[jj, kk]] = True

    @property
    def labels(self) -> int:
        return int(self.n.sum())

    def removal_effect(self, j: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(tasks, changes of c) when (j, k) is removed and j's later iterations move up one."""
        phi, z, n = self.inst.phi, self.z, int(self.n[j])
        tasks = z[j, k:n]
        d = np.empty(n - k)
        d[0] = -phi[j, k]
        d[1:] = phi[j, k:n - 1] - phi[j, k + 1:n]
        return tasks, d

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
            tasks, d = self.removal_effect(j, k)
            np.add.at(self.c, tasks, d)
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


class _Keys:
    """Vectorized lexicographic keys of moves that change c at a few tasks."""

    def __init__(self, c: np.ndarray) -> None:
        self.c = c
        self.order = np.argsort(c, kind="stable")
        self.cs = c[self.order]
        self.sum = float(c.sum())

    def count_eq(self, v: np.ndarray) -> np.ndarray:
        return (np.searchsorted(self.cs, v + _EPS, side="right")
                - np.searchsorted(self.cs, v - _EPS, side="left"))

    def min_excluding(self, *excl: np.ndarray) -> np.ndarray:
        """min of c over tasks not in the given index arrays (one excluded task per array)."""
        m = len(excl)
        first = self.order[: m + 1]
        out = np.full(len(excl[0]), np.inf)
        done = np.zeros(len(excl[0]), dtype=bool)
        for q, i in enumerate(first):
            ok = ~done
            for e in excl:
                ok &= e != i
            out[ok] = self.cs[q]
            done |= ok
        return out

    def pair(self, i1: np.ndarray, v1: np.ndarray, i2: np.ndarray, v2: np.ndarray, dsum: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(min, -count at min, sum) after c[i1] := v1, c[i2] := v2 (i1 != i2)."""
        c = self.c
        mo = self.min_excluding(i1, i2)
        mn = np.minimum(mo, np.minimum(v1, v2))
        cnt = (self.count_eq(mn) - (np.abs(c[i1] - mn) <= _EPS) - (np.abs(c[i2] - mn) <= _EPS)
               + (np.abs(v1 - mn) <= _EPS) + (np.abs(v2 - mn) <= _EPS))
        return mn, -cnt, self.sum + dsum


def _best_index(mins: np.ndarray, cnts: np.ndarray, sums: np.ndarray) -> int:
    top = mins.max()
    cand = np.flatnonzero(mins >= top - 1e-12)
    best_cnt = cnts[cand].max()
    cand = cand[cnts[cand] == best_cnt]
    return int(cand[np.argmax(sums[cand])])


def _step_moves(st: _State, rng: np.random.Generator, max_moves: int, tabu: dict, step: int,
                n_bott: int, forced_ext: bool) -> tuple[tuple, tuple] | None:
    """The best move touching one of the `n_bott` lowest tasks: (key, move), or None."""
    inst, z, phi, c = st.inst, st.z, st.inst.phi, st.c
    keys = _Keys(c)
    m = keys.cs[0]
    bott = np.flatnonzero(c <= m + _EPS)[:n_bott]
    if len(bott) < n_bott:
        bott = keys.order[:n_bott]
    used_j, used_k = np.nonzero(z >= 0)
    used_i = z[used_j, used_k]
    used_phi = phi[used_j, used_k]
    best: tuple | None = None

    def offer(key: tuple, move: tuple) -> None:
        nonlocal best
        if best is None or _better(key, best[0]):
            best = (key, move)

    for i1 in bott:
        i1 = int(i1)
        free_tabu = np.fromiter((tabu.get((i1, j2), -1) < step for j2 in range(inst.a)),
                                dtype=bool, count=inst.a)  # once per task, not per move
        if not forced_ext:  # (i) internal swaps with a heavier label of another task
            mine = np.flatnonzero(used_i == i1)
            for q in mine:
                j1, k1, p1 = int(used_j[q]), int(used_k[q]), used_phi[q]
                ok = (used_i != i1) & (used_phi > p1)
                diff = used_j != j1
                ok &= ~diff | (~st.lab[j1, used_i] & ~st.lab[used_j, i1])
                cand = np.flatnonzero(ok)
                if not cand.size:
                    continue
                d = used_phi[cand] - p1
                i2 = used_i[cand]
                mn, cn, sm = keys.pair(np.full(len(cand), i1), c[i1] + d, i2, c[i2] - d,
                                       np.zeros(len(cand)))
                b = _best_index(mn, cn, sm)
                offer((float(mn[b]), int(cn[b]), float(sm[b])),
                      ("swap", j1, k1, int(used_j[cand[b]]), int(used_k[cand[b]])))
            # (iii) additions while budget remains
            if st.labels < inst.b:
                nxt = np.minimum(st.n, inst.K - 1)
                ok = (st.n < inst.K) & ~st.lab[:, i1]
                ok &= free_tabu
                if ok.any():
                    v = np.where(ok, phi[np.arange(inst.a), nxt], -np.inf)
                    j2 = int(np.argmax(v))
                    c2 = c.copy()
                    c2[i1] += v[j2]
                    offer(objective_key(c2), ("add", j2, i1))
        # (ii) external swaps and (iii) deletions: sampled removals, scored all at once
        n_rem = max(1, max_moves // max(1, len(bott)))
        pool = np.arange(len(used_j))
        if len(pool) > n_rem:
            pool = rng.choice(len(pool), size=n_rem, replace=False)
        for key, move in _removal_moves(st, i1, used_j[pool], used_k[pool], free_tabu):
            offer(key, move)
    return None if best is None else best


def _keys(C: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`objective_key` of every row of C: (min, -#at the min, sum), row by row."""
    mins = C.min(axis=1)
    return mins, -(C <= mins[:, None] + _EPS).sum(axis=1), C.sum(axis=1)


def _removal_moves(st: _State, i1: int, js: np.ndarray, ks: np.ndarray,
                   free_tabu: np.ndarray) -> list[tuple[tuple, tuple]]:
    """(key, move) of the deletions and external swaps onto task i1 of the removals (js, ks),
    in the order of the removals, each deletion before its external swap (the first of equal
    keys wins): c after each removal is one row of a matrix (the removed label's annotator's
    later labels move up one, `removal_effect`), so every key is computed at once."""
    inst, z, phi, c = st.inst, st.z, st.inst.phi, st.c
    P = len(js)
    if not P:
        return []
    lens = st.n[js] - ks
    row = np.repeat(np.arange(P), lens)
    pos = np.arange(len(row)) - np.repeat(np.cumsum(lens) - lens, lens)
    jj, kk = js[row], ks[row] + pos
    tasks = z[jj, kk]
    d = np.where(pos == 0, -phi[jj, kk], phi[jj, np.maximum(kk - 1, 0)] - phi[jj, kk])
    C = np.repeat(c[None, :], P, axis=0)
    C[row, tasks] += d  # an annotator labels a task once: no index repeats within a row
    dele = np.zeros(P, dtype=bool)
    dele[row[(pos >= 1) & (tasks == i1)]] = True  # a later label of j on i1 moves up
    arange_a = np.arange(inst.a)
    after_n = st.n[None, :] - (arange_a[None, :] == js[:, None])
    has = np.repeat(st.lab[None, :, i1], P, axis=0)
    own = z[js, ks] == i1
    has[np.flatnonzero(own), js[own]] = False
    ok = (after_n < inst.K) & ~has & free_tabu[None, :]
    gain = np.where(ok, phi[arange_a[None, :], np.minimum(after_n, inst.K - 1)], -np.inf)
    j2 = np.argmax(gain, axis=1)  # only i1 changes: the heaviest next label is best
    ext = ok.any(axis=1)
    E = C[ext]
    E[:, i1] += gain[ext, j2[ext]]
    dm, dc, ds = _keys(C[dele])
    em, ec, es = _keys(E)
    d_at = np.cumsum(dele) - 1
    e_at = np.cumsum(ext) - 1
    out: list[tuple[tuple, tuple]] = []
    for q in range(P):
        j, k = int(js[q]), int(ks[q])
        if dele[q]:
            r = d_at[q]
            out.append(((float(dm[r]), int(dc[r]), float(ds[r])), ("del", j, k)))
        if ext[q]:
            r = e_at[q]
            out.append(((float(em[r]), int(ec[r]), float(es[r])),
                        ("ext", j, k, int(j2[q]), i1)))
    return out


def _removed_pairs(st: _State, mv: tuple) -> list[tuple[int, int]]:
    """(task, annotator) pairs a move takes away (for the tabu list)."""
    if mv[0] == "swap":
        _, j1, k1, j2, k2 = mv
        return [(int(st.z[j1, k1]), j1), (int(st.z[j2, k2]), j2)]
    if mv[0] in ("ext", "del"):
        return [(int(st.z[mv[1], mv[2]]), mv[1])]
    return []


def _kick(st: _State, rng: np.random.Generator, moves: int) -> None:
    """Random feasible moves (external swaps and swaps between random tasks)."""
    inst, z = st.inst, st.z
    for _ in range(moves):
        used_j, used_k = np.nonzero(z >= 0)
        if not len(used_j):
            return
        q = int(rng.integers(len(used_j)))
        j, k = int(used_j[q]), int(used_k[q])
        i1 = int(rng.integers(inst.t))
        after_n = st.n - (np.arange(inst.a) == j)
        has = st.lab[:, i1].copy()
        if z[j, k] == i1:
            has[j] = False
        ok = np.flatnonzero((after_n < inst.K) & ~has)
        if ok.size:
            st.apply(("ext", j, k, int(rng.choice(ok)), i1))


def local_search(inst: CltapInstance, start: CltapSolution, *, time_limit: float = 10.0,
                 patience: int = 5, max_steps: int = 1_000_000, stall_steps: int = 50,
                 max_moves: int = 400, tabu_len: int = 7, seed: int = 0,
                 target: float | None = None, kick: int = 0,
                 stats: dict | None = None) -> CltapSolution:
    """Best-move local search from `start` (digest 3.2) for `time_limit` seconds. After
    `stall_steps` steps without a new best: widen (4x bottleneck tasks and removals); after a
    second stall: restart from the best with `kick` random external swaps (default 2 + c/50,
    c = min(b, a K) the labels that can be placed: a budget past every slot kicks no more).
    Stops early when min c' reaches `target` (a valid bound: proven optimal), when no move exists
    even after widening, or after `max_steps`. `max_steps` is the deterministic work budget: with
    it binding, the same seed gives the same assignment on any machine and under any load, and
    `time_limit` is only a safety cap (`stats["stop"]` says which limit ended the search).
    Returns the best assignment seen (never worse than `start`)."""
    max_steps = integer(max_steps, "max_steps", lo=1)
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    st = _State(inst, start.task_of)
    best_z, best_f = st.z.copy(), objective_key(st.c)
    cur_f = best_f
    neg = stall = 0
    wide = False
    restarts = 0
    kick = kick or 2 + inst.capacity // 50
    tabu: dict[tuple[int, int], int] = {}
    stop = "step cap"
    step = 0
    for step in range(max_steps):
        if target is not None and best_f[0] >= target - 1e-9 * (1.0 + abs(target)):
            stop = "target bound reached (optimal)"
            break
        if time.perf_counter() - t0 > time_limit:
            stop = "time limit"
            break
        if stall >= stall_steps:
            stall = 0
            if not wide:
                wide = True
            else:
                wide = False
                restarts += 1
                st = _State(inst, best_z)
                _kick(st, rng, kick)
                cur_f = objective_key(st.c)
                tabu.clear()
                neg = 0
        forced = neg >= patience
        found = _step_moves(st, rng, max_moves * (4 if wide else 1), tabu, step,
                            32 if wide else 8, forced)
        if found is None and forced:
            found = _step_moves(st, rng, max_moves * (4 if wide else 1), tabu, step,
                                32 if wide else 8, False)
        if found is None:
            if inst.t <= 1 or (not wide and restarts == 0 and stall == 0 and step == 0
                               and st.labels == 0):
                stop = "no move"
                break
            stall = stall_steps  # nothing here: widen, then kick
            if wide and restarts > 3 and best_f == cur_f:
                stop = "no move"
                break
            continue
        f_new, mv = found
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
    if stats is not None:
        stats.update(steps=step + (stop == "step cap"), restarts=restarts, stop=stop, kick=kick,
                     time_s=time.perf_counter() - t0)
    return CltapSolution(best_z)
