"""A stateful property test of the campaign store (hypothesis `RuleBasedStateMachine`):
random interleavings of `next` (for anyone or a named worker, leases and late windows of any
length), `record` (valid answers from the hand-out's worker or anyone, re-sends, answers after
the lease, ghosts, unknown items and labels, a worker token answering for someone else),
the clock running past leases and late windows, a kill and reopen of the process's object,
and token rotation, over every policy. After every step:

- spend <= budget, and spend + reserved <= budget;
- every paid answer (stored or late) has its own hand-out: one answer per hand-out, from the
  worker it was handed to (or anyone's when handed to nobody in particular), recorded between
  the hand-out and the end of its late window;
- nothing confirmed is lost: every answer `record` said was stored or late is in the file;
- no duplicate: one answer per (item, worker);
- `status` read from the summary equals the status of a replay of the log and the status of
  the long-lived object.

The normal suite runs a few examples; `make soak` (CROWDOPT_SOAK=1) runs many more."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, Phase, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.stateful import (  # noqa: E402
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from crowdopt.campaign import Campaign, core  # noqa: E402
from crowdopt.errors import InputError  # noqa: E402

SETUPS = [("optkg", "exact"), ("optkg", "fill"), ("optkg-het", "exact"), ("optkg-het", "fill"),
          ("lsol", "exact"), ("cltap", "exact")]
WORKERS = ["u", "v", "x"]


class CampaignMachine(RuleBasedStateMachine):
    # where each example's campaign lives: None, a file of its own; else a function giving a
    # new campaign target (a PostgreSQL campaign)
    where = None

    def __init__(self):
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="camp_sm_"))
        self.now = 1000.0
        self._real_now = core._now
        core._now = lambda: self.now
        self.camp: Campaign | None = None
        self.handed: list = []  # queries handed out: (Query, worker named or None)
        self.confirmed: dict[tuple[str, str], str] = {}  # paid answers a reply confirmed

    def teardown(self):
        core._now = self._real_now
        if self.camp is not None:
            self.camp.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    # ------------------------------------------------------------------ set-up
    @initialize(setup=st.sampled_from(SETUPS), n_items=st.integers(2, 5),
                budget=st.integers(1, 12), seed=st.integers(0, 3))
    def create(self, setup, n_items, budget, seed):
        policy, batching = setup
        self.policy, self.budget = policy, budget
        self.items = [f"i{k}" for k in range(n_items)]
        kw = {}
        if policy in ("optkg-het", "lsol"):
            kw["workers"] = WORKERS
        if policy == "lsol":
            kw["params"] = {"G1": 1.0}
            budget = max(budget, len(WORKERS))  # the first decision asks every worker
            self.budget = budget
        if policy == "cltap":
            kw["workers"] = {"u": [0.9, 0.7], "v": 0.8, "x": [0.6, 0.85]}
            budget = min(budget, 2 * len(WORKERS))  # at most one label per iteration
            self.budget = budget
        self.db = self.dir / "c.db" if self.where is None else type(self).where()
        self.camp = Campaign.create(self.db, policy=policy, items=self.items, budget=budget,
                                    seed=seed, batching=batching, labels=["no", "yes"]
                                    if policy != "lsol" else ["no", "yes"], **kw)

    # ------------------------------------------------------------------ rules
    @rule(n=st.integers(1, 4), who=st.sampled_from([None, *WORKERS]),
          lease=st.sampled_from([1.0, 5.0, 20.0]), late=st.sampled_from([None, 0.0, 3.0]))
    def next_(self, n, who, lease, late):
        if who is not None and self.policy not in ("optkg", "optkg-het", "lsol", "cltap"):
            return
        qs = self.camp.next(n, worker=who, lease=lease, late_window=late)
        self.handed += [(q, who) for q in qs]

    def _record(self, rows, as_worker=None):
        res = self.camp.record(rows, as_worker=as_worker)
        for row, r in zip(rows, res["results"]):
            if r["status"] in ("stored", "late"):
                key = (str(row[0]), str(row[1]))
                assert key not in self.confirmed, "paid twice for one (item, worker)"
                self.confirmed[key] = str(row[2])
            elif r["status"] == "duplicate":
                assert self.confirmed.get((str(row[0]), str(row[1]))) == str(row[2])
        return res

    @precondition(lambda self: self.handed)
    @rule(data=st.data(), label=st.sampled_from(["no", "yes"]))
    def answer(self, data, label):
        """The answer of a hand-out's worker (or of anyone when it named nobody)."""
        q, who = data.draw(st.sampled_from(self.handed))
        worker = q.worker or who or data.draw(st.sampled_from([*WORKERS, "w9"]))
        self._record([(q.item, worker, label)])

    @precondition(lambda self: self.handed)
    @rule(data=st.data(), label=st.sampled_from(["no", "yes"]))
    def answer_batch(self, data, label):
        """Several answers in one request: one hand-out answered by several workers at once
        (its worker, others, ghosts), and answers to other hand-outs."""
        q, who = data.draw(st.sampled_from(self.handed))
        many = data.draw(st.lists(st.sampled_from([*WORKERS, "w8", "ghost3"]), min_size=2,
                                  max_size=4, unique=True))
        rows = [(q.item, w, label) for w in many]
        for q2, who2 in data.draw(st.lists(st.sampled_from(self.handed), max_size=3)):
            rows.append((q2.item, q2.worker or who2 or "w9", label))
        self._record(rows)

    @precondition(lambda self: self.confirmed)
    @rule(data=st.data())
    def resend(self, data):
        """A re-sent answer (its reply was lost): a duplicate, never paid again."""
        (item, worker), label = data.draw(st.sampled_from(sorted(self.confirmed.items())))
        res = self._record([(item, worker, label)])
        assert res["results"][0]["status"] == "duplicate"

    @rule(data=st.data(), k=st.integers(0, 9))
    def ghost(self, data, k):
        """An answer from a worker nobody handed anything to (mostly on an item handed out)."""
        handed = sorted({q.item for q, _ in self.handed})
        item = data.draw(st.sampled_from(handed if handed and k < 8 else self.items))
        ghost = f"ghost{k}"
        res = self._record([(item, ghost, "yes")])
        if res["results"][0]["status"] in ("stored", "late"):
            # paid only against a hand-out to nobody in particular (anyone may answer it)
            rows = [r[6] for r in self.camp.store.paid_answers() if r[2] == ghost]
            assert rows and all(w is None for w in rows)

    @rule(data=st.data())
    def token_answers_for_another(self, data):
        """A worker token answering as someone else: refused."""
        item = data.draw(st.sampled_from(self.items))
        res = self._record([(item, "v", "no")], as_worker="u")
        assert res["results"][0]["status"] == "rejected"

    @rule(kind=st.sampled_from(["item", "label", "row"]))
    def unknown(self, kind):
        row = {"item": ("nope", "u", "yes"), "label": (self.items[0], "u", "maybe"),
               "row": (self.items[0], "u")}[kind]
        res = self.camp.record([row])
        assert res["results"][0]["status"] == "rejected" and res["recorded"] == 0

    @rule(dt=st.sampled_from([0.5, 2.0, 4.0, 12.0, 40.0]))
    def time_passes(self, dt):
        self.now += dt

    @rule()
    def kill_and_reopen(self):
        """The process dies (its object is dropped unclosed) and another opens the file."""
        self.camp.close()
        self.camp = Campaign.open(self.db)

    @rule(role=st.sampled_from(["admin", "read", "worker"]), who=st.sampled_from(WORKERS))
    def rotate(self, role, who):
        tok = self.camp.new_token(role, worker=who if role == "worker" else None)
        roles = self.camp.token_roles()
        from crowdopt.campaign.store import token_hash

        assert roles[token_hash(tok)] == (role, who if role == "worker" else None)
        same = [r for r in roles.values() if r == roles[token_hash(tok)]]
        assert len(same) == 1  # the earlier tokens of that role (worker) were revoked

    # ------------------------------------------------------------------ invariants
    @invariant()
    def money_and_log(self):
        if self.camp is None:
            return
        fresh = Campaign.open(self.db, readonly=True)
        # (seq, item, worker, label, late, hand-out, its worker, handed_at, late_until, at)
        rows = fresh.store.paid_answers()
        hids = [r[5] for r in rows]
        assert None not in hids, "a paid answer without a hand-out"
        assert len(hids) == len(set(hids)), "a hand-out paid twice"
        for _, _, worker, _, _, _, h_worker, handed, until, at in rows:
            assert h_worker in (None, worker), "paid from a hand-out to someone else"
            assert handed <= at <= until, "paid outside its hand-out's late window"
        keys = [(r[1], r[2]) for r in rows]
        assert len(keys) == len(set(keys)), "two answers for one (item, worker)"
        classes = ["no", "yes"]
        stored = {(r[1], r[2]): classes[r[3]] for r in rows}
        for key, label in self.confirmed.items():
            assert stored.get(key) == label, f"a confirmed answer is lost: {key}"
        assert set(stored) == set(self.confirmed), "an answer nobody was told was paid"
        replay = Campaign.open(self.db, readonly=True)
        replay.use_summary = False
        a, b, c = fresh.status(), replay.status(), self.camp.status()
        fresh.close()
        replay.close()
        assert a == b == c, "status from the summary, a replay and the live object differ"
        assert a["spent"] <= self.budget and a["spent"] + a["reserved"] <= self.budget
        assert a["spent"] == len(rows)


