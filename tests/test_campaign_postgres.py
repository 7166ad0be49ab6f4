"""Campaigns in PostgreSQL: many campaigns in one database, each a schema of its own; the
writers of a campaign serialized on its row (a writer waits at most its limit, then `Busy` with
nothing changed), readers never blocked by a writer, a serialization failure run again, URLs
checked at the boundary, passwords never shown. The scratch server of conftest.py."""

from __future__ import annotations

import json
import time
import uuid

import pytest

pytest.importorskip("psycopg")

from crowdopt.campaign import Campaign, core, store  # noqa: E402
from crowdopt.campaign.store_postgres import parse_url, redact  # noqa: E402
from crowdopt.cli import main  # noqa: E402
from crowdopt.errors import InputError  # noqa: E402

pytestmark = pytest.mark.postgres


def name() -> str:
    return f"pg_{uuid.uuid4().hex[:12]}"


def test_urls_are_checked_and_passwords_never_shown():
    assert parse_url("postgresql://u:pw@h:5433/db?campaign=job_1&sslmode=require") == (
        "postgresql://u:pw@h:5433/db?sslmode=require", "job_1")
    assert redact("postgresql://u:secret@h/db?campaign=x") == "postgresql://u:***@h/db?campaign=x"
    for bad in ("postgresql://h/db", "postgresql://h/db?campaign=Job",
                "postgresql://h/db?campaign=a-b", "postgresql://h/?campaign=x",
                "postgresql://h/db?campaign=x&campaign=y", "postgresql://h/db?campaign=1x"):
        with pytest.raises(InputError, match="DB: expected postgresql://"):
            parse_url(bad)
    with pytest.raises(InputError) as e:
        parse_url("postgresql://u:topsecret@h/db")
    assert "topsecret" not in str(e.value)


def test_many_campaigns_in_one_database_keep_apart(postgres):
    a = Campaign.create(postgres.url(campaign=name()), policy="optkg", items=["x", "y"],
                        budget=2)
    b = Campaign.create(postgres.url(campaign=name()), policy="optkg", items=["x", "y", "z"],
                        budget=3, seed=5)
    a.record([(q.item, "u", 1) for q in a.next(2)])
    assert b.status()["spent"] == 0 and a.status()["spent"] == 2
    assert b.next(3) and b.status()["reserved"] == 3 and a.status()["reserved"] == 0
    with pytest.raises(InputError, match="a new campaign"):
        Campaign.create(a.store.location.replace("***", ""), policy="optkg", items=["q"],
                        budget=1)  # (no password here: the URL as given)
    with pytest.raises(InputError, match="an existing campaign"):
        Campaign.open(postgres.url(campaign=name()))


def test_a_bad_init_creates_nothing_and_an_unreachable_server_is_one_line(postgres, capsys):
    url = postgres.url(campaign=name())
    with pytest.raises(InputError):
        Campaign.create(url, policy="optkg", items=["a", "a"], budget=1)  # duplicate ids
    with pytest.raises(InputError, match="an existing campaign"):
        Campaign.open(url)  # nothing half-made
    Campaign.create(url, policy="optkg", items=["a"], budget=1).close()
    gone = f"postgresql://postgres@127.0.0.1:{postgres.port + 1}/crowdopt?campaign=x"
    assert main(["campaign", "status", gone]) == 6
    err = capsys.readouterr().err.strip()
    assert "cannot connect" in err and len(err.splitlines()) == 1


def test_writers_wait_for_the_campaign_lock_readers_never_do(postgres):
    import psycopg

    url = postgres.url(campaign=name())
    camp = Campaign.create(url, policy="optkg", items=["a", "b", "c"], budget=3)
    camp.record([(q.item, "u", 1) for q in camp.next(1)])
    other = psycopg.connect(postgres.url(), autocommit=True)
    other.execute(f'SET search_path TO "campaign_{url.rsplit("=", 1)[1]}"')
    other.execute("BEGIN")
    other.execute("SELECT 1 FROM campaign FOR UPDATE")  # another server's writer
    t0 = time.monotonic()
    st = Campaign.open(url, readonly=True).status()  # a reader: at once
    assert st["spent"] == 1 and time.monotonic() - t0 < 5
    busy = Campaign.open(url, busy_timeout=0.2)
    t0 = time.monotonic()
    with pytest.raises(core.Busy, match="held the campaign's lock"):
        busy.next(1)
    assert time.monotonic() - t0 < 10
    other.execute("ROLLBACK")
    other.close()
    assert len(busy.next(2)) == 2  # nothing half-done: it goes on
    assert camp.status()["reserved"] == 2


