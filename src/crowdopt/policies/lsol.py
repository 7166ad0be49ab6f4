"""LS_OL: online labeler selection without ground truth (paper 001, Sec. 3-5, Fig. 1).

One task arrives per step. The learner explores (sends a "tester" task to every active labeler)
when there are at most D1(t) testers or some tester has been assigned at most D2(t) times
(O(t), Sec. 3.1); it re-assigns an under-labeled tester before it creates a new one, and the
arrival of a re-assignment step gets a random label. Each tester's consensus is the majority of
its per-assignment majorities (eq. 5); labeler i's quality estimate p_hat_i is its agreement
with those consensuses (Fig. 1 step 2.3). Otherwise it exploits the best top-k set for p_hat
(Thms 1-2; odd k for MV) and aggregates by MV or by WMV with weights log(p_hat/(1-p_hat))
(Sec. 4). Extensions: the pooled estimator (all repeated labels, digest 7.8), the one-coin EM
estimator that does not trust each tester's majority (policies/lsol_em.py), optionally fitted on
the exploitation steps' labels too (em_labels='all'; the set is chosen from past labels, so the
missingness is ignorable; kept as counts of distinct label vectors), the disagreement
filter of bad labelers (Sec. 3.5.3, digest A5), finite task types and a continuum of types
handled by v(t) growing intervals (Sec. 5, digest A6), K-ary labels (plurality, digest 7.25).

Bookkeeping is incremental and vectorized: a step costs O(M) numpy work in exploration and O(1)
Python work in exploitation (the chosen set is cached until an exploration step changes p_hat);
`exploit_until(t)` tells a simulator how many following steps exploit, so it can run them as
one numpy block. The EM estimate is refitted when a choice needs it after the testers changed:
warm EM, each iteration linear in the tester labels (and in the distinct exploitation label
vectors); exploitation labels alone do not trigger a refit, they enter at the next tester change;
the set choice is the O(M^2) vote DP.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..problems.labeler_set import LabelerSetInstance
from ..problems.vote_accuracy import TIE_TOL, log_odds
from ..solvers.labeler_set import prefix_values, quality_rank
from ..validate import choice, integer, real
from . import lsol_em
from .lsol_options import CONTEXTS, DEFAULT_ESTIMATOR, EM_LABELS, ESTIMATORS  # noqa: F401

# WMV with a price, budget or size limit searches the top-k among the WMV_SEARCH labelers of
# largest |p_hat - 1/2|: the exact pi_wmv of an m-prefix costs 2^(m/2) (vote_accuracy), so the
# search over all of a large crowd (weather: 110 workers) would fail beyond WMV_MAX or take
# seconds per choice; a 21st vote adds next to nothing for any positive price.
WMV_SEARCH = 20
SCHEDULES = ("log", "param_free")


@dataclass(frozen=True)
class Schedule:
    """Exploration thresholds D1(t) = G1 f(t), D2(t) = G2 f(t) (Sec. 3.1, 6.1; digest A3).

    kind 'log': f = t^z log t (z = 0: the paper's practical form; z > 0: Sec. 5's continuum);
    kind 'param_free': f = t^z log^(1+2 eta) t (Sec. 3.5.2, unknown Delta_min, delta_min).
    """

    G1: float = 2.0
    G2: float = 2.0
    kind: str = "log"
    eta: float = 0.1
    z: float = 0.0

    def f(self, t: float) -> float:
        """f(t) of the schedule's kind (0 for t <= 1)."""
        if t <= 1:
            return 0.0
        lt = math.log(t)
        if self.kind == "param_free":
            lt = lt ** (1.0 + 2.0 * self.eta)
        return lt * (t ** self.z if self.z else 1.0)

    def d1(self, t: float) -> float:
        """D1(t) = G1 f(t), the first exploration threshold."""
        return self.G1 * self.f(t)

    def d2(self, t: float) -> float:
        """D2(t) = G2 f(t), the second exploration threshold."""
        return self.G2 * self.f(t)

    def first_time(self, G: float, n: float, t0: int) -> float:
        """Smallest integer t >= t0 with G f(t) >= n (inf if never): D is non-decreasing."""
        if G * self.f(t0) >= n:
            return t0
        if G <= 0:
            return math.inf
        hi = max(t0 + 1, 2)
        while G * self.f(hi) < n:
            hi *= 2
            if hi > 1 << 62:
                return math.inf
        lo = max(t0, hi // 2)
        while lo < hi:  # invariant: G f(hi) >= n
            mid = (lo + hi) // 2
            if G * self.f(mid) >= n:
                hi = mid
            else:
                lo = mid + 1
        return hi


@dataclass
class Action:
    """What `select` decides. kind: explore_new | explore_reassign | exploit."""

    kind: str
    labelers: np.ndarray  # labeler indices to query
    tester: int = -1  # tester index for exploration steps
    t: int = 0
    context: Any = None
    group: Any = None


@dataclass
class DisagreementFilter:
    """Removes the labeler that disagrees most with the majority (Sec. 3.5.3, eq. 12-13; A5).

    After each exploration assignment: D_i += 1{L_i != majority}; with w the top disagreer and v
    the runner-up, the misranking bound exp(-c N g^2), g = (D_w - D_v)/N, below delta_rank
    (and N >= n_min, more than keep_min labelers active) removes w; counters then restart.
    Valid for "few bad among mostly good" crowds (digest A5: fails in ~6% of U(0,1) crowds).
    """

    delta_rank: float = 0.1
    c: float = 0.5
    n_min: int = 20
    keep_min: int = 3
    disagree: np.ndarray | None = None
    n: int = 0
    removed: list[tuple[int, int]] = field(default_factory=list)  # (labeler, step)

    def update(self, labels: np.ndarray, majority: int, active: np.ndarray, t: int) -> int | None:
        """labels: one per active labeler (-1 missing). Returns the labeler removed, if any."""
        if self.disagree is None or len(self.disagree) != len(active):
            self.disagree = np.zeros(len(active))
        M = len(self.disagree)
        idx = np.flatnonzero(active)
        full = np.full(M, -1)
        full[idx] = labels
        self.disagree[idx] += (full[idx] >= 0) & (full[idx] != majority)
        self.n += 1
        if self.n < self.n_min or len(idx) <= self.keep_min:
            return None
        d = self.disagree[idx]
        order = np.argsort(-d, kind="stable")
        w, v = idx[order[0]], idx[order[1]]
        g = (self.disagree[w] - self.disagree[v]) / self.n
        if math.exp(-self.c * self.n * g * g) < self.delta_rank:
            self.removed.append((int(w), int(t)))
            self.disagree[:] = 0
            self.n = 0
            return int(w)
        return None


class LSOL:
    """The LS_OL learner: `a = select(t[, context])`, query a.labelers, `observe(a, labels)`.

    labels are class indices 0..n_classes-1 per queried labeler (-1 = no label, in replay).
    """

    def __init__(self, n_labelers: int, *, n_classes: int = 2, rule: str = "mv",
                 estimator: str = "first", schedule: Schedule | None = None,
                 costs: Any = None, cost_weight: float = 0.0, budget: float | None = None,
                 max_size: int | None = None, wmv_eps: float = 0.0, p_clip: float = 1e-3,
                 filter: DisagreementFilter | None = None, contexts: str = "none",
                 intervals: Callable[[int], int] | None = None, prior: float = 0.0,
                 em_smoothing: float = lsol_em.EM_SMOOTHING, em_labels: str = "testers",
                 seed: int = 0) -> None:
        self.M = integer(n_labelers, "n_labelers", lo=1)
        self.K = integer(n_classes, "n_classes", lo=2)
        self.rule = choice(rule, "rule", ("mv", "wmv"))
        self.estimator = choice(estimator, "estimator", ESTIMATORS)
        self.schedule = schedule or Schedule()
        choice(self.schedule.kind, "schedule", SCHEDULES)
        real(self.schedule.G1, "G1", lo=0.0)
        real(self.schedule.G2, "G2", lo=0.0)
        self.costs = (np.zeros(self.M) if costs is None else
                      np.broadcast_to(np.asarray(costs, dtype=float), (self.M,)).copy())
        self.cost_weight = real(cost_weight, "cost_weight", lo=0.0)
        self.budget = budget
        self.max_size = max_size
        self.wmv_eps = real(wmv_eps, "wmv_eps", lo=0.0)
        self.p_clip = real(p_clip, "p_clip", lo=0.0, hi=0.5)
        self.prior = real(prior, "prior", lo=0.0)  # Beta(prior, prior) pseudo-counts on p_hat
        self.em_smoothing = real(em_smoothing, "em_smoothing", lo=0.0)
        self.em_labels = choice(em_labels, "em_labels", EM_LABELS)
        if self.em_labels == "all" and (self.estimator != "em" or contexts != "none"):
            raise InputError("em_labels", "'testers' unless estimator em without task types",
                             em_labels)
        self.seed = seed
        self.filter = filter
        if filter is not None:
            filter.disagree = np.zeros(self.M)
        self.contexts = choice(contexts, "contexts", CONTEXTS)
        self.intervals = intervals or (lambda t: max(1, math.ceil(t ** (1.0 / 3.0))))
        self.rng = np.random.default_rng(seed)  # exploration ties and random labels
        self.vote_rng = np.random.default_rng([seed, 1])  # exploitation vote ties
        self.active = np.ones(self.M, dtype=bool)
        cap = 16
        self.n = 0
        self.N = np.zeros(cap, dtype=np.int64)  # assignments per tester
        self.ctx = np.zeros(cap)  # tester context (finite: code; continuous: value)
        self.first = np.full((cap, self.M), -1, dtype=np.int64)  # labels at first assignment
        self.ycount = np.zeros((cap, self.K), dtype=np.int64)  # tally of outcomes y_k(n)
        self.ytilde = np.zeros(cap, dtype=np.int64)  # consensus of each tester (eq. 5)
        self.counts = np.zeros((cap, self.M, self.K), dtype=np.int64)  # every tester label
        self.agree = np.zeros((cap, self.M))  # agreement of labeler i with tester k
        self.denom = np.zeros((cap, self.M))
        self.agree_sum = np.zeros(self.M)
        self.denom_sum = np.zeros(self.M)
        self.n_min = 0  # min N over testers (plain mode)
        self.version = 0  # bumps when p_hat may change
        self._ctx_codes: dict[Any, int] = {}
        self._cache: dict[Any, tuple[int, np.ndarray, np.ndarray]] = {}
        self._em: dict[Any, tuple[int, np.ndarray]] = {}  # group -> (version, estimate)
        self._exploit: dict[bytes, int] = {}  # exploitation label vector (int16, M) -> times
        self._exploit_rows: tuple[np.ndarray, np.ndarray] | None = None  # its array form
        self.steps = {"explore_new": 0, "explore_reassign": 0, "exploit": 0}

    # ------------------------------------------------------------------ estimates
    def p_hat(self, group: Any = None) -> np.ndarray:
        """Estimated qualities: share of agreement with the tester consensuses (Fig. 1 step
        2.3), with `prior` pseudo-agreements and pseudo-disagreements (0 = the paper); 1/2 if
        a labeler has no tester label. Estimator 'em': the one-coin MAP EM fit of all tester
        labels (policies/lsol_em.py), warm-started from the previous fit."""
        if self.estimator == "em":
            return self._em_fit(group)
        if group is None:
            a, d = self.agree_sum, self.denom_sum
        else:
            mask = self._group_mask(group)
            a, d = self.agree[: self.n][mask].sum(axis=0), self.denom[: self.n][mask].sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(d > 0, (a + self.prior) / np.maximum(d + 2 * self.prior, 1e-300),
                            0.5)

    def label_counts(self) -> np.ndarray:
        """Every label the testers received, as counts[k, i, l] (testers x M x K); the paper's
        'first' scores only the first assignment's, though its consensus uses them all."""
        return self.counts[: self.n]

    @property
    def takes_exploit_labels(self) -> bool:
        """Whether the estimate uses the labels of exploitation steps (em_labels='all')."""
        return self.em_labels == "all"

    def exploit_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """The exploitation steps' labels as counts (distinct label vectors x M x K, one-hot)
        and each vector's multiplicity; empty unless em_labels='all'."""
        if self._exploit_rows is None:  # sorted: the fit does not depend on arrival order
            keys = sorted(self._exploit)
            rows = np.frombuffer(b"".join(keys), dtype=np.int16).reshape(-1, self.M)
            onehot = (rows[:, :, None] == np.arange(self.K)).astype(float)
            self._exploit_rows = (onehot, np.array([self._exploit[k] for k in keys], float))
        return self._exploit_rows

    def fit_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Every label the estimate is fitted on, as (counts, multiplicity per row): the
        testers' rows (multiplicity 1), then the exploitation label vectors if taken."""
        t = self.label_counts().astype(float)
        if not self.takes_exploit_labels:
            return t, np.ones(len(t))
        e, m = self.exploit_counts()
        return np.concatenate([t, e]), np.concatenate([np.ones(len(t)), m])

    def observe_exploit(self, labelers: np.ndarray, labels: Any) -> None:
        """Record the labels of exploitation steps (rows: steps, columns: `labelers`; -1 =
        missing) for the estimate (em_labels='all'; otherwise nothing is kept). They do not
        change p_hat until the next tester change (so a run of exploitation steps keeps its
        set and can be simulated as one block)."""
        if not self.takes_exploit_labels:
            return
        lab = np.asarray(labels, dtype=np.int64).reshape(-1, len(labelers))
        if lab.size and (lab.min() < -1 or lab.max() >= self.K):
            raise InputError("labels", f"classes in -1..{self.K - 1}", (lab.min(), lab.max()))
        full = np.full((len(lab), self.M), -1, dtype=np.int16)
        full[:, labelers] = lab
        if len(full) == 1:  # one step (the select/observe loop): no sort needed
            rows, times = full, [1]
        else:
            rows, times = np.unique(full, axis=0, return_counts=True)
        for r, c in zip(rows, times):
            key = r.tobytes()
            self._exploit[key] = self._exploit.get(key, 0) + int(c)
        self._exploit_rows = None

    def _em_fit(self, group: Any) -> np.ndarray:
        """EM estimate for the group's testers, refit (warm) when the testers changed."""
        hit = self._em.get(group)
        if hit is not None and hit[0] == self.version:
            return hit[1]
        if self.n == 0:
            return np.full(self.M, 0.5)
        counts, N = self.counts[: self.n], self.N[: self.n]
        if group is not None:
            mask = self._group_mask(group)
            counts, N = counts[mask], N[mask]
            if not len(counts):
                return np.full(self.M, 0.5)
        extra, mult = self.exploit_counts() if self.takes_exploit_labels else (None, None)
        a = lsol_em.estimate(counts.astype(float), None if hit is None else hit[1],
                             int(N.sum()), smoothing=self.em_smoothing, seed=self.seed,
                             extra=extra, extra_mult=mult)
        self._em[group] = (self.version, a)
        return a

    # ------------------------------------------------------------------ groups (task types)
    def _group_of(self, t: int, context: Any) -> Any:
        if self.contexts == "none":
            return None
        if context is None:
            raise InputError("context", f"a task type (contexts={self.contexts})", None)
        if self.contexts == "finite":
            return ("finite", self._ctx_codes.setdefault(context, len(self._ctx_codes)))
        w = real(context, "context", lo=0.0, hi=1.0)
        v = int(self.intervals(t))
        return ("interval", v, min(int(w * v), v - 1))

    def _group_mask(self, group: Any) -> np.ndarray:
        c = self.ctx[: self.n]
        if group[0] == "finite":
            return c == group[1]
        _, v, j = group
        return np.minimum((c * v).astype(np.int64), v - 1) == j

    def _context_value(self, group: Any, context: Any) -> float:
        if group is None:
            return 0.0
        return float(group[1]) if group[0] == "finite" else float(context)

    # ------------------------------------------------------------------ decisions
    def explores(self, t: int, group: Any = None) -> bool:
        """O(t) of Sec. 3.1 (printed non-strict inequalities, digest 7.10)."""
        if group is None:
            return self.n <= self.schedule.d1(t) or self.n_min <= self.schedule.d2(t)
        mask = self._group_mask(group)
        cnt = int(mask.sum())
        return (cnt <= self.schedule.d1(t)
                or (cnt > 0 and int(self.N[: self.n][mask].min()) <= self.schedule.d2(t)))

    def exploit_until(self, t: int) -> float:
        """Last step >= t of the current run of exploitation steps (plain mode; state fixed)."""
        if self.contexts != "none":
            raise ValueError("exploit_until: only without task types")
        if self.explores(t):
            return t - 1
        s = self.schedule
        nxt = min(s.first_time(s.G1, self.n, t), s.first_time(s.G2, self.n_min, t))
        return nxt - 1

    def select(self, t: int, context: Any = None) -> Action:
        """Explore (re-assign an under-labeled tester first, else a new tester) or exploit."""
        group = self._group_of(t, context)
        active = np.flatnonzero(self.active)
        if self.explores(t, group):
            N = self.N[: self.n]
            under = N <= self.schedule.d2(t)
            if group is not None:
                under &= self._group_mask(group)
            cand = np.flatnonzero(under)
            if len(cand):
                k = int(cand[self.rng.integers(len(cand))])
                return Action("explore_reassign", active, k, t, context, group)
            return Action("explore_new", active, self.n, t, context, group)
        chosen, _ = self.selection(group)
        return Action("exploit", chosen, -1, t, context, group)

    def selection(self, group: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Cached exploitation set (indices) and its WMV weights for the group's p_hat."""
        hit = self._cache.get(group)
        if hit is not None and hit[0] == self.version:
            return hit[1], hit[2]
        chosen, w = self.choose(self.p_hat(group))
        self._cache[group] = (self.version, chosen, w)
        return chosen, w

    def choose(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The exploitation set (indices) among the active labelers for qualities p and its WMV
        weights: the best top-k prefix by the O(M^2) vote DP (Thms 1-2; odd k for binary MV)."""
        act = np.flatnonzero(self.active)
        w = self._weights(p)
        if self.rule == "wmv" and self.cost_weight == 0 and self.budget is None \
                and self.max_size is None:
            chosen = act  # WMV without costs: the full set is optimal (digest A4)
        else:
            if self.rule == "wmv" and len(act) > WMV_SEARCH:
                act = np.sort(act[np.argsort(-np.abs(p[act] - 0.5), kind="stable")
                                  [:WMV_SEARCH]])
            inst = LabelerSetInstance(p[act], self.costs[act], self.cost_weight, self.budget,
                                      self.max_size, self.rule, self.wmv_eps)
            order = quality_rank(inst)
            val = prefix_values(inst, order, odd_only=self.K == 2)
            k = int(np.argmax(val)) + 1 if np.isfinite(val).any() else 1
            chosen = np.sort(act[order[:k]])
        return chosen, w[chosen]

    def _weights(self, p: np.ndarray) -> np.ndarray:
        """WMV weights log(p (K-1) / (1 - p)) with p clipped (Sec. 4; K-ary extension)."""
        return log_odds(p, self.p_clip) + math.log(self.K - 1)

    # ------------------------------------------------------------------ votes
    def _plurality(self, labels: np.ndarray, rng: np.random.Generator) -> int:
        lab = labels[labels >= 0]
        if len(lab) == 0:
            return int(rng.integers(self.K))
        c = np.bincount(lab, minlength=self.K)
        top = np.flatnonzero(c == c.max())
        return int(top[0]) if len(top) == 1 else int(top[rng.integers(len(top))])

    def _weighted(self, labels: np.ndarray, w: np.ndarray, rng: np.random.Generator) -> int:
        ok = labels >= 0
        if not ok.any():
            return int(rng.integers(self.K))
        score = np.bincount(labels[ok], weights=w[ok], minlength=self.K)
        e = max(self.wmv_eps, TIE_TOL)
        top = np.flatnonzero(score > score.max() - e)
        return int(top[0]) if len(top) == 1 else int(top[rng.integers(len(top))])

    def vote(self, labels: np.ndarray, weights: np.ndarray | None = None) -> int:
        """Exploitation output: MV, or WMV with the given weights (Sec. 4.1), random ties."""
        labels = np.asarray(labels, dtype=np.int64)
        if self.rule == "wmv" and weights is not None:
            return self._weighted(labels, weights, self.vote_rng)
        return self._plurality(labels, self.vote_rng)

    # ------------------------------------------------------------------ observations
    def observe(self, action: Action, labels: Any) -> int:
        """Record the labels of action.labelers; return the output label of the arrival."""
        labels = np.asarray(labels, dtype=np.int64)
        if labels.shape != action.labelers.shape:
            raise InputError("labels", f"{len(action.labelers)} labels", labels.shape)
        self.steps[action.kind] += 1
        if action.kind == "exploit":
            _, w = self.selection(action.group)
            self.observe_exploit(action.labelers, labels[None, :])
            return self.vote(labels, w if self.rule == "wmv" else None)
        full = np.full(self.M, -1, dtype=np.int64)
        full[action.labelers] = labels
        if action.kind == "explore_new":
            k = self._new_tester(self._context_value(action.group, action.context))
            self.first[k] = full
        else:
            k = action.tester
        y = self._plurality(labels, self.rng)  # y_k(n): MV of this assignment
        self._update_tester(k, full, y)
        if self.filter is not None:
            gone = self.filter.update(labels, y, self.active, action.t)
            if gone is not None:
                self.active[gone] = False
                self.version += 1
        if action.kind == "explore_new":
            return y
        return int(self.rng.integers(self.K))  # the displaced arrival: a random label

    def _new_tester(self, ctx: float) -> int:
        if self.n == len(self.N):
            self._grow()
        k = self.n
        self.n += 1
        self.ctx[k] = ctx
        return k

    def _grow(self) -> None:
        cap = 2 * len(self.N)

        def grow(a: np.ndarray, fill: float = 0) -> np.ndarray:
            out = np.full((cap,) + a.shape[1:], fill, dtype=a.dtype)
            out[: len(a)] = a
            return out

        self.N, self.ctx, self.ytilde = grow(self.N), grow(self.ctx), grow(self.ytilde)
        self.first, self.ycount = grow(self.first, -1), grow(self.ycount)
        self.agree, self.denom = grow(self.agree), grow(self.denom)
        self.counts = grow(self.counts)

    def _update_tester(self, k: int, full: np.ndarray, y: int) -> None:
        """N_k += 1, tally y, re-derive the consensus (eq. 5) and labeler k-agreement rows."""
        self.N[k] += 1
        self.ycount[k, y] += 1
        c = self.ycount[k]
        top = np.flatnonzero(c == c.max())
        self.ytilde[k] = top[0] if len(top) == 1 else top[self.rng.integers(len(top))]
        yt = self.ytilde[k]
        seen = full >= 0
        self.counts[k, np.flatnonzero(seen), full[seen]] += 1
        if self.estimator != "first":
            new_a = self.counts[k, :, yt].astype(float)
            new_d = self.counts[k].sum(axis=1).astype(float)
        else:
            f = self.first[k]
            new_a = ((f >= 0) & (f == yt)).astype(float)
            new_d = (f >= 0).astype(float)
        self.agree_sum += new_a - self.agree[k]
        self.denom_sum += new_d - self.denom[k]
        self.agree[k], self.denom[k] = new_a, new_d
        self.n_min = int(self.N[: self.n].min())
        self.version += 1

    # ------------------------------------------------------------------ reporting
    def state(self) -> dict:
        """JSON-ready summary: p_hat, testers, exploration counts, active set, current set."""
        out = {"p_hat": self.p_hat().tolist(), "testers": int(self.n),
               "assignments": self.N[: self.n].tolist(), "steps": dict(self.steps),
               "active": np.flatnonzero(self.active).tolist()}
        if self.contexts == "none":
            out["selected"] = self.selection()[0].tolist()
        if self.filter is not None:
            out["removed"] = [{"labeler": i, "t": t} for i, t in self.filter.removed]
        return out
