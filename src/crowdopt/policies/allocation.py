"""Sequential budget-allocation policies of paper 002 behind one interface.

Every policy has `next()` (the action to buy next: an instance i, or an (instance, worker) pair
for heterogeneous workers), `observe(action, label)` (label +1/-1, or a class index for the
multi-class policy), `exclude(action)` (drop an action that can no longer be bought, e.g. an item
whose recorded labels ran out in a replay) and `estimate()` (the Bayes decision: a >= b, ties
positive, Cor. 3.2).

Index policies keep integer tie keys (scores on the 1e-12 grid, beta_posterior.TIE_TOL) in
`TieArgmax`: buckets of equal keys plus a heap of keys, so a step costs O(log K) (one changed row)
and ties are broken uniformly at random ('random') or by the smallest index ('first', the paper's
deterministic variant), exactly as in the DP evaluation of optkg_dp. Exceptions, documented:
finite-horizon Gittins and the contextual policy rescore every instance each step (the index
depends on the remaining horizon / on the shared weight vector).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

import numpy as np
from scipy import special

from ..errors import InputError
from . import beta_posterior as bp
from .optkg_dp import gittins_index

TIES = ("random", "first")
_GONE = np.iinfo(np.int64).min  # key of an action that can no longer be bought


class TieArgmax:
    """argmax over ids with integer keys: buckets of equal keys + a lazy max-heap of keys."""

    def __init__(self, n: int, tie: str, rng: np.random.Generator):
        if tie not in TIES:
            raise InputError("tie", "'random' or 'first'", tie)
        self.key: list = [None] * n
        self.pos = [0] * n
        self.buckets: dict[int, list[int]] = {}
        self.heap: list[int] = []
        self.in_heap: set[int] = set()
        self.first: dict[int, list[int]] = {}  # tie='first': lazy min-heap of ids per key
        self.tie = tie
        self.rng = rng

    def __len__(self) -> int:
        return sum(len(b) for b in self.buckets.values())

    def set(self, i: int, key: int) -> None:
        """Give id `i` the key `key`."""
        old = self.key[i]
        if old == key:
            return
        if old is not None:
            self._drop(i, old)
        lst = self.buckets.get(key)
        if lst is None:
            lst = self.buckets[key] = []
        if key not in self.in_heap:
            heapq.heappush(self.heap, -key)
            self.in_heap.add(key)
        self.pos[i] = len(lst)
        lst.append(i)
        self.key[i] = key
        if self.tie == "first":
            heapq.heappush(self.first.setdefault(key, []), i)

    def remove(self, i: int) -> None:
        """Take id `i` out of the argmax."""
        old = self.key[i]
        if old is not None:
            self._drop(i, old)
            self.key[i] = None

    def _drop(self, i: int, key: int) -> None:
        lst = self.buckets[key]
        p = self.pos[i]
        last = lst.pop()
        if last != i:
            lst[p] = last
            self.pos[last] = p

    def top_key(self) -> int | None:
        """The maximal key of an id present (None when empty), without drawing a tie."""
        while self.heap:
            k = -self.heap[0]
            if self.buckets.get(k):
                return k
            heapq.heappop(self.heap)
            self.in_heap.discard(k)
            self.buckets.pop(k, None)
            self.first.pop(k, None)
        return None

    def copy(self, rng: np.random.Generator) -> TieArgmax:
        """An independent copy drawing its ties from `rng` (same buckets, same order)."""
        new = TieArgmax.__new__(TieArgmax)
        new.key, new.pos = list(self.key), list(self.pos)
        new.buckets = {k: list(v) for k, v in self.buckets.items()}
        new.heap, new.in_heap = list(self.heap), set(self.in_heap)
        new.first = {k: list(v) for k, v in self.first.items()}
        new.tie, new.rng = self.tie, rng
        return new

    def top(self) -> int | None:
        """An id of maximal key (uniform among ties, or the smallest id), None when empty."""
        while self.heap:
            k = -self.heap[0]
            lst = self.buckets.get(k)
            if lst:
                if self.tie == "first":
                    h = self.first[k]
                    while self.key[h[0]] != k:  # stale entry: the id moved or was removed
                        heapq.heappop(h)
                    return h[0]
                return lst[int(self.rng.integers(len(lst)))] if len(lst) > 1 else lst[0]
            heapq.heappop(self.heap)
            self.in_heap.discard(k)
            self.buckets.pop(k, None)
            self.first.pop(k, None)
        return None


def _beta_arrays(K: int, prior, field: str = "prior") -> tuple[np.ndarray, np.ndarray]:
    if isinstance(K, bool) or not isinstance(K, int | np.integer) or K < 1:
        raise InputError("K", "an integer >= 1", K)
    arr = np.asarray(prior, dtype=float)
    if arr.shape == (2,):
        arr = np.tile(arr, (K, 1))
    if arr.shape != (K, 2) or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise InputError(field, f"(a0, b0) > 0 or a ({K}, 2) array of them", prior)
    return arr[:, 0].copy(), arr[:, 1].copy()


def _sign(label) -> int:
    if label in (1, True) or (isinstance(label, int | float | np.number) and label > 0):
        return 1
    if label in (-1, 0, False) or (isinstance(label, int | float | np.number) and label < 0):
        return -1
    raise InputError("label", "+1 or -1", label)


# ----------------------------------------------------------------------------- homogeneous
class BetaIndexPolicy:
    """Homogeneous workers: i_t = argmax_i index(a_i, b_i) (Algorithm 1 with eq. 16/17/...).
    `index` maps (a, b) arrays to scores; None means a constant score, i.e. Uniform (A6)."""

    def __init__(self, K: int, index: Callable | None, *, prior=(1, 1), tie: str = "random",
                 seed=None, name: str = ""):
        self.name = name
        self.a, self.b = _beta_arrays(K, prior)
        self.K = K
        self.index = index
        self.rng = np.random.default_rng(seed)
        self._cache: dict[tuple[float, float], int] = {}
        self.arg = TieArgmax(K, tie, self.rng)
        self.t = 0
        keys = self._keys(self.a, self.b)
        for i in range(K):
            self.arg.set(i, keys[i])

    def _keys(self, a: np.ndarray, b: np.ndarray) -> list[int]:
        if self.index is None:
            return [0] * len(a)
        pairs = list(zip(a.tolist(), b.tolist(), strict=True))
        todo = sorted({p for p in pairs if p not in self._cache})
        if todo:
            ta = np.array([p[0] for p in todo])
            tb = np.array([p[1] for p in todo])
            for p, k in zip(todo, bp.tie_keys(self.index(ta, tb)).tolist(), strict=True):
                self._cache[p] = k
        return [self._cache[p] for p in pairs]

    def next(self) -> int:
        """The item with the largest index (ties by the tie rule)."""
        i = self.arg.top()
        if i is None:
            raise InputError("budget", "at most as many labels as can be bought", self.t + 1,
                             note="no instance left to label")
        return i

    def observe(self, i: int, label) -> None:
        """Update item `i`'s Beta posterior with a label."""
        if _sign(label) > 0:
            self.a[i] += 1.0
        else:
            self.b[i] += 1.0
        self.t += 1
        if self.arg.key[i] is not None:
            self.arg.set(i, self._keys(self.a[i:i + 1], self.b[i:i + 1])[0])

    def exclude(self, i: int) -> None:
        """Never choose item `i` again."""
        self.arg.remove(i)

    def include(self, i: int) -> None:
        """Make an excluded instance available again (a live campaign holds an instance out
        while its query is open, then puts it back with its current posterior)."""
        self.arg.set(i, self._keys(self.a[i:i + 1], self.b[i:i + 1])[0])

    def outcome_keys(self, i: int) -> tuple[int, int]:
        """Tie keys instance i would have after a +1 and after a -1 label."""
        a, b = float(self.a[i]), float(self.b[i])
        kp, km = self._keys(np.array([a + 1.0, a]), np.array([b, b + 1.0]))
        return kp, km

    def clone(self) -> BetaIndexPolicy:
        """An independent copy of the decision state (posterior, argmax buckets, generator
        state) for what-if runs; the memo of index values is shared (a pure function)."""
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.a, new.b = self.a.copy(), self.b.copy()
        new.rng = np.random.default_rng()
        new.rng.bit_generator.state = self.rng.bit_generator.state
        new.arg = self.arg.copy(new.rng)
        if hasattr(self, "available"):
            new.available = self.available.copy()
        return new

    def estimate(self) -> np.ndarray:
        """H_T = {i : a_i >= b_i} (Cor. 3.2; ties positive)."""
        return self.a >= self.b

    def posterior(self) -> np.ndarray:
        """P(positive) of every item under its Beta posterior."""
        return bp.prob_positive(self.a, self.b)

    def posterior_of(self, idx: np.ndarray) -> np.ndarray:
        """P(positive) of the items `idx` (entries of `posterior()`)."""
        return bp.prob_positive(self.a[idx], self.b[idx])


