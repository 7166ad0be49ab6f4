"""`Campaign`: a live labeling campaign over a store (a SQLite file or a PostgreSQL campaign;
see `store` for the tables and the interface).

State. The policy state is a deterministic function of (policy, parameters, seed, the ordered
log of decisions and answers): `Campaign.open` rebuilds it by replaying the log into a fresh
policy object, checking that the policy reproduces every logged decision, and every operation
first catches up with the events other processes appended (event numbers are monotone).
Nothing is pickled; a damaged or foreign log is refused (`Diverged`).

Operations. `next` and `record` are each one transaction holding the campaign's write lock
(the store serializes the writers of a campaign: SQLite's file lock, a lock on PostgreSQL's
campaign row): catch up, decide or validate, write, commit; `status`, `queries` and `answers`
read one consistent snapshot. The in-memory state is a cache of the store: it changes only
with what is committed, and any failure drops it (the next call rebuilds it from the store).
So two processes (or servers) calling `next`/`record` at once are serialized: a query is
handed to one caller at a time, an answer counts once, and the result equals some
one-at-a-time order of the same calls. A transaction the database refuses as not
serializable (`store.Conflict`) is run again from the start, on state read anew.

Hand-outs and leases. `next` hands out a query with a lease (`lease` seconds) and a late
window (`late_window` seconds after the lease, default the lease length again). A leased query
is not handed out again while its lease runs; an expired lease makes the query available
again: the SAME query (same decision, same item, same worker when the policy chose one) goes
to the next caller; the policy is not asked again and never sees the expiry. Each hand-out may
yield at most ONE paid answer, until its late window closes, and only from the worker it was
handed to (a hand-out to nobody in particular: from any worker; a query that names a worker:
from that worker). The first paid answer of a query closes it (`stored`); a further hand-out
of an any-worker query (homogeneous Opt-KG) still inside its late window may yield one more
(`late`). An answer with no hand-out left for it is `rejected`, never stored or counted.

Budget. spent = stored + late answers; reserved = one label per open query, plus one per
further hand-out still inside its late window; left = budget - spent - reserved. A new
decision is made only within `left`, and a re-issue that could add a paid answer (its query
has a hand-out still inside its late window) only when `left` >= 1: spent never exceeds the
budget, whatever the answers do. A re-issue after every late window of its query closed adds
nothing (the query's label is reserved already) and is always made.

Answers. `record` returns an outcome per row and never lets a bad row block the others:
`stored`, `duplicate` (the same (item, worker, label) again: an idempotent re-send), `late`
(kept, counted in the spend, the labels and the exports; the policy observes it as an extra
label), `rejected` (with the one-line reason: unknown item / worker / label, a different label
for a recorded (item, worker), no hand-out left for it: never handed out, handed to another
worker, already paid, or its late window closed). One answer per (item, worker).

Late answers and the policy. A late answer with event number s is observed by the committed
policy right after every decision logged before s, before any decision logged after s (batching
exact: a merge by event number, whatever order answers arrive in; fill: in arrival order), and
the what-if copy does the same, so decisions stay a function of the log.
"""

from __future__ import annotations

import functools
import json
import math
import os
import random
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CrowdoptError, InputError
from . import store, stores
from .store import Busy, StoreError


class _Drivers:
    """The `drivers` module, imported on first use: it brings the policies (and scipy), which
    a status read from the file's summary does not need."""

    def __getattr__(self, name: str) -> Any:
        global dv
        from . import drivers

        dv = drivers  # from now on the module itself
        return getattr(drivers, name)


dv = _Drivers()

DEFAULT_LEASE = 600.0
CONFLICT_TRIES = 8  # a write the database refuses as not serializable is tried this often


def _now() -> float:
    """The clock of leases (Unix time; tests replace it)."""
    return time.time()


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
        """The query as JSON (what `campaign next --json` prints)."""
        d = {"query": self.id, "item": self.item, "worker": self.worker,
             "decision": self.decision, "round": self.round, "lease_until": self.lease_until}
        if self.iteration is not None:
            d["iteration"] = self.iteration
        return d


class _Decisions:
    """The logged decisions as columns of plain values: no Python object per decision, so
    the garbage collector's full passes (which visit every live container) do not grow
    with the campaign (an object per decision made them take 0.1-0.5 s at 70k decisions,
    stalling the server). Decisions are numbered k = 1, 2, ...; tuples of ints are left
    untracked by the collector."""

    def __init__(self) -> None:
        self.seq: list[int] = []
        self.props: list[tuple] = []  # (kind, item, workers, data or None)
        self.qids: list[tuple[int, ...]] = []
        self.labels: list[tuple] = []  # per query slot: class index, None until answered

    def __len__(self) -> int:
        return len(self.seq)

    def append(self, seq: int, p: dv.Proposal, qids: list[int]) -> None:
        """Log decision len + 1 (event `seq`) with its query ids."""
        self.seq.append(seq)
        self.props.append((p.kind, p.item, tuple(p.workers), p.data or None))
        self.qids.append(tuple(qids))
        self.labels.append((None,) * len(qids))

    def proposal(self, k: int) -> dv.Proposal:
        """Decision k as the policy's `Proposal`."""
        kind, item, workers, data = self.props[k - 1]
        return dv.Proposal(kind, item, workers, {} if data is None else data)

    def worker(self, k: int, pos: int) -> int | None:
        """The worker of slot `pos` of decision k (None: any worker)."""
        return self.props[k - 1][2][pos]

    def set_label(self, k: int, pos: int, label: int) -> None:
        """The answer of slot `pos` of decision k."""
        t = self.labels[k - 1]
        self.labels[k - 1] = t[:pos] + (label,) + t[pos + 1:]

    def complete(self, k: int) -> bool:
        """Whether every slot of decision k is answered."""
        return None not in self.labels[k - 1]


