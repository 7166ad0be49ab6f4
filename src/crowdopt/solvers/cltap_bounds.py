"""Upper bounds on CL-TAP (paper 003) tighter than the compact LP relaxation [ours].

OPT = max min_i c'(W_i) (eq. 11). The paper certifies with the compact LP / column-generation
bound UB_LP, which is the best *average* c' per task (digest 2.5) and is weak when each task gets
few, uneven labels. Every bound below holds for every instance (any trend, ties, p = 1/2); each
docstring gives the argument. All share one pattern: a *test* that refutes a threshold theta
(proves OPT < theta), bisected on theta; the returned bound is always a refuted theta (or a
bound that was valid on entry), so it is valid whatever the tests' monotonicity, and floating
point never refutes a threshold by accident (every test needs a relative margin `REL`).

- `zero_optimum`: OPT = 0 exactly when fewer than t positive-weight labels fit (each task needs one).
- `covering_bound`: truncated machine-covering bound (theta-truncated weights; G by the
  concave-hull greedy = its LP relaxation, or by the exact multiple-choice knapsack DP).
- `counting_bound`: labels-per-task counting (singles, pairs, three or more labels).
- `pairing_bound`: covering + a Hall condition on two-label tasks.
- `first_labels_bound`: covering + the tasks of one annotator's first m labels, which every
  other annotator reaches with at most one label each (rising curves: her weakest labels).
- `config_lp_bound`: the configuration LP over truncated, rounded-up weights ("column generation
  over truncated weights"): covers with at most one label per annotator, label and prefix rows,
  HiGHS master, exact DP pricing and a Farley bound valid at every round.

Pure numpy except `config_lp_bound`, which imports the HiGHS adapter when called.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..problems.cltap import CltapInstance, CltapSolution

REL = 1e-9  # a test refutes theta only if it fails by this relative margin (float sums)
BISECT_REL = 1e-10  # bisection stops when hi - lo <= BISECT_REL * hi
DP_MAX_WORK = 400_000_000  # a*K*b of the exact knapsack DP ("where it fits": ~1 s per theta)


@dataclass
class BoundResult:
    """A valid upper bound on OPT, what proves it, and how it was computed."""

    value: float
    source: str
    details: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------- knapsack
def _row_kinds(vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(non-increasing rows, non-decreasing rows): their prefix sums are concave / convex."""
    d = np.diff(vals, axis=1)
    return np.all(d <= 0, axis=1), np.all(d >= 0, axis=1)


def _prefix_dual(C: np.ndarray, beta: float, tol: float
                 ) -> tuple[float, np.ndarray, np.ndarray]:
    """(f(beta), shortest and longest best prefix per row) of the budget row's Lagrangian
    f(beta) = beta b' + sum_j max_n (C[j, n] - beta n) without its beta b' term; prefixes within
    `tol` of a row's best count as tied."""
    X = C - beta * np.arange(C.shape[1], dtype=float)
    M = X.max(axis=1)
    near = X >= (M - tol)[:, None]
    lo = near.argmax(axis=1)
    hi = C.shape[1] - 1 - near[:, ::-1].argmax(axis=1)
    return float(M.sum()), lo, hi


