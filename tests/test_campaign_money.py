"""Campaign money: every hand-out of a query pays for at most one answer, from the worker it
was handed to, until its late window closes; spend + reservations never pass the budget;
status read from the file's summary equals the status of a replay of the log; inputs that
mean nothing (an empty worker, control characters, a gold label outside the classes) are
refused; a held lock is given up after --wait; a read-only file still reports."""

from __future__ import annotations

import heapq
import json
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from crowdopt.campaign import Campaign, TableOracle, core
from crowdopt.cli import main
from crowdopt.errors import InputError

sys.path.insert(0, str(Path(__file__).parent))
from campaign_db import STORES  # noqa: E402
from test_campaign import binary_table, caps_of  # noqa: E402


@pytest.fixture
def clock(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(core, "_now", lambda: now[0])
    return now


def statuses(res: dict) -> list[str]:
    return [r["status"] for r in res["results"]]


# ----------------------------------------------------------------------------- hand-outs
@pytest.mark.parametrize("campaign_at", STORES, indirect=True)
def test_a_named_hand_out_pays_only_its_worker_and_ghosts_are_never_paid(campaign_at, clock):
    camp = Campaign.create(campaign_at("g.db"), policy="optkg", items=list("abcde"), budget=10,
                           seed=0, batching="fill")
    mine = camp.next(2, worker="ann")
    res = camp.record([(q.item, "bob", 1) for q in mine])  # handed to ann, not to bob
    assert statuses(res) == ["rejected"] * 2
    assert "handed out to ann only" in res["results"][0]["reason"]
    assert camp.record([(q.item, "ann", 1) for q in mine])["stored"] == 2
    ghosts = [(q.item, f"ghost{k}", 0) for q in mine for k in range(10)]
    res = camp.record(ghosts)  # answered items, every hand-out paid: nobody asked for these
    assert res["rejected"] == 20 and res["recorded"] == 0
    assert all("nobody asked for" in r["reason"] for r in res["results"])
    # a worker token of a worker never handed anything
    res = camp.record([(q.item, "never", 1) for q in mine], as_worker="never")
    assert res["rejected"] == 2
    st = camp.status()
    assert st["spent"] == 2 and st["answers"] == 2 and st["workers_known"] == 1
    assert all(w != "ghost0" for _, w, _ in camp.answers())


@pytest.mark.parametrize("campaign_at", STORES, indirect=True)
def test_a_re_issue_that_could_pass_the_budget_waits_for_the_late_window(campaign_at, clock):
    camp = Campaign.create(campaign_at("b.db"), policy="optkg", items=["a", "b"], budget=2,
                           seed=0, batching="fill")
    first = camp.next(2, lease=10)  # late windows close at 1020
    st = camp.status()
    assert (st["spent"], st["reserved"], st["left"]) == (0, 2, 0)
    clock[0] = 1011.0  # leases expired: a re-issue could bring a second paid answer each
    assert camp.next(2) == []
    st = camp.status()
    assert (st["reserved"], st["left"], st["open"]["expired"]) == (2, 0, 2)
    clock[0] = 1021.0  # late windows closed
    res = camp.record([(q.item, "slow", 1) for q in first])  # after their window: refused
    assert res["rejected"] == 2 and "late window" in res["results"][0]["reason"]
    again = camp.next(2, lease=10)  # the re-issue adds nothing to what is reserved
    assert [q.id for q in again] == [q.id for q in first]
    assert camp.record([(q.item, "fast", 0) for q in again])["stored"] == 2
    st = camp.status()
    assert (st["spent"], st["reserved"], st["left"], st["done"]) == (2, 0, 0, True)


@pytest.mark.parametrize("campaign_at", STORES, indirect=True)
def test_a_query_that_names_its_worker_voids_its_other_hand_outs(campaign_at, clock):
    camp = Campaign.create(campaign_at("h.db"), policy="optkg-het", items=["a", "b"],
                           workers=["u", "v"], budget=3, seed=0)
    (q,) = camp.next(1, lease=10)
    clock[0] = 1011.0
    (again,) = camp.next(1, lease=10)  # the same query, the same worker
    assert again.id == q.id and camp.status()["reserved"] == 2
    assert camp.record([(q.item, q.worker, 1)])["stored"] == 1
    st = camp.status()  # nobody else may answer that query: nothing stays reserved for it
    assert (st["spent"], st["reserved"], st["left"]) == (1, 0, 2)


# ----------------------------------------------------------------------------- status sources
def _drive(camp: Campaign, oracle, clock, rng: random.Random, steps: int) -> None:
    """Hand out, let leases run out, answer late or never."""
    for _ in range(steps):
        qs = camp.next(rng.randint(1, 4), lease=5)
        if not qs:
            clock[0] += 11
            continue
        if rng.random() < 0.4:
            clock[0] += 6
            camp.next(len(qs), lease=5)  # re-issued to others
        answers = [oracle.answer(q) for q in qs]
        camp.record([a for a in answers if a is not None and rng.random() < 0.8])
        clock[0] += rng.choice([0.5, 3.0, 12.0])


def _same_status(db: Path, writer: Campaign) -> dict:
    fresh = Campaign.open(db, readonly=True)  # reads the summary
    replay = Campaign.open(db, readonly=True)
    replay.use_summary = False  # replays the log
    a, b, c = fresh.status(), replay.status(), writer.status()
    replay.close()
    assert a == b == c
    # the text report's short lists (no whole lists built) are the whole lists' heads
    labelled = [r for r in a["labels"] if r["label"] is not None]
    for k in (0, 1, 3, 1000):
        t = fresh.status(limit=k, top=k)
        assert t["least_confident"] == heapq.nsmallest(k, labelled, key=lambda r: (
            r["confidence"] if r["confidence"] is not None else 2.0))
        assert t["busiest_workers"] == sorted(a["workers"], key=lambda r: -r["answers"])[:k]
        assert t["labels"] == a["labels"][:k] and t["workers"] == a["workers"][:k]
        rest = {x for x in a if x not in ("labels", "workers", "expired_leases", "page")}
        assert {x: t[x] for x in rest} == {x: a[x] for x in rest}
    fresh.close()
    return a


SETUPS = [("optkg", "exact"), ("optkg", "fill"), ("optkg-het", "exact"), ("lsol", "exact"),
          ("lsol", "fill"), ("cltap", "exact")]


@pytest.mark.parametrize("campaign_at,policy,batching", [
    *[("sqlite", p, b) for p, b in SETUPS],
    *[pytest.param("postgresql", p, b, marks=pytest.mark.postgres)
      for p, b in (("optkg", "fill"), ("optkg-het", "exact"), ("lsol", "exact"))]],
    indirect=["campaign_at"])
def test_status_from_the_summary_equals_the_status_of_a_replay(campaign_at, clock, policy,
                                                                batching):
    table, _ = binary_table(3, K=14, W=6, dense=True)
    items = [str(t) for t in table.task_ids]
    workers = [str(w) for w in table.worker_ids]
    kw = dict(policy=policy, items=items if policy != "optkg" else caps_of(table),
              budget=40, seed=3, batching=batching)
    mode = "homogeneous"
    if policy == "optkg-het":
        kw["workers"], mode = workers, "heterogeneous"
    elif policy == "lsol":
        kw["workers"], mode = workers, "dense"
        kw["params"] = {"G1": 1.0}
    elif policy == "cltap":
        kw["workers"], mode = {w: [0.8, 0.7, 0.75] for w in workers}, "dense"
    db = campaign_at("s.db")
    camp = Campaign.create(db, **kw)
    st = _same_status(db, camp)  # nothing answered yet (a fresh LS_OL campaign too)
    assert st["spent"] == 0 and st["labelled"] == 0
    oracle = TableOracle(table, seed=3, mode=mode)
    rng = random.Random(4)
    for _ in range(4):
        _drive(camp, oracle, clock, rng, 6)
        st = _same_status(db, camp)
        assert st["spent"] + st["reserved"] <= 40
    assert st["spent"] > 0


# ----------------------------------------------------------------------------- inputs
def test_an_empty_worker_control_characters_and_bidi_overrides_are_refused(tmp_path, capsys):
    db = tmp_path / "i.db"
    camp = Campaign.create(db, policy="optkg", items=["a", "b"], budget=4)
    for bad in ("", "   ", "a\x00b", "a\nb", "\u202eevil", "x\u2066y"):
        with pytest.raises(InputError, match="worker") as e:
            camp.next(1, worker=bad)
        assert "\n" not in str(e.value)
        with pytest.raises(InputError, match="--worker"):
            camp.new_token("worker", worker=bad)
    assert main(["campaign", "next", str(db), "--worker", ""]) == 2
    err = capsys.readouterr().err.strip()
    assert "non-empty" in err and len(err.splitlines()) == 1
    qs = camp.next(1)
    res = camp.record([(qs[0].item, "\u202emallory", 1), (qs[0].item, "ok", 1)])
    assert statuses(res) == ["rejected", "stored"] and "U+202E" in res["results"][0]["reason"]
    for items in (["a\u202eb"], ["a\tb"]):
        with pytest.raises(InputError, match="control or bidi"):
            Campaign.create(tmp_path / "x.db", policy="optkg", items=items, budget=1)
    (tmp_path / "items.csv").write_text("item\nok\nb\u202ec\n")
    assert main(["campaign", "init", str(tmp_path / "y.db"), "--policy", "optkg", "--items",
                 str(tmp_path / "items.csv"), "--budget", "2"]) == 2
    assert "line 3: item" in capsys.readouterr().err


def test_a_gold_label_outside_the_classes_is_refused_as_aggregate_refuses_it(tmp_path, capsys):
    db = tmp_path / "g.db"
    camp = Campaign.create(db, policy="optkg", items=["a", "b"], budget=2,
                           labels=["no", "yes"])
    camp.record([(q.item, "u", "yes") for q in camp.next(2)])
    (tmp_path / "gold.csv").write_text("item,label\na,yes\nb,maybe\nzzz,no\n")
    assert main(["campaign", "status", str(db), "--gold", str(tmp_path / "gold.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert "label: expected one of the label classes ['no', 'yes'], found 'maybe'" in err
    labels = tmp_path / "l.csv"  # the same gold refused by `aggregate --gold`, same words
    labels.write_text("task,worker,label\na,u,yes\nb,u,no\n")
    assert main(["aggregate", str(labels), "--gold", str(tmp_path / "gold.csv")]) == 2
    assert "expected one of the label classes ['no', 'yes'], found 'maybe'" in \
        capsys.readouterr().err
    with pytest.raises(InputError, match="found 'maybe'"):
        camp.status(gold={"a": "yes", "b": "maybe"})
    st = camp.status(gold={"a": "yes", "b": "no", "elsewhere": "no"})  # other items: dropped
    assert st["gold_items"] == 2 and st["accuracy"] == 0.5


# ----------------------------------------------------------------------------- the file
def test_record_gives_up_on_a_held_lock_after_wait(tmp_path):
    db = tmp_path / "w.db"
    camp = Campaign.create(db, policy="optkg", items=["a", "b"], budget=2)
    qs = camp.next(2)
    camp.close()
    (tmp_path / "a.csv").write_text("item,worker,label\n" + "".join(f"{q.item},u,1\n"
                                                                      for q in qs))
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    other.execute("UPDATE campaign SET seq = seq")
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "crowdopt", "campaign", "record", str(db),
                        str(tmp_path / "a.csv"), "--wait", "1"], capture_output=True,
                       text=True, timeout=120)
    took = time.monotonic() - t0
    other.execute("ROLLBACK")
    other.close()
    assert r.returncode == 6 and "locked" in r.stderr and len(r.stderr.splitlines()) == 1
    assert took < 1 + 4  # --wait counts from the command's start (start-up slack on 2 cores)
    assert Campaign.open(db).status()["spent"] == 0  # nothing was recorded


def test_a_file_on_a_read_only_mount_gives_status_export_and_events(tmp_path):
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1): cannot make a read-only mount")
    d, ro = tmp_path / "d", tmp_path / "ro"
    d.mkdir()
    ro.mkdir()
    camp = Campaign.create(d / "r.db", policy="optkg", items=["a", "b", "c"], budget=3)
    camp.record([(q.item, "u", 1) for q in camp.next(2)])
    camp.close()
    cmd = [sys.executable, "-m", "crowdopt", "campaign"]
    script = " && ".join([f"mount --bind {d} {ro}", f"mount -o remount,ro,bind {ro}",
                          " ".join([*cmd, "status", f"{ro}/r.db", "--json"]) + " > "
                          f"{tmp_path}/st.json",
                          " ".join([*cmd, "export", f"{ro}/r.db"]) + f" > {tmp_path}/ex.csv",
                          " ".join([*cmd, "events", f"{ro}/r.db", "--json"]) + " > "
                          f"{tmp_path}/ev.json"])
    r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                       timeout=300)
    if "mount" in r.stderr and "permission" in r.stderr.lower():
        pytest.skip(f"no read-only mount here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    st = json.loads((tmp_path / "st.json").read_text())
    assert st["spent"] == 2 and st["labelled"] == 2
    assert len((tmp_path / "ex.csv").read_text().splitlines()) == 3
    assert json.loads((tmp_path / "ev.json").read_text())["totals"]["pending"] == 0
    assert sorted(p.name for p in d.iterdir()) == ["r.db"]  # nothing written beside it


@pytest.mark.parametrize("campaign_at", STORES, indirect=True)
def test_events_are_written_with_their_answers_and_listed_by_state(campaign_at, capsys):
    from crowdopt.campaign.webhooks import Delivery, register

    db = campaign_at("e.db")
    camp = Campaign.create(db, policy="optkg", items=["a", "b"], budget=2)
    camp.record([(q.item, "u", 1) for q in camp.next(1)])  # no endpoint yet: no event
    register(db, ["http://127.0.0.1:9/nobody"])  # port 9: nothing listens
    camp.record([(q.item, "u", 1) for q in camp.next(1)])
    assert main(["campaign", "events", str(db), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # the answers event, the 75 % and 100 % thresholds (50 % was crossed before) and done
    assert doc["totals"] == {"pending": 4, "delivered": 0, "failed": 0}
    assert [d["kind"] for d in doc["deliveries"]] == ["done", "budget", "budget", "answers"]
    hooks = Delivery(db, b"k", horizon=0.0, poll=0.05)  # past the horizon at once: failed
    deadline = time.monotonic() + 30
    while hooks.pending() and time.monotonic() < deadline:
        time.sleep(0.05)
    hooks.close()
    assert main(["campaign", "events", str(db), "--state", "failed"]) == 0
    out = capsys.readouterr().out
    assert "0 pending, 0 delivered, 4 failed" in out and "nobody" in out