class FiniteGittinsPolicy(BetaIndexPolicy):
    """Finite-horizon Gittins (digest A8): the index depends on the remaining budget n = T - t,
    so every available instance is rescored each step (O(K) per step; meant for T <= ~50)."""

    def __init__(self, K: int, budget: int, *, prior=(1, 1), tie: str = "random", seed=None):
        if budget is None or int(budget) < 1:
            raise InputError("budget", "an integer >= 1 for finite-horizon Gittins", budget)
        self.T = int(budget)
        self._fcache: dict = {}
        super().__init__(K, None, prior=prior, tie=tie, seed=seed, name="gittins-finite")
        self.available = np.ones(K, dtype=bool)

    def next(self) -> int:
        """The available item with the largest finite-horizon index."""
        n = self.T - self.t
        if n < 1:
            raise InputError("budget", f"at most {self.T} labels", self.t + 1)
        idx = np.flatnonzero(self.available)
        if idx.size == 0:
            raise InputError("budget", "an instance left to label", 0)
        keys = np.array([self._key(self.a[i], self.b[i], n) for i in idx])
        tied = idx[keys == keys.max()]
        if self.arg.tie == "first" or tied.size == 1:
            return int(tied[0])
        return int(tied[self.rng.integers(tied.size)])

    def _key(self, a: float, b: float, n: int) -> int:
        k = (a, b, n)
        v = self._fcache.get(k)
        if v is None:
            v = self._fcache[k] = bp.tie_key(gittins_index(a, b, horizon=n))
        return v

    def exclude(self, i: int) -> None:
        """Never choose item `i` again."""
        self.available[i] = False

    def include(self, i: int) -> None:
        """Make item `i` available again."""
        self.available[i] = True


