"""Drivers: how a campaign's log becomes calls on the policy objects of simulate / replay.

A driver wraps ONE policy object (`BetaIndexPolicy` / `FiniteGittinsPolicy` from
`make_policy`, `WorkerPolicy`, `LSOL`, or the CBP plan of CL-TAP) and offers the campaign:

- `propose()`: the policy's next decision (it draws the policy's ties, like `next()` does);
- `apply(p, labels)`: the answers of a decision, as the policy observes them;
- `pend(p)` / `determined()`: a what-if copy (`clone()`) in which some decisions still wait
  for answers, and whether the next decision is the same whatever those answers will be;
- `hold(p)`: batching 'fill' only, the decision is out (its item is held out of the argmax).

Timelines. With batching 'exact' the committed policy sees exactly the one-at-a-time run:
propose d1, apply its answer, propose d2, ... (answers in decision order, whatever order they
arrived in). That is the replay's loop, so decisions equal `replay optkg` / `replay lsol` label
for label. A decision is handed out before earlier answers are in only when `determined()`
proves that no outcome of those answers can change it (see `IndexDriver`). With batching
'fill' decisions are made on the answers in so far, items with an open query held out.

Summary. What `status` needs of a driver's state (an item's Beta posterior, a worker's
reliability, LS_OL's estimates) is written to the file by every write (`summary`, for the
items and workers marked `dirty_items` / `dirty_workers` since), and `summary_view` turns those
rows back into labels, confidences and reliabilities exactly as the driver's own `labels()`
(`summary.summary_view`): a reader of an up-to-date file reports without replaying the log.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import CrowdoptError, InputError
from ..policies import beta_posterior as bp
from ..policies.allocation import (
    _GONE,
    BetaIndexPolicy,
    FiniteGittinsPolicy,
    WorkerPolicy,
    make_policy,
    parse_policy,
)
from ..policies.lsol import LSOL, Action, DisagreementFilter, Schedule
from .summary import beta_labels, plan_labels

POLICIES = ("optkg", "optkg-het", "lsol", "cltap")
BATCHING = ("exact", "fill")


@dataclass(frozen=True)
class Proposal:
    """One policy decision: the item, and one query per entry of `workers` (None = any)."""

    kind: str
    item: int
    workers: tuple
    data: dict = field(default_factory=dict, compare=True, hash=False)


class Diverged(CrowdoptError):
    """The policy does not reproduce a decision of the log (wrong code or a damaged file):
    a store failure (the CLI exits 6)."""

    exit_code = 6


class Driver:
    speculative = False  # can decide while answers are pending (exact batching)

    def __init__(self, fill: bool):
        self.fill = fill
        self.pending = 0
        self.dirty_items: set[int] = set()  # summary rows changed since the last write
        self.dirty_workers: set[int] = set()

    def _fresh(self) -> None:
        """A clone's own (empty) dirty sets: only the committed driver's are written."""
        self.dirty_items, self.dirty_workers = set(), set()

    def _left_empty(self) -> bool:  # pragma: no cover - every driver overrides
        """True when the policy has no decision left at all (draws nothing)."""
        raise NotImplementedError

    def exhausted(self, left: int) -> bool:
        """True when no next decision fits in `left` labels: the policy has none left, or the
        next one asks for more (computed without drawing a tie; the committed driver's state
        is not changed)."""
        if not self.determined():
            return False
        if left <= 0 or self._left_empty():
            return True
        size = self.size()
        return size == 0 or size > left

    def summary(self, items=None, workers=None) -> tuple[list, list, dict | None]:
        """Summary rows (idx, x, y, z) of `items` and `workers` (None: all) and the scalars."""
        raise NotImplementedError  # pragma: no cover - every driver overrides

    def clone(self) -> Driver:  # pragma: no cover - every driver overrides
        """An independent copy for what-if proposals."""
        raise NotImplementedError

    def determined(self) -> bool:
        """True when the next proposal does not depend on any pending answer."""
        return self.pending == 0

    def size(self) -> int:
        """Queries of the next proposal (call after `determined()`)."""
        return 1

    def pend(self, p: Proposal) -> None:
        """Note proposal `p` as handed out, its answers pending."""
        self.pending += 1

    def hold(self, p: Proposal) -> None:
        """Keep proposal `p` from being proposed again while pending."""
        pass

    def follow(self, p: Proposal) -> Proposal | None:
        """The policy's step for logged decision `p` when the log is trusted (a reader):
        `propose()` unless a driver can take the step more cheaply."""
        return self.propose()

    def take(self, p: Proposal) -> Proposal | None:
        """The step for logged decision `p` when another object of the process checks the
        same log (the server's writer): `follow()` unless a driver can skip more."""
        return self.follow(p)

    def late(self, item: int, label: int) -> None:
        """An extra answer on `item` (a late answer to a re-issued any-worker query)."""
        raise Diverged("campaign log: a late answer for a policy whose queries name a worker")


# ----------------------------------------------------------------------------- Opt-KG
class IndexDriver(Driver):
    """Homogeneous Opt-KG (and the other index rules of `make_policy`).

    The exact timeline is the replay's loop: i = next(); observe(i, y); exclude(i) once the
    item has had `max_labels` labels. Speculation (index policies with a `TieArgmax`): a
    pending decision on item p is taken out of the what-if copy and remembers
    bound_p = max(key after a +1, key after a -1) (-inf when p reaches its cap, as it is then
    excluded in every outcome). The next decision is determined when the top key of the copy
    is strictly above every bound: then no outcome of the pending answers can put p in (or
    reorder) the top bucket, and the tie draw sees the same bucket in every outcome. Proof
    sketch: observe(p) only moves p out of its bucket (the same swap in every outcome, as
    both outcome keys differ from the old one, which is >= the top) into a lower bucket."""

    def __init__(self, pol, caps: list[int | None], fill: bool):
        super().__init__(fill)
        self.pol = pol
        self.caps = caps
        self.count = [0] * len(caps)  # decisions proposed per item
        self.speculative = isinstance(pol, BetaIndexPolicy) and \
            not isinstance(pol, FiniteGittinsPolicy)
        self.bound = -math.inf
        self.alive = 0  # pending items that may come back
        self.alive_items: set[int] = set()  # those items
        self._pp: np.ndarray | None = None  # P(positive) per item as of the last `labels()`
        self._touched: set[int] = set()  # items observed since then
        for i, c in enumerate(caps):
            if c is not None and c <= 0:
                pol.exclude(i)

    def clone(self) -> IndexDriver:
        """An independent copy for what-if proposals."""
        new = copy.copy(self)
        new.pol = self.pol.clone()
        new.count = list(self.count)
        new.alive_items = set(self.alive_items)
        new._pp, new._touched = None, set()
        new._fresh()
        return new

    def _left_empty(self) -> bool:
        return self._empty()

    def summary(self, items=None, workers=None) -> tuple[list, list, dict | None]:
        """Each item's Beta posterior (x = a, y = b) and P(positive) (z); no worker state."""
        idx = np.arange(len(self.caps)) if items is None else np.fromiter(
            items, dtype=np.int64, count=len(items))
        pp = self._posterior()
        return list(zip(idx.tolist(), self.pol.a[idx].tolist(), self.pol.b[idx].tolist(),
                        pp[idx].tolist())), [], None

    def _empty(self) -> bool:
        if isinstance(self.pol, FiniteGittinsPolicy):
            return not self.pol.available.any()
        return self.pol.arg.top_key() is None

    def determined(self) -> bool:
        """True when the next proposal depends on no pending answer."""
        if self.pending == 0:
            return True
        if not self.speculative:
            return False
        k = self.pol.arg.top_key()
        if k is None:
            return self.alive == 0
        return k > self.bound

    def propose(self) -> Proposal | None:
        """The policy's next decision, or None when it has none left."""
        if self._empty():
            return None
        i = int(self.pol.next())
        self.count[i] += 1
        return Proposal("label", i, (None,))

    def take(self, p: Proposal) -> Proposal | None:
        """Logged decision `p` taken as logged: no argmax and no tie draw (a reader never
        hands out a decision, so its generator need not follow the writer's)."""
        if self._empty():
            return None
        self.count[p.item] += 1
        return p

    def _capped(self, i: int) -> bool:
        c = self.caps[i]
        return c is not None and self.count[i] >= c

    def apply(self, p: Proposal, labels: list[int]) -> None:
        """Feed the answers of proposal `p` to the policy."""
        i = p.item
        self.pol.observe(i, 1 if labels[0] == 1 else -1)
        self._touched.add(i)
        self.dirty_items.add(i)
        if self.fill:
            if not self._capped(i):
                self.pol.include(i)
        elif self._capped(i):
            self.pol.exclude(i)

    def hold(self, p: Proposal) -> None:
        """Take the pending item out of the what-if copy."""
        self.pol.exclude(p.item)

    def late(self, item: int, label: int) -> None:
        """The policy observes the extra label (its item's posterior moves; an excluded item
        stays excluded). A pending item's bound is widened to its keys after the late label,
        so `determined()` still covers every outcome of the pending answer."""
        self.pol.observe(item, 1 if label == 1 else -1)
        self._touched.add(item)
        self.dirty_items.add(item)
        if self.speculative and item in self.alive_items:
            self.bound = max(self.bound, *self.pol.outcome_keys(item))

    def pend(self, p: Proposal) -> None:
        """Note proposal `p` as handed out, its answers pending."""
        self.pending += 1
        if self.speculative:
            if not self._capped(p.item):
                self.bound = max(self.bound, *self.pol.outcome_keys(p.item))
                self.alive += 1
                self.alive_items.add(p.item)
            self.pol.exclude(p.item)

    def labels(self) -> tuple[np.ndarray, np.ndarray]:
        """Current class index per item (1 = positive, ties positive) and P(label right)."""
        return beta_labels(self.pol.estimate(), self._posterior())

    def _posterior(self) -> np.ndarray:
        """P(positive) per item, recomputed only for the items observed since the last call
        (the Beta tail of every item was most of a status under writers)."""
        if self._pp is None:
            self._pp = self.pol.posterior()
        elif self._touched:
            idx = np.fromiter(self._touched, dtype=np.int64, count=len(self._touched))
            self._pp[idx] = self.pol.posterior_of(idx)
        self._touched.clear()
        return self._pp


class PairDriver(Driver):
    """Heterogeneous Opt-KG (`WorkerPolicy`): the policy picks (item, worker). Each pair is
    bought once: excluded after its answer (exact, as the replay does when a pair's recorded
    label is used) or when handed out (fill). No speculation: one answer changes a whole item
    row and worker column."""

    def __init__(self, pol: WorkerPolicy, fill: bool):
        super().__init__(fill)
        self.pol = pol

    def clone(self) -> PairDriver:
        """An independent copy for what-if proposals."""
        new = copy.copy(self)
        new.pol = self.pol.clone()
        new._fresh()
        return new

    def _left_empty(self) -> bool:
        return bool(self.pol.keys.max() == _GONE)

    def summary(self, items=None, workers=None) -> tuple[list, list, dict | None]:
        """Each item's posterior (x = a, y = b) and P(positive) (z), each worker's reliability
        posterior (x = c, y = d)."""
        pol = self.pol
        ii = np.arange(pol.K) if items is None else np.array(sorted(items), dtype=np.int64)
        jj = range(pol.M) if workers is None else sorted(workers)
        pp = bp.prob_positive(pol.a[ii], pol.b[ii])
        return ([(int(i), float(pol.a[i]), float(pol.b[i]), float(z))
                 for i, z in zip(ii.tolist(), pp.tolist())],
                [(j, float(pol.c[j]), float(pol.d[j]), None) for j in jj], None)

    def propose(self) -> Proposal | None:
        """The policy's next (item, worker) pair, or None when none is left."""
        if self.pol.keys.max() == _GONE:
            return None
        i, j = self.pol.next()
        return Proposal("pair", int(i), (int(j),))

    def apply(self, p: Proposal, labels: list[int]) -> None:
        """Feed the answer of proposal `p` to the policy."""
        act = (p.item, p.workers[0])
        self.pol.observe(act, 1 if labels[0] == 1 else -1)
        self.dirty_items.add(p.item)
        self.dirty_workers.add(p.workers[0])
        if not self.fill:
            self.pol.exclude(act)

    def hold(self, p: Proposal) -> None:
        """Take the pending pair out of the what-if copy."""
        self.pol.exclude((p.item, p.workers[0]))

    def labels(self) -> tuple[np.ndarray, np.ndarray]:
        """Current class index per item and the posterior of that label."""
        return beta_labels(self.pol.estimate(), bp.prob_positive(self.pol.a, self.pol.b))


# ----------------------------------------------------------------------------- LS_OL
class LsolDriver(Driver):
    """LS_OL: item t of the items file is the arrival of step t; its decision is the labeler
    set of `select(t)` (every active labeler when exploring), one query per labeler; the
    arrival is observed once all its answers are in (`observe(action, labels)`, the replay's
    call). As in the replay, testers are not re-assigned (D2 = 0: a worker labels an item
    once). Speculation: an exploitation step's answers change no selection state, so later
    arrivals are determined; after a pending exploration only a new exploration is (its
    labeler set is every active labeler; not with the disagreement filter)."""

    speculative = True

    def __init__(self, learner: LSOL, n_items: int, fill: bool):
        super().__init__(fill)
        self.learner = learner
        self.n_items = n_items
        self.t = 1
        self.outputs: dict[int, int] = {}
        self.dirty = False  # a pending exploration (p_hat unknown)
        self._next: Action | None = None

    def clone(self) -> LsolDriver:
        """An independent copy for what-if proposals."""
        new = copy.copy(self)
        new.learner = copy.deepcopy(self.learner)
        new.outputs = dict(self.outputs)
        new._fresh()
        return new

    def _left_empty(self) -> bool:
        return self._action() is None

    def summary(self, items=None, workers=None) -> tuple[list, list, dict | None]:
        """Each item's output (x; NULL before its answers are in), each labeler's p_hat (x),
        and the learner's scalars."""
        L = self.learner
        ii = range(self.n_items) if items is None else sorted(items)
        jj = range(L.M) if workers is None else sorted(workers)
        wrows = []
        if jj:
            # the EM estimator warm-starts from its last fit: this read must not change that
            saved = dict(getattr(L, "_em", {}))
            p = L.p_hat()
            if hasattr(L, "_em"):
                L._em = saved
            wrows = [(j, float(p[j]), None, None) for j in jj]
        return ([(i, None if i not in self.outputs else float(self.outputs[i]), None, None)
                 for i in ii], wrows,
                {"K": int(L.K), "p_clip": float(L.p_clip), "testers": int(L.n),
                 "steps": dict(L.steps)})

    def _action(self) -> Action | None:
        if self.t > self.n_items:
            return None
        if self._next is None or self._next.t != self.t:
            self._next = self.learner.select(self.t)
        return self._next

    def determined(self) -> bool:
        """True when the next arrival's labeler set is known."""
        a = self._action()
        if a is None or not self.dirty:
            return True
        return a.kind == "explore_new" and self.learner.filter is None

    def size(self) -> int:
        """Queries of the next proposal (the labeler set's size)."""
        a = self._action()
        return 0 if a is None else len(a.labelers)

    def propose(self) -> Proposal | None:
        """The next arrival and its labeler set, or None past the items."""
        a = self._action()
        if a is None:
            return None
        self._next = None
        self.t += 1
        return Proposal(a.kind, a.t - 1, tuple(int(j) for j in a.labelers),
                        {"tester": int(a.tester)})

    def follow(self, p: Proposal) -> Proposal | None:
        """An exploitation step of the log is taken as logged (its labeler set needs the
        pi(S) search of `selection`, the whole cost of a rebuild); the step kind and arrival
        are still checked, explorations (which draw the generator) are proposed."""
        if p.kind == "exploit" and self.t == p.item + 1 and self.t <= self.n_items \
                and not self.learner.explores(self.t):
            self._next = None
            self.t += 1
            return p
        return self.propose()

    def _act(self, p: Proposal) -> Action:
        return Action(p.kind, np.asarray(p.workers, dtype=np.int64), p.data["tester"],
                      p.item + 1)

    def apply(self, p: Proposal, labels: list[int]) -> None:
        """Feed the answers of proposal `p` to the learner."""
        self._next = None
        lab = np.asarray(labels, dtype=np.int64)
        self.dirty_items.add(p.item)
        if p.kind != "exploit":  # p_hat of every labeler may move
            self.dirty_workers.update(range(self.learner.M))
        if p.kind == "exploit":  # the replay's exploitation step: vote of the queried set
            L = self.learner
            who = np.asarray(p.workers, dtype=np.int64)
            w = L._weights(L.p_hat())[who] if L.rule == "wmv" else None
            self.outputs[p.item] = int(L.vote(lab, w))
            L.steps["exploit"] += 1
        else:
            self.outputs[p.item] = int(self.learner.observe(self._act(p), lab))

    def pend(self, p: Proposal) -> None:
        """Note proposal `p` as handed out, its answers pending."""
        self.pending += 1
        if p.kind != "exploit":
            # advance the tester count (label-independent) with a placeholder observation;
            # p_hat is then unknown, which `determined` accounts for
            self.learner.observe(self._act(p), [-1] * len(p.workers))
            self._next = None
            self.dirty = True


# ----------------------------------------------------------------------------- CL-TAP
class PlanDriver(Driver):
    """CL-TAP: CBP decides the whole assignment offline (paper 003): annotator j's k-th label
    goes to task task_of[j, k]. Decisions follow the plan by iteration, then annotator (each
    annotator's labels in her iteration order, as the prefix rule requires); answers change
    no decision, so every decision is determined. Labels are aggregated by the logit-weighted
    vote with the forecast accuracies (Prop. 1)."""

    speculative = True

    def __init__(self, plan: list[tuple[int, int, int]], logits: np.ndarray, n_items: int,
                 fill: bool):
        super().__init__(fill)
        self.plan = plan  # (annotator, iteration, task) in hand-out order
        self.logits = logits
        self.pos = 0
        self.score = np.zeros(n_items)

    def clone(self) -> PlanDriver:
        """An independent copy for what-if proposals."""
        new = copy.copy(self)
        new.score = self.score.copy()
        new._fresh()
        return new

    def _left_empty(self) -> bool:
        return self.pos >= len(self.plan)

    def reliability(self) -> np.ndarray:
        """Each annotator's forecast accuracy averaged over her planned iterations (NaN: none
        planned)."""
        p = 1.0 / (1.0 + np.exp(-self.logits))
        used = np.zeros(p.shape, dtype=bool)
        for j, k, _ in self.plan:
            used[j, k] = True
        cnt = used.sum(axis=1)
        return np.where(cnt > 0, (p * used).sum(axis=1) / np.maximum(cnt, 1), np.nan)

    def summary(self, items=None, workers=None) -> tuple[list, list, dict | None]:
        """Each task's logit-weighted score (x); each annotator's planned reliability (x)."""
        ii = range(len(self.score)) if items is None else sorted(items)
        rel = self.reliability()
        jj = range(len(rel)) if workers is None else sorted(workers)
        return ([(i, float(self.score[i]), None, None) for i in ii],
                [(j, None if not np.isfinite(rel[j]) else float(rel[j]), None, None)
                 for j in jj], None)

    def determined(self) -> bool:
        """Always True: the plan is fixed in advance."""
        return True

    def propose(self) -> Proposal | None:
        """The plan's next (annotator, task), or None at its end."""
        if self.pos >= len(self.plan):
            return None
        j, k, task = self.plan[self.pos]
        self.pos += 1
        return Proposal("plan", task, (j,), {"iteration": k})

    def apply(self, p: Proposal, labels: list[int]) -> None:
        """Add the answer of proposal `p` to its task's logit-weighted score."""
        s = self.logits[p.workers[0], p.data["iteration"]]
        self.score[p.item] += s if labels[0] == 1 else -s
        self.dirty_items.add(p.item)

    def labels(self) -> tuple[np.ndarray, np.ndarray]:
        """Current class index per item and the posterior of that label."""
        return plan_labels(self.score)


# ----------------------------------------------------------------------------- factory
def cltap_plan(accuracy: np.ndarray, n_items: int, budget: int, p_max: float
               ) -> tuple[list[tuple[int, int, int]], np.ndarray]:
    """CBP's assignment as (annotator, iteration, task) by iteration then annotator, and the
    logits of the (clipped) forecast accuracies."""
    from ..problems.cltap import make_instance
    from ..solvers.cltap_cbp import cbp

    inst = make_instance(accuracy, n_items, budget, p_max)
    z = cbp(inst).task_of
    plan = [(int(j), int(k), int(z[j, k])) for k in range(z.shape[1]) for j in range(z.shape[0])
            if z[j, k] >= 0]
    return plan, inst.logits


def build(policy: str, params: dict, seed: int, budget: int, n_items: int, n_workers: int,
          caps: list[int | None], pairs: np.ndarray | None, accuracy: np.ndarray | None,
          fill: bool) -> Driver:
    """The driver of a campaign, around a fresh policy object (same seeds as the replays:
    Opt-KG's generator [seed, 1], LS_OL's seed)."""
    if policy == "optkg":
        pol = make_policy(params["rule"], n_items, prior=params["prior"], seed=[seed, 1],
                          budget=budget, alpha=params["alpha"])
        return IndexDriver(pol, caps, fill)
    if policy == "optkg-het":
        base, tie = parse_policy(params["rule"])
        pol = WorkerPolicy(n_items, n_workers, base, prior=params["prior"],
                           worker_prior=params["worker_prior"], pairs=pairs, tie=tie,
                           seed=[seed, 1])
        return PairDriver(pol, fill)
    if policy == "lsol":
        flt = DisagreementFilter(delta_rank=params["delta_rank"]) if params["filter"] else None
        learner = LSOL(n_workers, n_classes=params["n_classes"], rule=params["rule"],
                       estimator=params["estimator"], schedule=Schedule(params["G1"], 0.0),
                       filter=flt, costs=np.ones(n_workers), cost_weight=params["price"],
                       prior=params["prior"], seed=seed)
        return LsolDriver(learner, n_items, fill)
    if policy == "cltap":
        if accuracy is None:
            raise InputError("workers", "an accuracy curve per worker for cltap", None)
        plan, logits = cltap_plan(accuracy, n_items, budget, params["p_max"])
        return PlanDriver(plan, logits, n_items, fill)
    raise InputError("policy", f"one of {', '.join(POLICIES)}", policy)


def check(p: Proposal | None, want: Proposal, k: int) -> None:
    """Refuse a replayed decision that differs from the logged one (`Diverged`)."""
    if p is None or p.item != want.item or p.workers != want.workers or p.kind != want.kind:
        got = None if p is None else (p.kind, p.item, p.workers)
        raise Diverged(f"campaign log: decision {k} is {(want.kind, want.item, want.workers)} "
                       f"but the policy now decides {got} (a different crowdopt version or a "
                       "damaged file)")


