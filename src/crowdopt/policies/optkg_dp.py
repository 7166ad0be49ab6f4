"""Exact dynamic programming of the Opt-KG budget-allocation MDP (paper 002, Sec. 3.4).

`solve_dp` is backward induction (digest A1) over the reachable states (eq. 15), in floats or
exact fractions, with the row-sorting symmetry reduction (rows of instances that share a prior
are sorted; exact for V* and for permutation-invariant policies). `evaluate_policy` gives the
exact Bayes-expected accuracy of an index policy (ties 'first' or averaged for 'random').
`mdp_lp` is the same MDP as a Pyomo LP solved by HiGHS (min sum V s.t. V(S) >= E V(S') for
every action), a cross-check for the smallest cases. `gittins_index` computes the infinite-
horizon (delta) and finite-horizon (n steps) Gittins indices of the stage reward R(a, b) by
calibration (digest A7/A8) with the exact retirement frontier for integer-difference states.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..errors import InputError
from ..models.formulation import Formulation
from . import beta_posterior as bp

Row = tuple  # (group, a, b)


@dataclass
class DPResult:
    """Expected number of correct labels (`value`) and accuracy = value / K."""

    K: int
    T: int
    value: float | Fraction
    states: int
    time_s: float
    policy: dict = field(default_factory=dict, repr=False)  # state -> optimal action set

    @property
    def accuracy(self) -> float | Fraction:
        """Expected accuracy: the optimal value per item."""
        return self.value / self.K


def _priors(K: int, prior) -> list[tuple]:
    if K < 1:
        raise InputError("K", "an integer >= 1", K)
    if isinstance(prior, tuple | list) and len(prior) == 2 and not isinstance(prior[0],
                                                                            tuple | list):
        pri = [tuple(prior)] * K
    else:
        pri = [tuple(p) for p in prior]
    if len(pri) != K or any(len(p) != 2 or p[0] <= 0 or p[1] <= 0 for p in pri):
        raise InputError("prior", f"(a0, b0) > 0 or a list of {K} such pairs", prior)
    return pri


class _Model:
    """Row arithmetic of one DP run: floats, or fractions for integer states."""

    def __init__(self, K: int, T: int, prior, exact: bool, canonical: bool):
        if T < 0:
            raise InputError("T", "an integer >= 0", T)
        self.K, self.T, self.exact, self.canonical = K, T, exact, canonical
        pri = _priors(K, prior)
        if exact and any(int(x) != x for p in pri for x in p):
            raise InputError("prior", "integer priors for exact (rational) arithmetic", prior)
        groups = {p: g for g, p in enumerate(dict.fromkeys(pri))}
        conv = int if exact else float
        self.start: tuple = tuple((groups[p], conv(p[0]), conv(p[1])) for p in pri)
        self._h: dict = {}
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * T + 1000))

    def key(self, rows) -> tuple:
        return tuple(sorted(rows)) if self.canonical else tuple(rows)

    def h(self, a, b):
        k = (a, b)
        v = self._h.get(k)
        if v is None:
            if self.exact:
                v = bp.h_exact(bp.prob_positive_exact(a, b))
            else:
                v = float(bp.h(bp.prob_positive(float(a), float(b))))
            self._h[k] = v
        return v

    def p1(self, a, b):
        return Fraction(a, a + b) if self.exact else a / (a + b)

    def children(self, rows: tuple, i: int) -> tuple[tuple, tuple]:
        g, a, b = rows[i]
        up = rows[:i] + ((g, a + 1, b),) + rows[i + 1:]
        dn = rows[:i] + ((g, a, b + 1),) + rows[i + 1:]
        return self.key(up), self.key(dn)

    def terminal(self, rows: tuple):
        return sum((self.h(a, b) for _, a, b in rows), Fraction(0) if self.exact else 0.0)


def solve_dp(K: int, T: int, prior=(1, 1), *, exact: bool = False, canonical: bool = True,
             shaped: bool = False, keep_policy: bool = False) -> DPResult:
    """V*(S0) by backward induction (digest A1). `shaped=True` uses the printed stage-reward
    form G0 + max_i [R(S,i) + E V] (Prop. 3.3), which must give the same value."""
    t0 = time.perf_counter()
    m = _Model(K, T, prior, exact, canonical)
    memo: dict = {}
    pol: dict = {}

    def value(rows: tuple, t: int):
        v = memo.get(rows)
        if v is not None:
            return v
        if t == T:
            v = 0 if shaped else m.terminal(rows)
            memo[rows] = v
            return v
        best, acts, seen = None, [], {}
        for i, (_, a, b) in enumerate(rows):
            if rows[i] in seen and m.canonical:
                q = seen[rows[i]]
            else:
                up, dn = m.children(rows, i)
                p = m.p1(a, b)
                q = p * value(up, t + 1) + (1 - p) * value(dn, t + 1)
                if shaped:
                    q += p * m.h(a + 1, b) + (1 - p) * m.h(a, b + 1) - m.h(a, b)
                seen[rows[i]] = q
            if best is None or _gt(q, best, exact):
                best, acts = q, [i]
            elif _eq(q, best, exact):
                acts.append(i)
        memo[rows] = best
        if keep_policy:
            pol[rows] = tuple(acts)
        return best

    start = m.key(m.start)
    v = value(start, 0)
    if shaped:
        v = v + m.terminal(start)
    return DPResult(K, T, v, len(memo), time.perf_counter() - t0, pol)


def _gt(x, y, exact: bool) -> bool:
    return x > y if exact else x > y + 1e-13


def _eq(x, y, exact: bool) -> bool:
    return x == y if exact else abs(x - y) <= 1e-13


# ----------------------------------------------------------------------------- policy values
def row_index(name: str, *, exact: bool = False, alpha: float = 0.0, T: int | None = None,
              cap: int = 300) -> Callable:
    """index(a, b, remaining) of a named index policy; exact fractions where `exact`."""
    if exact:
        def r(a, b):
            return bp.outcome_rewards_exact(int(a), int(b))
        table = {
            "optkg": lambda a, b, n: max(r(a, b)),
            "kg": lambda a, b, n: (Fraction(a, a + b) * r(a, b)[0]
                                   + Fraction(b, a + b) * r(a, b)[1]),
            "pessimistic": lambda a, b, n: min(r(a, b)),
            "uniform": lambda a, b, n: 0,
        }
        if name not in table:
            raise InputError("policy", f"one of {sorted(table)} in exact mode", name)
        return table[name]
    if name == "gittins":
        if not T:
            raise InputError("T", "the budget (delta = 1 - 1/T) for Gittins-Inf", T)
        delta = 1.0 - 1.0 / max(T, 2)
        return lambda a, b, n: gittins_index(a, b, delta=delta, cap=cap)
    if name == "gittins-finite":
        return lambda a, b, n: gittins_index(a, b, horizon=n)
    fns = {"optkg": bp.optkg_index, "kg": bp.kg_index, "pessimistic": bp.pessimistic_index,
           "nlu": bp.nlu_index, "uniform": lambda a, b: 0.0,
           "cvar": lambda a, b: bp.cvar_index(a, b, alpha)}
    if name not in fns:
        raise InputError("policy", f"one of {sorted(fns) + ['gittins', 'gittins-finite']}",
                         name)
    f = fns[name]
    return lambda a, b, n: float(f(float(a), float(b)))


def evaluate_policy(K: int, T: int, policy: str, prior=(1, 1), *, tie: str = "random",
                    exact: bool = False, alpha: float = 0.0, canonical: bool | None = None,
                    index: Callable | None = None) -> DPResult:
    """Exact Bayes-expected value of an index policy (digest A1 'policy evaluation').
    tie='first' picks the smallest index (no canonicalization: not permutation-invariant);
    tie='random' averages over the tied items."""
    if tie not in ("first", "random"):
        raise InputError("tie", "'first' or 'random'", tie)
    if canonical is None:
        canonical = tie == "random"
    if canonical and tie == "first":
        raise InputError("canonical", "False with tie='first' (not permutation-invariant)", True)
    t0 = time.perf_counter()
    m = _Model(K, T, prior, exact, canonical)
    idx = index or row_index(policy, exact=exact, alpha=alpha, T=T)
    icache: dict = {}
    memo: dict = {}

    def score(a, b, n):
        k = (a, b, n)
        s = icache.get(k)
        if s is None:
            s = idx(a, b, n)
            s = s if exact else bp.tie_key(s)
            icache[k] = s
        return s

    def value(rows: tuple, t: int):
        v = memo.get(rows)
        if v is not None:
            return v
        if t == T:
            v = m.terminal(rows)
            memo[rows] = v
            return v
        n = T - t
        sc = [score(a, b, n) for _, a, b in rows]
        top = max(sc)
        tied = [i for i, s in enumerate(sc) if s == top]
        if tie == "first":
            tied = tied[:1]
        total = Fraction(0) if exact else 0.0
        qcache: dict = {}
        for i in tied:
            q = qcache.get(rows[i]) if canonical else None
            if q is None:
                _, a, b = rows[i]
                up, dn = m.children(rows, i)
                p = m.p1(a, b)
                q = p * value(up, t + 1) + (1 - p) * value(dn, t + 1)
                qcache[rows[i]] = q
            total += q
        v = total / len(tied)
        memo[rows] = v
        return v

    v = value(m.key(m.start), 0)
    return DPResult(K, T, v, len(memo), time.perf_counter() - t0)


# ----------------------------------------------------------------------------- MDP as an LP
def build_mdp_lp(data: tuple) -> object:
    """The finite-horizon MDP of (K, T, prior, canonical) as a Pyomo LP: min sum_S V(S) s.t.
    V(S) >= p1 V(S+e_i) + p2 V(S+f_i) for every stage-t state S < T and action i, terminal V
    fixed to sum_i h(I). `start_id`: the index of S0 in V (None when T = 0), `start_value`:
    V(S0) when it is terminal."""
    import pyomo.environ as pyo
    from pyomo.core.util import quicksum

    K, T, prior, canonical = data
    m = _Model(K, T, prior, False, canonical)
    start = m.key(m.start)
    layers = [[start]]
    for _ in range(T):
        nxt: dict = {}
        for rows in layers[-1]:
            for i in range(K):
                for c in m.children(rows, i):
                    nxt[c] = None
        layers.append(list(nxt))
    inner = [s for layer in layers[:-1] for s in layer]
    ids = {s: k for k, s in enumerate(inner)}
    term = {s: float(m.terminal(s)) for s in layers[-1]}
    model = pyo.ConcreteModel(name="mdp_lp")
    model.S = pyo.RangeSet(0, len(inner) - 1)
    model.V = pyo.Var(model.S, bounds=(0.0, float(K)))
    model.c = pyo.ConstraintList()

    def ref(s):
        return model.V[ids[s]] if s in ids else term[s]

    for s in inner:
        done = set()
        for i, (_, a, b) in enumerate(s):
            if canonical and s[i] in done:
                continue
            done.add(s[i])
            up, dn = m.children(s, i)
            p = float(a) / float(a + b)
            model.c.add(model.V[ids[s]] >= p * ref(up) + (1.0 - p) * ref(dn))
    model.obj = pyo.Objective(expr=quicksum([model.V[k] for k in model.S]), sense=pyo.minimize)
    model.start_id = ids.get(start)
    model.start_value = term.get(start)
    return model


def _decode_mdp_lp(data: tuple, model: object, res: object) -> float:
    """V(S0) of a solved `build_mdp_lp` model."""
    if model.start_id is None:
        return model.start_value
    return res.value(model.V[model.start_id])


MDP_LP = Formulation("optkg", "mdp-lp", build_mdp_lp, _decode_mdp_lp)


def mdp_lp(K: int, T: int, prior=(1, 1), *, canonical: bool = True,
           time_limit: float | None = 60.0) -> dict:
    """The MDP's LP (`build_mdp_lp`) solved by HiGHS through the exact runner: its optimum has
    V(S0) = V*; returns value, accuracy, sizes, times."""
    from ..problems.catalogue import RunOptions
    from ..solvers.exact_runner import run
    from ..status import Status

    done = run(MDP_LP, (K, T, prior, canonical), RunOptions(time_limit=time_limit))
    res = done.result.res
    if res.status != Status.OPTIMAL:
        raise RuntimeError(f"MDP LP not solved: {res.status} {res.message}")
    v0 = done.result.solution
    return {"value": v0, "accuracy": v0 / K, "variables": done.model.num_col,
            "constraints": done.model.num_row, "build_s": done.details["build_s"],
            "solve_s": res.time_s, "status": str(res.status)}


# ----------------------------------------------------------------------------- Gittins
_GITTINS: dict = {}


def _diag_reward(m: int) -> float:
    return float(bp.kg_index(float(m), float(m)))


def _frontier(lam: float, start: int, limit: int) -> int:
    """Smallest integer A >= start with R(A, A) <= lam (R(m, m) decreases in m), or limit."""
    lo, hi = start, start
    while hi < limit and _diag_reward(hi) > lam:
        lo, hi = hi, min(limit, 2 * hi)
    if _diag_reward(hi) > lam:
        return limit
    while lo < hi:
        mid = (lo + hi) // 2
        if _diag_reward(mid) <= lam:
            hi = mid
        else:
            lo = mid + 1
    return hi


def gittins_index(a: float, b: float, *, delta: float | None = None,
                  horizon: int | None = None, cap: int = 300, tol: float = 1e-13,
                  grid: int = 31) -> float:
    """Gittins index of the stage reward R(a, b) under Beta-Bernoulli transitions, as a
    per-period reward rate (digest A7): infinite horizon with discount `delta`, or finite
    horizon of `horizon` remaining labels (A8, undiscounted). Calibration: the retirement rate
    lam at which continuing from (a, b) and retiring are equal, found on a grid of `grid` rates
    per sweep. For integer a - b the retirement frontier max(a', b') >= A(lam) is exact; the
    tree is cut `cap` labels below the root otherwise (retire there)."""
    if (delta is None) == (horizon is None):
        raise InputError("gittins", "exactly one of delta or horizon", (delta, horizon))
    if delta is not None and not 0.0 < delta < 1.0:
        raise InputError("delta", "a discount factor in (0, 1)", delta)
    if horizon is not None and horizon < 1:
        raise InputError("horizon", "an integer >= 1", horizon)
    a, b = float(a), float(b)
    lo_ab, hi_ab = min(a, b), max(a, b)
    key = (lo_ab, hi_ab, delta, horizon, cap)  # nu(a, b) = nu(b, a) by symmetry
    hit = _GITTINS.get(key)
    if hit is not None:
        return hit
    integer_diff = float(a - b).is_integer()
    if integer_diff and a == b:
        val = _diag_reward(a)  # stopping after one step attains the sup (digest A7)
        _GITTINS[key] = val
        return val
    depth = horizon if horizon is not None else cap
    # node grid: depth k holds states (a + i, b + k - i), i = 0..k
    ks = [np.arange(k + 1, dtype=float) for k in range(depth + 1)]
    flat_a = np.concatenate([a + i for i in ks])
    flat_b = np.concatenate([b + (k - i) for k, i in enumerate(ks)])
    flat_r = bp.kg_index(flat_a, flat_b)
    offs = np.cumsum([0] + [k + 1 for k in range(depth + 1)])
    R = [flat_r[offs[k]:offs[k + 1]] for k in range(depth + 1)]
    P = [flat_a[offs[k]:offs[k + 1]] / (flat_a[offs[k]:offs[k + 1]] + flat_b[offs[k]:offs[k + 1]])
         for k in range(depth + 1)]
    lo, hi = 0.0, 0.5
    if integer_diff:
        hi = _diag_reward(hi_ab)  # the largest reward reachable from (a, b)
    frontier = delta is not None and a.is_integer() and b.is_integer()
    while hi - lo > tol * max(1.0, hi):
        lams = np.linspace(lo, hi, grid + 2)[1:-1]
        d = depth
        if frontier:
            A = _frontier(float(lams[0]), int(math.ceil(hi_ab)), 10**9)
            d = int(max(1, min(depth, 2 * A - a - b - 1)))
        cont = _continue_value(lams, R, P, d, delta, horizon)
        ret = lams / (1.0 - delta) if delta is not None else horizon * lams
        better = cont > ret  # index > lam
        k = int(better.sum())  # better is monotone: True for the smallest lams
        new_lo = lo if k == 0 else float(lams[k - 1])
        new_hi = hi if k == len(lams) else float(lams[k])
        if new_lo == lo and new_hi == hi:
            break
        lo, hi = new_lo, new_hi
    val = 0.5 * (lo + hi)
    _GITTINS[key] = val
    return val


def _continue_value(lams: np.ndarray, R: list, P: list, depth: int, delta: float | None,
                    horizon: int | None) -> np.ndarray:
    """Value at the root of continuing once, then playing optimally against retirement."""
    lam = lams[:, None]
    disc = 1.0 if delta is None else delta
    if delta is not None:
        W = np.broadcast_to(lam / (1.0 - delta), (len(lams), depth + 1))
    else:
        W = np.zeros((len(lams), depth + 1))
    for k in range(depth - 1, -1, -1):
        p = P[k]
        cont = R[k] + disc * (p * W[:, 1:k + 2] + (1.0 - p) * W[:, 0:k + 1])
        if k == 0:
            return cont[:, 0]
        ret = lam / (1.0 - delta) if delta is not None else (horizon - k) * lam
        W = np.maximum(ret, cont)
    raise AssertionError("unreachable")


def gittins_values(states: Sequence[tuple], **kw) -> list[float]:
    """The Gittins index of every (a, b) state."""
    return [gittins_index(a, b, **kw) for a, b in states]


def clear_gittins_cache() -> None:
    """Forget every computed Gittins index (for cold-start timings, Table 4)."""
    _GITTINS.clear()