HOMOGENEOUS = ("optkg", "kg", "pessimistic", "cvar", "nlu", "uniform", "gittins",
               "gittins-finite")
HETEROGENEOUS = ("optkg", "kg", "uniform")


def parse_policy(name: str) -> tuple[str, str]:
    """'optkg' -> ('optkg', 'random'); 'optkg-det' -> ('optkg', 'first') (deterministic)."""
    if not isinstance(name, str):
        raise InputError("policy", "a policy name", name)
    base, tie = (name[:-4], "first") if name.endswith("-det") else (name, "random")
    return base, tie


def make_policy(name: str, K: int, *, prior=(1, 1), seed=None, budget: int | None = None,
                alpha: float = 0.5, gittins_cap: int = 300, tie: str | None = None):
    """A homogeneous policy by name: optkg, kg, pessimistic, cvar (alpha), nlu, uniform, gittins
    (infinite horizon, delta = 1 - 1/budget), gittins-finite; suffix '-det' = ties 'first'."""
    base, tie0 = parse_policy(name)
    tie = tie or tie0
    if base not in HOMOGENEOUS:
        raise InputError("policy", f"one of {', '.join(HOMOGENEOUS)} (optionally -det)", name)
    if base == "gittins-finite":
        return FiniteGittinsPolicy(K, budget, prior=prior, tie=tie, seed=seed)
    if base == "gittins":
        if budget is None or int(budget) < 2:
            raise InputError("budget", "an integer >= 2 (Gittins-Inf uses delta = 1 - 1/T)",
                             budget)
        delta = 1.0 - 1.0 / int(budget)

        def index(a, b):
            return np.array([gittins_index(x, y, delta=delta, cap=gittins_cap)
                             for x, y in zip(a, b, strict=True)])
    elif base == "cvar":
        if not 0.0 <= float(alpha) <= 1.0:
            raise InputError("alpha", "a number in [0, 1]", alpha)

        def index(a, b):
            return bp.cvar_index(a, b, float(alpha))
    else:
        index = {"optkg": bp.optkg_index, "kg": bp.kg_index,
                 "pessimistic": bp.pessimistic_index, "nlu": bp.nlu_index,
                 "uniform": None}[base]
    return BetaIndexPolicy(K, index, prior=prior, tie=tie, seed=seed, name=name)


