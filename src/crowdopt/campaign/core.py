"""`Campaign`: a live labeling campaign over one SQLite file (see `store` for the schema).

State. The policy state is a deterministic function of (policy, parameters, seed, the ordered
log of decisions and answers): `Campaign.open` rebuilds it by replaying the log into a fresh
policy object, checking that the policy reproduces every logged decision, and every operation
first catches up with the events other processes appended (event numbers are monotone).
Nothing is pickled; a damaged or foreign log is refused (`Diverged`).

Operations. `next` and `record` are each one transaction holding the write lock
(`BEGIN IMMEDIATE`): catch up, decide or validate, write, commit; `status`, `queries` and
`answers` read one consistent snapshot (`BEGIN`). The in-memory state
is a cache of the file: it changes only with what is committed, and any failure drops it (the
next call rebuilds it from the file). So two processes calling `next`/`record` at once are
serialized by SQLite: a query is handed to one caller at a time, an answer counts once, and
the result equals some one-at-a-time order of the same calls.

Leases. `next` hands out a query with a lease (`lease` seconds). A leased query is not handed
out again while its lease runs; an expired lease makes the query available again: the SAME
query (same decision, same item, same worker when the policy chose one) goes to the next
caller; the policy is not asked again and never sees the expiry. An answer is accepted for an
open query whether its lease ran out or not, and an any-worker query (homogeneous Opt-KG) from
any worker; the first answer closes the query.

Answers. One answer per (item, worker). Recording the same (item, worker, label) again is a
no-op; a different label for a recorded (item, worker), an answer to a query never handed out,
an unknown item / worker / label rejects the whole batch (nothing is applied).
"""

from __future__ import annotations

import json
import math
import os
import secrets
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CrowdoptError, InputError
from ..version import __version__
from . import drivers as dv
from . import store

DEFAULT_LEASE = 600.0


def _now() -> float:
    """The clock of leases (Unix time; tests replace it)."""
    return time.time()


class StoreError(CrowdoptError):
    """SQLite could not complete an operation (it was rolled back as a whole)."""


@dataclass(frozen=True)
class Query:
    """A label to collect: `item`, and `worker` when the policy chose one (None: anyone)."""

    id: int
    item: str
    worker: str | None
    decision: int  # the policy decision k (1, 2, ...) the query belongs to
    round: int  # earlier queries on the same item (0: its first label)
    lease_until: float  # Unix time
    iteration: int | None = None  # CL-TAP: the worker's iteration (0-based) for this label

    def to_dict(self) -> dict:
        d = {"query": self.id, "item": self.item, "worker": self.worker,
             "decision": self.decision, "round": self.round, "lease_until": self.lease_until}
        if self.iteration is not None:
            d["iteration"] = self.iteration
        return d


@dataclass
class _Dec:
    k: int
    seq: int
    p: dv.Proposal
    qids: list[int]
    labels: list[int | None]

    def complete(self) -> bool:
        return all(x is not None for x in self.labels)


class _Mem:
    """The in-memory state: a cache of the file up to event `seq`."""

    def __init__(self, drv: dv.Driver):
        self.seq = 0
        self.A = drv  # the committed policy timeline
        self.S: dv.Driver | None = None  # what-if copy for decisions ahead of answers
        self.S_known = -1
        self.known = 0  # answers seen (the what-if copy is stale when this grew)
        self.decs: list[_Dec] = []
        self.q: dict[int, tuple[int, int]] = {}  # query id -> (k, pos)
        self.applied = 0  # exact: decisions applied to A (a prefix)
        self.open_item: dict[int, int] = {}  # any-worker query open on item -> query id
        self.open_pair: dict[tuple[int, int], int] = {}
        self.answered: dict[tuple[int, int], int] = {}  # (item, worker) -> label
        self.rounds: list[int] = []
        self.n_queries = 0
        self.exhausted = False


