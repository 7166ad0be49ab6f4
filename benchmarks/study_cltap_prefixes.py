"""Study: is the gap of the CL-TAP bounds on increasing curves the LP over prefix lengths?

The covering, pairing and first-labels bounds (solvers/cltap_bounds.py) each refute a threshold
theta when an inequality that every assignment reaching theta satisfies, summed over the
annotators' prefixes, cannot reach its right side; "cannot" is decided by the LP relaxation of
the knapsack over prefix lengths (`mckp_lp`, `_lagrangian_lp`), which on rising curves may mix
a whole row and an empty one. This study runs the same tests with that knapsack solved exactly
in integers (the multiple-choice knapsack DP, `mckp_dp`), at the thresholds plan / r, and
prints which of them each version refutes. It also prints the covering bound's integer
allocation at theta = plan / 0.95: the best pairing of its labels when a task may take two
labels of one annotator (what the covering, counting and pairing arguments allow), against
the best pairing when it may not ((14): one label per task and annotator).

A second part asks whether any relaxation that mixes worlds (integer prefix vectors) can carry
the bound, with two LPs whose verdicts are proofs: "stands" (the LP covers all t tasks at theta,
so no bound of its kind refutes theta) only from a restricted master with weights rounded down
and real worlds, "refuted" only with weights rounded up and every prefix vector priced:
- the hull: the configuration LP (covers of distinct annotators) with its prefixes in the
  convex hull of integer prefix vectors (Dantzig-Wolfe: prefix vectors priced by the integer
  knapsack, covers by an arc-flow network), the strongest relaxation that is linear in the
  prefix configuration;
- the coupled LP, stronger: the tasks of each world are covered by that world's own labels, and
  only each label's availability is pooled over the worlds (without that pooling it is the best
  single world, the exact problem); worlds and (world, cover) pairs as columns, every label at
  99 % of its availability.

Finding (inc, seed 0, b = 2t, the plan of `reproduce cltap --scale table3`: 1.8429 at (100, 10),
3.0909 at (200, 20), 4.2356 at (1000, 100), the `layered` construction's):
- the integer knapsack moves first-labels at (200, 20) from 86.2 % to 87.1 % of the plan and
  nothing else; neither bound refutes plan / 0.95 or plan / 0.9 at (100, 10) or (200, 20)
  either way: the integer prefixes are not the gap;
- the covering allocation at (200, 20), theta = plan / 0.95 = 3.25, is two whole rows whose
  labels pair to 3.54 when a task may hold two labels of one annotator and to 2.69 when it may
  not ((14): one label per task and annotator): these bounds miss that rule;
- the hull, which has both, stands at plan / 0.95 and plan / 0.9 in all three cells (at
  (1000, 100) on the 12 annotators config-branch branches, a restriction), on a mix of worlds
  that no plan is (at (200, 20), plan / 0.95: about half {2, 6}, a quarter {2, 19}, a sixth
  {2, 6, 14}; 19's strongest labels serve 2's weakest): no bound linear in the prefix
  configuration certifies 90 %;
- the coupled LP stands at plan / 0.95 at (200, 20) and (1000, 100) (open at (100, 10) and at
  plan / 0.9): its worlds share out one strong annotator's row (2 at (200, 20), 24 at
  (1000, 100)), each taking the part that suits its partners, so no relaxation that pools labels
  over worlds certifies 95 % there; only a disjunction over prefix lengths (branching:
  `config-branch`) removes such mixes;
- the mix's worlds, placed by LPT and searched for 1,000 steps, give 3.0998 at (200, 20)
  (the world {2, 6, 14}), a little above the table's 3.0909: the optimum there is at least
  3.0998.

A third part asks which side is loose at the Table 3 sizes, where the optimum is unknown: the
plan against the certified bound of its own world (its prefix lengths fixed: one box of
config-branch, `cltap_branch.world_bound`). Finding: the plan is optimal among the plans with its workloads:
1.8429 at (100, 10) and 3.0909 at (200, 20) each equal their world's bound, and at (1000, 100)
4.2356 is 99.91 % of 4.2392 (145 node LPs). At these worlds the relaxation "integer prefixes,
fractional covers" is exact or nearly so. Other worlds hold better plans (the hull's world
{2, 6, 14} above, at other lengths, holds 3.0998), and a bound must exclude every world that
might beat the plan: the gap left is the breadth of config-branch's tree (12 annotators
branched one by one, lengths up to t, the others pooled), not the strength of its LP at a
world.

Usage: python benchmarks/study_cltap_prefixes.py [--quick]
       python benchmarks/study_cltap_prefixes.py --known-optimum SEEDS [--shapes 30x3,20x10]
(about 55 min on a 2-core machine; --quick: (100, 10) only, about 12 min; --known-optimum: only
the highest levels OPT x f at which the hull and the coupled LP stand where head-cover proves the
optimum, a few minutes)
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from typing import Any

import numpy as np
from common import emit, parse_args, shapes_arg

from crowdopt.experiments.cltap_repro import WORK_STEPS
from crowdopt.problems import cltap as P
from crowdopt.solvers import cltap_bounds as CB
from crowdopt.solvers.cltap_branch import layers_of, world_bound
from crowdopt.solvers.cltap_colgen import mckp_dp
from crowdopt.solvers.cltap_construct import constructions, fast, lpt_place
from crowdopt.solvers.cltap_search import local_search

RATIOS = (0.95, 0.9, 0.85)
WORLD_BISECTIONS = 10  # levels tested in the plan's world
WORLD_STEPS = 1000  # local-search steps from each world of the hull's mix


def _int_prefix_sums(C: np.ndarray, b: int) -> tuple[float, np.ndarray]:
    """max sum_j C[j, n_j] over integer n (sum n <= b), C[:, 0] = 0, and the lengths."""
    val, items = mckp_dp(C[:, 1:], b)
    n = np.zeros(C.shape[0])
    for j, k in items:
        n[j] = k + 1
    return val, n


@contextmanager
def integer_prefixes():
    """The bounds' knapsack over prefix lengths solved exactly in integers, not as an LP."""
    saved = CB.mckp_lp, CB._lagrangian_lp

    def mckp_int(vals, b, kinds=None, target=None):
        C = np.concatenate([np.zeros((vals.shape[0], 1)), np.cumsum(vals, axis=1)], axis=1)
        return _int_prefix_sums(C, b)

    CB.mckp_lp = mckp_int
    CB._lagrangian_lp = lambda C, b, target=None, max_iter=200: _int_prefix_sums(C, b)
    try:
        yield
    finally:
        CB.mckp_lp, CB._lagrangian_lp = saved


