"""Live campaigns (crowdopt.campaign): decisions equal the replays', the store's guarantees
(idempotent all-or-nothing record, leases, rebuild from the log, migrations), CL-TAP plans and
the CLI. Real-data equivalence, kill -9, processes and HTTP: test_campaign_*.py."""

from __future__ import annotations

import gc
import json
import random
import sqlite3
import time
import weakref

import numpy as np
import pytest

import crowdopt.sim.lsol_replay as lrp
import crowdopt.sim.optkg_replay as orp
from crowdopt.campaign import Campaign, Diverged, TableOracle, core, store
from crowdopt.cli import main
from crowdopt.crowd.tables import from_arrays, gold_from_arrays
from crowdopt.errors import CrowdoptError, InputError


# ----------------------------------------------------------------------------- helpers
def binary_table(seed: int, K: int = 30, W: int = 25, lo: int = 1, hi: int = 7, dense=False):
    """A random binary table: item i has lo..hi labels from distinct workers; ids are text."""
    rng = np.random.default_rng(seed)
    theta = rng.random(K)
    t, w, y = [], [], []
    for i in range(K):
        n = W if dense else int(rng.integers(lo, hi + 1))
        for j in rng.choice(W, size=n, replace=False):
            t.append(f"i{i}")
            w.append(f"w{j}")
            y.append(int(rng.random() < theta[i]))
    table = from_arrays(t, w, y, classes=[0, 1])
    gold = gold_from_arrays(table, [f"i{i}" for i in range(K)], (theta >= 0.5).astype(int))
    return table, gold


def caps_of(table) -> dict:
    return {str(t): int(c) for t, c in zip(table.task_ids, table.labels_per_task())}


def replay_trace(monkeypatch, table, gold, *, policy="optkg", budget, seed, mode="homogeneous"):
    """The replay's decisions (items, or (item, worker) pairs) and its accuracy."""
    trace: list = []
    real_make, real_worker = orp.make_policy, orp.WorkerPolicy

    def make(*a, **k):
        pol = real_make(*a, **k)
        nxt = pol.next

        def rec():
            i = nxt()
            trace.append(int(i))
            return i
        pol.next = rec
        return pol

    class Rec(real_worker):
        def next(self):
            a = super().next()
            trace.append(tuple(int(x) for x in a))
            return a

    monkeypatch.setattr(orp, "make_policy", make)
    monkeypatch.setattr(orp, "WorkerPolicy", Rec)
    res = orp.replay(table, gold, policy=policy, budgets=[budget], mode=mode, seed=seed)
    monkeypatch.setattr(orp, "make_policy", real_make)
    monkeypatch.setattr(orp, "WorkerPolicy", real_worker)
    return trace, res["accuracy"][0]


def drive(camp: Campaign, oracle: TableOracle, rng: random.Random, max_n: int = 20,
          dup_every: int = 3, calls: int = 10**6) -> int:
    """next(random n) -> answers shuffled, recorded in one or two calls, some re-recorded."""
    done = 0
    for c in range(calls):
        qs = camp.next(rng.randint(1, max_n))
        if not qs:
            break
        ans = [oracle.answer(q) for q in qs]
        rng.shuffle(ans)
        cut = rng.randint(0, len(ans))
        camp.record(ans[:cut])
        camp.record(ans[cut:])
        if c % dup_every == 0:
            assert camp.record(ans)["recorded"] == 0  # idempotent
        done += len(ans)
    return done


def gold_dict(table, gold) -> dict:
    return {str(table.task_ids[t]): str(table.classes[y])
            for t, y in zip(gold.task.tolist(), gold.label.tolist())}


def replay_accuracy(camp: Campaign, gold: dict) -> float:
    """The replay's accuracy from a campaign's status: the replay also scores the items that
    never got an answer (their prior estimate, ties positive); status gives them no label."""
    st = camp.status(gold=gold)
    labels = {r["item"]: r["label"] for r in st["labels"]}
    assert all(r["label"] is None for r in st["labels"] if r["answers"] == 0)
    hits = [(labels[i] if labels[i] is not None else camp.classes[1]) == y
            for i, y in gold.items() if i in labels]
    return float(np.mean(hits))


def decided_items(camp: Campaign) -> list[int]:
    return [camp.item_index[q.item] for q in camp.queries()]


# ----------------------------------------------------------------------------- equivalence
@pytest.mark.parametrize("seed,rule", [(0, "optkg"), (1, "optkg"), (2, "optkg-det"),
                                       (3, "kg"), (4, "uniform"), (5, "nlu-det")])
def test_exact_batching_makes_the_replays_decisions(tmp_path, monkeypatch, seed, rule):
    """Random batch sizes, answers in random order (split, re-recorded): the decisions are the
    replay's one-at-a-time decisions, item for item, with items running out (max_labels)."""
    table, gold = binary_table(seed)
    budget = int(table.n_labels * 0.8)
    trace, acc = replay_trace(monkeypatch, table, gold, policy=rule, budget=budget, seed=seed)
    camp = Campaign.create(tmp_path / "c.db", policy="optkg", items=caps_of(table),
                           budget=budget, seed=seed, params={"rule": rule})
    drive(camp, TableOracle(table, seed=seed), random.Random(seed))
    assert decided_items(camp) == trace
    st = camp.status(gold=gold_dict(table, gold))
    assert st["answers"] == budget and st["done"] and st["accuracy"] == acc