def _run(examples: int, steps: int, derandomize: bool = False, shrink: bool = True) -> None:
    phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if shrink else [])
    CampaignMachine.TestCase.settings = settings(
        max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
        derandomize=derandomize, print_blob=True, phases=phases,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    CampaignMachine.TestCase("runTest").runTest()


def test_campaign_store_state_machine():
    _run(examples=12, steps=20)


@pytest.mark.postgres
def test_campaign_store_state_machine_on_postgresql(postgres, monkeypatch):
    """The same machine with each example's campaign in the scratch PostgreSQL server."""
    monkeypatch.setattr(CampaignMachine, "where", lambda: postgres.url(
        campaign=f"sm_{uuid.uuid4().hex[:12]}"))
    _run(examples=int(os.environ.get("CROWDOPT_CAMPAIGN_EXAMPLES_PG", "5")), steps=20)


@pytest.mark.soak
@pytest.mark.postgres
def test_campaign_store_state_machine_on_postgresql_soak(postgres, monkeypatch):
    monkeypatch.setattr(CampaignMachine, "where", lambda: postgres.url(
        campaign=f"sm_{uuid.uuid4().hex[:12]}"))
    _run(examples=int(os.environ.get("CROWDOPT_CAMPAIGN_EXAMPLES", "400")) // 4, steps=50)


@pytest.mark.soak
def test_campaign_store_state_machine_soak():
    _run(examples=int(os.environ.get("CROWDOPT_CAMPAIGN_EXAMPLES", "400")), steps=50)


@pytest.mark.parametrize("mutation", ["never used up", "any worker"])
def test_the_machine_catches_a_store_that_pays_wrongly(monkeypatch, mutation):
    """The invariants bite: a store that leaves a hand-out live after paying it (it pays
    twice), or pays a hand-out's answer from any worker, is caught by the machine."""
    pick = {"never used up": lambda hs, worker: hs[0] if hs else None,
            "any worker": lambda hs, worker: hs.pop(0) if hs else None}[mutation]
    monkeypatch.setattr(Campaign, "_pick", staticmethod(pick))
    with pytest.raises((AssertionError, BaseExceptionGroup)):
        _run(examples=100, steps=20, derandomize=True, shrink=False)  # the first failure


def test_invalid_inputs_to_the_machine_rules_are_refused_not_crashes(tmp_path):
    camp = Campaign.create(tmp_path / "x.db", policy="optkg", items=["a"], budget=1)
    with pytest.raises(InputError):
        camp.next(1, late_window=-1)
