"""Short runs of benchmarks/fault_campaign.py (the full runs are its command line): kill -9 of
the server and of `campaign record` under 4 honest clients with expiring leases and ghost
workers keep every invariant of a paid job, with one server on a SQLite file and with three
servers on one PostgreSQL campaign; a webhook receiver outage with a server restart in it loses
no event."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import fault_campaign  # noqa: E402


@pytest.mark.slow
def test_kill_9_ghosts_and_expiring_leases_keep_the_money_right(tmp_path):
    r = fault_campaign.fault_run(tmp_path, seconds=6.0, budget=200)
    assert r["server kills"] == 2 and r["cli kills"] >= 1
    assert r["ghost rows sent"] > 0 and r["ghost answers stored"] == 0
    assert r["ghost paid (reply)"] == 0
    assert r["spend over budget (reads)"] == 0 and r["final spent"] <= 200
    assert r["stored == confirmed"] and r["summary == replay"]
    assert r["without hand-out"] == r["other worker's hand-out"] == 0
    assert r["hand-outs paid twice"] == r["duplicate keys"] == 0
    assert fault_campaign.fault_ok(r)


@pytest.mark.slow
@pytest.mark.postgres
def test_three_servers_on_one_postgresql_campaign_keep_the_money_right(tmp_path, postgres):
    r = fault_campaign.fault_run(tmp_path, seconds=6.0, budget=200, store=postgres.url(),
                                 servers=3, server_kills=3)
    assert r["servers"] == 3 and r["server kills"] == 3 and r["cli kills"] >= 1
    assert r["ghost rows sent"] > 0 and r["ghost answers stored"] == 0
    assert r["spend over budget (reads)"] == 0 and r["final spent"] <= 200
    assert r["stored == confirmed"] and r["summary == replay"]
    assert r["without hand-out"] == r["other worker's hand-out"] == 0
    assert r["hand-outs paid twice"] == r["duplicate keys"] == r["outside its window"] == 0
    assert fault_campaign.fault_ok(r)


@pytest.mark.soak
@pytest.mark.postgres
def test_a_receiver_outage_on_postgresql_loses_no_event(tmp_path, postgres):
    r = fault_campaign.outage_run(tmp_path, outage=3.0, before=1.0, after=1.0, drain=60.0,
                                  store=postgres.url())
    assert r["events"] > 0 and r["lost"] == 0 and r["pending"] == 0 and r["failed"] == 0
    assert r["order kept"]


@pytest.mark.slow
def test_a_receiver_outage_with_a_server_restart_loses_no_event(tmp_path):
    r = fault_campaign.outage_run(tmp_path, outage=3.0, before=1.0, after=1.0, drain=60.0)
    assert r["events"] > 0 and r["lost"] == 0 and r["pending"] == 0 and r["failed"] == 0
    assert r["order kept"]