def test_exact_batching_with_answers_held_back_across_calls(tmp_path, monkeypatch):
    """A pool of unanswered queries: each step asks for more or answers a random subset
    (gaps in the decision order). Over many small tables with caps and ties, the decisions
    stay the replay's; and decisions were handed out ahead of pending answers."""
    ahead = 0
    for seed in range(40):
        rng = random.Random(seed)
        table, gold = binary_table(100 + seed, K=rng.randint(3, 12), W=6, lo=1, hi=4)
        rule = rng.choice(["optkg", "optkg-det", "kg", "uniform", "pessimistic"])
        budget = rng.randint(1, table.n_labels)
        trace, acc = replay_trace(monkeypatch, table, gold, policy=rule, budget=budget,
                                  seed=seed)
        camp = Campaign.create(tmp_path / f"c{seed}.db", policy="optkg", items=caps_of(table),
                               budget=budget, seed=seed, params={"rule": rule})
        oracle, pool = TableOracle(table, seed=seed), []
        for _ in range(10 * budget + 20):
            if not pool or rng.random() < 0.5:
                qs = camp.next(rng.randint(1, 4))
                ahead += len(qs) if pool else max(0, len(qs) - 1)
                pool += [oracle.answer(q) for q in qs]
            if pool and rng.random() < 0.6:
                pick = rng.sample(range(len(pool)), rng.randint(1, len(pool)))
                camp.record([pool[i] for i in pick])
                pool = [a for i, a in enumerate(pool) if i not in pick]
        camp.record(pool)
        while qs := camp.next(5):
            camp.record([oracle.answer(q) for q in qs])
        assert decided_items(camp) == trace, (seed, rule)
        assert replay_accuracy(camp, gold_dict(table, gold)) == acc
        camp.close()
    assert ahead > 50  # the speculative path was exercised


def test_exact_batching_hands_out_several_queries_when_answers_cannot_matter(tmp_path):
    # every item starts at Beta(1, 1): whatever the first labels are, the first K decisions are
    # the untouched items (R+ drops after any label), so next(K) hands out K queries at once
    camp = Campaign.create(tmp_path / "c.db", policy="optkg", items=[f"i{i}" for i in range(8)],
                           budget=20, seed=0)
    first = camp.next(8)
    assert sorted(q.item for q in first) == [f"i{i}" for i in range(8)]
    assert camp.next(5) == []  # the next decision depends on those answers
    camp.record([(q.item, "w", 1) for q in first[:7]])
    assert camp.next(5) == []  # still waiting for the eighth
    camp.record([(first[7].item, "w", 0)])
    assert len(camp.next(5)) >= 1


def test_heterogeneous_campaign_makes_the_replays_decisions(tmp_path, monkeypatch):
    table, gold = binary_table(7, K=15, W=12, lo=3, hi=9)
    budget = 60
    trace, acc = replay_trace(monkeypatch, table, gold, budget=budget, seed=7,
                              mode="heterogeneous")
    pairs = [(str(table.task_ids[t]), str(table.worker_ids[w]))
             for t, w in zip(table.task, table.worker)]
    camp = Campaign.create(tmp_path / "c.db", policy="optkg-het",
                           items=[str(t) for t in table.task_ids],
                           workers=[str(w) for w in table.worker_ids], pairs=pairs,
                           budget=budget, seed=7)
    drive(camp, TableOracle(table, seed=7, mode="heterogeneous"), random.Random(1))
    got = [(camp.item_index[q.item], camp.worker_index[q.worker]) for q in camp.queries()]
    assert got == trace
    assert replay_accuracy(camp, gold_dict(table, gold)) == acc


def lsol_trace(monkeypatch, table, gold, **kw):
    acts: list = []
    real = lrp.LSOL

    class Rec(real):
        def select(self, t, context=None):
            a = super().select(t, context)
            acts.append((a.kind, a.labelers.tolist()))
            return a
    monkeypatch.setattr(lrp, "LSOL", Rec)
    res = lrp.replay(table, gold, **kw)
    monkeypatch.setattr(lrp, "LSOL", real)
    return acts, res


@pytest.mark.parametrize("rule,batching", [("mv", "exact"), ("wmv", "exact"), ("mv", "fill")])
def test_lsol_campaign_makes_the_replays_decisions(tmp_path, monkeypatch, rule, batching):
    table, gold = binary_table(3, K=60, W=7, dense=True)
    kw = dict(rule=rule, G1=1.0, cost_weight=0.02, prior=1.0, order="file", seed=4)
    acts, res = lsol_trace(monkeypatch, table, gold, **kw)
    camp = Campaign.create(tmp_path / "c.db", policy="lsol", items=[str(t) for t in table.task_ids],
                           workers=[str(w) for w in table.worker_ids], budget=10_000, seed=4,
                           batching=batching,
                           params={"rule": rule, "G1": 1.0, "price": 0.02, "prior": 1.0})
    drive(camp, TableOracle(table, mode="dense"), random.Random(2), max_n=15)
    by_k: dict = {}
    for q in camp.queries():
        by_k.setdefault(q.decision, []).append(camp.worker_index[q.worker])
    st = camp.status(gold=gold_dict(table, gold))
    assert st["done"] and st["decisions"] == table.n_tasks
    assert st["answers"] == sum(len(v) for v in by_k.values())
    if batching == "exact":  # fill decides on the answers in so far (other decisions)
        assert st["answers"] == res["labels_spent"]
        assert [by_k[k] for k in sorted(by_k)] == [a[1] for a in acts]
        assert st["accuracy"] == res["accuracy"]
        assert st["lsol"]["selected"] == [str(w) for w in res["selected"]]