def pairings(inst: P.CltapInstance, theta: float) -> tuple[list[int], float, float | None]:
    """The covering allocation at theta (its used rows), the best min pair sum of its labels
    when two labels of one annotator may share a task, and (two rows) when they may not."""
    n = CB.covering_allocation(inst, theta)
    rows = [int(j) for j in np.flatnonzero(n)]
    labels = np.sort(np.concatenate([inst.phi[j, :n[j]] for j in rows]))
    half = len(labels) // 2
    any_pair = float((labels[:half] + labels[::-1][:half]).min()) if half else float("nan")
    cross = None
    if len(rows) == 2 and n[rows[0]] == n[rows[1]]:
        x, y = (np.sort(inst.phi[j, :n[j]]) for j in rows)
        cross = float((x + y[::-1]).min())
    return rows, any_pair, cross


def _used(seg: CB._Segments, n: np.ndarray) -> np.ndarray:
    """Labels of each segment inside the prefixes n."""
    return np.clip(n[seg.ann] - seg.k0, 0, seg.n).astype(float)


def hull_config_lp(inst: P.CltapInstance, theta: float, plans: list, grid: int = 200,
                   rounds: int = 60, down: bool = False, anns: list[int] | None = None
                   ) -> tuple[str, float, str, list, list]:
    """The configuration LP with its prefixes in the convex hull of integer prefix vectors
    (Dantzig-Wolfe on the prefix rule and the budget), at the level of theta: covers of
    distinct annotators as paths of an arc-flow network (annotator by annotator), prefix
    vectors as columns priced by the integer knapsack. Units of weight rounded up (a
    relaxation: "refuted", LP < t with every prefix vector priced, is a proof) or, with `down`,
    rounded down (a restriction: every cover it counts reaches theta, so "stands", its
    restricted master covering t tasks with real prefix vectors, is a proof that the exact LP
    covers them too, and no price certificate refutes theta); `anns`: the annotators it may
    use (a further restriction; all by default). Returns (verdict, the LP's value, its mix,
    the mix's prefix vectors, every prefix vector it priced); verdict "refuted", "stands" or
    "open"."""
    from scipy import sparse

    from crowdopt.problems.catalogue import RunOptions
    from crowdopt.solvers.highs import HighsModel, highs_options

    delta = theta / grid * ((1 + 1e-12) if down else (1 - 1e-12))
    seg = CB._Segments(inst, delta, grid, down=down)  # units >= grid: >= theta when down
    a, S, t = inst.a, seg.S, inst.t
    allowed = np.zeros(a, dtype=bool)
    allowed[list(range(a)) if anns is None else anns] = True
    G, need = grid, grid
    node = lambda j, c: (j - 1) * (G + 1) + c  # noqa: E731 (layer j = after annotator j)
    r_cap, r_conv = a * (G + 1), a * (G + 1) + S
    rows, cols, vals, cost = [], [], [], []
    reach = {0}
    for j in range(a):  # arcs (j, c) -> (j + 1, c'): skip annotator j or take one segment
        segs = np.flatnonzero((seg.ann == j) & (seg.u > 0)) if allowed[j] else []
        nxt = set()
        for c in sorted(reach):
            for s in [-1, *segs]:
                c2 = c if s < 0 else int(min(G, c + seg.u[s]))
                k = len(cost)
                if j > 0:
                    rows.append(node(j, c)), cols.append(k), vals.append(-1.0)
                rows.append(node(j + 1, c2)), cols.append(k), vals.append(1.0)
                if s >= 0:
                    rows.append(r_cap + int(s)), cols.append(k), vals.append(1.0)
                cost.append(1.0 if j == 0 else 0.0)
                nxt.add(c2)
        reach = nxt
    for c in range(need, G + 1):  # a path ends at a level >= need
        rows.append(node(a, c)), cols.append(len(cost)), vals.append(-1.0)
        cost.append(0.0)
    m = r_conv + 1
    A = sparse.csc_array((vals, (rows, cols)), shape=(m, len(cost)))
    lo_r, hi_r = np.zeros(m), np.zeros(m)
    lo_r[r_cap:r_conv] = -np.inf
    lo_r[r_conv] = hi_r[r_conv] = 1.0
    model = HighsModel.from_arrays(np.array(cost), A, lo_r, hi_r, np.zeros(len(cost)),
                                   np.full(len(cost), np.inf), sense="max",
                                   options=highs_options(RunOptions()))
    pool: set = set()
    order: list = []  # the prefix vectors in column order (after the arcs)

    def add(n: np.ndarray) -> None:
        pool.add(tuple(n))
        order.append(n)
        u = _used(seg, n)
        idx = np.flatnonzero(u)
        col = sparse.csc_array((np.append(-u[idx], 1.0), (np.append(r_cap + idx, r_conv),
                                                           np.zeros(len(idx) + 1, int))),
                               shape=(m, 1))
        model.add_columns([0.0], 0.0, np.inf, col)

    for n in plans:
        n = np.where(allowed, np.asarray(n), 0)
        if tuple(n) not in pool:
            add(n)
    bound = np.inf
    first = len(cost)

    def mix(x: np.ndarray) -> tuple[str, list]:
        """The LP's mix as text, and its prefix vectors (worlds)."""
        used = [(x[first + i], n) for i, n in enumerate(order) if x[first + i] > 1e-6]
        return " + ".join(f"{w:.2f} {{{', '.join(map(str, np.flatnonzero(n)))}}}"
                          for w, n in used), [n for _, n in used]

    for _ in range(rounds):
        res = model.solve()
        z, y = float(res.objective), np.asarray(res.row_duals)
        gamma = np.maximum(y[r_cap:r_conv], 0.0)
        C = np.concatenate([np.zeros((a, 1)), np.cumsum(gamma[seg.of], axis=1)], axis=1)
        C[~allowed] = 0.0
        D, n = _int_prefix_sums(C, inst.b)  # the dual's value with every prefix vector priced
        bound = min(bound, D)
        if not down and bound < t * (1 - 1e-9):
            return "refuted", z, "", [], order
        if down and z >= t * (1 + 1e-3):  # scaled to t, every label row has slack
            return ("stands", z, *mix(np.asarray(res.x)), order)
        n = np.where(allowed, n.astype(int), 0)
        if tuple(n) in pool:
            break
        add(n)
    return ("open", z, *mix(np.asarray(res.x)), order)