class _Mem:
    """The in-memory state: a cache of the file up to event `seq`."""

    def __init__(self, drv: dv.Driver):
        self.seq = 0
        self.A = drv  # the committed policy timeline
        self.S: dv.Driver | None = None  # what-if copy for decisions ahead of answers
        self.S_known = -1
        self.known = 0  # answers seen (the what-if copy is stale when this grew)
        self.decs = _Decisions()
        self.q: dict[int, tuple[int, int]] = {}  # query id -> (k, pos)
        self.applied = 0  # exact: decisions applied to A (a prefix)
        self.open_item: dict[int, int] = {}  # any-worker query open on item -> query id
        self.open_pair: dict[tuple[int, int], int] = {}
        self.answered: dict[tuple[int, int], int] = {}  # (item, worker) -> label
        self.rounds: list[int] = []
        self.n_queries = 0
        self.exhausted = False
        self.closed_any: set[int] = set()  # items with an answered any-worker query
        self.late: list[tuple[int, int, int, int]] = []  # (seq, item, worker, label) not applied
        self.n_late = 0
        self.extra = 0  # reserved beyond one per open query (set by next from the hand-outs)
        self.log = AnswerLog()  # every answer in event order (status reads it, not the file)


class AnswerLog:
    """The answers as growing numpy columns (item, worker, label, late, time), appended as
    they are committed or caught up, so a status costs no scan of the answers table."""

    def __init__(self) -> None:
        self.n = 0
        self.cols = np.zeros((5, 1024))

    def add(self, item: int, worker: int, label: int, late: bool, at: float) -> None:
        """Append one answer (item, worker, label, late, time)."""
        if self.n == self.cols.shape[1]:
            self.cols = np.concatenate([self.cols, np.zeros_like(self.cols)], axis=1)
        self.cols[:, self.n] = (item, worker, label, late, at)
        self.n += 1

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The columns (item, worker, label, late, time) of the answers so far."""
        c = self.cols[:, :self.n]
        i = c[:3].astype(np.int64)
        return i[0], i[1], i[2], c[3] > 0, c[4]


class Campaign:
    """A live campaign in a store (a SQLite file, or a campaign of a PostgreSQL database).
    Create with `Campaign.create`, reopen with `Campaign.open`; `next(n)` hands out queries,
    `record(rows)` stores answers, `status()` reports. Safe to use from several processes
    (and servers) at once, each with its own object."""

    def __init__(self, st: store.CampaignStore):
        self.store = st
        self.path = st.location  # a Path (SQLite) or the URL without its password
        self.readonly = st.readonly
        self.new_tokens: dict[str, str] = {}  # the plain tokens `create` made (never stored)
        row = st.campaign_row()
        if row is None:
            raise InputError("DB", "a campaign file (init did not complete)", str(self.path))
        (self.policy, params, self.seed, self.budget, self.batching, classes, ow,
         self.created_at, self.created_by, name) = row
        self.params: dict = json.loads(params)
        self.classes: list[str] = json.loads(classes)
        self.has_summary = st.version() >= 3  # (an old read-only file: not)
        self.name = name or st.default_name
        self.open_workers = bool(ow)
        # the item and worker tables are read on first use (a status names a page of them)
        self._items: tuple[list[str], list[int | None]] | None = None
        self.n_items = st.count("items")
        self._workers: tuple[list[str], list[Any], dict[str, int]] | None = None
        self.n_fixed_workers = st.count("workers")
        self.class_index = {c: i for i, c in enumerate(self.classes)}
        pr = st.pairs()
        self.pairs = np.array(pr, dtype=np.int64) if pr else None
        self._mem: _Mem | None = None
        self._summary_at = -1  # the event number the file's summary is current for
        self._summary_writes = 0
        self.endpoints_rev = -1  # changes when a server registers its webhook endpoints
        # a read-only object whose process has a writer replaying (checking) the same log
        # (the server) takes logged decisions as they are, without the policy's argmax
        self.trust_log = False
        self.use_summary = True  # status of a fresh object reads the summary when current
        self._dirty = False
        self._buf_dec: list[tuple] = []  # decisions and queries to write (see _log_decision)
        self._buf_q: list[tuple] = []

    @property
    def conn(self) -> Any:
        """The store's DB-API connection (tests and tools; the campaign uses `store`)."""
        return self.store.conn

    # ------------------------------------------------------------------ ids
    @property
    def item_ids(self) -> list[str]:
        """The items' ids, by index (read from the file on first use)."""
        return (self._items or self._load_items())[0]

    @property
    def caps(self) -> list[int | None]:
        """The items' label caps, by index."""
        return (self._items or self._load_items())[1]

    def _load_items(self) -> tuple[list[str], list[int | None]]:
        rows = self.store.items()
        self._items = ([r[0] for r in rows], [r[1] for r in rows])
        return self._items

    @property
    def worker_ids(self) -> list[str]:
        """The workers' ids, by index, as far as this object has read the file."""
        if self._workers is None:
            self._load_workers()
        return self._workers[0]

    @property
    def worker_data(self) -> list[Any]:
        """The workers' data (a CL-TAP accuracy curve; None), by index."""
        if self._workers is None:
            self._load_workers()
        return self._workers[1]

    @property
    def worker_index(self) -> dict[str, int]:
        """worker id -> index."""
        if self._workers is None:
            self._load_workers()
        return self._workers[2]

    def names(self, table: str, idx: Any) -> list[str]:
        """The ids of items or workers (`table`) at indices `idx` (a range or a sequence):
        from memory when read, else a read of those rows alone (a status page of 100 from
        100k; a whole range reads the id column only)."""
        if table not in ("items", "workers"):
            raise ValueError(f"table: expected items or workers, found {table!r}")
        have = self._items if table == "items" else self._workers
        if isinstance(idx, range) and idx.step == 1 and (have is None or idx.stop > len(have[0])):
            if not idx:
                return []
            return self.store.ids_between(table, idx.start, idx.stop)
        idx = list(idx)
        if have is None and len(idx) > 1000:
            have = self._load_items() if table == "items" else self._load_workers()
        if have is not None and table == "workers" and idx and max(idx) >= len(have[0]):
            have = self._load_workers()  # added by another process since this one looked
        if have is not None:
            ids = have[0]
            return [ids[i] for i in idx]
        found = self.store.ids_at(table, idx)
        return [found[i] for i in idx]

    def count(self, table: str) -> int:
        """How many items or workers (`table`) the file holds now."""
        return self.store.count(table)

    @functools.cached_property
    def item_index(self) -> dict[str, int]:
        """item id -> index (built on first use: a status never needs it)."""
        return {s: i for i, s in enumerate(self.item_ids)}

    # ------------------------------------------------------------------ construction
    @classmethod
    def create(cls, path: str | os.PathLike, *, policy: str, items: Any, budget: int,
               workers: Any = None, seed: int = 0, batching: str = "exact",
               labels: Sequence[Any] | None = None, pairs: Any = None,
               params: Mapping[str, Any] | None = None, name: str | None = None,
               caps: Mapping[str, Any] | None = None) -> Campaign:
        """A new campaign: a file path (refuses an existing path) or a PostgreSQL URL
        `postgresql://host/db?campaign=NAME` (refuses an existing campaign NAME).

        items: an items CSV (column item/task/..., optional max_labels), 'dataset:NAME' (its
        tasks, max_labels = its labels per task) or a list of ids. workers: a workers CSV
        (column worker, optional accuracy for cltap), 'dataset:NAME', a list of ids, or None
        (optkg only: workers are registered by their first answer). labels: the class values
        (binary policies: negative then positive; default 0,1). pairs (optkg-het): the allowed
        (item, worker) pairs (CSV, 'dataset:NAME' or a list of pairs; default all). params:
        policy options (see `crowdopt campaign init --help`). name: what the status page
        shows its read-only viewers (default: the file's name, never its folder; the URL's
        campaign). caps: the most a token of each role may ask of /next, {role: {n, lease,
        late_window}} (see `caps`; default `caps.DEFAULT`). The budget must cover the
        policy's first decision (LS_OL asks every worker at once): a smaller one is refused,
        naming the minimum."""
        from . import caps as ccaps
        from . import io as cio

        target: Any = path if stores.is_url(path) else Path(path)
        if not stores.is_url(path) and os.path.lexists(target):  # a dangling symlink too
            raise InputError("DB", "a new file (init never overwrites)", str(target))
        if policy not in dv.POLICIES:
            raise InputError("--policy", f"one of {', '.join(dv.POLICIES)}", policy)
        if batching not in dv.BATCHING:
            raise InputError("--batching", f"one of {', '.join(dv.BATCHING)}", batching)
        if isinstance(budget, bool) or not isinstance(budget, int | np.integer) or budget < 1:
            raise InputError("--budget", "an integer >= 1 (labels to buy)", budget)
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise InputError("--seed", "an integer >= 0", seed)
        from ..version import __version__  # package metadata: read only here

        name = stores.default_name(path) if name is None else cio.text_id(name, "--name")
        limits = ccaps.merge(ccaps.DEFAULT, caps or {})

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
        if policy != "cltap":  # (a CL-TAP plan's decisions are one label each)
            first = dv.build(policy, full, int(seed), int(budget), len(ids), len(wids),
                             [r[1] for r in item_rows],
                             None if pair_idx is None else np.asarray(pair_idx, np.int64),
                             None, batching == "fill")
            need = first.size() if first.determined() else 1
            if need > budget:
                raise InputError("--budget", f"an integer >= {need} (the policy's first "
                                 f"decision asks for {need} labels at once)", int(budget),
                                 note="a smaller budget would end the campaign before its "
                                 "first query")
        tokens = {"admin": secrets.token_urlsafe(24), "read": secrets.token_urlsafe(24)}
        row = {"policy": policy, "params": json.dumps(full), "seed": int(seed),
               "budget": int(budget), "batching": batching, "classes": json.dumps(classes),
               "open_workers": int(not worker_rows), "created_at": time.time(),
               "version": __version__, "name": name, "caps": json.dumps(limits)}

        def fill(st: store.CampaignStore) -> None:
            st.insert_campaign(
                row, [(role, store.token_hash(t), time.time()) for role, t in tokens.items()],
                [(i, r[0], r[1]) for i, r in enumerate(item_rows)],
                [(j, r[0], None if r[1] is None else json.dumps(r[1]))
                 for j, r in enumerate(worker_rows)],
                None if pair_idx is None else [tuple(map(int, p)) for p in pair_idx])

        stores.create_store(target, fill)
        camp = cls.open(target)
        camp.new_tokens = tokens
        # cltap: the whole plan is decided offline: log it now; every policy: the summary
        camp._plan_all()
        return camp

    @classmethod
    def open(cls, path: str | os.PathLike, *, readonly: bool | None = None,
             busy_timeout: float = store.DEFAULT_BUSY_TIMEOUT) -> Campaign:
        """Open a campaign: a file (migrating an older schema in place; `readonly`, default:
        when the file or its folder may not be written, opens it with SQLite's `mode=ro`) or
        a PostgreSQL URL (`readonly`: a read-only session). Status, queries, answers and
        exports work read-only; next/record refuse. A write waits at most `busy_timeout`
        seconds for another writer (then `Busy`, nothing changed)."""
        st = stores.open_store(path, readonly=readonly, busy_timeout=busy_timeout)
        try:
            return cls(st)
        except BaseException as exc:
            err = st.failure(exc)
            st.close()
            if err is not None:
                raise InputError("DB", "a campaign file", f"{st.location} ({exc})") from None
            raise

    def close(self) -> None:
        """Close the campaign's connection to its store."""
        self.store.close()

    def __enter__(self) -> Campaign:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def token(self) -> str:
        """The admin bearer token `create` made (only the object that created the campaign
        knows it: the store keeps hashes; `new_token` makes more)."""
        if "admin" not in self.new_tokens:
            raise InputError("token", "a campaign object from Campaign.create (the file keeps "
                             "only token hashes)", str(self.path))
        return self.new_tokens["admin"]

    def new_token(self, role: str = "admin", *, worker: Any = None,
                  revoke_old: bool = True) -> str:
        """A new bearer token: role 'admin' (everything), 'read' (status, export, the page)
        or 'worker' (next/record as `worker` only). `revoke_old`: the role's (worker's)
        earlier tokens stop working (rotation). Only the hash is stored."""
        if role not in ("admin", "read", "worker"):
            raise InputError("--role", "admin, read or worker", role)
        w = None
        if role == "worker":
            if worker is None:
                raise InputError("--worker", "a worker id for a worker token", None)
            from .io import text_id

            w = text_id(worker, "--worker")
            if w not in self.worker_index and not self.open_workers:
                raise InputError("--worker", "a worker of the campaign", w)
        elif worker is not None:
            raise InputError("--worker", "only with --role worker", worker)
        tok = secrets.token_urlsafe(24)

        def write() -> None:
            with self._tx():
                self.store.add_token(role, w, store.token_hash(tok), time.time(), revoke_old)
        self._retrying(write)
        return tok

    def token_roles(self) -> dict[str, tuple[str, str | None]]:
        """hash -> (role, worker) of the live tokens (an old file: its one admin token)."""
        try:
            return self.store.token_roles()
        except BaseException as exc:
            err = self.store.failure(exc)
            if err is not None:
                self.store.rollback()
                raise err from None
            raise

    def next_caps(self) -> dict:
        """The most a token of each role may ask of /next: {role: {n, lease, late_window}}
        (an old file: `caps.DEFAULT`)."""
        from . import caps as ccaps

        text = self.store.caps()
        return ccaps.merge(ccaps.DEFAULT, json.loads(text) if text else {})

    def set_next_caps(self, changes: Mapping[str, Any]) -> dict:
        """Change some caps ({role: {field: value}}, see `caps`); returns them all."""
        from . import caps as ccaps

        def write() -> dict:
            with self._tx():
                text = self.store.caps()
                new = ccaps.merge(ccaps.merge(ccaps.DEFAULT, json.loads(text) if text else {}),
                                  changes)
                self.store.set_caps(json.dumps(new))
                return new
        return self._retrying(write)

    def release(self, worker: Any) -> dict:
        """Free `worker`'s open hand-outs: each ends now (an answer to it is no longer paid:
        rejected) and stops reserving the budget, and the queries it held on a running lease
        go back in line for the next `next`. Returns the counts (handouts, queries)."""
        from .io import text_id

        w = text_id(worker, "--worker")

        def write() -> dict:
            with self._tx():
                held, leased = self.store.release(w, _now())
            return {"worker": w, "handouts": held, "queries": leased}
        return self._retrying(write)

    # ------------------------------------------------------------------ transactions
    def _retrying(self, fn: Any) -> Any:
        """Run write `fn` again (on state read anew) when the database refused it as not
        serializable, up to CONFLICT_TRIES times."""
        for attempt in range(CONFLICT_TRIES):
            try:
                return fn()
            except store.Conflict:
                if attempt == CONFLICT_TRIES - 1:
                    raise
                time.sleep(random.uniform(0, 0.005 * 2 ** attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    @contextmanager
    def _tx(self, write: bool = True) -> Iterator[_Mem]:
        if write and self.readonly:
            raise InputError("DB", "a campaign file this process may write",
                             "a read-only file", note=f"{self.path}: status and export work, "
                             "next and record do not")
        st = self.store
        try:
            if write and self._mem is None:
                # a fresh object replays the whole log: do it in a read snapshot, so the
                # write lock is then held only for the events appended since
                st.begin(False)
                self._catch_up()
                st.commit()
            st.begin(write)
            mem = self._catch_up()
            full = write and self._summary_at != mem.seq  # stale: written whole
            mem.A.dirty_items.clear()  # what others wrote is in the summary already
            mem.A.dirty_workers.clear()
            seq0 = mem.seq
            yield mem
            if write and (full or mem.seq != seq0):  # the new events and their summary
                self._write_summary(mem, full)
            st.commit()
        except BaseException as exc:
            st.rollback()
            self._buf_dec, self._buf_q = [], []
            if self._dirty:  # memory may be ahead of the store: rebuild on the next call
                self._mem = None
                self._workers = None  # (workers registered by the rolled-back write too)
            err = st.failure(exc)
            if err is not None:  # locked too long, read-only, disk full, damaged, gone
                raise err from None
            raise
        finally:
            self._dirty = False

    def _write_summary(self, mem: _Mem, full: bool) -> None:
        """Write what `status` needs of the policy state for the items and workers changed
        by this transaction (`full`: all), stamped with its last event number."""
        A = mem.A
        st = self.store
        if full:
            items, workers, data = A.summary()
        elif A.dirty_items or A.dirty_workers or self.policy == "lsol":
            items, workers, data = A.summary(A.dirty_items, A.dirty_workers)
        else:  # decisions only (next): the policy's summary rows did not change
            items, workers, data = [], [], None
        if full:
            st.clear_summary()
        rows = [(0, *r) for r in items] + [(1, *r) for r in workers]
        if rows:
            st.append_summary(rows)
        A.dirty_items.clear()
        A.dirty_workers.clear()
        # the policy has nothing left within the budget (meaningful once nothing is open)
        idle = mem.known == mem.n_queries and mem.applied == len(mem.decs)
        ex = idle and A.exhausted(self.budget - mem.n_queries - mem.n_late)
        self._summary_writes += 1
        if rows and (ex or self._summary_writes % 64 == 0):
            # superseded rows dropped past twice the state, and when it is finished
            last = st.summary_last_id()
            n = len(self.item_ids) + len(self.worker_ids)
            # a finished campaign keeps one row per item and worker: its status reads no
            # superseded row (the summary of the first write of a process is whole)
            if last > 2 * n + 4096 or (ex and last > min(n, st.summary_keys())):
                st.compact_summary()
        st.set_head(mem.seq, mem.applied, ex, None if data is None else json.dumps(data))
        self._summary_at = mem.seq

    def _load_workers(self) -> tuple[list[str], list[Any], dict[str, int]]:
        """Read the workers added to the file since this object last looked (all of them the
        first time; in bulk: a file may hold 100k)."""
        if self._workers is None:
            self._workers = ([], [], {})
        wids, wdata, windex = self._workers
        n = len(wids)
        rows = self.store.workers_from(n)
        if rows:
            if rows[0][0] != n or rows[-1][0] != n + len(rows) - 1:  # 0, 1, 2, ...
                raise StoreError(f"campaign file {self.path}: worker indices are not "
                                 "contiguous")
            ids = [r[1] for r in rows]
            wids += ids
            wdata += [None if d is None else json.loads(d) for _, _, d in rows]
            windex.update(zip(ids, range(n, n + len(ids))))
        return self._workers

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
        cur, self._summary_at, self.endpoints_rev = self.store.head()
        if cur == mem.seq:
            return mem
        self._dirty = True
        self._load_workers()
        decs = self.store.decisions_after(mem.seq)
        qs: dict[int, list] = {}
        if decs:
            for qid, k, item, worker in self.store.queries_from(decs[0][0]):
                qs.setdefault(k, []).append((qid, item, worker))
        ans = self.store.answers_after(mem.seq)
        events = sorted([(d[1], 0, d) for d in decs] + [(a[0], 1, a) for a in ans])
        for _, kind, ev in events:
            if kind == 0:
                k, seq, dkind, item, data = ev
                rows = qs[k]
                p = dv.Proposal(dkind, item, tuple(w for _, _, w in rows),
                                json.loads(data) if data else {})
                self._add_decision(mem, k, seq, p, [r[0] for r in rows])
            else:
                seq, qid, item, worker, label, at = ev
                if qid is None:
                    self._add_late(mem, seq, item, worker, label, at)
                else:
                    self._add_answer(mem, qid, item, worker, label, at)
        mem.seq = cur
        mem.S = None  # other processes' events: rebuild the what-if copy when needed
        self._advance(mem)
        self._dirty = False
        return mem

    def _add_decision(self, mem: _Mem, k: int, seq: int, p: dv.Proposal, qids: list[int],
                      *, own: bool = False) -> None:
        if k != len(mem.decs) + 1:
            raise dv.Diverged(f"campaign log: decision {k} follows {len(mem.decs)}")
        mem.decs.append(seq, p, qids)
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
            dv.check(mem.A.take(p) if self.trust_log else mem.A.propose(), p, k)
            mem.A.hold(p)

    def _add_answer(self, mem: _Mem, qid: int, item: int, worker: int, label: int,
                    at: float) -> None:
        k, pos = mem.q[qid]
        decs = mem.decs
        decs.set_label(k, pos, label)
        if decs.worker(k, pos) is None:
            if mem.open_item.get(item) == qid:
                del mem.open_item[item]
            mem.closed_any.add(item)
        else:
            mem.open_pair.pop((item, worker), None)
        mem.answered[(item, worker)] = label
        mem.known += 1
        mem.log.add(item, worker, label, False, at)
        if self.batching == "fill" and decs.complete(k):
            mem.A.apply(decs.proposal(k), list(decs.labels[k - 1]))
            mem.applied += 1  # fill: decisions applied (in answer order), not a prefix

    def _add_late(self, mem: _Mem, seq: int, item: int, worker: int, label: int,
                  at: float) -> None:
        """A late answer: kept, and observed by the policy at its place in the log."""
        mem.answered[(item, worker)] = label
        mem.n_late += 1
        mem.log.add(item, worker, label, True, at)
        mem.S = None
        if self.batching == "fill":
            mem.A.late(item, label)
        else:
            mem.late.append((seq, item, worker, label))

    def _advance(self, mem: _Mem) -> None:
        """Exact batching: apply decisions to the committed policy in decision order, as far
        as their answers are all in (answers that came early wait for the ones before); a late
        answer goes in after the decisions logged before it."""
        if self.batching == "fill":
            return
        decs = mem.decs
        while True:
            k = mem.applied + 1 if mem.applied < len(decs) else None
            if mem.late and (k is None or decs.seq[k - 1] > mem.late[0][0]):
                _, item, _, label = mem.late.pop(0)
                mem.A.late(item, label)
            elif k is not None and decs.complete(k):
                # a reader trusts the log where checking is costly; writers check every step
                p = decs.proposal(k)
                got = mem.A.take(p) if self.trust_log else \
                    mem.A.follow(p) if self.readonly else mem.A.propose()
                dv.check(got, p, k)
                mem.A.apply(p, list(decs.labels[k - 1]))
                mem.applied += 1
            else:
                return

    def _whatif(self, mem: _Mem) -> dv.Driver:
        """The committed policy, cloned and run through the decisions still waiting for
        answers: answers known are applied, unknown ones are pending."""
        S = mem.A.clone()
        late = list(mem.late)
        decs = mem.decs
        for k in range(mem.applied + 1, len(decs) + 1):
            while late and late[0][0] < decs.seq[k - 1]:
                _, item, _, label = late.pop(0)
                S.late(item, label)
            if not S.determined():
                raise dv.Diverged(f"campaign log: decision {k} was handed out before the "
                                  "answers it depends on")
            p = decs.proposal(k)
            dv.check(S.propose(), p, k)
            if decs.complete(k):
                S.apply(p, list(decs.labels[k - 1]))
            else:
                S.pend(p)
        for _, item, _, label in late:
            S.late(item, label)
        return S

    # ------------------------------------------------------------------ decisions
    def _decide(self, mem: _Mem) -> dv.Proposal | None:
        """The next decision, or None (budget spent, policy exhausted, or - exact batching -
        the next decision depends on answers not in yet)."""
        left = self._left(mem)
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
        def write() -> None:
            with self._tx() as mem:
                if self.policy == "cltap":
                    mem.extra = 0
                    self._plan_rest(mem)
        self._retrying(write)

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
        self._flush_log()
        mem.seq = seq  # written with the summary at the end of the transaction

    def _log_decision(self, mem: _Mem, seq: int, p: dv.Proposal, now: float) -> list[int]:
        """Log a decision and its queries (written by `_flush_log`, in one statement each).
        Query ids are 1, 2, ... in decision order (rows are never deleted): an id already
        taken fails the insert and the whole transaction."""
        k = len(mem.decs) + 1
        self._buf_dec.append((k, seq, p.kind, p.item, json.dumps(p.data) if p.data else None,
                              now))
        r0 = mem.rounds[p.item]
        qids = [mem.n_queries + 1 + pos for pos in range(len(p.workers))]
        self._buf_q.extend((q, k, pos, p.item, w, r0 + pos)
                           for pos, (q, w) in enumerate(zip(qids, p.workers)))
        self._add_decision(mem, k, seq, p, qids, own=True)
        return qids

    def _flush_log(self) -> None:
        if self._buf_dec:
            self.store.log_decisions(self._buf_dec, self._buf_q)
        self._buf_dec, self._buf_q = [], []

    # ------------------------------------------------------------------ hand-outs
    def _reservations(self, now: float) -> tuple[dict[int, list[list]], int]:
        """The live hand-outs at `now` (yet to yield their paid answer, late window open):
        query id -> [[late_until, hand-out id, worker or None], ...] by closing time; and the
        labels they reserve beyond one per open query (a further hand-out of an open query,
        every hand-out of an answered one)."""
        live: dict[int, list[list]] = {}
        extra = 0
        for hid, qid, w, until, is_open in self.store.live_handouts(now):
            hs = live.get(qid)
            if hs is None:
                hs = live[qid] = []
                extra -= is_open  # the open query's own label is reserved as open
            hs.append([until, hid, w])
            extra += 1
        return live, extra

    @staticmethod
    def _pick(hs: list[list] | None, worker: str) -> list | None:
        """The live hand-out of `hs` that `worker` may answer and that closes first (taken
        out of `hs`), or None."""
        if hs:
            for n, h in enumerate(hs):
                if h[2] is None or h[2] == worker:
                    return hs.pop(n)
        return None

    # ------------------------------------------------------------------ next
    def next(self, n: int = 1, *, worker: Any = None, lease: float | None = None,
             late_window: float | None = None) -> list[Query]:
        """Up to `n` queries to hand out now, leased for `lease` seconds (default 600); an
        answer is still accepted (and paid) for `late_window` seconds after the lease
        (default: the lease again), then the hand-out's reservation of the budget ends.

        Queries whose lease expired come first (the same queries again), then new policy
        decisions. With `worker`, only queries that worker may answer: the ones the policy
        chose for them, or any-worker queries on items they have not labeled; the hand-outs
        are theirs (another worker's answer to them is refused). Fewer than `n` (possibly
        none) when the budget is spent or reserved, the policy has nothing left, or -
        batching 'exact' - the next decision depends on answers not recorded yet."""
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise InputError("n", "an integer >= 1", n)
        if n > 2**53:  # the one integer rule (validate.MAX_INT); SQLite stops at 2^63
            raise InputError("n", "an integer <= 2^53", n)
        lease = DEFAULT_LEASE if lease is None else lease
        if isinstance(lease, bool) or not isinstance(lease, int | float) or not \
                (math.isfinite(lease) and 0 < lease <= 1e9):  # past 1e9 s the clock overflows
            raise InputError("lease", "a number of seconds in (0, 1e9]", lease)
        late = lease if late_window is None else late_window
        if isinstance(late, bool) or not isinstance(late, int | float) or not \
                (math.isfinite(late) and 0 <= late <= 1e9):
            raise InputError("late_window", "a number of seconds in [0, 1e9]", late)
        w_txt = None if worker is None else self._worker_arg(worker)
        return self._retrying(lambda: self._hand_out(n, w_txt, lease, late))

    def _hand_out(self, n: int, w_txt: str | None, lease: float, late: float) -> list[Query]:
        """`next` as one write transaction (run again on a conflict)."""
        with self._tx() as mem:
            w_idx = self._caller(w_txt)
            now = _now()
            live, mem.extra = self._reservations(now)
            if self.policy == "cltap" and not mem.exhausted:
                self._plan_rest(mem)
            out: list[tuple[int, int, int, int | None, int]] = []  # (qid, k, item, w, round)
            for qid, k, item, w, rnd in self.store.available_queries(now):
                if len(out) >= n:
                    break
                if not self._eligible(mem, item, w, w_txt, w_idx):
                    continue
                if qid in live:  # an earlier hand-out may still bring a paid answer
                    if self._left(mem) < 1:
                        continue  # not now: once its late window closes
                    mem.extra += 1
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
            self._flush_log()
            mem.seq = seq  # written with the summary at the end of the transaction
            until = now + float(lease)
            self.store.hand_out([q[0] for q in out], w_txt, now, until, until + float(late))
        return [self._query(mem, qid, k, item, w, rnd, until) for qid, k, item, w, rnd in out]

    def _left(self, mem: _Mem) -> int:
        """Labels neither spent nor reserved."""
        return self.budget - mem.n_queries - mem.n_late - mem.extra

    def _worker_arg(self, worker: Any) -> str:
        from .io import text_id

        return text_id(worker, "worker")

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
        data = mem.decs.props[k - 1][3]
        return Query(qid, self.item_ids[item], None if w is None else self.worker_ids[w], k,
                     rnd, until, None if data is None else data.get("iteration"))

    # ------------------------------------------------------------------ record
    def record(self, rows: Iterable[Any], *, as_worker: Any = None) -> dict:
        """Store answers: rows of (item, worker, label) (tuples or mappings). Each row gets an
        outcome (`results`, in row order): stored, duplicate, late or rejected (with `reason`);
        a bad row never blocks the others. An answer is paid (stored or late) only against a
        live hand-out it may answer (see the module's doc). `as_worker`: the caller may only
        answer as that worker (a worker token); other rows are rejected. Returns the counts
        (rows, stored, late, duplicates, rejected; recorded = stored + late), the results, and
        the budget after it (spent, reserved, left)."""
        from . import io as cio

        parsed = cio.answer_rows(rows)
        only = None if as_worker is None else str(as_worker)
        return self._retrying(lambda: self._record(parsed, only))

    def _record(self, parsed: list[tuple], only: str | None) -> dict:
        """`record` as one write transaction (run again on a conflict)."""
        results: list[dict] = []
        with self._tx() as mem:
            now = _now()
            live, extra = self._reservations(now)
            closed_now: set[int] = set()  # any-worker queries this batch answered
            after: dict[int, list[int]] | None = None

            def late_queries(item: int) -> list[int]:
                """The answered any-worker queries on `item` with live hand-outs (built on
                first need: most records have no late answer)."""
                nonlocal after
                if after is None:
                    after = {}
                    for q_ in live:
                        k_, p_ = mem.q[q_]
                        if mem.decs.worker(k_, p_) is None and (
                                mem.decs.labels[k_ - 1][p_] is not None or q_ in closed_now):
                            after.setdefault(mem.decs.props[k_ - 1][1], []).append(q_)
                return after.get(item, [])

            new_workers: dict[str, int] = {}
            # (qid or None, item, worker, label, late_for, hand-out id)
            todo: list[tuple[int | None, int, int, int, int | None, int]] = []
            void: list[int] = []  # hand-outs of a query naming a worker, answered
            seen: dict[tuple[int, int], int] = {}  # (item, worker) -> label, this batch
            taken: set[int] = set()  # queries answered by an earlier row of this batch

            def reject(res: dict, reason: str) -> None:
                res["status"] = "rejected"
                res["reason"] = reason

            for where, item_txt, w_txt, lab_txt, err in parsed:
                res: dict = {"row": len(results), "item": item_txt, "worker": w_txt}
                results.append(res)
                if err is not None:
                    reject(res, err)
                    continue
                item = self.item_index.get(item_txt)
                label = self.class_index.get(lab_txt)
                if item is None:
                    reject(res, str(InputError(f"{where}: item", "an item of the campaign",
                                               item_txt)))
                    continue
                if label is None:
                    reject(res, str(InputError(f"{where}: label", "one of " +
                                               ", ".join(self.classes), lab_txt)))
                    continue
                if only is not None and w_txt != only:
                    reject(res, str(InputError(f"{where}: worker", f"{only!r} (this token "
                                               "answers only as that worker)", w_txt)))
                    continue
                w = self.worker_index.get(w_txt, new_workers.get(w_txt))
                if w is None and not self.open_workers:
                    reject(res, str(InputError(f"{where}: worker", "a worker of the campaign",
                                               w_txt)))
                    continue
                key = (item, -1 if w is None else w)
                prev = None if w is None else mem.answered.get(key, seen.get(key))
                if prev is not None:
                    if prev != label:
                        reject(res, str(InputError(
                            f"{where}: label", f"{self.classes[prev]!r} (item {item_txt!r}, "
                            f"worker {w_txt!r} already answered it)", lab_txt,
                            note="one answer per item and worker")))
                    else:
                        res["status"] = "duplicate"
                    continue
                named = False  # the open query names its worker
                qid = None if w is None else mem.open_pair.get(key)
                if qid is None:
                    qid = mem.open_item.get(item)
                    if qid is not None and qid in taken:
                        qid = None  # that query is taken by an earlier row of this batch
                else:
                    named = True
                h = None if qid is None else self._pick(live.get(qid), w_txt)
                late_for = None
                if h is None and (item in mem.closed_any or closed_now):
                    # a further hand-out of an answered query, the one that closes first
                    cands = [(h_[0], q_, n_) for q_ in late_queries(item)
                             for n_, h_ in enumerate(live[q_]) if h_[2] in (None, w_txt)]
                    if cands:
                        _, late_for, n_ = min(cands)
                        h = live[late_for].pop(n_)
                        extra -= 1
                if h is None:
                    reject(res, self._unpaid(where, item_txt, w_txt, qid, item, live))
                    continue
                if late_for is not None:
                    qid = None
                if w is None:
                    w = new_workers[w_txt] = len(self.worker_ids) + len(new_workers)
                    key = (item, w)
                seen[key] = label
                if qid is not None:
                    taken.add(qid)
                    rest = live.get(qid)
                    if named:
                        if rest:  # nobody else may answer it: its other hand-outs end
                            void += [h_[1] for h_ in rest]
                            extra -= len(rest)
                            del live[qid]
                    elif rest:  # the others may still bring one late answer each
                        closed_now.add(qid)
                        if after is not None:
                            after.setdefault(item, []).append(qid)
                res["status"] = "stored" if qid is not None else "late"
                todo.append((qid, item, w, label, late_for, h[1]))
            self._dirty = True
            self.store.add_workers(sorted(((i, w) for w, i in new_workers.items())))
            seq = mem.seq
            ins, upd, used, seqs = [], [], [], []
            for qid, item, w, label, late_for, hid in todo:
                seq += 1
                seqs.append(seq)
                ins.append((seq, qid, late_for, item, w, label, now, hid))
                used.append((seq, hid))
                if qid is not None:
                    upd.append(qid)
            self.store.store_answers(ins, upd, void, used)
            if new_workers:  # (others' workers came with their answers, in the catch-up)
                self._load_workers()
            spent0 = mem.log.n
            for t, s_ in zip(todo, seqs):
                qid, item, w, label, _, _ = t
                if qid is None:
                    self._add_late(mem, s_, item, w, label, now)
                else:
                    self._add_answer(mem, qid, item, w, label, now)
            mem.seq = seq
            self._advance(mem)
            counts = {k: sum(r["status"] == k for r in results)
                      for k in ("stored", "late", "duplicate", "rejected")}
            mem.extra = extra  # what the remaining hand-outs reserve
            budget = {"spent": mem.log.n, "reserved": mem.n_queries - mem.known + mem.extra,
                      "left": self._left(mem)}
            if todo:
                from .events import after_record

                after_record(self, mem, counts, spent0, budget, now)
        return {"rows": len(results), "recorded": counts["stored"] + counts["late"],
                "stored": counts["stored"], "late": counts["late"],
                "duplicates": counts["duplicate"], "rejected": counts["rejected"],
                **budget, "results": results}

    def _unpaid(self, where: str, item_txt: str, w_txt: str, qid: int | None, item: int,
                live: dict) -> str:
        """The one-line reason an answer has no hand-out to be paid against."""
        who = f"item {item_txt!r}, worker {w_txt!r}"
        if qid is not None:
            hs = live.get(qid)
            if hs:
                to = sorted({h[2] for h in hs})
                return str(InputError(where, "an answer to a hand-out of its query", who,
                                      note=f"its query is handed out to {', '.join(to)} only"))
            handed = self.store.handed(qid)
            note = ("its query was never handed out" if not handed else
                    "the late window of every hand-out of its query closed; the query waits "
                    "to be handed out again")
            return str(InputError(where, "an answer to a query handed out", who, note=note))
        mem = self._mem
        if any(mem.decs.worker(*mem.q[q]) is None for q in self._item_queries(item)):
            note = ("an answer nobody asked for: every hand-out of this item's queries has "
                    "had its paid answer or its late window closed")
        else:
            note = "no query for it was handed out, or it is answered"
        return str(InputError(where, "an answer to an open query", who, note=note))

    def _item_queries(self, item: int) -> list[int]:
        return self.store.handed_queries_of(item)

    # ------------------------------------------------------------------ reading
    def queries(self, *, open_only: bool = False) -> list[Query]:
        """Queries decided so far (open_only: handed out and not answered yet), in order."""
        with self._tx(write=False) as mem:
            rows = self.store.queries(open_only)
            return [self._query(mem, qid, k, item, w, rnd, until or 0.0)
                    for qid, k, item, w, rnd, until in rows]

    def answers(self, *, offset: int = 0, limit: int | None = None
                ) -> list[tuple[str, str, str]]:
        """Recorded answers (late ones included) as (item, worker, label), in the order they
        were recorded; `offset`/`limit` page them. Reads the file only (no policy rebuild)."""
        for name, v in (("offset", offset), ("limit", limit)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | np.integer)
                                  or v < 0):
                raise InputError(name, "an integer >= 0", v)
        st = self.store
        try:
            st.begin(False)
            self._load_workers()
            rows = st.answers_page(int(offset), None if limit is None else int(limit))
            st.commit()
        except BaseException as exc:
            st.rollback()
            err = st.failure(exc)
            if err is not None:
                raise err from None
            raise
        return [(self.item_ids[i], self.worker_ids[w], self.classes[y]) for i, w, y in rows]

    def status(self, *, gold: Mapping[str, Any] | str | os.PathLike | None = None,
               offset: int = 0, limit: int | None = None, top: int | None = None) -> dict:
        """Budget spent / left, current labels with their posterior confidence (an item
        without any answer has no label), worker reliabilities, leases (open, expired), the
        answer rate and ETA, a confidence histogram. `gold` (a mapping item -> label, a gold
        CSV or a data set name such as 'dataset:rte') adds `accuracy`. `offset`/`limit` page
        the per-item, per-worker and expired-lease lists; `top` adds the `top` least
        confident labels and busiest workers (`least_confident`, `busiest_workers`)."""
        from . import report

        for name, v in (("offset", offset), ("limit", limit), ("top", top)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | np.integer)
                                  or v < 0):
                raise InputError(name, "an integer >= 0", v)
        if gold is not None:
            from .io import read_gold_map

            gold = read_gold_map(gold, self.item_ids, self.classes)
        page = {"offset": int(offset), "limit": None if limit is None else int(limit),
                "top": None if top is None else int(top)}
        if self._mem is None and self.has_summary and self.use_summary:
            # a fresh object: the summary, when it is current, spares the replay of the log
            st = self.store
            try:
                st.begin(False)
                cur, seq, applied, exhausted, data = st.summary_head()
                if seq == cur:
                    ps = report.from_summary(self, applied, exhausted, data)
                    return report.status(self, ps, gold, _now(), **page)
            except BaseException as exc:
                err = st.failure(exc)
                if err is not None:
                    raise err from None
                raise
            finally:
                st.rollback()  # a read: nothing to keep
        with self._tx(write=False) as mem:
            return report.status(self, report.from_memory(self, mem), gold, _now(), **page)

    def answer_count(self) -> int:
        """How many answers the store holds now (late ones included)."""
        return self.store.answer_count()

    def answer_times(self) -> list[float]:
        """When each answer so far was recorded (seconds since the epoch, in log order, late
        answers included), read from memory after catching up: the status page's plot."""
        with self._tx(write=False) as mem:
            return mem.log.columns()[4].tolist()

    def __repr__(self) -> str:
        return f"Campaign({str(self.path)!r}, policy={self.policy!r}, budget={self.budget})"


__all__ = ["Campaign", "Query", "CrowdoptError", "StoreError", "Busy"]