# ----------------------------------------------------------------------------- fill batching
def test_fill_batching_hands_out_full_batches_and_holds_items(tmp_path):
    table, gold = binary_table(11, K=40)
    camp = Campaign.create(tmp_path / "c.db", policy="optkg", items=caps_of(table), budget=120,
                           seed=1, batching="fill")
    oracle, rng = TableOracle(table, seed=1), random.Random(0)
    while True:
        qs = camp.next(10)
        if not qs:
            break
        assert len({q.item for q in qs}) == len(qs)  # an item has at most one open query
        open_items = [q.item for q in camp.queries(open_only=True)]
        assert len(open_items) == len(set(open_items))
        ans = [oracle.answer(q) for q in qs]
        rng.shuffle(ans)
        camp.record(ans)
    st = camp.status()
    assert st["answers"] == 120 and st["done"]
    counts = {}
    for q in camp.queries():
        counts[q.item] = counts.get(q.item, 0) + 1
    caps = caps_of(table)
    assert all(counts[i] <= caps[i] for i in counts)
    # the file alone gives the same policy state: a reopened campaign reports the same
    again = Campaign.open(tmp_path / "c.db")
    assert again.status()["labels"] == st["labels"]


def test_state_keeps_no_object_per_decision(tmp_path):
    """The in-memory state grows in columns, not in objects the garbage collector visits."""
    camp = Campaign.create(tmp_path / "g.db", policy="optkg", items=[f"i{i}" for i in range(300)],
                           budget=10**6, seed=0, batching="fill")
    reader = Campaign.open(tmp_path / "g.db", readonly=True)

    def run(rounds):
        for b in range(rounds):
            qs = camp.next(10)
            camp.record([(q.item, f"w{b % 3}-{q.decision}", q.decision % 2) for q in qs])
        reader.status(limit=5)
        gc.collect()
        # sqlite3 keeps a weak reference per cursor and prunes them every 200 cursors: a
        # count that swings by up to 200 whatever the campaign holds, left out here
        return sum(type(o) is not weakref.ReferenceType for o in gc.get_objects())

    run(10)  # what is made once (lazy imports, first-call caches) is made here
    before = run(10)
    after = run(30)  # 300 more decisions and answers in both objects
    assert after - before < 100


@pytest.mark.parametrize("batching", ["fill", "exact"])
def test_a_reader_trusting_the_log_reports_what_a_checking_reader_does(tmp_path, batching):
    table, _ = binary_table(5, K=30)
    camp = Campaign.create(tmp_path / "t.db", policy="optkg", items=caps_of(table),
                           budget=90, seed=2, batching=batching)
    trusting = Campaign.open(tmp_path / "t.db", readonly=True)
    trusting.trust_log = True
    oracle = TableOracle(table, seed=2)
    while qs := camp.next(7):
        camp.record([oracle.answer(q) for q in qs[1:]])  # one query per batch stays open
        camp.record([oracle.answer(qs[0])])
        got = trusting.status()  # caught up batch by batch
    checking = Campaign.open(tmp_path / "t.db", readonly=True).status()
    for st in (got, checking):
        for x in ("answers_per_minute", "eta_seconds", "rate_window_seconds"):
            del st[x]
    assert got == checking and got["answers"] == 90


def test_a_long_lived_status_follows_every_answer(tmp_path, monkeypatch):
    """A status object that keeps its label confidences between calls (it recomputes only the
    items answered since) reports what a fresh object reads from the file, late answers too."""
    clock = [1000.0]
    monkeypatch.setattr(core, "_now", lambda: clock[0])
    camp = Campaign.create(tmp_path / "k.db", policy="optkg", items=[f"i{i}" for i in range(12)],
                           budget=40, seed=3, batching="fill")
    kept = Campaign.open(tmp_path / "k.db", readonly=True)
    kept.trust_log = True
    rng = random.Random(3)

    def same() -> dict:
        st = kept.status()
        fresh = Campaign.open(tmp_path / "k.db", readonly=True).status()
        assert st["labels"] == fresh["labels"] and st["late"] == fresh["late"]
        assert st["confidence_histogram"] == fresh["confidence_histogram"]
        return st

    while qs := camp.next(4, lease=5):
        if rng.random() < 0.4:  # a lease runs out: the query goes to another worker
            clock[0] += 10
            (again, *_) = camp.next(1)
            camp.record([(again.item, f"x{again.id}", rng.randrange(2))])
            same()
        camp.record([(q.item, f"w{q.id}", rng.randrange(2)) for q in qs])  # late ones too
        st = same()
    assert st["late"] > 0 and st["answers"] == 40


def test_answer_times_are_the_recording_times_of_every_answer(tmp_path, monkeypatch):
    """`answer_times` (the status page's plot): one time per answer, in the order recorded,
    as a reader that did not record them reads them from the file."""
    clock = [1000.0]
    monkeypatch.setattr(core, "_now", lambda: clock[0])
    camp = Campaign.create(tmp_path / "a.db", policy="optkg", items=["a", "b", "c"], budget=6,
                           seed=0)
    reader = Campaign.open(tmp_path / "a.db", readonly=True)
    assert reader.answer_times() == []
    want = []
    while qs := camp.next(2):
        clock[0] += 7.5
        camp.record([(q.item, f"w{q.id}", 1) for q in qs])
        want += [clock[0]] * len(qs)
    assert len(want) == 6 and reader.answer_times() == want == sorted(want)
    assert reader.status()["answers"] == len(want)