# ----------------------------------------------------------------------------- heterogeneous
class WorkerPolicy:
    """Heterogeneous workers (Sec. 5, Algorithm 2): one-coin reliabilities rho_j ~ Beta(c, d),
    moment-matched posterior, argmax over allowed (instance, worker) pairs of R+ (optkg), the
    expected reward (kg) or a constant (uniform). A label changes one item row and one worker
    column, so only those pairs are rescored (digest A10 caching): O(K + M) moment matchings per
    step with all pairs allowed, O(deg) in a replay restricted to recorded pairs. The cached
    integer keys live in one numpy array and the argmax is one vectorized pass over it (a C loop
    of ~1 ns per pair; measured ~50x faster than keeping K+M Python heap entries per step)."""

    def __init__(self, K: int, M: int, rule: str = "optkg", *, prior=(1, 1),
                 worker_prior=(4, 1), pairs=None, tie: str = "random", seed=None):
        if rule not in HETEROGENEOUS:
            raise InputError("policy", f"one of {', '.join(HETEROGENEOUS)}", rule)
        self.rule = rule
        self.a, self.b = _beta_arrays(K, prior)
        self.c, self.d = _beta_arrays(M, worker_prior, "worker_prior")
        self.K, self.M = K, M
        if pairs is None:
            ii, jj = np.divmod(np.arange(K * M), M)
            self.lookup = None
        else:
            arr = np.asarray(pairs, dtype=np.int64)
            if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
                raise InputError("pairs", "a (P, 2) array of (item, worker)", np.shape(arr))
            arr = np.unique(arr, axis=0)
            if arr[:, 0].min() < 0 or arr[:, 0].max() >= K or arr[:, 1].min() < 0 \
                    or arr[:, 1].max() >= M:
                raise InputError("pairs", f"items in [0, {K}) and workers in [0, {M})",
                                 "out of range")
            ii, jj = arr[:, 0], arr[:, 1]
            self.lookup = {(int(i), int(j)): p for p, (i, j) in enumerate(arr.tolist())}
        self.pi, self.pj = ii, jj
        order_i = np.argsort(ii, kind="stable")
        self.item_pairs = np.split(order_i, np.searchsorted(ii[order_i], np.arange(1, K)))
        order_j = np.argsort(jj, kind="stable")
        self.worker_pairs = np.split(order_j, np.searchsorted(jj[order_j], np.arange(1, M)))
        self.active = np.ones(len(ii), dtype=bool)
        self.rng = np.random.default_rng(seed)
        if tie not in TIES:
            raise InputError("tie", "'random' or 'first'", tie)
        self.tie = tie
        self.keys = np.full(len(ii), _GONE, dtype=np.int64)
        self.t = 0
        self._rescore(np.arange(len(ii)))

    def _scores(self, p: np.ndarray) -> np.ndarray:
        if self.rule == "uniform":
            return np.zeros(len(p))
        i, j = self.pi[p], self.pj[p]
        r1, r2, pp = bp.worker_outcome_rewards(self.a[i], self.b[i], self.c[j], self.d[j])
        return np.maximum(r1, r2) if self.rule == "optkg" else pp * r1 + (1.0 - pp) * r2

    def _rescore(self, p: np.ndarray) -> None:
        p = p[self.active[p]]
        if p.size == 0:
            return
        self.keys[p] = bp.tie_keys(self._scores(p))

    def _pair(self, action) -> int:
        i, j = (int(x) for x in action)
        if self.lookup is None:
            if not (0 <= i < self.K and 0 <= j < self.M):
                raise InputError("action", "an (item, worker) pair in range", action)
            return i * self.M + j
        p = self.lookup.get((i, j))
        if p is None:
            raise InputError("action", "an allowed (item, worker) pair", action)
        return p

    def next(self) -> tuple[int, int]:
        """The (item, worker) pair with the largest index."""
        top = self.keys.max()
        if top == _GONE:
            raise InputError("budget", "at most as many labels as pairs available", self.t + 1)
        tied = np.flatnonzero(self.keys == top)
        p = tied[0] if self.tie == "first" or tied.size == 1 else \
            tied[self.rng.integers(tied.size)]
        return int(self.pi[p]), int(self.pj[p])

    def observe(self, action, label) -> None:
        """Update the item's and the worker's posteriors with a label."""
        i, j = (int(x) for x in action)
        self._pair(action)
        z = _sign(label)
        na, nb, nc, nd = bp.moment_match(self.a[i], self.b[i], self.c[j], self.d[j], z)
        self.a[i], self.b[i], self.c[j], self.d[j] = float(na), float(nb), float(nc), float(nd)
        self.t += 1
        if self.rule != "uniform":
            self._rescore(np.concatenate([self.item_pairs[i], self.worker_pairs[j]]))

    def exclude(self, action) -> None:
        """Never choose this (item, worker) pair again."""
        p = self._pair(action)
        self.active[p] = False
        self.keys[p] = _GONE

    def estimate(self) -> np.ndarray:
        """The current positive/negative decision of every item."""
        return self.a >= self.b

    def reliability(self) -> np.ndarray:
        """Posterior mean reliability of every worker."""
        return self.c / (self.c + self.d)

    def clone(self) -> WorkerPolicy:
        """An independent copy of the decision state; the pair structure is shared (fixed)."""
        new = WorkerPolicy.__new__(WorkerPolicy)
        new.__dict__.update(self.__dict__)
        for f in ("a", "b", "c", "d", "active", "keys"):
            setattr(new, f, getattr(self, f).copy())
        new.rng = np.random.default_rng()
        new.rng.bit_generator.state = self.rng.bit_generator.state
        return new