def _lagrangian_lp(C: np.ndarray, b: int, target: float | None = None, max_iter: int = 200
                   ) -> tuple[float, np.ndarray]:
    """`mckp_lp` by LP duality, vectorized over rows of any shape, from the prefix sums
    C[j, n] (n = 0..K, C[:, 0] = 0, non-decreasing rows): the LP optimum is min_{beta >= 0}
    f(beta), f(beta) = beta b + sum_j max_n (C[j, n] - beta n) (the budget row (13) priced at beta; weak duality makes every f(beta) an upper bound, strong
    duality makes the minimum the LP value). f is convex and piecewise linear: the tangents at a
    point left of the minimum (slope b - sum of the shortest best prefixes < 0) and one right of
    it (b - sum of the longest > 0) meet at a beta that is either optimal (0 in the
    subdifferential: the value is the LP optimum) or on a new piece of f, so the search ends
    after at most as many steps as f has pieces (the upper-hull segments). The value returned is
    f at the last beta, an upper bound whatever the rounding; lengths: the shortest best
    prefixes, plus the budget left spread over the tied rows (the partial hull segment). With
    `target`, the search stops as soon as the answer to "LP < target?" is known: an f below it,
    or the tangents' crossing (a lower bound on the LP) at or above it."""
    K = C.shape[1] - 1
    eps = 1e-12 * (float(C[:, -1].max(initial=0.0)) + 1e-300)  # the largest prefix sum

    def ev(beta: float) -> tuple[float, np.ndarray, np.ndarray]:
        m, lo, hi = _prefix_dual(C, beta, eps * (1.0 + beta * K))
        return beta * b + m, lo, hi

    def lengths(beta: float, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        n = lo.astype(float)
        if beta > 0:  # zero-slope prefixes add nothing: the greedy leaves them out
            room = hi - lo
            before = np.concatenate([[0], np.cumsum(room)[:-1]])
            n += np.clip(float(b) - lo.sum() - before, 0.0, room)
        return n

    bl = 0.0
    fl, lo_l, hi_l = ev(bl)
    if lo_l.sum() <= b:  # the budget does not bind: every positive prefix fits
        return fl, lengths(bl, lo_l, hi_l)
    bh = float((C[:, 1:] / np.arange(1, K + 1)).max(initial=0.0))  # the steepest hull segment
    fh, lo_h, hi_h = ev(bh)
    best = (fh, bh, lo_h, hi_h) if fh <= fl else (fl, bl, lo_l, hi_l)
    for _ in range(max_iter):
        if lo_h.sum() <= b <= hi_h.sum():
            break  # bh is optimal
        if target is not None and best[0] < target:
            break  # proven below target
        sl, sh = b - float(lo_l.sum()), b - float(hi_h.sum())  # < 0 and > 0
        bm = (fh - fl + sl * bl - sh * bh) / (sl - sh)
        if not bl < bm < bh:
            break  # no room left between the tangents (rounding): f(best) is still a bound
        if target is not None and fl + sl * (bm - bl) >= target:
            break  # every f is >= the tangents' crossing >= target: the LP is not below it
        fm, lo_m, hi_m = ev(bm)
        if fm < best[0]:
            best = (fm, bm, lo_m, hi_m)
        if lo_m.sum() <= b <= hi_m.sum():
            best = (fm, bm, lo_m, hi_m)
            break
        if lo_m.sum() > b:
            bl, fl, lo_l = bm, fm, lo_m
        else:
            bh, fh, lo_h, hi_h = bm, fm, lo_m, hi_m
    f, beta, lo, hi = best
    return f, lengths(beta, lo, hi)


def mckp_lp(vals: np.ndarray, b: int, kinds: tuple[np.ndarray, np.ndarray] | None = None,
            target: float | None = None) -> tuple[float, np.ndarray]:
    """LP relaxation of max sum_j sum_{k < n_j} vals[j, k] s.t. sum_j n_j <= b, 0 <= n_j <= K.

    Multiple-choice knapsack over prefix lengths (one group per row, item n = prefix of length n,
    weight n); its LP optimum is the greedy over the segments of the upper concave hulls of the
    prefix sums by decreasing slope (Sinha-Zoltners; digest 2.5). Non-increasing rows: the
    segments are the single values; non-decreasing rows: one chord (0, 0)-(K, C_K); with any other
    row, the same optimum by its Lagrangian dual (`_lagrangian_lp`, vectorized). Returns the
    value and the (fractional) prefix length of every row in the LP optimum. vals >= 0. With
    `target` (a test "LP < target?"), rows of any shape may return as soon as the answer is
    known: then the value is an upper bound on the LP (below target only when the LP is, and
    whenever it is, up to rounding) and the lengths are those of the last multiplier tried.
    """
    a, K = vals.shape
    dec, inc = kinds if kinds is not None else _row_kinds(vals)
    if dec.all() and b < a * K:  # the b largest positive values (linear-time selection)
        flat = vals.ravel()
        kth = flat.size - int(b)
        part = np.partition(flat, kth)[kth:] if b > 0 else flat[:0]
        part = part[part > 0]
        n = np.zeros(a)  # lengths: the count of row values above the cut (ties split)
        if part.size:
            cut = part.min()
            above = (vals > cut).sum(axis=1)
            ties = (vals == cut).sum(axis=1)
            left = max(0, part.size - int(above.sum()))  # tied values taken, row by row
            before = np.concatenate([[0], np.cumsum(ties)[:-1]])
            n = (above + np.clip(left - before, 0, ties)).astype(float)
        return float(part.sum()), n
    if not (dec | inc).all():
        return _lagrangian_lp(np.concatenate([np.zeros((a, 1)), np.cumsum(vals, axis=1)], axis=1),
                              b, target)
    slopes: list[np.ndarray] = []
    lengths: list[np.ndarray] = []
    owner: list[np.ndarray] = []
    rows = np.arange(a)
    if dec.any():
        slopes.append(vals[dec].ravel())
        lengths.append(np.ones(int(dec.sum()) * K))
        owner.append(np.repeat(rows[dec], K))
    only_inc = inc & ~dec
    if only_inc.any():
        slopes.append(vals[only_inc].sum(axis=1) / K)
        lengths.append(np.full(int(only_inc.sum()), float(K)))
        owner.append(rows[only_inc])
    s = np.concatenate(slopes) if slopes else np.zeros(0)
    ln = np.concatenate(lengths) if lengths else np.zeros(0)
    ow = np.concatenate(owner) if owner else np.zeros(0, dtype=np.int64)
    keep = s > 0
    s, ln, ow = s[keep], ln[keep], ow[keep]
    order = np.argsort(-s, kind="stable")  # a row's values stay in order
    s, ln, ow = s[order], ln[order], ow[order]
    before = np.concatenate([[0.0], np.cumsum(ln)[:-1]])
    take = np.clip(float(b) - before, 0.0, ln)
    n = np.zeros(a)
    np.add.at(n, ow, take)
    return float(s @ take), n


def mckp_int(vals: np.ndarray, b: int) -> float:
    """Exact max sum_j sum_{k < n_j} vals[j, k] s.t. sum_j n_j <= b (DP over capacity, digest
    3.3, value only): O(a K b) vector operations; prefixes that add no value are skipped."""
    a, K = vals.shape
    b = int(max(0, min(b, a * K)))
    F = np.zeros(b + 1)
    C = np.cumsum(vals, axis=1)
    for j in range(a):
        G = F.copy()
        best = 0.0
        for n in range(1, min(K, b) + 1):
            c = float(C[j, n - 1])
            if c <= best:
                continue
            best = c
            np.maximum(G[n:], F[: b + 1 - n] + c, out=G[n:])
        F = G
    return float(F[b])


# ----------------------------------------------------------------------------- zero
def zero_optimum(inst: CltapInstance) -> bool:
    """True when OPT = 0 is proven: every task needs a label of positive weight, labels are
    distinct, so OPT > 0 needs t positive labels inside prefixes of total length <= b. The LP
    relaxation (concave-hull greedy) of max #positive labels over prefixes is an upper bound on
    that count; below t, some task has c' = 0 in every solution (b < t is the special case)."""
    if inst.capacity < inst.t:
        return True
    count, _ = mckp_lp((inst.phi > 0).astype(float), inst.b)
    if count < inst.t - 1e-9:
        return True
    if inst.a * inst.K * min(inst.b, inst.a * inst.K) <= ZERO_DP_MAX_WORK:
        return max_positive_labels(inst) < inst.t
    return False


ZERO_DP_MAX_WORK = 20_000_000  # a K b of the exact count below (numpy, about a second)


def max_positive_labels(inst: CltapInstance) -> int:
    """The most positive-weight labels prefixes within the budget hold (exact: a knapsack DP
    over prefix lengths, budget b). OPT > 0 iff it is >= t: each annotator's labels go to
    different tasks, so that many labels cover min(t, count) tasks round-robin. The LP of
    `zero_optimum` can say >= t where no integer choice does (rising curves whose first labels
    weigh 0: 6 positives fit in b = 10 for t = 7, the LP counted 7)."""
    b = min(inst.b, inst.a * inst.K)
    best = np.zeros(b + 1)
    for row in inst.phi > 0:
        pos = np.concatenate([[0], np.cumsum(row)])  # positives in a prefix of length n
        nxt = best.copy()
        for n in range(1, len(pos)):
            if n > b:
                break
            nxt[n:] = np.maximum(nxt[n:], best[:-n] + pos[n])
        best = nxt
    return int(best.max())


# ----------------------------------------------------------------------------- covering
def _bisect(test, lo: float, hi: float, rel: float = BISECT_REL) -> tuple[float, int]:
    """Smallest refuted theta found by bisection on [lo, hi]; hi must be a valid bound."""
    steps = 0
    while hi - lo > rel * hi + 1e-300 and steps < 200:
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        steps += 1
        if test(mid):
            hi = mid
        else:
            lo = mid
    return hi, steps


class _Covering:
    """G(theta) = max_n sum_j sum_{k < n_j} min(phi_jk, theta) over prefix lengths sum n <= b."""

    def __init__(self, inst: CltapInstance) -> None:
        self.inst = inst
        self.phi = inst.phi
        self.kinds = _row_kinds(self.phi)  # truncation keeps a row monotone
        self.all_dec = bool(self.kinds[0].all())
        if self.all_dec:  # G = sum of the b largest min(phi, theta)
            self.top = np.sort(self.phi.ravel())[::-1][: inst.b]

    def g_lp(self, theta: float) -> tuple[float, np.ndarray | None]:
        if self.all_dec:
            return float(np.minimum(self.top, theta).sum()), None
        return mckp_lp(np.minimum(self.phi, theta), self.inst.b, self.kinds)

    def g_int(self, theta: float) -> float:
        val, n = self.g_lp(theta)
        if n is None or np.allclose(n, np.round(n), atol=1e-9):
            return val  # the LP optimum is integral: the DP would return the same value
        return mckp_int(np.minimum(self.phi, theta), self.inst.b)


def covering_bound(inst: CltapInstance, *, exact: bool = False, lo: float = 0.0,
                   hi: float | None = None) -> BoundResult:
    """Truncated machine-covering bound: the largest theta with G(theta) >= theta t.

    Validity. If OPT >= theta, take an optimal assignment with prefix lengths n (sum n_j <= b).
    Every task has sum_{(j,k) in W_i} phi_jk >= theta, hence
    theta <= min(theta, sum_{W_i} phi) <= sum_{W_i} min(phi_jk, theta); summing over the t tasks,
    theta t <= sum_j sum_{k < n_j} min(phi_jk, theta) <= G(theta) <= G_LP(theta). So any theta
    with G_LP(theta) < theta t (exact=False: concave-hull greedy) or G(theta) < theta t
    (exact=True: the multiple-choice knapsack DP, <= G_LP, so never looser) is above OPT.
    G(theta)/theta is non-increasing (each min(phi, theta)/theta is), so the refuted thetas form
    an interval [theta*, oo) and bisection finds theta*. A test refutes only with relative margin
    REL, so a tie G = theta t computed with rounding errors is never taken as a refutation.
    With non-increasing curves this is machine covering's min over k of (sum of the b largest
    phi minus the k largest) / (t - k) (digest 5.6). Never above UB_LP (at theta > UB_LP,
    G <= t UB_LP < theta t).
    """
    from .cltap_colgen import closed_form_bound

    t0 = time.perf_counter()
    if zero_optimum(inst):
        return BoundResult(0.0, "zero: fewer than t positive-weight labels fit in the budget",
                           {"time_s": time.perf_counter() - t0})
    ub_lp = closed_form_bound(inst)
    top = ub_lp * (1 + 1e-12) + 1e-300 if hi is None else min(hi, ub_lp * (1 + 1e-12) + 1e-300)
    cov = _Covering(inst)
    work = inst.a * inst.K * inst.b
    use_dp = exact and work <= DP_MAX_WORK

    def test(theta: float) -> bool:
        g = cov.g_int(theta) if use_dp else cov.g_lp(theta)[0]
        return g < theta * inst.t * (1.0 - REL)

    value, steps = _bisect(test, max(0.0, lo), top)
    kind = "exact knapsack DP" if use_dp else "LP relaxation (concave-hull greedy)"
    det = {"bisection_steps": steps, "g": kind, "time_s": time.perf_counter() - t0}
    if exact and not use_dp:
        det["dp_skipped"] = f"a*K*b = {work} > {DP_MAX_WORK}: used the LP relaxation"
    return BoundResult(value, f"truncated covering bound, G by {kind}", det)


def covering_allocation(inst: CltapInstance, theta: float, exact: bool = True) -> np.ndarray:
    """Integer prefix lengths maximizing sum_j sum_{k < n_j} min(phi_jk, theta), sum n <= b:
    the covering bound's allocation at theta (DP where it fits, else the LP's rounded down)."""
    vals = np.minimum(inst.phi, theta)
    if exact and inst.a * inst.K * inst.b <= DP_MAX_WORK:
        from .cltap_colgen import mckp_dp

        _, items = mckp_dp(np.cumsum(vals, axis=1), inst.b)
        n = np.zeros(inst.a, dtype=np.int64)
        for j, k in items:
            n[j] = k + 1
        return n
    _, frac = mckp_lp(vals, inst.b)
    return np.floor(frac + 1e-9).astype(np.int64)


# ----------------------------------------------------------------------------- counting
def _max_pairs(desc: np.ndarray, thr: float) -> int:
    """Most disjoint pairs with sum >= thr from values sorted descending: the largest k with
    desc[i] + desc[2k-1-i] >= thr for all i < k (the top 2k, largest with smallest), which is
    monotone in k, so binary search."""
    lo, hi = 0, len(desc) // 2
    while lo < hi:
        k = (lo + hi + 1) // 2
        if np.all(desc[:k] + desc[2 * k - 1:k - 1:-1] >= thr):
            lo = k
        else:
            hi = k - 1
    return lo


def counting_bound(inst: CltapInstance, *, lo: float = 0.0, hi: float | None = None
                   ) -> BoundResult:
    """Labels-per-task counting bound: few heavy labels force many labels per task.

    Validity. Suppose OPT >= theta. Call a label *big* if phi >= theta. Every task is of one of
    three kinds: it holds a big label (m1 tasks; distinct labels, so m1 <= #big); it holds no big
    label and exactly two labels, which then sum to >= theta (m2 tasks, disjoint pairs of small
    labels, so m2 <= P(theta), the most disjoint pairs of small labels with sum >= theta, over
    all labels at iterations k < b, ignoring the annotator rules); or it holds >= 3 labels. The
    budget gives b >= m1 + 2 m2 + 3 (t - m1 - m2) = 3t - 2 m1 - m2 >= 3t - 2 min(#big, t) -
    min(P, t - min(#big, t)). When the right side exceeds b, OPT < theta. Bisection on theta
    returns a refuted theta (valid in any case); thresholds are compared with margin REL so that
    rounding only ever counts more big labels and pairs.
    """
    from .cltap_colgen import closed_form_bound

    t0 = time.perf_counter()
    if zero_optimum(inst):
        return BoundResult(0.0, "zero: fewer than t positive-weight labels fit in the budget",
                           {"time_s": time.perf_counter() - t0})
    kmax = min(inst.K, inst.b)
    desc = np.sort(inst.phi[:, :kmax].ravel())[::-1]
    t, b = inst.t, inst.b

    def test(theta: float) -> bool:
        thr = theta * (1.0 - REL)
        n_big = int(np.searchsorted(-desc, -thr, side="right"))  # desc >= thr
        m1 = min(n_big, t)
        m2 = min(_max_pairs(desc[n_big:], thr), t - m1)
        return 3 * t - 2 * m1 - m2 > b

    ub_lp = closed_form_bound(inst)
    top = ub_lp * (1 + 1e-12) + 1e-300 if hi is None else min(hi, ub_lp * (1 + 1e-12) + 1e-300)
    value, steps = _bisect(test, max(0.0, lo), top)
    return BoundResult(value, "labels-per-task counting bound (singles, pairs, 3+ labels)",
                       {"bisection_steps": steps, "time_s": time.perf_counter() - t0})


# ----------------------------------------------------------------------------- configuration LP
CONFIG_GRID = 200  # units per bound value: a label's weight is rounded up to hi / CONFIG_GRID
CONFIG_MAX_SEGMENTS = 40_000  # label classes (rows of the master); beyond that, skipped
CONFIG_ROUNDS_PER_LEVEL = 400


class _Segments:
    """Label classes of the configuration LP: maximal runs of consecutive iterations of one
    annotator whose weights round up to the same number of units u = floor(phi/delta) + 1
    (u = 0 when phi = 0; capped at `grid`). Rounding up is what keeps the LP a relaxation.
    With `down`, u = floor(phi/delta) (u delta <= phi): every cover the LP counts is a real one,
    so the LP is a restriction, and a solution of it that covers the tasks is a feasible point
    of the exact LP."""

    def __init__(self, inst: CltapInstance, delta: float, grid: int, down: bool = False
                 ) -> None:
        x = inst.phi / delta
        if down:
            u = np.floor(x * (1.0 - 1e-12)).astype(np.int64)
        else:
            u = np.where(inst.phi > 0, np.floor(x + 1e-9) + 1, 0).astype(np.int64)
        u = np.minimum(u, grid)
        a, K = u.shape
        starts = np.ones((a, K), dtype=bool)
        starts[:, 1:] = u[:, 1:] != u[:, :-1]
        jj, kk = np.nonzero(starts)  # row-major: by annotator, then iteration
        self.ann = jj
        self.k0 = kk
        nxt = np.append(kk[1:], K)
        nxt[np.append(jj[1:] != jj[:-1], True)] = K  # a run ends at K on its annotator's last
        self.n = nxt - kk
        self.u = u[jj, kk]
        self.S = len(jj)
        self.of = np.repeat(np.arange(self.S), self.n).reshape(a, K)  # segment of (j, k)
        same = np.flatnonzero(jj[1:] == jj[:-1]) + 1
        self.prefix_later = same  # prefix row r: w_s/n_s - w_{s-1}/n_{s-1} <= 0, s = later
        self.by_ann = [np.flatnonzero((jj == j) & (self.u > 0)) for j in range(a)]


def _cover_dp(seg: _Segments, gamma: np.ndarray, grid: int):
    """dp[c] = min sum gamma over sets with <= 1 segment per annotator whose capped unit sum is
    exactly c (c = grid means >= grid); with the choices to backtrack. gamma >= 0."""
    dp = np.full(grid + 1, np.inf)
    dp[0] = 0.0
    steps = []
    for segs in seg.by_ann:
        if not len(segs):
            continue
        order = segs[np.lexsort((gamma[segs], -seg.u[segs]))]  # units desc, then gamma asc
        g = gamma[order]
        keep = g < np.minimum.accumulate(np.concatenate([[np.inf], g[:-1]])) - 1e-15
        new = dp.copy()
        arg = np.full(grid + 1, -1, dtype=np.int64)
        src_cap = -1
        for s in order[keep]:
            v, gs = int(seg.u[s]), float(gamma[s])
            if v < grid:
                cand = dp[: grid + 1 - v] + gs
                better = cand < new[v:] - 1e-15
                better[-1] = False  # level grid is handled below (many sources)
                idx = np.flatnonzero(better) + v
                new[idx] = cand[better]
                arg[idx] = s
            lo = max(0, grid - v)
            q = lo + int(np.argmin(dp[lo:]))
            if dp[q] + gs < new[grid] - 1e-15:
                new[grid] = dp[q] + gs
                arg[grid] = s
                src_cap = q
        steps.append((arg, src_cap))
        dp = new
    return dp, steps


def _backtrack(seg: _Segments, steps, c: int, grid: int) -> tuple[int, ...]:
    out = []
    for arg, src_cap in reversed(steps):
        s = int(arg[c])
        if s < 0:
            continue
        out.append(s)
        c = src_cap if c == grid else c - int(seg.u[s])
    return tuple(sorted(out))


class ConfigMasterLP:
    """The configuration LP (`models.cltap_masters.CONFIG_MASTER`) as a live HiGHS model: the
    emitter's matrix without covers, cover columns appended warm (`add`), covers below the need
    level closed by their bounds (`set_level`); `pool` maps each cover to its units."""

    def __init__(self, data: Any, opts: Any) -> None:
        from ..models.cltap_masters import CONFIG_MASTER, ConfigRows, emit_config_master
        from .exact_runner import formulation_options
        from .highs import HighsModel

        e = emit_config_master(data)
        self.rows = ConfigRows(len(data.n), len(data.later))
        self.S = len(data.n)
        self.model = HighsModel.from_arrays(
            e.c, e.A, e.row_lo, e.row_hi, e.col_lo, e.col_hi, None, e.sense,
            options=formulation_options(CONFIG_MASTER.settings(data), opts))
        self.pool: dict[tuple[int, ...], int] = {}
        self.level = data.level

    def add(self, cfgs: list[tuple[int, ...]], u: np.ndarray) -> int:
        """Append the new nonempty covers (u: units per segment); returns how many."""
        from ..models.cltap_masters import cover_bounds

        new = [c for c in dict.fromkeys(cfgs) if c and c not in self.pool]
        for c in new:
            self.pool[c] = int(u[list(c)].sum())
        if new:
            self.model.add_columns(np.ones(len(new)), 0.0,
                                   cover_bounds([self.pool[c] for c in new], self.level),
                                   self.rows.covers(new))
        return len(new)

    def set_level(self, level: int) -> None:
        """Open the covers with at least `level` units, close the others."""
        from ..models.cltap_masters import cover_bounds

        self.level = level
        if self.pool:
            self.model.set_col_bounds(np.arange(self.S, self.S + len(self.pool)), 0.0,
                                      cover_bounds(list(self.pool.values()), level))


def config_lp_bound(inst: CltapInstance, *, lo: float, hi: float, grid: int = CONFIG_GRID,
                    time_limit: float | None = 30.0, initial: list[CltapSolution] | None = None,
                    rounds_per_level: int = CONFIG_ROUNDS_PER_LEVEL, smoothing: float = 0.5,
                    max_segments: int = CONFIG_MAX_SEGMENTS, strategy: str = "bisect",
                    max_rounds: int | None = None) -> BoundResult:
    """Configuration LP over truncated, rounded-up weights, by column generation.

    `lo`: a known primal value (levels up to it are feasible, never tested); `hi`: a valid bound
    (the result is never above it). delta = hi / grid; a label's weight is rounded up to
    u = floor(phi/delta) + 1 units (0 if phi = 0, capped at grid); segments = label classes
    (`_Segments`). For a need level N, LP(N) is

        max sum_C x_C   s.t.  sum_{C containing s} x_C <= w_s,  w_s <= n_s  (per segment s),
                              w_s / n_s <= w_{s-1} / n_{s-1} (consecutive segments of one
                              annotator: prefix rule (16)),  sum_s w_s <= b  (budget (13)),

    over covers C: sets of segments of distinct annotators (one label per task and annotator,
    (14)) with unit sum >= N. Validity: if OPT > (N - 1) delta, take an optimal assignment; each
    task's labels have weights summing to more than (N-1) delta, so their units (each > phi/delta
    or = grid) sum to >= N: the task contains a cover. x_C = number of tasks containing C (one
    per task) and w_s = labels of segment s in the prefixes satisfy every row (w_s/n_s is the
    used fraction of s: 1, then one partial segment, then 0), so LP(N) >= t. Hence LP(N) < t
    proves OPT <= (N - 1) delta.

    LP(N) < t is proven by a Farley bound at any round, so stopping early never makes the bound
    invalid: from the master's row duals (gamma_s >= 0 on the segment rows, mu, eps, beta),
    mu_s is raised until every w-column's dual row holds exactly, D = b beta + sum n_s mu_s, and
    g(N) = min over all covers of sum gamma (exact DP over annotators and unit levels, `_cover_dp`);
    (gamma, mu, eps, beta) / min(g, 1) is dual feasible, so LP(N) <= D / min(g(N), 1). One DP
    gives g for every level, so each round refutes the smallest level it can. Levels are bisected
    between lo and hi; a level whose column generation is inconclusive within `rounds_per_level`
    counts as not refuted (only tightness is lost). Pricing: the DP's best cover at every level
    >= N with reduced cost > 0 (several columns per round), at duals smoothed towards the last
    refuting ones (Wentges), falling back to the master's own duals. Initial columns: the
    workplans of `initial` solutions. `max_rounds`: a deterministic cap on all rounds (the
    bound is then the same on any machine; `time_limit` stays a safety cap).
    """
    from ..models.cltap_masters import ConfigMaster
    from ..problems.catalogue import RunOptions

    t0 = time.perf_counter()
    t = inst.t
    det: dict[str, Any] = {"grid": grid}
    if zero_optimum(inst):
        return BoundResult(0.0, "zero: fewer than t positive-weight labels fit in the budget", det)
    if not hi > 0 or not hi > lo:
        det["skipped"] = "nothing to prove (hi <= lo)"
        return BoundResult(hi, "input bound (configuration LP had nothing to prove)", det)
    delta = hi / grid
    seg = _Segments(inst, delta, grid)
    S = seg.S
    det.update(segments=S, delta=delta)
    if S > max_segments:
        det["skipped"] = f"{S} label classes > {max_segments}"
        return BoundResult(hi, "input bound (configuration LP too large)", det)
    nseg = seg.n.astype(float)
    later = seg.prefix_later
    # HiGHS's time limit counts the Highs object's run time across re-solves: the whole budget
    master = ConfigMasterLP(ConfigMaster(nseg, later, inst.b), RunOptions(time_limit=time_limit))
    pool = master.pool

    def add(cfgs: list[tuple[int, ...]]) -> int:
        return master.add(cfgs, seg.u)

    def farley(y: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, list]:
        r_mu, r_pre, r_b = master.rows.r_mu, master.rows.r_pre, master.rows.r_b
        gamma = y[:S]
        beta = y[r_b]
        eps = y[r_pre:r_b]
        slack = beta - gamma
        np.add.at(slack, later, eps / nseg[later])
        np.add.at(slack, later - 1, -eps / nseg[later - 1])
        mu = np.maximum(y[r_mu:r_pre], -slack)
        D = inst.b * beta + float(nseg @ mu)
        dp, steps = _cover_dp(seg, gamma, grid)
        g = np.minimum.accumulate(dp[::-1])[::-1]  # g[c] = min cost with unit sum >= c
        return D, g, dp, steps

    for sol in initial or []:
        add([tuple(sorted({int(seg.of[j, k]) for j, k in wp})) for wp in sol.workplans(t)])
    lo_lvl = int(min(grid, math.floor(lo / delta))) if lo > 0 else 0
    hi_lvl = grid + 1  # refuted by assumption: OPT <= hi = grid * delta
    rounds = levels = 0
    out_of_time = out_of_rounds = False
    version = ""
    while hi_lvl - lo_lvl > 1 and not out_of_time and not out_of_rounds:
        # top-down: refutations are cheap near the top, proving LP(N) >= t is not; each round's
        # Farley bound refutes every level it can, so the descent jumps
        n_need = hi_lvl - 1 if strategy == "descent" else (lo_lvl + hi_lvl) // 2
        levels += 1
        master.set_level(n_need)
        center: np.ndarray | None = None
        for _ in range(rounds_per_level):
            if time_limit is not None and time.perf_counter() - t0 > time_limit:
                out_of_time = True
                break
            if max_rounds is not None and rounds >= max_rounds:
                out_of_rounds = True
                break
            rounds += 1
            if pool:
                res = master.model.solve()
                version = res.highs_version or version
                if res.row_duals is None or res.objective is None:
                    det["master_status"] = f"{res.status} {res.message}"
                    out_of_time = True  # master time limit or failure: keep what is proven
                    break
                z, y = float(res.objective), np.maximum(res.row_duals, 0.0)
            else:
                z, y = 0.0, np.zeros(master.rows.num_row)
            if z >= t - 1e-7:
                lo_lvl = n_need  # LP(N) >= t: this level cannot be refuted
                break
            found: list[tuple[int, ...]] = []
            duals = [y] if center is None or smoothing <= 0 else [
                smoothing * center + (1 - smoothing) * y, y]
            for yy in duals:
                D, g, dp, steps = farley(yy)
                with np.errstate(divide="ignore", invalid="ignore"):
                    ub = np.where(g > 1e-12, D / np.minimum(g, 1.0), np.inf)
                ref = np.flatnonzero(ub < t * (1.0 - REL))
                if ref.size and ref[0] < hi_lvl:
                    hi_lvl = int(ref[0])
                    center = yy.copy()
                if center is None:
                    center = yy.copy()
                if hi_lvl <= n_need:
                    break
                for c in range(n_need, grid + 1):
                    if dp[c] < 1.0 - 1e-9:
                        cfg = _backtrack(seg, steps, c, grid)
                        if cfg not in pool:
                            found.append(cfg)
                if found:
                    break
            if hi_lvl <= n_need:
                break
            if not add(found):
                lo_lvl = n_need  # no column prices out but LP < t not shown: give up the level
                break
        else:
            lo_lvl = n_need  # inconclusive within the round cap: counted as not refuted
        if lo_lvl == n_need and strategy == "descent":
            break  # a level that was not refuted ends the descent
    value = hi if hi_lvl > grid else min(hi, (hi_lvl - 1) * delta * (1 + 1e-12))
    det.update(levels=levels, rounds=rounds, columns=len(pool), refuted_level=hi_lvl,
               feasible_level=lo_lvl, stopped="time limit" if out_of_time else (
                   "round cap" if out_of_rounds or hi_lvl - lo_lvl > 1 else "converged"),
               time_s=time.perf_counter() - t0)
    if version:
        det["highs_version"] = version
    src = ("configuration LP over truncated rounded-up weights (column generation, Farley bound)"
           if hi_lvl <= grid else "input bound (configuration LP refuted nothing)")
    return BoundResult(value, src, det)


# ----------------------------------------------------------------------------- pairing (Hall)
PAIRING_X = (0.15, 0.25, 0.35, 0.45, 0.5)  # x / theta: the "small" thresholds tried
PAIRING_MU = (0.0, 0.1, 0.3, 1.0, 3.0)  # mu / lambda (0: the covering test itself)


def pairing_bound(inst: CltapInstance, *, lo: float = 0.0, hi: float | None = None,
                  xs: tuple = PAIRING_X, mus: tuple = PAIRING_MU) -> BoundResult:
    """Covering + a Hall condition on two-label tasks inside the budget's prefixes.

    Validity. Suppose OPT >= theta > 0; take an optimal assignment with prefix lengths n
    (L = sum n_j <= b, (13), (16)). Tasks: T1 hold a big label (phi >= theta; m1 <= B(n), the
    number of big labels), T2 hold no big label and exactly two labels (m2), T3 hold no big
    label and >= 3 labels (m3); no other task reaches theta. Fix 0 < x <= theta/2; "small" =
    phi < x, "large" = phi >= theta - x. A T2 task's two labels sum to >= theta, so it holds at
    most one small label, and then also a large one (distinct per task): small labels in T2 <=
    G_x(n), the number of large labels. A T1 task holds a big, not small, label: small labels in
    T1 <= L1 - m1; in T3 <= L3. With L = L1 + 2 m2 + L3 and L >= m1 + 2 m2 + 3 m3 (so
    m3 <= L - 2t + m1):  S_x(n) <= G_x(n) + L - 2 m2 - m1 <= G_x(n) + 3L - 6t + 3 B(n).
    With the covering condition sum_prefixes min(phi, theta)/theta >= t (`covering_bound`), for
    any lambda, mu >= 0 the prefixes satisfy sum_prefixes [lambda min(phi, theta)/theta +
    mu (1[large] - 1[small] + 3 + 3 1[big])] >= (lambda + 6 mu) t, and the LP relaxation of the
    multiple-choice knapsack over prefix lengths (`mckp_lp`) bounds the left side from above:
    when it falls short for some (x, mu) in the grid, OPT < theta. The condition is what the
    bottleneck pairing needs (the k-th lightest label with a partner of at least theta minus
    it), which the covering bound, an average, misses when few heavy labels must carry many
    light ones (increasing curves at b = 2t). Thresholds are shifted by REL so that rounding
    only ever counts fewer small and more large or big labels; bisection as in
    `covering_bound` (a refuted theta is returned, valid whatever the monotonicity).
    """
    from .cltap_colgen import closed_form_bound

    t0 = time.perf_counter()
    if zero_optimum(inst):
        return BoundResult(0.0, "zero: fewer than t positive-weight labels fit in the budget",
                           {"time_s": time.perf_counter() - t0})
    phi, t, b = inst.phi, inst.t, inst.b
    kinds = _row_kinds(phi)  # every term is monotone in phi: rows keep their kind

    def test(theta: float) -> bool:
        trunc = np.minimum(phi, theta) / theta
        big = (phi >= theta * (1 - REL)).astype(float)
        if 0.0 in mus:
            got, _ = mckp_lp(trunc, b, kinds)
            if got < t * (1 - REL) - 1e-9:
                return True
        for fx in xs:
            x = fx * theta
            pair = ((phi >= (theta - x) * (1 - REL)).astype(float)
                    - (phi < x * (1 - REL)).astype(float) + 3.0 + 3.0 * big)
            for mu in mus:
                if mu == 0.0:
                    continue
                got, _ = mckp_lp(trunc + mu * pair, b, kinds)
                if got < (1.0 + 6.0 * mu) * t * (1 - REL) - 1e-9:
                    return True
        return False

    ub_lp = closed_form_bound(inst)
    top = ub_lp * (1 + 1e-12) + 1e-300 if hi is None else min(hi, ub_lp * (1 + 1e-12) + 1e-300)
    value, steps = _bisect(test, max(0.0, lo), top, rel=1e-7)
    return BoundResult(value, "covering + Hall condition on two-label tasks (pairing bound)",
                       {"bisection_steps": steps, "time_s": time.perf_counter() - t0})


# ----------------------------------------------------------------------------- first labels
FIRST_LAMBDAS = (0.25, 0.5, 1.0, 2.0, 4.0)  # weights of the first-labels row on the covering
FIRST_SHARES = (0.3, 0.6)  # m / t: the tasks of one annotator's first m labels


def _top_q_of_prefix(w: np.ndarray, S: np.ndarray, q: int) -> np.ndarray:
    """T[j, n] >= the sum of the q largest of w[j, :n]: exact on monotone rows (the last q of a
    non-decreasing prefix, the first q of a non-increasing one), else min(S[j, n], top q of the
    whole row)."""
    a, K = w.shape
    nn = np.arange(K + 1)
    d = np.diff(w, axis=1)
    inc, dec = np.all(d >= 0, axis=1), np.all(d <= 0, axis=1)
    top = -np.sort(-w, axis=1)[:, :q].sum(axis=1)
    T = np.minimum(S, top[:, None])
    T[inc] = (S - S[:, np.maximum(nn - q, 0)])[inc]
    T[dec] = S[dec][:, np.minimum(nn, q)]
    return T


def first_labels_bound(inst: CltapInstance, *, lo: float = 0.0, hi: float | None = None,
                       lambdas: tuple = FIRST_LAMBDAS, shares: tuple = FIRST_SHARES
                       ) -> BoundResult:
    """Covering + the tasks that hold one annotator's first m labels (first-labels bound).

    Validity. Suppose OPT >= theta > 0; take an optimal assignment with prefix lengths n
    (sum n_j <= b, (13), (16)) and truncated weights w = min(phi, theta) (each task still has
    sum_{W_i} w >= theta). Covering (`covering_bound`): sum_j S_j(n_j) >= t theta, S_j the
    prefix sums of w_j. Fix an annotator j and m <= t. Let M be the tasks of j's first
    min(n_j, m) labels (distinct tasks, (14), (15)), filled up to m tasks with any others. On M
    the weights sum to >= m theta; j gives exactly S_j(min(n_j, m)), every other annotator at
    most one label per task of M ((14)), so at most the m largest of her prefix, T_j(n_j)
    (`_top_q_of_prefix`). Hence for any lambda >= 0, sum_j V_j(n_j) >= (t + lambda m) theta with
    V_j = S_j + lambda S_j(min(., m)) for j and S_j' + lambda T_j' for the others: a knapsack
    over prefix lengths whose maximum is bounded above by its LP relaxation (`mckp_lp`: exact,
    the best multiplier of the budget row (13)). When it falls short (with relative margin REL),
    OPT < theta. Rising rows make S_j(m) the sum of j's weakest labels, which the
    covering bound (an average over all tasks) never sees: two rising annotators who label
    every task cannot both put their strong labels on the tasks of each other's weak ones.
    Tried: j among the two longest prefixes of the covering knapsack's LP allocation at theta, m = share * t, every lambda of the grid; any choice is valid. The test need not be
    monotone in theta; bisection returns a refuted theta, valid in any case, never above `hi`
    (default: the covering bound).
    """
    t0 = time.perf_counter()
    if zero_optimum(inst):
        return BoundResult(0.0, "zero: fewer than t positive-weight labels fit in the budget",
                           {"time_s": time.perf_counter() - t0})
    hi_src = "input bound"
    if hi is None:
        cov = covering_bound(inst)
        hi, hi_src = cov.value, cov.source
    phi, t, b = inst.phi, inst.t, inst.b
    a, K = phi.shape
    if a < 2 or not hi > lo:
        return BoundResult(hi, f"{hi_src} (first-labels bound does not apply)",
                           {"time_s": time.perf_counter() - t0})
    nn = np.arange(K + 1)
    kinds = _row_kinds(phi)  # truncation keeps a row monotone
    all_dec = bool(kinds[0].all())
    ms = sorted({max(1, min(t, K, round(f * t))) for f in shares})

    def test(theta: float) -> bool:
        w = np.minimum(phi, theta)
        S = np.concatenate([np.zeros((a, 1)), np.cumsum(w, axis=1)], axis=1)
        tgt = t * theta * (1 - REL)
        got, n = mckp_lp(w, b, kinds)
        if got < tgt:
            return True
        rows = [int(j) for j in np.argsort(-n, kind="stable")[:2]]  # the LP's longest prefixes
        for m in ms:
            top = _top_q_of_prefix(w, S, m)
            for j in rows:
                V = top.copy()
                V[j] = S[j, np.minimum(nn, m)]
                dV = np.diff(V, axis=1) if all_dec else None
                for lam in lambdas:
                    need = tgt + lam * m * theta * (1 - REL)
                    got = (mckp_lp(w + lam * dV, b, kinds)[0] if all_dec  # rows stay concave
                           else _lagrangian_lp(S + lam * V, b, need)[0])
                    if got < need:
                        return True
        return False

    top = hi * (1 + 1e-12) + 1e-300
    value, steps = _bisect(test, max(0.0, lo), top, rel=1e-5)
    src = ("first-labels bound (covering + the tasks of one annotator's first labels)"
           if value < hi else f"{hi_src} (first-labels bound refuted nothing)")
    return BoundResult(value, src, {"bisection_steps": steps, "time_s": time.perf_counter() - t0})
