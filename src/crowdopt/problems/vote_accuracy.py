"""Exact accuracy pi(S) of a vote over independent labelers (paper 001, eq. 2; digest A0).

Labeler i is right with probability p_i, independently. Majority vote (MV) is right when a
strict majority is right, and half of the time on an exact tie (random tie-breaking, eq. 2):
the number of right votes is Poisson-binomial, computed by the O(h^2) counting recursion, never
by the 2^h subset sum. Weighted majority vote (WMV, Sec. 4.1) with weights w_i (log-odds by
default) is right when the signed weight margin sum_i s_i w_i (s_i = +1 if i is right, -1 if
wrong) is >= eps, and half of the time when |margin| < eps (eps = the tie tolerance; exact ties
are resolved with the tolerance TIE_TOL so that float noise never decides a tie). pi_wmv is exact
by meet-in-the-middle over the 2^(h/2) correctness patterns of each half. The `*_enumerate`
functions sum over all 2^h patterns: the brute-force references of the tests.
"""

from __future__ import annotations

import itertools

import numpy as np

TIE_TOL = 1e-9  # |margin| below this is an exact tie for WMV (also used by the MILP, models/)
WMV_MAX = 40  # largest set for which pi_wmv is computed exactly (2 x 2^20 patterns)


def correct_count_distribution(p: np.ndarray) -> np.ndarray:
    """P(#right votes = c), c = 0..h, by the counting recursion (Poisson-binomial, O(h^2))."""
    p = np.asarray(p, dtype=float)
    d = np.zeros(len(p) + 1)
    d[0] = 1.0
    for k, q in enumerate(p, start=1):
        d[1:k + 1] = d[1:k + 1] * (1.0 - q) + d[:k] * q
        d[0] *= 1.0 - q
    return d


def _mv_from_distribution(d: np.ndarray) -> float:
    h = len(d) - 1
    c = np.arange(h + 1)
    return float(d[2 * c > h].sum() + 0.5 * d[2 * c == h].sum())


def pi_mv(p) -> float:
    """pi(S) under MV with random tie-breaking (eq. 2); pi of the empty set is 1/2."""
    return _mv_from_distribution(correct_count_distribution(np.asarray(p, dtype=float)))


def pi_mv_prefix(p) -> np.ndarray:
    """[pi(p[:1]), pi(p[:2]), ..., pi(p)]: every prefix in O(h^2) total (digest A0/A1)."""
    p = np.asarray(p, dtype=float)
    h = len(p)
    out = np.empty(h)
    d = np.zeros(h + 1)
    d[0] = 1.0
    c = np.arange(h + 1)
    for k, q in enumerate(p, start=1):
        d[1:k + 1] = d[1:k + 1] * (1.0 - q) + d[:k] * q
        d[0] *= 1.0 - q
        out[k - 1] = d[2 * c > k].sum() + 0.5 * d[2 * c == k].sum()
    return out


def log_odds(p, clip: float = 0.0) -> np.ndarray:
    """w_i = log(p_i / (1 - p_i)) (eq. 15), p clipped to [clip, 1 - clip] first."""
    p = np.asarray(p, dtype=float)
    if clip > 0:
        p = np.clip(p, clip, 1.0 - clip)
    with np.errstate(divide="ignore"):
        return np.log(p) - np.log1p(-p)


def _half_margins(p: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All 2^h correctness patterns of a group: (signed margin, probability)."""
    h = len(p)
    if h == 0:
        return np.zeros(1), np.ones(1)
    bits = ((np.arange(1 << h)[:, None] >> np.arange(h)) & 1).astype(bool)
    margin = np.where(bits, w, -w).sum(axis=1)
    prob = np.where(bits, p, 1.0 - p).prod(axis=1)
    return margin, prob


def pi_wmv(p, w=None, eps: float = 0.0) -> float:
    """pi_W(S): P(WMV right); win if margin >= e, half if |margin| < e, e = max(eps, TIE_TOL).

    Exact by meet-in-the-middle: margins of the two halves are enumerated (2^(h/2) each), the
    second half is sorted and the win/tie masses are read off by binary search.
    """
    p = np.asarray(p, dtype=float)
    w = log_odds(p) if w is None else np.asarray(w, dtype=float)
    h = len(p)
    if h == 0:
        return 0.5
    if h > WMV_MAX:
        raise ValueError(f"pi_wmv: {h} labelers, exact evaluation supports at most {WMV_MAX}")
    e = max(float(eps), TIE_TOL)
    a, pa = _half_margins(p[: h // 2], w[: h // 2])
    b, pb = _half_margins(p[h // 2:], w[h // 2:])
    order = np.argsort(b, kind="stable")
    b, pb = b[order], pb[order]
    tail = np.concatenate([np.cumsum(pb[::-1])[::-1], [0.0]])  # tail[j] = P(b index >= j)
    win_idx = np.searchsorted(b, e - a, side="left")  # b >= e - a  <=>  a + b >= e
    lose_idx = np.searchsorted(b, -e - a, side="right")  # b > -e - a  <=>  a + b > -e
    win = tail[win_idx]
    tie = tail[lose_idx] - win
    return float(np.dot(pa, win + 0.5 * tie))


def pi_mv_enumerate(p) -> float:
    """Brute force: sum over all 2^h correctness patterns (tests only)."""
    p = np.asarray(p, dtype=float)
    h = len(p)
    total = 0.0
    for bits in itertools.product((0, 1), repeat=h):
        prob = float(np.prod([q if b else 1 - q for q, b in zip(p, bits)]))
        right = sum(bits)
        total += prob * (1.0 if 2 * right > h else 0.5 if 2 * right == h else 0.0)
    return total


def pi_wmv_enumerate(p, w=None, eps: float = 0.0) -> float:
    """Brute force pi_W(S) over all 2^h patterns, pattern by pattern (tests only)."""
    p = np.asarray(p, dtype=float)
    w = log_odds(p) if w is None else np.asarray(w, dtype=float)
    e = max(float(eps), TIE_TOL)
    total = 0.5 if len(p) == 0 else 0.0
    if len(p) == 0:
        return total
    for bits in itertools.product((0, 1), repeat=len(p)):
        prob = float(np.prod([q if b else 1 - q for q, b in zip(p, bits)]))
        margin = float(sum(wi if b else -wi for wi, b in zip(w, bits)))
        total += prob * (1.0 if margin >= e else 0.5 if abs(margin) < e else 0.0)
    return total


def pi_vote(p, rule: str = "mv", w=None, eps: float = 0.0) -> float:
    """pi(S) under `rule` ('mv' or 'wmv')."""
    return pi_mv(p) if rule == "mv" else pi_wmv(p, w, eps)