# ----------------------------------------------------------------------------- covers in worlds
def _per_unit(vals: np.ndarray, units: np.ndarray, G: int) -> tuple[np.ndarray, np.ndarray]:
    """The least value and its label per unit count 1..G (inf, -1 where no label has it)."""
    best, arg = np.full(G + 1, np.inf), np.full(G + 1, -1)
    ok = units > 0
    if ok.any():
        u, x, ks = units[ok], vals[ok], np.flatnonzero(ok)
        order = np.lexsort((x, u))
        first = np.ones(len(order), dtype=bool)
        first[1:] = u[order][1:] != u[order][:-1]
        pick = order[first]
        best[u[pick]], arg[u[pick]] = x[pick], ks[pick]
    return best, arg


def _take(F: np.ndarray, best: np.ndarray, G: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """T[d] = min over s, v with min(s + v, G) = d of F[s] + best[v], with that s and v."""
    s = np.repeat(np.arange(G + 1), G + 1)
    v = np.tile(np.arange(G + 1), G + 1)
    cand, dst = F[s] + best[v], np.minimum(s + v, G)
    order = np.lexsort((cand, dst))
    first = np.ones(len(order), dtype=bool)
    first[1:] = dst[order][1:] != dst[order][:-1]
    pick = order[first]
    T, ts, tv = np.full(G + 1, np.inf), np.full(G + 1, -1), np.full(G + 1, -1)
    T[dst[pick]], ts[dst[pick]], tv[dst[pick]] = cand[pick], s[pick], v[pick]
    return T, ts, tv


def _cheapest_cover(y: np.ndarray, units: np.ndarray, G: int, n: np.ndarray
                    ) -> tuple[float, list[tuple[int, int]]]:
    """The cheapest set of labels (prices y), at most one per annotator and inside the prefixes
    n, whose units reach G, and that set (inf, [] if none)."""
    F = np.full(G + 1, np.inf)
    F[0] = 0.0
    hist = []
    for j in np.flatnonzero(n > 0):
        best, arg = _per_unit(y[j, :n[j]], units[j, :n[j]], G)
        T, ts, tv = _take(F, best, G)
        hist.append((int(j), np.where(T < F, ts, -1), tv, arg))
        F = np.minimum(F, T)
    if not np.isfinite(F[G]):
        return math.inf, []
    return float(F[G]), _backtrack(hist, G)


def _priced_world(y: np.ndarray, t: int, units: np.ndarray, G: int, b: int, mu: float
                  ) -> tuple[float, list[tuple[int, int]]]:
    """(mu b + max over (n, C) of sum_j [S_j(n_j) / t - mu n_j] - y(C), that C): C inside the
    prefixes n, reaching G units, the budget (13) priced at mu (its Lagrangian: the least value
    over mu >= 0 is the mu whose cover seeds the next world, which is then chosen exactly)."""
    a, K = y.shape
    A = np.concatenate([np.zeros((a, 1)), np.cumsum(y, axis=1)], axis=1) / t \
        - mu * np.arange(K + 1)[None, :]
    skip = A.max(axis=1)
    after = np.maximum.accumulate(A[:, ::-1], axis=1)[:, ::-1][:, 1:]  # max over n > k
    F = np.full(G + 1, np.inf)  # minus the best value so far
    F[0] = 0.0
    hist = []
    for j in range(a):
        best, arg = _per_unit(y[j] - after[j], units[j], G)
        T, ts, tv = _take(F, best, G)
        hist.append((j, np.where(T < F - skip[j], ts, -1), tv, arg))
        F = np.minimum(F - skip[j], T)
    return mu * b - float(F[G]), _backtrack(hist, G)


def _backtrack(hist: list, G: int) -> list[tuple[int, int]]:
    """The labels of the DP's choice reaching G units: hist holds, per annotator in DP order,
    (j, the level each level came from or -1 if j added nothing, the units added, the label of
    each unit count)."""
    labels, d = [], G
    for j, ts, tv, arg in reversed(hist):
        if ts[d] >= 0:
            labels.append((j, int(arg[tv[d]])))
            d = int(ts[d])
    return labels[::-1]


def _seed_cover(y: np.ndarray, t: int, units: np.ndarray, G: int, b: int
                ) -> list[tuple[int, int]]:
    """The cover of `_priced_world` at the mu that minimises its value (golden section: the
    value is convex in mu)."""
    K = y.shape[1]
    hi = float(np.cumsum(y, axis=1).max(initial=0.0)) / t / max(K, 1) * 2 + 1e-12
    f = lambda mu: _priced_world(y, t, units, G, b, mu)[0]  # noqa: E731
    g = (math.sqrt(5) - 1) / 2
    lo_, hi_ = 0.0, hi
    c, d = hi_ - g * (hi_ - lo_), lo_ + g * (hi_ - lo_)
    fc, fd = f(c), f(d)
    for _ in range(30):
        if fc < fd:
            hi_, d, fd = d, c, fc
            c = hi_ - g * (hi_ - lo_)
            fc = f(c)
        else:
            lo_, c, fc = c, d, fd
            d = lo_ + g * (hi_ - lo_)
            fd = f(d)
    mu = min((fc, c), (fd, d), (f(0.0), 0.0))[1]
    return _priced_world(y, t, units, G, b, mu)[1]


def _best_world(y: np.ndarray, lo: np.ndarray, b: int) -> np.ndarray:
    """Integer prefix lengths n >= lo within the budget maximising sum_j sum_{k < n_j} y (the
    knapsack of `_int_prefix_sums` on the prefix sums past lo)."""
    a, K = y.shape
    G = np.concatenate([np.zeros((a, 1)), np.cumsum(y, axis=1)], axis=1)
    rows, width, left = np.arange(a), int((K - lo).max(initial=0)), b - int(lo.sum())
    if width == 0 or left <= 0:
        return lo.copy()
    idx = np.minimum(lo[:, None] + np.arange(width + 1)[None, :], K)
    _, n = _int_prefix_sums(G[rows[:, None], idx] - G[rows, lo][:, None], left)
    return lo + n.astype(np.int64)


def coupled_lp(inst: P.CltapInstance, theta: float, worlds: list, grid: int = 50,
               share: float = 0.99, rounds: int = 300, time_limit: float = 600.0
               ) -> tuple[str, float, int, str]:
    """A relaxation stronger than the hull's: a mix rho of worlds (integer prefix vectors within
    the budget), the t rho_w tasks of world w covered by covers of w's own labels (at most one
    per annotator, inside its prefixes), and every label used at most `share` times its
    availability sum_w rho_w [label in w]: only the pooling of each label over the worlds is
    relaxed (with no pooling it is the best world, the exact problem). Columns: worlds and
    (world, cover) pairs, generated from the label prices; units rounded down, so every cover
    counted reaches theta. Labels are grouped in runs of equal units cut at every world's
    prefix ends, so all labels of a run lie in the same worlds and a run's capacity row is
    exact. Returns ("stands": its restricted master covers all t tasks with every label at
    `share` of its availability, a margin no solver tolerance explains, so it and every weaker
    relaxation (the hull's; any price certificate over mixed worlds) cover theta; or "open"),
    the tasks covered, the worlds used and the mix."""
    a, K, t = inst.a, inst.K, inst.t
    delta = theta / grid * (1 + 1e-12)
    down = np.minimum(np.floor(inst.phi / delta * (1 - 1e-12)), grid).astype(np.int64)
    up = np.minimum(np.where(inst.phi > 0, np.floor(inst.phi / delta + 1e-9) + 1, 0),
                    grid).astype(np.int64)
    kept: list[np.ndarray] = []
    covers: list[tuple[int, tuple]] = []
    seen: set = set()

    def add_world(n: np.ndarray) -> int | None:
        if tuple(n) in seen or n.sum() > inst.b:
            return None
        seen.add(tuple(n))
        kept.append(n.copy())
        return len(kept) - 1

    def add_cover(w: int, cover: list[tuple[int, int]]) -> bool:
        key = (w, tuple(sorted(cover)))
        if not cover or key in seen:
            return False
        seen.add(key)
        covers.append(key)
        return True

    for n in worlds:
        add_world(np.asarray(n, dtype=np.int64))
    val, rho = 0.0, np.zeros(0)
    stop = time.perf_counter() + time_limit  # "open" either way: only "stands" is a claim
    for _ in range(rounds):
        if time.perf_counter() > stop:
            break
        added = 0
        for _ in range(3):  # covers of the worlds kept, priced by the labels and the world rows
            val, y, zw, sigma, rho = _coupled_master(inst, down, kept, covers, share)
            new = sum(add_cover(w, c) for w, n in enumerate(kept)
                      for p, c in [_cheapest_cover(y, down, grid, n)]
                      if c and 1 - p - zw[w] > 1e-9)
            added += new
            if not new:
                break
        if val >= t * (1 - 1e-9):
            break
        lo = np.zeros(a, dtype=np.int64)  # a new world, around the best-pricing cover
        for j, k in _seed_cover(y, t, up, grid, inst.b):
            lo[j] = k + 1
        if lo.sum() > inst.b:
            lo[:] = 0
        n = _best_world(y, lo, inst.b)
        p, c = _cheapest_cover(y, down, grid, n)
        supply = float((y * (np.arange(K)[None, :] < n[:, None])).sum())
        if c and t * (1 - p) + share * supply - sigma > 1e-9:
            w = add_world(n)
            if w is not None:
                added += add_cover(w, c)
        if not added:
            break
    heavy = [(r, n) for r, n in sorted(zip(rho, kept), key=lambda z: -z[0]) if r >= 0.01]
    text = " + ".join(f"{r:.2f} {{{', '.join(f'{j}: {n[j]}' for j in np.flatnonzero(n))}}}"
                      for r, n in heavy[:5]) + (" + ..." if len(heavy) > 5 else "")
    return ("stands" if val >= t * (1 - 1e-9) else "open"), val, len(kept), text


def _coupled_master(inst: P.CltapInstance, units: np.ndarray, kept: list, covers: list,
                    share: float) -> tuple[float, np.ndarray, np.ndarray, float, np.ndarray]:
    """The restricted master of `coupled_lp` (built anew: its runs depend on the worlds):
    max sum of cover columns s.t. per run, covers' labels <= share x sum_w rho_w |run in w|;
    per world, its covers <= t rho_w; sum rho = 1. Returns (value, price per label, world
    duals, the mix row's dual, rho)."""
    from scipy import sparse

    from crowdopt.problems.catalogue import RunOptions
    from crowdopt.solvers.highs import HighsModel, highs_options

    a, K, t = inst.a, inst.K, inst.t
    cut = np.zeros((a, K + 1), dtype=bool)  # a run starts at k: units change or a prefix ends
    cut[:, 0] = True
    cut[:, 1:K] = units[:, 1:] != units[:, :-1]
    for n in kept:
        cut[np.arange(a), n] = True
    cut = cut[:, :K]
    run = np.cumsum(cut.ravel()).reshape(a, K) - 1  # run id of each label
    R = int(run.max()) + 1
    size = np.bincount(run.ravel(), minlength=R).astype(float)
    W = len(kept)
    rows, cols, vals, cost = [], [], [], []
    for w, n in enumerate(kept):  # rho_w
        inside = np.unique(np.concatenate([run[j, :n[j]] for j in range(a)]))
        rows += list(inside) + [R + w, R + W]
        vals += list(-share * size[inside]) + [-float(t), 1.0]
        cols += [len(cost)] * (len(inside) + 2)
        cost.append(0.0)
    for w, cover in covers:
        rs = [int(run[j, k]) for j, k in cover]
        rows += rs + [R + w]
        vals += [1.0] * (len(rs) + 1)
        cols += [len(cost)] * (len(rs) + 1)
        cost.append(1.0)
    m = R + W + 1
    A = sparse.csc_array((vals, (rows, cols)), shape=(m, len(cost)))
    lo, hi = np.full(m, -np.inf), np.zeros(m)
    lo[-1] = hi[-1] = 1.0
    res = HighsModel.from_arrays(np.array(cost), A, lo, hi, np.zeros(len(cost)),
                                 np.full(len(cost), np.inf), sense="max",
                                 options=highs_options(RunOptions())).solve()
    d = np.asarray(res.row_duals)
    y = np.maximum(d[:R], 0.0)[run]  # the price of one use of a run: each of its labels
    return (float(res.objective), y, np.maximum(d[R:R + W], 0.0), float(d[R + W]),
            np.asarray(res.x)[:W])


def world_plan(inst: P.CltapInstance, worlds: list) -> float:
    """The best plan placed in the given prefix vectors: LPT, then WORLD_STEPS local-search
    steps (the plan side of the gap: the hull's worlds hold plans the constructions miss)."""
    best = -np.inf
    for n in worlds:
        sol = local_search(inst, lpt_place(inst, np.asarray(n, dtype=np.int64)), time_limit=1e6,
                           seed=0, max_steps=WORLD_STEPS)
        best = max(best, P.evaluate(inst, sol).objective)
    return best


def world_row(inst: P.CltapInstance, cell: str, best: P.CltapSolution) -> dict:
    """The plan against the certified bound of its own world (its prefix lengths fixed)."""
    plan = P.evaluate(inst, best).objective
    n = (best.task_of >= 0).sum(axis=1).astype(np.int64)
    bound, nodes = world_bound(inst, n, plan, plan / min(RATIOS), WORLD_BISECTIONS)
    return {"cell": cell, "plan": plan,
            "world (annotator: labels)": ", ".join(f"{j}: {m}" for j, m in enumerate(n) if m),
            "world bound": bound, "plan / world bound": plan / bound, "node LPs": nodes}


MIXED_COLUMNS = ["cell", "theta", "hull", "hull LP covers", "hull mix (weight {annotators})",
                 f"hull worlds' best plan ({WORLD_STEPS} steps)", "coupled", "coupled covers",
                 "coupled worlds", "coupled mix (weight {annotator: labels})", "t"]


def mixed_worlds(inst: P.CltapInstance, cell: str, plan: float, plans: list,
                 anns: list[int] | None = None) -> list[dict]:
    """The hull LP and the coupled LP at theta = plan / 0.95 and plan / 0.9: "stands" from the
    rounded-down hull first (a proof), else "refuted" or "open" from the rounded-up one (only on
    every annotator: `anns` restricts the hull, which proves only "stands"); the coupled LP
    starts from the plans and the hull's worlds."""
    out = []
    for r in RATIOS[:2]:
        theta = plan / r
        verdict, z, used, worlds, pool = hull_config_lp(inst, theta, plans, down=True, anns=anns)
        if verdict != "stands" and anns is None:
            verdict, z, used, worlds, _ = hull_config_lp(inst, theta, plans)
        cv, cz, cw, cmix = coupled_lp(inst, theta, list(plans) + list(pool))
        out.append({"cell": cell, "theta": f"plan / {r}", "hull": verdict, "hull LP covers": z,
                    "hull mix (weight {annotators})": used,
                    f"hull worlds' best plan ({WORLD_STEPS} steps)": world_plan(inst, worlds),
                    "coupled": cv, "coupled covers": cz, "coupled worlds": cw,
                    "coupled mix (weight {annotator: labels})": cmix, "t": inst.t})
    return out


LADDER = (1.0, 1.02, 1.05, 1.1, 1.2, 1.3, 1.5)  # levels OPT x f tried where OPT is known


def known_optimum(seeds: int, t: int = 30, a: int = 3) -> list[dict]:
    """Where head-cover proves the optimum (inc, b = 2t, K = t; the shape of the Table 3 cells,
    a = t / 10): the highest level OPT x f of LADDER at which each relaxation stands (a proof
    that its value is at least that, so no bound of its kind certifies more than 1 / f)."""
    from crowdopt.problems.catalogue import RunOptions
    from crowdopt.solvers import cltap_exact

    out = []
    for seed in range(seeds):
        inst = P.generate(seed, t=t, a=a, trend="inc")
        ref = cltap_exact.solve_head_cover(inst, RunOptions(time_limit=300.0))
        if str(ref.status) != "optimal":
            continue
        opt = P.evaluate(inst, ref.solution).objective
        plans = [(sol.task_of >= 0).sum(axis=1) for sol in constructions(inst).values()]
        row = {"t": t, "a": a, "seed": seed, "OPT": opt}
        for name in ("hull", "coupled"):
            stood = None
            for f in LADDER:
                if name == "hull":
                    verdict = hull_config_lp(inst, opt * f, plans, down=True)[0]
                else:
                    verdict = coupled_lp(inst, opt * f, plans, grid=200)[0]
                if verdict != "stands":
                    break
                stood = f
            row[f"{name} stands at OPT x"] = stood
            row[f"{name}: OPT / bound at most"] = None if stood is None else 1 / stood
        out.append(row)
    return out


def _known_optimum_options(p: Any) -> None:
    p.add_argument("--known-optimum", type=int, metavar="SEEDS", default=0,
                   help="only the ceilings of the hull and coupled LPs where the optimum is "
                        "known (inc, SEEDS seeds of each shape)")
    p.add_argument("--shapes", default="30x3,20x10", type=shapes_arg,
                   help="t x a where head-cover proves OPT, comma-separated")


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], quick_help="(100, 10) only (about 4 min)",
                      extend=_known_optimum_options)
    if args.known_optimum:
        rows = [r for t, a in args.shapes for r in known_optimum(args.known_optimum, t, a)]
        emit("study_cltap_mixed_ceiling", rows, list(rows[0]) if rows else [], args,
             note="stands at OPT x f: the relaxation covers every task at that level with real "
                  "covers and worlds (rounded down; coupled: labels at 99 %), so its value is "
                  "at least OPT x f and no bound of its kind certifies more than 1 / f; levels "
                  f"tried {LADDER}, the first that does not stand ends the ladder")
        return
    cells = [(100, 10)] if args.quick else [(100, 10), (200, 20)]
    rows, hull, homes = [], [], []
    for t, a in cells:
        inst = P.generate(args.seed, t=t, a=a, trend="inc")
        best = fast(inst, time_limit=1e6, max_steps=WORK_STEPS[t])
        plan = P.evaluate(inst, best).objective
        homes.append(world_row(inst, f"inc ({t}, {a})", best))
        for name, bound in (("first-labels", CB.first_labels_bound),
                            ("pairing", CB.pairing_bound)):
            lp = bound(inst).value
            with integer_prefixes():
                whole = bound(inst).value
            row = {"cell": f"inc ({t}, {a})", "plan": plan, "bound": name,
                   "plan / bound (LP prefixes)": plan / lp,
                   "plan / bound (integer prefixes)": plan / whole}
            for r in RATIOS:  # refuted: the bound falls below theta = plan / r
                hi = plan / r * (1 + 1e-9)
                by_lp = bound(inst, lo=plan / r, hi=hi).value < hi
                with integer_prefixes():
                    by_int = bound(inst, lo=plan / r, hi=hi).value < hi
                row[f"refutes plan/{r} (LP, integer)"] = \
                    f"{'yes' if by_lp else 'no'}, {'yes' if by_int else 'no'}"
            rows.append(row)
        plans = [(sol.task_of >= 0).sum(axis=1) for sol in constructions(inst).values()]
        hull += mixed_worlds(inst, f"inc ({t}, {a})", plan, plans)
        used, any_pair, cross = pairings(inst, plan / 0.95)
        print(f"inc ({t}, {a}): covering allocation at theta = plan / 0.95 = "
              f"{plan / 0.95:.4f}: rows {used}; labels paired freely {any_pair:.4f}, "
              f"one per annotator {'-' if cross is None else f'{cross:.4f}'}")
    if not args.quick:  # the plan's world; the hull LP on the 12 annotators config-branch
        inst = P.generate(args.seed, t=1000, a=100, trend="inc")  # branches (a restriction)
        best = fast(inst, time_limit=1e6, max_steps=WORK_STEPS[1000])
        homes.append(world_row(inst, "inc (1000, 100)", best))
        plan = P.evaluate(inst, best).objective
        plans = [(sol.task_of >= 0).sum(axis=1) for sol in constructions(inst).values()]
        keep = (best.task_of >= 0).sum(axis=1)
        anns = [m[0] for m in layers_of(inst, plan / RATIOS[0], keep) if len(m) == 1]
        hull += mixed_worlds(inst, "inc (1000, 100)", plan, plans, anns)
    emit("study_cltap_prefixes", rows, ["cell", "plan", "bound", "plan / bound (LP prefixes)",
                                        "plan / bound (integer prefixes)"]
         + [f"refutes plan/{r} (LP, integer)" for r in RATIOS], args,
         note=f"seed {args.seed}, b = 2t, K = t; plan: the fast path with the search steps "
              "of `reproduce cltap --scale table3` (the same on every run)")
    emit("study_cltap_hull_config_lp", hull, MIXED_COLUMNS, args,
         note="hull: the configuration LP over the convex hull of integer prefix vectors, "
              "covers of distinct annotators by arc flow (200 units per theta): 'stands' with "
              "weights rounded down (its master covers t tasks with real covers and worlds: "
              "no price certificate refutes theta), 'refuted' with weights rounded up and every "
              "prefix vector priced; at (1000, 100) on the 12 annotators config-branch branches "
              "(a restriction: 'stands' still holds). coupled: each world's tasks covered by "
              "its own labels, labels pooled over the worlds at 99 % of their availability "
              "(50 units, rounded down): 'stands' means no relaxation that pools labels over "
              "worlds refutes theta; only branching on prefix lengths does")
    emit("study_cltap_plan_world", homes, ["cell", "plan", "world (annotator: labels)",
                                            "world bound", "plan / world bound", "node LPs"],
         args, note="world bound: config-branch's certified bound on the one box of the plan's "
                    "prefix lengths (integer prefixes, fractional covers), "
                    f"{WORLD_BISECTIONS} levels bisected")


if __name__ == "__main__":
    main()