# ----------------------------------------------------------------------------- store guarantees
@pytest.fixture
def small(tmp_path):
    camp = Campaign.create(tmp_path / "s.db", policy="optkg", items=["a", "b", "c", "d"],
                           budget=8, seed=0, labels=["no", "yes"])
    return camp


def counts(res: dict) -> dict:
    return {k: res[k] for k in ("rows", "stored", "late", "duplicates", "rejected")}


def test_record_gives_an_outcome_per_row_and_a_bad_row_blocks_nothing(small):
    qs = small.next(4)
    assert len(qs) == 4
    rows = [(q.item, "w1", "yes") for q in qs[:2]]
    res = small.record(rows)
    assert counts(res) == {"rows": 2, "stored": 2, "late": 0, "duplicates": 0, "rejected": 0}
    assert [r["status"] for r in res["results"]] == ["stored", "stored"]
    res = small.record(rows + rows)  # an idempotent re-send
    assert counts(res)["duplicates"] == 4 and res["recorded"] == 0
    bad_cases = [
        ([(qs[0].item, "w1", "no")], "already answered"),  # conflicting label
        ([(qs[2].item, "w2", "yes")], "already answered"),  # conflicts with the good row
        ([("zzz", "w1", "yes")], "an item of the campaign"),  # unknown item
        ([(qs[3].item, "w1", "maybe")], "one of no, yes"),  # unknown label
        ([(qs[3].item, "w1")], "row"),  # malformed row
        ([{"item": qs[3].item}], "keys item, worker, label"),  # malformed mapping
    ]
    answered = 2
    for bad, why in bad_cases:
        q = small.next(1) or small.queries(open_only=True)[:1]
        good = (q[0].item, "w2", "no")
        res = small.record([good, *bad])
        assert [r["status"] for r in res["results"]][0] in ("stored", "duplicate"), res
        st = [r for r in res["results"][1:]]
        assert all(r["status"] == "rejected" and why in r["reason"] and "\n" not in r["reason"]
                   for r in st), (bad, st)
        answered += res["stored"]
        assert small.status()["answers"] == answered
    # nothing stays leased because a neighbour was bad
    assert small.status()["open"]["leased"] == len(small.queries(open_only=True))


def test_a_further_hand_out_is_paid_once_and_an_unsolicited_answer_never(tmp_path, monkeypatch):
    """An expired lease re-issues the query: each of its two hand-outs is paid once (stored,
    then late); a third answer, and any answer after the late windows, has no hand-out left:
    rejected, never stored, never counted."""
    clock = [1000.0]
    monkeypatch.setattr(core, "_now", lambda: clock[0])
    camp = Campaign.create(tmp_path / "l.db", policy="optkg", items=["a", "b", "c"], budget=6,
                           seed=1, batching="fill")
    (q,) = camp.next(1, lease=10)  # late window: 10 s more (the lease again)
    clock[0] = 1011.0
    (again,) = camp.next(1)  # the lease ran out: the same query to someone else
    assert again.id == q.id
    st = camp.status()
    assert (st["spent"], st["reserved"], st["left"], st["late_windows_open"]) == (0, 2, 4, 1)
    assert camp.record([(q.item, "second", 1)])["stored"] == 1
    res = camp.record([(q.item, "first", 0), (q.item, "first", 0), (q.item, "ghost", 1)])
    assert [r["status"] for r in res["results"]] == ["late", "duplicate", "rejected"]
    assert "nobody asked for" in res["results"][2]["reason"]
    st = camp.status()
    assert st["answers"] == 2 and st["spent"] == 2 and st["late"] == 1
    assert st["reserved"] == 0 and st["left"] == 6 - 2
    assert (q.item, "first", "0") in camp.answers()
    # the policy observed it: a reopened campaign (rebuilt from the log) agrees
    again = Campaign.open(tmp_path / "l.db")
    assert again.status()["labels"] == st["labels"]
    (q2,) = camp.next(1, lease=10, late_window=5)
    clock[0] += 16  # past its lease and late window: the hand-out reserves nothing now
    res = camp.record([(q2.item, "slow", 1)])
    assert res["rejected"] == 1 and "late window" in res["results"][0]["reason"]
    st = camp.status()
    assert st["spent"] == 2 and st["reserved"] == 1 and st["open"]["expired"] == 1