def test_a_serialization_failure_is_run_again_and_counted_once(postgres, monkeypatch):
    import psycopg

    url = postgres.url(campaign=name())
    camp = Campaign.create(url, policy="optkg", items=["a", "b", "c", "d"], budget=4)
    qs = camp.next(2)
    real = type(camp.store).commit
    fails = [2]

    def commit(self):
        if fails[0]:  # the database refuses the transaction at its commit
            fails[0] -= 1
            self.rollback()
            raise psycopg.errors.SerializationFailure("could not serialize access")
        real(self)

    monkeypatch.setattr(type(camp.store), "commit", commit)
    res = camp.record([(q.item, "u", 1) for q in qs])
    assert fails == [0] and res["stored"] == 2 and res["spent"] == 2
    assert [r["status"] for r in res["results"]] == ["stored", "stored"]
    monkeypatch.setattr(type(camp.store), "commit", real)
    fresh = Campaign.open(url, readonly=True).status()
    assert fresh["answers"] == 2 and fresh["spent"] == 2  # once, not three times
    fails[0] = 10**6  # never serializable: given up after CONFLICT_TRIES, nothing changed
    monkeypatch.setattr(type(camp.store), "commit", commit)
    with pytest.raises(store.Conflict):
        camp.next(1)
    monkeypatch.setattr(type(camp.store), "commit", real)
    assert Campaign.open(url, readonly=True).status()["reserved"] == 0


def test_the_cli_speaks_to_a_postgresql_campaign(postgres, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    n = name()
    url = postgres.url(campaign=n)
    (tmp_path / "items.csv").write_text("item\na\nb\nc\n")
    assert main(["campaign", "init", url, "--policy", "optkg", "--items", "items.csv",
                 "--budget", "3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["name"] == n and doc["token_file"] == f"{n}.token"
    assert (tmp_path / f"{n}.token").stat().st_mode & 0o777 == 0o600
    assert main(["campaign", "next", url, "--n", "2", "--json"]) == 0
    qs = json.loads(capsys.readouterr().out)["queries"]
    (tmp_path / "a.csv").write_text("item,worker,label\n" + "".join(
        f"{q['item']},w,1\n" for q in qs))
    assert main(["campaign", "record", url, "a.csv"]) == 0
    capsys.readouterr()
    assert main(["campaign", "status", url, "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["spent"] == 2 and st["campaign"] == url
    assert main(["campaign", "export", url]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3
    assert main(["campaign", "token", url, "--role", "read"]) == 0
    assert (tmp_path / f"{n}.read-token").read_text().strip() != doc["read_token_file"]


def test_batches_as_arrays_equal_row_by_row(postgres):
    """A batch runs as one statement over arrays: the parsed column types are the database's,
    every batch statement of the stores takes that route, and a batch leaves the tables as
    row-by-row execution does (an UPDATE naming a row twice, a float in an int column: row by
    row, as before)."""
    import re
    from pathlib import Path

    from crowdopt.campaign import store_postgres as sp

    url = postgres.url(campaign=name())
    camp = Campaign.create(url, policy="optkg", items=[f"i{k}" for k in range(6)], budget=50)
    st = camp.store
    got = {(t, c): ty for t, cols in sp._column_types(sp.SCHEMA).items()
           for c, (ty, _) in cols.items()}
    db = {(t, c): ty for t, c, ty in st.conn.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = %s", (st.schema,)).fetchall()}
    assert got == db
    src = "".join(Path(m.__file__).read_text() for m in (store, sp))
    batches = [re.sub(r'"\s*"', "", q) for q in re.findall(r'_many\(\s*"((?:[^"]|"\s*")+)"', src)]
    assert len(batches) >= 15
    assert all(sp._as_arrays(sp._translate(q)) is not None for q in batches), batches

    def rows_of(table):
        return {r[0]: r for r in st.conn.execute(f"SELECT * FROM {table}").fetchall()}

    ids = [q.id for q in camp.next(6)]
    cols = [d.name for d in st.conn.execute("SELECT * FROM queries LIMIT 0").description]
    h, lu, lt = cols.index("handed"), cols.index("lease_until"), cols.index("leased_to")
    before = rows_of("queries")
    calls = []
    real = st.conn.cursor

    class Spy:  # row-by-row execution, counted
        def __init__(self):
            self.cur = real()

        def executemany(self, sql, rows):
            calls.append(len(rows))
            return self.cur.executemany(sql, rows)

        def __getattr__(self, attr):
            return getattr(self.cur, attr)

    sql = "UPDATE queries SET handed = handed + 1, lease_until = ?, leased_to = ? WHERE id = ?"
    st.conn.cursor = Spy
    try:
        st.begin(True)
        st._many(sql, [(5.0, "w", q) for q in ids[:3]])  # distinct rows: arrays
        st._many(sql, [(6.0, "v", ids[3]), (7.0, "v", ids[3])])  # one row twice: row by row
        st._many(sql, [(8.0, "u", q) for q in ids[4:]])
        st.commit()
    finally:
        st.conn.cursor = real
    assert calls == [2]
    after = rows_of("queries")
    want = {**{q: (1, 5.0, "w") for q in ids[:3]}, ids[3]: (2, 7.0, "v"),
            **{q: (1, 8.0, "u") for q in ids[4:]}}
    for q, (n, until, who) in want.items():
        assert (after[q][h], after[q][lu], after[q][lt]) == (before[q][h] + n, until, who)
    camp.close()