# ----------------------------------------------------------------------------- multi-class
class DirichletPolicy:
    """Multi-class extension (Sec. 6.2, digest A14): theta_i ~ Dir(alpha_i); the index is
    max_c [h(I(alpha + e_c)) - h(I(alpha))] (optkg) or its alpha-weighted mean (kg), with
    I_c by 1-D quadrature (eq. 58), cached by state. One row changes per label."""

    def __init__(self, K: int, C: int, rule: str = "optkg", *, prior=1.0, tie: str = "random",
                 seed=None):
        if rule not in HETEROGENEOUS:
            raise InputError("policy", "one of optkg, kg, uniform", rule)
        if not isinstance(C, int | np.integer) or C < 2:
            raise InputError("C", "an integer >= 2", C)
        if not isinstance(K, int | np.integer) or K < 1:
            raise InputError("K", "an integer >= 1", K)
        al = np.broadcast_to(np.asarray(prior, dtype=float), (K, C)).copy() \
            if np.ndim(prior) < 2 else np.asarray(prior, dtype=float).copy()
        if al.shape != (K, C) or np.any(al <= 0) or not np.all(np.isfinite(al)):
            raise InputError("prior", f"positive Dirichlet parameters, scalar, ({C},) or "
                             f"({K}, {C})", np.shape(prior))
        self.alpha, self.K, self.C, self.rule = al, K, C, rule
        self.rng = np.random.default_rng(seed)
        self.arg = TieArgmax(K, tie, self.rng)
        self._cache: dict = {}
        self.t = 0
        for i in range(K):
            self.arg.set(i, self._key(i))

    def _key(self, i: int) -> int:
        st = tuple(self.alpha[i].tolist())
        k = self._cache.get(st)
        if k is None:
            if self.rule == "uniform":
                k = 0
            else:
                r = bp.dirichlet_outcome_rewards(st)
                s = r.max() if self.rule == "optkg" else float(np.dot(self.alpha[i], r)
                                                               / self.alpha[i].sum())
                k = bp.tie_key(s)
            self._cache[st] = k
        return k

    def next(self) -> int:
        """The item with the largest index (ties by the tie rule)."""
        i = self.arg.top()
        if i is None:
            raise InputError("budget", "an instance left to label", 0)
        return i

    def observe(self, i: int, label) -> None:
        """Update item `i`'s Dirichlet posterior with a label."""
        c = int(label)
        if not 0 <= c < self.C:
            raise InputError("label", f"a class index in [0, {self.C})", label)
        self.alpha[i, c] += 1.0
        self.t += 1
        if self.arg.key[i] is not None:
            self.arg.set(i, self._key(i))

    def exclude(self, i: int) -> None:
        """Never choose item `i` again."""
        self.arg.remove(i)

    def estimate(self) -> np.ndarray:
        """argmax_c I_c(alpha_i), ties to the smallest class (eq. 55)."""
        out = np.empty(self.K, dtype=np.int64)
        for i in range(self.K):
            keys = bp.tie_keys(bp.dirichlet_prob_max(tuple(self.alpha[i].tolist())))
            out[i] = int(np.flatnonzero(keys == keys.max())[0])
        return out