@pytest.mark.parametrize("batching", ["exact", "fill"])
def test_late_answers_keep_the_log_reproducible(tmp_path, monkeypatch, batching):
    """Late answers in the middle of a campaign (leases that run out, answers that come
    anyway): the campaign goes on to its end within its budget and a rebuild from the file
    reproduces every decision, whatever the batching."""
    clock = [1000.0]
    monkeypatch.setattr(core, "_now", lambda: clock[0])
    table, _ = binary_table(7, K=12)
    oracle = TableOracle(table, seed=7)
    db = tmp_path / f"late-{batching}.db"
    camp = Campaign.create(db, policy="optkg", items=caps_of(table), budget=40, seed=7,
                           batching=batching)
    rng = random.Random(1)
    late = 0
    while qs := camp.next(rng.randint(1, 4), lease=5):
        clock[0] += 6  # the leases ran out; the late windows (5 s more) are open
        again = camp.next(len(qs), lease=5)  # the same queries, to someone else (budget allowing)
        answers = [oracle.answer(q) for q in again]
        camp.record(answers)
        stale = [(q.item, f"stale-{q.id}", oracle.answer(q)[2]) for q in qs
                 if rng.random() < .5]
        res = camp.record(stale)
        late += res["late"]
        assert res["late"] + res["stored"] == len(stale) and not res["rejected"]
        assert camp.status()["spent"] <= 40
        clock[0] += 20  # every late window closed: what is open is handed out again
    st = camp.status()
    assert late > 0 and st["late"] == late and st["answers"] == st["issued"] + late
    assert st["spent"] <= 40 and st["done"]
    assert st["left"] == 40 - st["issued"] - late and st["reserved"] == 0
    again = Campaign.open(db)  # replays the log, late answers at their place: no divergence
    assert again.status()["labels"] == st["labels"]
    assert [q.id for q in again.queries()] == [q.id for q in camp.queries()]


def test_opening_a_file_that_is_not_a_campaign_leaves_it_untouched(tmp_path):
    """An empty file or another SQLite database is refused before WAL mode writes to it."""
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    for f in (empty, other):
        before = f.read_bytes()
        with pytest.raises(InputError, match="DB: expected a campaign file"):
            Campaign.open(f)
        assert f.read_bytes() == before and sorted(tmp_path.glob(f.name + "-*")) == []


def test_answer_to_a_query_never_handed_out_is_refused(tmp_path):
    camp = Campaign.create(tmp_path / "h.db", policy="optkg-het", items=["a", "b"],
                           workers=["u", "v"], budget=4, seed=0)
    (q,) = camp.next(1)
    other = "v" if q.worker == "u" else "u"
    res = camp.record([(q.item, other, 1)])  # the policy chose the worker: none for `other`
    assert res["rejected"] == 1 and "open query" in res["results"][0]["reason"]
    camp.record([(q.item, q.worker, 1)])
    assert camp.status()["answers"] == 1


def test_lsol_queries_for_other_workers_are_not_handed_out(tmp_path):
    camp = Campaign.create(tmp_path / "l.db", policy="lsol", items=["t1", "t2"],
                           workers=["u", "v", "x"], budget=10, seed=0)
    (q,) = camp.next(5, worker="v")  # exploration asks everyone; v gets v's query only
    assert (q.item, q.worker) == ("t1", "v")
    res = camp.record([("t1", "u", 1)])  # u's query exists but was never handed out
    assert res["rejected"] == 1 and "handed out" in res["results"][0]["reason"]
    with pytest.raises(InputError, match="worker"):
        camp.next(1, worker="nobody")
    rest = camp.next(2)  # the waiting queries first, then new decisions
    assert sorted((r.item, r.worker) for r in rest) == [("t1", "u"), ("t1", "x")]