class Campaign:
    """A live campaign in a SQLite file. Create with `Campaign.create`, reopen with
    `Campaign.open`; `next(n)` hands out queries, `record(rows)` stores answers, `status()`
    reports. Safe to use from several processes at once (each with its own object)."""

    def __init__(self, path: Path, conn: sqlite3.Connection):
        self.path = path
        self.conn = conn
        row = conn.execute("SELECT policy, params, seed, budget, batching, classes, "
                           "open_workers, token, created_at, crowdopt_version FROM campaign"
                           ).fetchone()
        if row is None:
            raise InputError("DB", "a campaign file (init did not complete)", str(path))
        (self.policy, params, self.seed, self.budget, self.batching, classes, ow, self._token,
         self.created_at, self.created_by) = row
        self.params: dict = json.loads(params)
        self.classes: list[str] = json.loads(classes)
        self.open_workers = bool(ow)
        self.item_ids = [r[0] for r in conn.execute("SELECT id FROM items ORDER BY idx")]
        self.caps = [r[0] for r in conn.execute("SELECT max_labels FROM items ORDER BY idx")]
        self.item_index = {s: i for i, s in enumerate(self.item_ids)}
        self.worker_ids: list[str] = []
        self.worker_data: list[Any] = []
        self.worker_index: dict[str, int] = {}
        self._load_workers()
        self.n_fixed_workers = len(self.worker_ids)
        self.class_index = {c: i for i, c in enumerate(self.classes)}
        pr = [tuple(r) for r in conn.execute("SELECT item, worker FROM pairs")]
        self.pairs = np.array(pr, dtype=np.int64) if pr else None
        self._mem: _Mem | None = None
        self._dirty = False

    # ------------------------------------------------------------------ construction
    @classmethod
    def create(cls, path: str | os.PathLike, *, policy: str, items: Any, budget: int,
               workers: Any = None, seed: int = 0, batching: str = "exact",
               labels: Sequence[Any] | None = None, pairs: Any = None,
               params: Mapping[str, Any] | None = None) -> Campaign:
        """A new campaign file (refuses an existing path).

        items: an items CSV (column item/task/..., optional max_labels), 'dataset:NAME' (its
        tasks, max_labels = its labels per task) or a list of ids. workers: a workers CSV
        (column worker, optional accuracy for cltap), 'dataset:NAME', a list of ids, or None
        (optkg only: workers are registered by their first answer). labels: the class values
        (binary policies: negative then positive; default 0,1). pairs (optkg-het): the allowed
        (item, worker) pairs (CSV, 'dataset:NAME' or a list of pairs; default all). params:
        policy options (see `crowdopt campaign init --help`)."""
        from . import io as cio

        path = Path(path)
        if path.exists():
            raise InputError("DB", "a new file (init never overwrites)", str(path))
        if policy not in dv.POLICIES:
            raise InputError("--policy", f"one of {', '.join(dv.POLICIES)}", policy)
        if batching not in dv.BATCHING:
            raise InputError("--batching", f"one of {', '.join(dv.BATCHING)}", batching)
        if isinstance(budget, bool) or not isinstance(budget, int | np.integer) or budget < 1:
            raise InputError("--budget", "an integer >= 1 (labels to buy)", budget)
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise InputError("--seed", "an integer >= 0", seed)
        item_rows = cio.read_items(items)
        worker_rows = cio.read_workers(workers, need_accuracy=policy == "cltap")
        if policy != "optkg" and not worker_rows:
            raise InputError("--workers", f"a workers file for policy {policy}", None)
        classes = cio.parse_classes(labels, policy)
        full = cio.policy_params(policy, dict(params or {}), len(classes))
        ids = [r[0] for r in item_rows]
        wids = [r[0] for r in worker_rows]
        pair_idx = None
        if pairs is not None:
            if policy != "optkg-het":
                raise InputError("--pairs", "pairs only with policy optkg-het", policy)
            pair_idx = cio.read_pairs(pairs, ids, wids)
        accuracy = None
        if policy == "cltap":
            accuracy = cio.accuracy_matrix(worker_rows, len(ids))
            dv.cltap_plan(accuracy, len(ids), int(budget), full["p_max"])  # validates
        if policy != "optkg" and any(r[1] is not None for r in item_rows):
            if not (isinstance(items, str) and items.startswith("dataset:")):
                raise InputError("items: max_labels", "a per-item cap only with policy optkg",
                                 policy)
            item_rows = [(r[0], None) for r in item_rows]  # pairs / workers bound the labels
        tmp = path.with_name(f".{path.name}.init-{os.getpid()}")
        for suffix in ("", "-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
        conn = store.connect(tmp)
        try:
            store.migrate(conn, tmp, create=True)
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "INSERT INTO campaign (id, policy, params, seed, budget, batching, classes, "
                "open_workers, token, created_at, crowdopt_version) VALUES "
                "(1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (policy, json.dumps(full), int(seed), int(budget), batching,
                 json.dumps(classes), int(not worker_rows), secrets.token_urlsafe(24),
                 time.time(), __version__))
            conn.executemany("INSERT INTO items (idx, id, max_labels) VALUES (?, ?, ?)",
                             [(i, r[0], r[1]) for i, r in enumerate(item_rows)])
            conn.executemany("INSERT INTO workers (idx, id, data) VALUES (?, ?, ?)",
                             [(j, r[0], None if r[1] is None else json.dumps(r[1]))
                              for j, r in enumerate(worker_rows)])
            if pair_idx is not None:
                conn.executemany("INSERT INTO pairs (item, worker) VALUES (?, ?)",
                                 [tuple(map(int, p)) for p in pair_idx])
            conn.execute("COMMIT")
            conn.close()
            os.replace(tmp, path)  # the campaign appears complete or not at all
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.close()
            for suffix in ("", "-wal", "-shm"):
                Path(str(tmp) + suffix).unlink(missing_ok=True)
            raise
        camp = cls.open(path)
        if policy == "cltap":  # the whole plan is decided offline: log it now
            camp._plan_all()
        return camp

    @classmethod
    def open(cls, path: str | os.PathLike) -> Campaign:
        """Open a campaign file (migrating an older schema in place)."""
        path = Path(path)
        if not path.is_file():
            raise InputError("DB", "an existing campaign file", str(path))
        try:
            conn = store.connect(path)
        except sqlite3.DatabaseError as exc:
            raise InputError("DB", "a campaign file", f"{path} ({exc})") from None
        try:
            store.migrate(conn, path)
            return cls(path, conn)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise InputError("DB", "a campaign file", f"{path} ({exc})") from None
        except BaseException:
            conn.close()
            raise

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Campaign:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def token(self) -> str:
        """The bearer token of the HTTP service (`crowdopt campaign serve`)."""
        return self._token

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def _tx(self, write: bool = True) -> Iterator[_Mem]:
        try:
            self.conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            mem = self._catch_up()
            yield mem
            self.conn.execute("COMMIT")
        except BaseException as exc:
            try:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if self._dirty:  # memory may be ahead of the file: rebuild on the next call
                self._mem = None
            if isinstance(exc, sqlite3.Error):  # e.g. locked beyond the busy timeout
                raise StoreError(f"campaign file {self.path}: {exc} (nothing was changed)"
                                 ) from None
            raise
        finally:
            self._dirty = False

    def _load_workers(self) -> None:
        for idx, wid, data in self.conn.execute(
                "SELECT idx, id, data FROM workers WHERE idx >= ? ORDER BY idx",
                (len(self.worker_ids),)):
            assert idx == len(self.worker_ids)
            self.worker_ids.append(wid)
            self.worker_data.append(None if data is None else json.loads(data))
            self.worker_index[wid] = idx

    def _new_driver(self) -> dv.Driver:
        acc = None
        if self.policy == "cltap":
            from . import io as cio
            acc = cio.accuracy_matrix([(w, d) for w, d in zip(self.worker_ids, self.worker_data)],
                                      len(self.item_ids))
        return dv.build(self.policy, self.params, self.seed, self.budget, len(self.item_ids),
                        self.n_fixed_workers, self.caps, self.pairs, acc,
                        self.batching == "fill")

    def _catch_up(self) -> _Mem:
        """Apply the events appended since this object last looked (by any process)."""
        mem = self._mem
        if mem is None:
            mem = _Mem(self._new_driver())
            mem.rounds = [0] * len(self.item_ids)
            self._mem = mem
        (cur,) = self.conn.execute("SELECT seq FROM campaign").fetchone()
        if cur == mem.seq:
            return mem
        self._dirty = True
        self._load_workers()
        decs = self.conn.execute(
            "SELECT k, seq, kind, item, data FROM decisions WHERE seq > ? ORDER BY seq",
            (mem.seq,)).fetchall()
        qs: dict[int, list] = {}
        if decs:
            for qid, k, item, worker in self.conn.execute(
                    "SELECT id, k, item, worker FROM queries WHERE k >= ? ORDER BY k, pos",
                    (decs[0][0],)):
                qs.setdefault(k, []).append((qid, item, worker))
        ans = self.conn.execute(
            "SELECT seq, query, item, worker, label FROM answers WHERE seq > ? ORDER BY seq",
            (mem.seq,)).fetchall()
        events = sorted([(d[1], 0, d) for d in decs] + [(a[0], 1, a) for a in ans])
        for _, kind, ev in events:
            if kind == 0:
                k, seq, dkind, item, data = ev
                rows = qs[k]
                p = dv.Proposal(dkind, item, tuple(w for _, _, w in rows),
                                json.loads(data) if data else {})
                self._add_decision(mem, k, seq, p, [r[0] for r in rows])
            else:
                seq, qid, item, worker, label = ev
                self._add_answer(mem, qid, item, worker, label)
        mem.seq = cur
        mem.S = None  # other processes' events: rebuild the what-if copy when needed
        self._advance(mem)
        self._dirty = False
        return mem

    def _add_decision(self, mem: _Mem, k: int, seq: int, p: dv.Proposal, qids: list[int],
                      *, own: bool = False) -> None:
        if k != len(mem.decs) + 1:
            raise dv.Diverged(f"campaign log: decision {k} follows {len(mem.decs)}")
        d = _Dec(k, seq, p, qids, [None] * len(qids))
        mem.decs.append(d)
        for pos, qid in enumerate(qids):
            mem.q[qid] = (k, pos)
            w = p.workers[pos]
            if w is None:
                mem.open_item[p.item] = qid
            else:
                mem.open_pair[(p.item, w)] = qid
        mem.rounds[p.item] += len(qids)
        mem.n_queries += len(qids)
        if self.batching == "fill" and not own:
            dv.check(mem.A.propose(), p, k)
            mem.A.hold(p)

    def _add_answer(self, mem: _Mem, qid: int, item: int, worker: int, label: int) -> None:
        k, pos = mem.q[qid]
        d = mem.decs[k - 1]
        d.labels[pos] = label
        if d.p.workers[pos] is None:
            mem.open_item.pop(item, None)
        else:
            mem.open_pair.pop((item, worker), None)
        mem.answered[(item, worker)] = label
        mem.known += 1
        if self.batching == "fill" and d.complete():
            mem.A.apply(d.p, d.labels)
            mem.applied += 1  # fill: decisions applied (in answer order), not a prefix

    def _advance(self, mem: _Mem) -> None:
        """Exact batching: apply decisions to the committed policy in decision order, as far
        as their answers are all in (answers that came early wait for the ones before)."""
        if self.batching == "fill":
            return
        while mem.applied < len(mem.decs) and mem.decs[mem.applied].complete():
            d = mem.decs[mem.applied]
            dv.check(mem.A.propose(), d.p, d.k)
            mem.A.apply(d.p, d.labels)
            mem.applied += 1

    def _whatif(self, mem: _Mem) -> dv.Driver:
        """The committed policy, cloned and run through the decisions still waiting for
        answers: answers known are applied, unknown ones are pending."""
        S = mem.A.clone()
        for d in mem.decs[mem.applied:]:
            if not S.determined():
                raise dv.Diverged(f"campaign log: decision {d.k} was handed out before the "
                                  "answers it depends on")
            dv.check(S.propose(), d.p, d.k)
            if d.complete():
                S.apply(d.p, d.labels)
            else:
                S.pend(d.p)
        return S

    # ------------------------------------------------------------------ decisions
    def _decide(self, mem: _Mem) -> dv.Proposal | None:
        """The next decision, or None (budget spent, policy exhausted, or - exact batching -
        the next decision depends on answers not in yet)."""
        left = self.budget - mem.n_queries
        if left <= 0:
            return None
        if self.batching == "fill":
            drv = mem.A
            if drv.size() > left:
                return None
            p = drv.propose()
            if p is None:
                mem.exhausted = True
            else:
                drv.hold(p)
            return p
        for _ in range(2):
            if mem.S is None:
                mem.S, mem.S_known = self._whatif(mem), mem.known
            S = mem.S
            if S.determined():
                if S.size() > left:
                    return None
                p = S.propose()
                if p is None:
                    mem.exhausted = True
                else:
                    S.pend(p)
                return p
            if mem.S_known == mem.known:
                return None  # waiting for answers
            mem.S = None  # answers came in since: a fresh copy may decide
        return None

    def _plan_all(self) -> None:
        with self._tx() as mem:
            self._plan_rest(mem)

    def _plan_rest(self, mem: _Mem) -> None:
        """CL-TAP: log every decision of the offline plan not logged yet (init does it; a
        crash right after init's file appeared leaves it to the first `next`)."""
        self._dirty = True
        seq = mem.seq
        now = _now()
        while True:
            p = self._decide(mem)
            if p is None:
                break
            seq += 1
            self._log_decision(mem, seq, p, now)
        if seq != mem.seq:
            self.conn.execute("UPDATE campaign SET seq = ?", (seq,))
            mem.seq = seq

    def _log_decision(self, mem: _Mem, seq: int, p: dv.Proposal, now: float) -> list[int]:
        k = len(mem.decs) + 1
        self.conn.execute("INSERT INTO decisions (k, seq, kind, item, data, created_at) "
                          "VALUES (?, ?, ?, ?, ?, ?)",
                          (k, seq, p.kind, p.item, json.dumps(p.data) if p.data else None, now))
        r0 = mem.rounds[p.item]
        qids = []
        for pos, w in enumerate(p.workers):
            cur = self.conn.execute("INSERT INTO queries (k, pos, item, worker, round) "
                                    "VALUES (?, ?, ?, ?, ?)", (k, pos, p.item, w, r0 + pos))
            qids.append(int(cur.lastrowid))
        self._add_decision(mem, k, seq, p, qids, own=True)
        return qids

    # ------------------------------------------------------------------ next
    def next(self, n: int = 1, *, worker: Any = None, lease: float | None = None) -> list[Query]:
        """Up to `n` queries to hand out now, leased for `lease` seconds (default 600).

        Queries whose lease expired come first (the same queries again), then new policy
        decisions. With `worker`, only queries that worker may answer: the ones the policy
        chose for them, or any-worker queries on items they have not labeled. Fewer than `n`
        (possibly none) when the budget is spent, the policy has nothing left, or - batching
        'exact' - the next decision depends on answers not recorded yet."""
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise InputError("n", "an integer >= 1", n)
        lease = DEFAULT_LEASE if lease is None else lease
        if isinstance(lease, bool) or not isinstance(lease, int | float) or not \
                (math.isfinite(lease) and lease > 0):
            raise InputError("lease", "a number of seconds > 0", lease)
        w_txt = None if worker is None else str(worker)
        with self._tx() as mem:
            w_idx = self._caller(w_txt)
            if self.policy == "cltap" and not mem.exhausted:
                self._plan_rest(mem)
            now = _now()
            out: list[tuple[int, int, int, int | None, int]] = []  # (qid, k, item, w, round)
            for qid, k, item, w, rnd in self.conn.execute(
                    "SELECT id, k, item, worker, round FROM queries WHERE open = 1 AND "
                    "(lease_until IS NULL OR lease_until < ?) ORDER BY id", (now,)):
                if len(out) >= n:
                    break
                if self._eligible(mem, item, w, w_txt, w_idx):
                    out.append((qid, k, item, w, rnd))
            blocked = False
            seq = mem.seq
            while len(out) < n and not blocked:
                self._dirty = True
                p = self._decide(mem)
                if p is None:
                    break
                seq += 1
                qids = self._log_decision(mem, seq, p, now)
                rnd = mem.rounds[p.item] - len(qids)
                for pos, (qid, w) in enumerate(zip(qids, p.workers)):
                    if len(out) < n and self._eligible(mem, p.item, w, w_txt, w_idx):
                        out.append((qid, mem.q[qid][0], p.item, w, rnd + pos))
                    else:
                        blocked = True  # work for other workers waits: decide no further
            if seq != mem.seq:
                self.conn.execute("UPDATE campaign SET seq = ?", (seq,))
                mem.seq = seq
            until = now + float(lease)
            self.conn.executemany(
                "UPDATE queries SET handed = handed + 1, lease_until = ?, leased_to = ? "
                "WHERE id = ?", [(until, w_txt, q[0]) for q in out])
        return [self._query(mem, qid, k, item, w, rnd, until) for qid, k, item, w, rnd in out]

    def _caller(self, w_txt: str | None) -> int | None:
        if w_txt is None:
            return None
        idx = self.worker_index.get(w_txt)
        if idx is None and not self.open_workers:
            raise InputError("worker", "a worker of the campaign", w_txt)
        return idx

    def _eligible(self, mem: _Mem, item: int, w: int | None, w_txt: str | None,
                  w_idx: int | None) -> bool:
        if w_txt is None:
            return True
        if w is not None:
            return w == w_idx
        return w_idx is None or (item, w_idx) not in mem.answered

    def _query(self, mem: _Mem, qid: int, k: int, item: int, w: int | None, rnd: int,
               until: float) -> Query:
        d = mem.decs[k - 1]
        return Query(qid, self.item_ids[item], None if w is None else self.worker_ids[w], k,
                     rnd, until, d.p.data.get("iteration"))

    # ------------------------------------------------------------------ record
    def record(self, rows: Iterable[Any]) -> dict:
        """Store answers: rows of (item, worker, label) (tuples or mappings). All or nothing:
        an invalid row rejects the whole batch. Returns counts: rows, recorded, duplicates."""
        from . import io as cio

        parsed = cio.answer_rows(rows)
        with self._tx() as mem:
            now = _now()
            new_workers: dict[str, int] = {}
            todo: list[tuple[int, int, int, int]] = []  # (qid, item, worker, label)
            ctx: list[tuple[str, str, str]] = []  # (where, item, worker) of each todo row
            seen: dict[tuple[int, int], int] = {}
            dups = 0
            for where, item_txt, w_txt, lab_txt in parsed:
                item = self.item_index.get(item_txt)
                if item is None:
                    raise InputError(f"{where}: item", "an item of the campaign", item_txt)
                label = self.class_index.get(lab_txt)
                if label is None:
                    raise InputError(f"{where}: label", "one of " + ", ".join(self.classes),
                                     lab_txt)
                w = self.worker_index.get(w_txt, new_workers.get(w_txt))
                if w is None:
                    if not self.open_workers:
                        raise InputError(f"{where}: worker", "a worker of the campaign", w_txt)
                    w = new_workers[w_txt] = len(self.worker_ids) + len(new_workers)
                key = (item, w)
                prev = mem.answered.get(key, seen.get(key))
                if prev is not None:
                    if prev != label:
                        raise InputError(
                            f"{where}: label", f"{self.classes[prev]!r} (item {item_txt!r}, "
                            f"worker {w_txt!r} already answered it)", lab_txt,
                            note="one answer per item and worker; nothing was recorded")
                    dups += 1
                    continue
                qid = mem.open_pair.get(key)
                if qid is None:
                    qid = mem.open_item.get(item)
                    if qid is not None and any(q[0] == qid for q in todo):
                        qid = None  # that query is taken by an earlier row of this batch
                if qid is None:
                    raise InputError(f"{where}", "an answer to an open query",
                                     f"item {item_txt!r}, worker {w_txt!r}",
                                     note="no query for it was handed out or it is answered; "
                                     "nothing was recorded")
                seen[key] = label
                todo.append((qid, item, w, label))
                ctx.append((where, item_txt, w_txt))
            if todo:
                handed = dict(self.conn.execute(
                    f"SELECT id, handed FROM queries WHERE id IN ({','.join('?' * len(todo))})",
                    [t[0] for t in todo]).fetchall())
                for (qid, _, _, _), (where, item_txt, w_txt) in zip(todo, ctx):
                    if not handed.get(qid):
                        raise InputError(f"{where}", "an answer to a query handed out",
                                         f"item {item_txt!r}, worker {w_txt!r}",
                                         note="its query was never handed out; nothing was "
                                         "recorded")
            self._dirty = True
            for wid, idx in sorted(new_workers.items(), key=lambda x: x[1]):
                self.conn.execute("INSERT INTO workers (idx, id) VALUES (?, ?)", (idx, wid))
            seq = mem.seq
            for qid, item, w, label in todo:
                seq += 1
                self.conn.execute("INSERT INTO answers (seq, query, item, worker, label, "
                                  "recorded_at) VALUES (?, ?, ?, ?, ?, ?)",
                                  (seq, qid, item, w, label, now))
                self.conn.execute("UPDATE queries SET open = 0 WHERE id = ?", (qid,))
            if todo:
                self.conn.execute("UPDATE campaign SET seq = ?", (seq,))
            self._load_workers()
            for qid, item, w, label in todo:
                self._add_answer(mem, qid, item, w, label)
            mem.seq = seq
            self._advance(mem)
        return {"rows": len(parsed), "recorded": len(todo), "duplicates": dups}

    # ------------------------------------------------------------------ reading
    def queries(self, *, open_only: bool = False) -> list[Query]:
        """Queries decided so far (open_only: handed out and not answered yet), in order."""
        with self._tx(write=False) as mem:
            sql = "SELECT id, k, item, worker, round, lease_until FROM queries"
            if open_only:
                sql += " WHERE open = 1 AND handed > 0"
            rows = self.conn.execute(sql + " ORDER BY id").fetchall()
            return [self._query(mem, qid, k, item, w, rnd, until or 0.0)
                    for qid, k, item, w, rnd, until in rows]

    def answers(self) -> list[tuple[str, str, str]]:
        """Recorded answers as (item, worker, label) in the order they were recorded."""
        with self._tx(write=False):
            rows = self.conn.execute("SELECT item, worker, label FROM answers ORDER BY seq"
                                     ).fetchall()
        return [(self.item_ids[i], self.worker_ids[w], self.classes[y]) for i, w, y in rows]

    def status(self, *, gold: Mapping[str, Any] | str | os.PathLike | None = None) -> dict:
        """Budget spent / left, current labels with their posterior confidence, worker
        reliabilities, leases (open, expired). `gold` (a mapping item -> label, a gold CSV or
        a data set name such as 'dataset:rte') adds `accuracy`."""
        from .report import status

        if gold is not None and not isinstance(gold, Mapping):
            from .io import read_gold_map

            gold = read_gold_map(gold)
        with self._tx(write=False) as mem:
            return status(self, mem, gold, _now())

    def __repr__(self) -> str:
        return f"Campaign({str(self.path)!r}, policy={self.policy!r}, budget={self.budget})"


__all__ = ["Campaign", "Query", "CrowdoptError"]