# ----------------------------------------------------------------------------- contextual
def _sigmoid(x):
    return special.expit(x)


class ContextualPolicy:
    """Contextual extension (Sec. 6.1, digest A13): theta_i = sigmoid(w' x_i), w ~ N(mu, Sigma),
    Laplace updates whose MAP is a scalar root-find (digest 2.5), P_i = Phi(mu_i / s_i)
    (eq. 51). The reward sums over all K instances (eq. 52), so each step rescores every
    candidate: O(K^2) with the cached Gram matrix G = X Sigma X' (rank-one updates)."""

    def __init__(self, X, rule: str = "optkg", *, mu0=None, sigma2: float = 1.0,
                 tie: str = "random", seed=None):
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] < 1 or not np.all(np.isfinite(X)):
            raise InputError("features", "a finite (K, p) matrix", np.shape(X))
        if rule not in ("optkg", "kg"):
            raise InputError("policy", "optkg or kg", rule)
        if not sigma2 > 0:
            raise InputError("sigma2", "a prior variance > 0", sigma2)
        K, p = X.shape
        self.X, self.K, self.rule = X, K, rule
        self.mu = np.zeros(p) if mu0 is None else np.asarray(mu0, dtype=float).copy()
        if self.mu.shape != (p,):
            raise InputError("mu0", f"a vector of length {p}", np.shape(mu0))
        self.Sigma = sigma2 * np.eye(p)
        self.G = X @ self.Sigma @ X.T
        self.m = X @ self.mu
        self.rng = np.random.default_rng(seed)
        if tie not in TIES:
            raise InputError("tie", "'random' or 'first'", tie)
        self.tie = tie
        self.available = np.ones(K, dtype=bool)
        self.t = 0

    @staticmethod
    def _lam(m, s2, target):
        """Root of lam = target - sigmoid(m + lam s2) (monotone; in [target-1, target])."""
        lo, hi = target - 1.0, target + 0.0 * m
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            g = mid - target + _sigmoid(m + mid * s2)
            lo = np.where(g < 0, mid, lo)
            hi = np.where(g < 0, hi, mid)
        return 0.5 * (lo + hi)

    def prob_positive(self) -> np.ndarray:
        """P(positive) of every item under the Gaussian posterior."""
        return special.ndtr(self.m / np.sqrt(np.diag(self.G)))

    def _gains(self, cand: np.ndarray, y: int) -> np.ndarray:
        s2 = np.diag(self.G)
        base = bp.h(special.ndtr(self.m / np.sqrt(s2))).sum()
        lam = self._lam(self.m[cand], s2[cand], 1.0 if y > 0 else 0.0)
        g = self.G[cand]  # rows: G[i, k] = x_i' Sigma x_k
        m_new = self.m[None, :] + lam[:, None] * g
        mi = m_new[np.arange(len(cand)), cand]
        v = _sigmoid(mi) * (1.0 - _sigmoid(mi))
        s2_new = s2[None, :] - (v / (1.0 + v * s2[cand]))[:, None] * g * g
        return bp.h(special.ndtr(m_new / np.sqrt(np.maximum(s2_new, 1e-300)))).sum(1) - base

    def scores(self) -> tuple[np.ndarray, np.ndarray]:
        """(available items, their scores)."""
        cand = np.flatnonzero(self.available)
        gp, gm = self._gains(cand, 1), self._gains(cand, -1)
        if self.rule == "optkg":
            return cand, np.maximum(gp, gm)
        s2 = np.diag(self.G)[cand]
        p = _sigmoid(self.m[cand] / np.sqrt(1.0 + np.pi * s2 / 8.0))  # probit approximation
        return cand, p * gp + (1.0 - p) * gm

    def next(self) -> int:
        """The available item with the largest score."""
        cand, s = self.scores()
        if cand.size == 0:
            raise InputError("budget", "an instance left to label", 0)
        tied = cand[bp.argmax_ties(s)]
        if self.tie == "first" or tied.size == 1:
            return int(tied[0])
        return int(tied[self.rng.integers(tied.size)])

    def observe(self, i: int, label) -> None:
        """Update the posterior with a label on item `i`."""
        y = _sign(label)
        x = self.X[i]
        Sx = self.Sigma @ x
        s2 = float(x @ Sx)
        lam = float(self._lam(np.array(self.m[i]), np.array(s2), 1.0 if y > 0 else 0.0))
        g = self.G[:, i].copy()
        self.mu = self.mu + lam * Sx
        self.m = self.m + lam * g
        v = float(_sigmoid(self.m[i]) * (1.0 - _sigmoid(self.m[i])))
        c = v / (1.0 + v * s2)
        self.Sigma = self.Sigma - c * np.outer(Sx, Sx)  # Sherman-Morrison
        self.G = self.G - c * np.outer(g, g)
        self.t += 1

    def exclude(self, i: int) -> None:
        """Never choose item `i` again."""
        self.available[i] = False

    def estimate(self) -> np.ndarray:
        """The current positive/negative decision of every item."""
        return self.m >= 0.0


def run_policy(policy, oracle: Callable, budget: int, record: Sequence[int] = ()) -> dict:
    """Spend `budget` labels: action = policy.next(), label = oracle(action); returns the
    estimate at every budget listed in `record` (prefix budgets) and at the end."""
    marks = sorted({int(t) for t in record if 0 < int(t) <= budget})
    out, k = {}, 0
    for t in range(1, budget + 1):
        act = policy.next()
        policy.observe(act, oracle(act))
        while k < len(marks) and marks[k] == t:
            out[t] = policy.estimate().copy()
            k += 1
    out[budget] = policy.estimate().copy()
    return out