def test_leases_expire_and_the_same_query_is_handed_out_again(small, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(core, "_now", lambda: clock[0])
    first = small.next(2, lease=10)
    assert [q.lease_until for q in first] == [1010.0, 1010.0]
    assert small.next(2, lease=100)[0].id not in {q.id for q in first}
    clock[0] = 1011.0
    st = small.status()
    assert st["open"]["expired"] == 2 and {e["query"] for e in st["expired_leases"]} == \
        {q.id for q in first}
    again = small.next(2, lease=10)
    assert [q.id for q in again] == [q.id for q in first]  # same queries, first in line
    assert [(q.item, q.decision) for q in again] == [(q.item, q.decision) for q in first]
    small.record([(first[0].item, "late", "yes")])  # an answer after expiry still counts
    assert small.status()["answers"] == 1


def test_next_for_a_worker_skips_items_they_labeled(tmp_path):
    camp = Campaign.create(tmp_path / "w.db", policy="optkg", items=["a", "b"], budget=6,
                           seed=0)
    qs = camp.next(2)
    camp.record([(q.item, "ann", 1) for q in qs])
    for _ in range(3):
        for q in camp.next(2, worker="ann"):
            pytest.fail(f"ann labeled both items but got {q}")
    got = camp.next(2, worker="bob")
    assert got and all(q.item in ("a", "b") for q in got)


def test_reopened_campaign_continues_identically(tmp_path):
    """State comes from the log: a copy of the file reopened mid-way makes the same next
    decisions as the object that kept running."""
    table, _ = binary_table(5, K=20)
    oracle = TableOracle(table, seed=5)
    a = Campaign.create(tmp_path / "a.db", policy="optkg", items=caps_of(table), budget=60,
                        seed=5)
    drive(a, oracle, random.Random(3), calls=6)
    a.conn.execute("PRAGMA wal_checkpoint(FULL)")
    (tmp_path / "b.db").write_bytes((tmp_path / "a.db").read_bytes())
    b = Campaign.open(tmp_path / "b.db")
    drive(a, oracle, random.Random(9))
    drive(b, oracle, random.Random(9))
    assert decided_items(a) == decided_items(b)
    assert a.status()["labels"] == b.status()["labels"]


def test_a_log_the_policy_does_not_reproduce_is_refused(tmp_path):
    camp = Campaign.create(tmp_path / "d.db", policy="optkg", items=["a", "b", "c"], budget=6,
                           seed=0)
    qs = camp.next(3)
    camp.record([(q.item, "w", 1) for q in qs])
    camp.close()
    con = sqlite3.connect(tmp_path / "d.db")
    con.execute("UPDATE decisions SET item = (item + 1) % 3 WHERE k = 1")
    con.commit()
    con.close()
    with pytest.raises(Diverged, match="decision 1"):
        Campaign.open(tmp_path / "d.db").next(1)  # a writer checks every decision
    replaying = Campaign.open(tmp_path / "d.db", readonly=True)
    replaying.use_summary = False
    with pytest.raises(Diverged, match="decision 1"):
        replaying.status()
    assert main(["campaign", "next", str(tmp_path / "d.db")]) == 6  # a store failure


def test_a_locked_file_is_a_one_line_error_and_changes_nothing(tmp_path, capsys):
    camp = Campaign.create(tmp_path / "k.db", policy="optkg", items=["a", "b"], budget=2)
    camp.conn.execute("PRAGMA busy_timeout = 50")
    other = sqlite3.connect(tmp_path / "k.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    with pytest.raises(CrowdoptError, match="locked") as e:
        camp.next(1)
    assert "\n" not in str(e.value)
    other.execute("ROLLBACK")
    other.close()
    assert len(camp.next(2)) == 2  # nothing half-done: the campaign goes on


def test_a_reader_never_waits_for_a_writer_and_a_busy_write_exits_6(tmp_path, capsys):
    db = tmp_path / "w.db"
    camp = Campaign.create(db, policy="optkg", items=["a", "b"], budget=2)
    camp.record([(q.item, "u", 1) for q in camp.next(1)])
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # a writer holds the lock
    other.execute("UPDATE campaign SET seq = seq")
    t0 = time.monotonic()
    assert main(["campaign", "status", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answers"] == 1
    assert main(["campaign", "export", str(db)]) == 0
    assert time.monotonic() - t0 < 30  # the writer was not waited for (60 s)
    assert len(capsys.readouterr().out.splitlines()) == 2
    busy = Campaign.open(db, busy_timeout=0.05)
    with pytest.raises(core.Busy, match="locked"):
        busy.next(1)
    other.execute("ROLLBACK")
    other.close()


def test_a_read_only_file_gives_status_and_export(tmp_path, capsys):
    db = tmp_path / "r.db"
    camp = Campaign.create(db, policy="optkg", items=["a", "b", "c"], budget=3)
    camp.record([(q.item, "u", 1) for q in camp.next(2)])
    camp.close()
    ro = Campaign.open(db, readonly=True)
    st = ro.status()
    assert st["answers"] == 2 and st["labelled"] == 2
    assert [r["label"] for r in st["labels"]].count(None) == 1  # never answered: no label
    assert len(ro.answers()) == 2
    with pytest.raises(InputError, match="read-only"):
        ro.next(1)
    assert main(["campaign", "export", str(db), "--what", "labels"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "task,label,confidence,answers" and len(out) == 3  # no unanswered item


def test_exports_escape_formulas_refuse_overwrite_and_write_three_formats(tmp_path, capsys):
    from crowdopt.campaign.export import csv_cell

    assert [csv_cell(x) for x in ("=cmd|' /C calc'!A0", "+1x", "-1", "-x", "@a", "a=b", 0.5)
            ] == ["'=cmd|' /C calc'!A0", "'+1x", "-1", "'-x", "'@a", "a=b", "0.5"]
    db = tmp_path / "e.db"
    camp = Campaign.create(db, policy="optkg", items=["=cmd|x", "b"], budget=2)
    camp.record([(q.item, "@w", 1) for q in camp.next(2)])
    camp.close()
    out = tmp_path / "a.csv"
    assert main(["campaign", "export", str(db), "-o", str(out)]) == 0
    assert "'=cmd|x,'@w,1" in out.read_text()
    assert main(["campaign", "export", str(db), "-o", str(out)]) == 2  # exists: refused
    assert "--force" in capsys.readouterr().err
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "target.csv")
    assert main(["campaign", "export", str(db), "-o", str(link)]) == 2
    assert not (tmp_path / "target.csv").exists()  # never written through a symlink
    assert main(["campaign", "export", str(db), "-o", str(out), "--force", "--format",
                 "jsonl"]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert {"task": "=cmd|x", "worker": "@w", "label": "1"} in rows  # JSON: as it is
    assert main(["campaign", "export", str(db), "--what", "labels", "--format",
                 "label-studio"]) == 0
    tasks = json.loads(capsys.readouterr().out)
    assert {t["data"]["item"] for t in tasks} == {"=cmd|x", "b"}
    assert tasks[0]["predictions"][0]["result"][0]["value"]["choices"] == ["1"]


def test_schema_migrations(tmp_path, monkeypatch):
    Campaign.create(tmp_path / "m.db", policy="optkg", items=["a"], budget=1).close()

    def vnext(conn):
        conn.execute("ALTER TABLE items ADD COLUMN note TEXT")
    n = len(store.MIGRATIONS)
    monkeypatch.setattr(store, "MIGRATIONS", [*store.MIGRATIONS, vnext])
    camp = Campaign.open(tmp_path / "m.db")  # migrated in place, in one transaction
    assert store.version(camp.conn) == n + 1
    assert "note" in [r[1] for r in camp.conn.execute("PRAGMA table_info(items)")]
    camp.close()
    monkeypatch.setattr(store, "MIGRATIONS", store.MIGRATIONS[:n])
    with pytest.raises(InputError, match="newer crowdopt"):
        Campaign.open(tmp_path / "m.db")
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(InputError, match="campaign file"):
        Campaign.open(other)


def test_a_version_1_file_keeps_its_answers_and_loses_its_plain_token(tmp_path):
    """Schema 1 kept the bearer token in plain text and one answer per query: migrating
    keeps every answer, stores the token's hash only, and the old token still works."""
    db = tmp_path / "v1.db"
    conn = store.connect(db)
    store.MIGRATIONS[0](conn)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (1)")
    conn.execute("INSERT INTO campaign (id, policy, params, seed, budget, batching, classes, "
                 "open_workers, token, created_at, crowdopt_version) VALUES (1, 'optkg', ?, 0, "
                 "2, 'exact', '[\"0\", \"1\"]', 1, 'old-secret', 0, 'x')",
                 (json.dumps({"rule": "optkg", "prior": [1.0, 1.0], "alpha": 0.5}),))
    conn.execute("INSERT INTO items (idx, id) VALUES (0, 'a')")
    conn.execute("INSERT INTO workers (idx, id) VALUES (0, 'u')")
    conn.execute("INSERT INTO decisions VALUES (1, 1, 'label', 0, NULL, 0)")
    conn.execute("INSERT INTO queries (id, k, pos, item, worker, round, handed, open) VALUES "
                 "(1, 1, 0, 0, NULL, 0, 1, 0)")
    conn.execute("INSERT INTO answers VALUES (2, 1, 0, 0, 1, 0)")
    conn.execute("UPDATE campaign SET seq = 2")
    conn.close()
    camp = Campaign.open(db)
    assert camp.answers() == [("a", "u", "1")]
    assert camp.conn.execute("SELECT token FROM campaign").fetchone()[0] == ""
    assert store.token_hash("old-secret") in camp.token_roles()
    camp.close()
    assert all(b"old-secret" not in p.read_bytes() for p in tmp_path.iterdir())


def test_create_validates_and_never_overwrites(tmp_path):
    p = tmp_path / "v.db"
    bad = [dict(policy="nope", items=["a"], budget=1),
           dict(policy="optkg", items=["a", "a"], budget=1),
           dict(policy="optkg", items=["a"], budget=0),
           dict(policy="optkg", items=["a"], budget=1, labels=["x", "y", "z"]),
           dict(policy="optkg", items=["a"], budget=1, params={"G1": 2}),
           dict(policy="lsol", items=["a"], budget=1),
           dict(policy="cltap", items=["a"], workers=["u"], budget=1),
           dict(policy="optkg-het", items=["a"], workers=["u"], budget=1, pairs=[("a", "v")])]
    for kw in bad:
        with pytest.raises(InputError):
            Campaign.create(p, **kw)
        assert not p.exists() and not list(tmp_path.iterdir())
    Campaign.create(p, policy="optkg", items=["a"], budget=1).close()
    with pytest.raises(InputError, match="new file"):
        Campaign.create(p, policy="optkg", items=["a"], budget=1)


# ----------------------------------------------------------------------------- CL-TAP
def test_cltap_campaign_hands_out_the_cbp_plan(tmp_path):
    from crowdopt.problems.cltap import make_instance
    from crowdopt.solvers.cltap_cbp import cbp

    acc = {"u": [0.9, 0.8, 0.7], "v": [0.6, 0.75, 0.85], "x": 0.7}
    items = [f"t{i}" for i in range(4)]
    camp = Campaign.create(tmp_path / "p.db", policy="cltap", items=items, workers=acc,
                           budget=7, seed=0)
    z = cbp(make_instance([[0.9, 0.8, 0.7], [0.6, 0.75, 0.85], [0.7] * 3], 4, 7)).task_of
    planned = {(j, k): int(z[j, k]) for j in range(3) for k in range(3) if z[j, k] >= 0}
    got = {}
    for wid, j in (("v", 1), ("u", 0), ("x", 2)):
        qs = camp.next(5, worker=wid)
        assert [q.iteration for q in qs] == list(range(len(qs)))  # her iterations in order
        got.update({(j, q.iteration): camp.item_index[q.item] for q in qs})
    assert got == planned and camp.next(3) == []
    camp.record([(q.item, q.worker, 1 if q.worker != "x" else 0) for q in camp.queries()])
    st = camp.status(gold={i: "1" for i in items})
    assert st["answers"] == 7 and st["done"]
    assert all(r["label"] in ("0", "1") and 0.5 <= r["confidence"] <= 1 for r in st["labels"]
               if r["answers"])
    assert st["gold_items"] == 4 and 0 <= st["accuracy"] <= 1


def test_cltap_plan_is_completed_after_a_crash_during_init(tmp_path):
    camp = Campaign.create(tmp_path / "p.db", policy="cltap", items=["a", "b", "c"],
                           workers={"u": [0.9, 0.8], "v": 0.7}, budget=4)
    plan = [(q.item, q.worker, q.iteration) for q in camp.queries()]
    camp.close()
    con = sqlite3.connect(tmp_path / "p.db")  # as if killed before the plan was logged
    con.execute("DELETE FROM queries")
    con.execute("DELETE FROM decisions")
    con.execute("UPDATE campaign SET seq = 0")
    con.commit()
    con.close()
    again = Campaign.open(tmp_path / "p.db")
    assert [(q.item, q.worker, q.iteration) for q in again.next(10, worker="v")] == \
        [p for p in plan if p[1] == "v"]
    assert [(q.item, q.worker, q.iteration) for q in again.queries()] == plan


# ----------------------------------------------------------------------------- CLI
def test_cli_round_trip_with_json_on_stdout(tmp_path, capsys):
    (tmp_path / "items.csv").write_text("item,max_labels\na,2\nb,2\nc,2\n")
    db = str(tmp_path / "c.db")
    assert main(["campaign", "init", db, "--policy", "optkg", "--items",
                 str(tmp_path / "items.csv"), "--budget", "5", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["items"] == 3 and (tmp_path / "c.db.token").stat().st_mode & 0o777 == 0o600
    assert main(["campaign", "next", db, "--n", "3", "--json"]) == 0
    qs = json.loads(capsys.readouterr().out)["queries"]
    assert len(qs) == 3
    lines = ["item,worker,label"] + [f"{q['item']},w{n},1" for n, q in enumerate(qs)]
    (tmp_path / "ans.csv").write_text("\n".join(lines) + "\n")
    assert main(["campaign", "record", db, str(tmp_path / "ans.csv"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["recorded"] == 3
    assert main(["campaign", "record", db, str(tmp_path / "ans.csv")]) == 0
    assert "0 stored, 0 late (paid), 3 already recorded, 0 rejected" in capsys.readouterr().out
    assert main(["campaign", "status", db, "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["answers"] == 3 and st["left"] == 2
    assert main(["campaign", "export", db, "-o", str(tmp_path / "out.csv")]) == 0
    out = (tmp_path / "out.csv").read_text().splitlines()
    assert out[0] == "task,worker,label" and len(out) == 4
    assert main(["campaign", "status", db]) == 0
    assert "budget 5: 3 spent, 0 reserved, 2 left" in capsys.readouterr().out


@pytest.mark.parametrize("argv,needle", [
    (["campaign", "init", "{db2}", "--policy", "optkg", "--items", "{items}", "--budget", "0"],
     "expected an integer >= 1"),
    (["campaign", "init", "{db}", "--policy", "optkg", "--items", "{items}", "--budget", "2"],
     "new file"),
    (["campaign", "init", "{db2}", "--policy", "lsol", "--items", "{items}", "--budget", "2"],
     "workers file"),
    (["campaign", "init", "{db2}", "--policy", "optkg", "--items", "{items}", "--budget", "2",
      "--G1", "3"], "--G1"),
    (["campaign", "next", "{db}", "--n", "0"], "integer >= 1"),
    (["campaign", "next", "{db2}"], "existing campaign file"),
    (["campaign", "record", "{db}", "{bad}"], "open query"),
    (["campaign", "record", "{db}", "{nohead}"], "column label"),
    (["campaign", "status", "{items}"], "campaign file"),
])
def test_cli_bad_input_one_line_exit_2(tmp_path, capsys, argv, needle):
    (tmp_path / "items.csv").write_text("item\na\nb\n")
    (tmp_path / "bad.csv").write_text("item,worker,label\na,w,1\n")
    (tmp_path / "nohead.csv").write_text("item,worker\na,w\n")
    db = str(tmp_path / "c.db")
    Campaign.create(db, policy="optkg", items=["a", "b"], budget=2).close()
    names = {"db": db, "db2": str(tmp_path / "n.db"), "items": str(tmp_path / "items.csv"),
             "bad": str(tmp_path / "bad.csv"), "nohead": str(tmp_path / "nohead.csv")}
    code = main([a.format(**names) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_serve_without_the_extra_says_how_to_install(tmp_path, capsys, monkeypatch):
    Campaign.create(tmp_path / "c.db", policy="optkg", items=["a"], budget=1).close()
    monkeypatch.setitem(__import__("sys").modules, "uvicorn", None)
    assert main(["campaign", "serve", str(tmp_path / "c.db")]) == 2
    err = capsys.readouterr().err.strip()
    assert "pip install 'crowdopt[serve]'" in err and len(err.splitlines()) == 1


def test_errors_are_crowdopt_errors():
    assert issubclass(Diverged, CrowdoptError)


def test_cli_status_json_pages_as_the_api_and_refuses_paging_the_text(tmp_path, capsys):
    db = tmp_path / "p.db"
    camp = Campaign.create(db, policy="optkg", items=[f"i{k}" for k in range(12)], budget=12,
                           seed=1, batching="fill")
    qs = camp.next(12)
    camp.record([(q.item, f"w{k % 5}", k % 2) for k, q in enumerate(qs)])
    camp.close()
    reader = Campaign.open(db, readonly=True)
    for argv, kw in (([], {}), (["--limit", "3"], {"limit": 3}),
                     (["--offset", "10", "--limit", "4"], {"offset": 10, "limit": 4}),
                     (["--offset", "99"], {"offset": 99})):
        assert main(["campaign", "status", str(db), "--json", *argv]) == 0
        doc = json.loads(capsys.readouterr().out)
        want = reader.status(**kw)
        for x in ("answers_per_minute", "eta_seconds", "rate_window_seconds"):  # the clock
            doc.pop(x), want.pop(x)
        assert doc == want
    assert len(doc["labels"]) == 0 and doc["page"]["labels_total"] == 12
    for argv in (["--limit", "3"], ["--offset", "1"]):
        assert main(["campaign", "status", str(db), *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert "only with --json" in err and len(err.splitlines()) == 1
