"""Fetching data sets by name through the real download code, from a mirror on 127.0.0.1
built from the data folder the tests find (never the internet): bytes equal, hashes checked,
corrupt, truncated, over-long and missing files refused in one line, interrupted downloads
leave no file behind and resume, a deadline for each file, downloads off means off, a file
changed after its download refused on first read."""

from __future__ import annotations

import json

import pytest
from mirror_server import Mirror

from crowdopt import datapath
from crowdopt.cli import main
from crowdopt.dataset_catalogue import catalogue, entry, sha256_of
from crowdopt.errors import InputError

RTE = "rte/rte.standardized.csv"


@pytest.fixture
def mirror(data_dir):
    with Mirror(data_dir) as m:
        yield m


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A user's machine: no shared folder, no $CROWDOPT_DATA, an empty per-user cache,
    downloads allowed (the suite runs offline otherwise)."""
    for var in ("CROWDOPT_DATA", "CROWDOPT_DATASETS_MIRROR", "CROWDOPT_OFFLINE"):
        monkeypatch.setenv(var, "")  # restored after the test, also when main() sets it
        monkeypatch.delenv(var)
    monkeypatch.setattr(datapath, "_shared_candidates", lambda: [])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return datapath.cache_dir()


def _files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.mark.slow
def test_catalogue_matches_the_readers():
    from crowdopt.crowd.datasets import DATASETS
    from crowdopt.sim.uci import PRESETS

    cat = catalogue()
    assert [n for n in cat if cat[n].kind == "labels"] == list(DATASETS)
    assert [n for n in cat if cat[n].kind == "uci"] == list(PRESETS)
    for name, spec in DATASETS.items():
        assert [f.path for f in cat[name].files] == list(spec.files)
    for e in cat.values():
        assert e.licence and e.citation and e.references
        for f in e.files:
            assert len(f.sha256) == 64 and f.size > 0 and len(f.commit) == 40
            assert f.url.startswith(f"https://raw.githubusercontent.com/{f.repo}/{f.commit}/")


def test_catalogue_hashes_equal_the_shared_files(data_dir):
    for e in catalogue().values():
        for f in e.files:
            p = data_dir / f.path
            assert p.stat().st_size == f.size and sha256_of(p) == f.sha256, f.path


def test_fetch_from_mirror_gives_the_same_bytes(data_dir, mirror, machine):
    datapath.fetch_set("web", mirror=mirror.url(), progress=False)
    for f in entry("web").files:
        assert (machine / f.path).read_bytes() == (data_dir / f.path).read_bytes()
    assert _files(machine) == sorted(f.path for f in entry("web").files)  # nothing else


@pytest.mark.parametrize("kind, says", [("corrupt", "SHA-256"), ("truncated", "SHA-256"),
                                        ("missing", "HTTP 404")])
def test_bad_source_is_refused_in_one_line(data_dir, mirror, machine, kind, says):
    with pytest.raises(InputError) as exc:
        datapath.fetch_set("rte", mirror=mirror.url(kind), progress=False)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(RTE) and says in msg
    if kind != "missing":
        assert f"expected SHA-256 {entry('rte').files[0].sha256}, found SHA-256 " in msg
    assert _files(machine) == []  # no final file, no partial one


def test_interrupted_fetch_leaves_no_file_and_resumes(data_dir, mirror, machine):
    with pytest.raises(InputError, match="interrupted; run the same command again"):
        datapath.fetch_set("rte", mirror=mirror.url("drop"), progress=False)
    assert not (machine / RTE).exists()
    with pytest.raises(InputError, match="CROWDOPT_DATA.*crowdopt datasets fetch rte"):
        datapath.set_folder("rte", fetch=False)  # nothing half-written is ever read
    partial = machine / datapath.PARTIAL_DIR / (RTE + ".part")
    have = partial.stat().st_size
    assert 0 < have < entry("rte").files[0].size
    mirror.requests.clear()
    datapath.fetch_set("rte", mirror=mirror.url(), progress=False)
    assert mirror.requests == [("good", RTE, f"bytes={have}-")]  # only the rest was asked for
    assert (machine / RTE).read_bytes() == (data_dir / RTE).read_bytes()
    assert _files(machine) == [RTE]


def test_server_without_range_restarts_cleanly(data_dir, mirror, machine):
    with pytest.raises(InputError):
        datapath.fetch_set("rte", mirror=mirror.url("drop"), progress=False)
    datapath.fetch_set("rte", mirror=mirror.url("norange"), progress=False)
    assert (machine / RTE).read_bytes() == (data_dir / RTE).read_bytes()
    assert _files(machine) == [RTE]


def test_stalled_server_times_out(data_dir, mirror, machine):
    with pytest.raises(InputError, match=r"stopped at the 0.1 s deadline \(--timeout\); run "
                                         "the same command again to resume"):
        datapath.fetch_set("bluebirds", mirror=mirror.url("slow"), progress=False, timeout=0.1)
    assert not (machine / "bluebirds").exists()


def test_timeout_is_a_deadline_not_an_idle_time(data_dir, mirror, machine):
    """A source that keeps sending a little (16 bytes every 50 ms) never lets a read time out;
    the deadline stops it all the same (without one this download takes 3 minutes)."""
    with pytest.raises(InputError, match=r"found \d+ .*stopped at the 0.5 s deadline"):
        datapath.fetch_set("bluebirds", mirror=mirror.url("trickle"), progress=False,
                           timeout=0.5)
    partial = machine / datapath.PARTIAL_DIR / "bluebirds" / "answer.csv.part"
    assert 0 < partial.stat().st_size < entry("bluebirds").files[0].size
    assert not (machine / "bluebirds").exists()


@pytest.mark.parametrize("timeout", ["1e308", "inf", "nan", "0", "-1", "1e10"])
def test_timeout_is_range_checked(machine, capsys, timeout):
    assert main(["datasets", "fetch", "gal_toy", "--timeout", timeout]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--timeout" in err[0]
    with pytest.raises(InputError, match=r"^--timeout: expected seconds in \(0, 1e\+09\]"):
        datapath.fetch_set("gal_toy", timeout=float(timeout), progress=False)


@pytest.mark.parametrize("kind", ["endless", "long"])
def test_a_source_sending_too_much_is_stopped_at_the_size(data_dir, mirror, machine,
                                                          monkeypatch, kind):
    """A mirror that streams without end (or announces more than the file) never grows the
    partial file past the catalogue's size: the download stops and is refused in one line."""
    import crowdopt.download as dl

    written = []

    class Bar:  # counts what the download writes (every written block goes through it)
        def __init__(self, *a, **k):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n, *a):
            written.append(n)

    monkeypatch.setattr(dl, "ProgressBar", Bar)
    with pytest.raises(InputError) as exc:
        datapath.fetch_set("rte", mirror=mirror.url(kind), progress=False, timeout=30)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(RTE) and "sent past the end of the file" in msg
    assert sum(written) <= entry("rte").files[0].size
    assert _files(machine) == []  # no final file, no partial one


def _aggregate(capsys, name: str) -> float:
    assert main(["aggregate", f"dataset:{name}", "--method", "dawid-skene", "--json"]) == 0
    return json.loads(capsys.readouterr().out)["accuracy"]


@pytest.mark.slow
def test_fetch_then_aggregate_as_with_the_shared_folder(data_dir, mirror, machine, capsys,
                                                        monkeypatch):
    """The user's path: `crowdopt datasets fetch rte` from a mirror, then `aggregate
    dataset:rte` reads the cache and gives the shared folder's accuracy (0.92875)."""
    assert main(["datasets", "fetch", "rte", "--mirror", mirror.url(), "--quiet"]) == 0
    assert "rte: fetched in" in capsys.readouterr().out
    assert main(["datasets", "path", "rte"]) == 0
    assert capsys.readouterr().out.strip() == str(machine.resolve() / "rte")
    monkeypatch.setenv("CROWDOPT_OFFLINE", "1")  # from here on, the cache alone
    cached = _aggregate(capsys, "rte")
    monkeypatch.setenv("CROWDOPT_DATA", str(data_dir))
    assert cached == _aggregate(capsys, "rte") == 0.92875


def test_dataset_is_fetched_on_first_use(data_dir, mirror, machine, capsys, monkeypatch):
    monkeypatch.setenv("CROWDOPT_DATASETS_MIRROR", mirror.url())
    assert _aggregate(capsys, "bluebirds") > 0.5
    assert (machine / "bluebirds" / "answer.csv").is_file()


EVERY_WAY = ("crowdopt datasets fetch rte", "--mirror URL", "CROWDOPT_DATASETS_MIRROR",
             "CROWDOPT_DATA")


@pytest.mark.parametrize("argv", [["--offline", "aggregate", "dataset:rte"],
                                  ["aggregate", "dataset:rte", "--offline"],
                                  ["aggregate", "--offline", "dataset:rte", "--method", "mv"]])
def test_offline_refuses_in_one_line_naming_every_way_to_the_data(machine, capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and all(w in err[0] for w in EVERY_WAY), err
    assert "--offline or CROWDOPT_OFFLINE=1" in err[0] and str(machine) in err[0]
    assert _files(machine) == [] if machine.exists() else True


@pytest.mark.parametrize("argv, env", [
    (["--offline", "datasets", "fetch", "gal_toy"], {}),
    (["datasets", "fetch", "gal_toy", "--offline"], {}),
    (["datasets", "fetch", "gal_toy"], {"CROWDOPT_OFFLINE": "1"}),
    (["datasets", "fetch", "gal_toy", "--force"], {"CROWDOPT_OFFLINE": "yes"}),
])
def test_offline_stops_datasets_fetch_too(data_dir, mirror, machine, capsys, monkeypatch,
                                          argv, env):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert main([*argv, "--mirror", mirror.url(), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "downloads are off" in err[0], err
    assert mirror.requests == [] and _files(machine) == []


def test_global_options_after_the_command(data_dir, mirror, machine, capsys):
    assert main(["aggregate", "dataset:temp", "--method", "mv", "--mirror", mirror.url()]) == 0
    assert main(["replay", "lsol", "gal_toy", "--mirror", mirror.url(), "--quiet"]) == 0
    assert _files(machine) == sorted(f.path for n in ("gal_toy", "temp")
                                     for f in entry(n).files)
    assert main(["datasets", "verify", "temp", "--offline"]) == 0  # a command's own options too


def test_replay_fetches_once_per_command_and_keeps_the_whole_message(data_dir, mirror, machine,
                                                                     capsys):
    """`replay lsol NAME --runs N` tries the download once, not once per run, and its one
    line is the download's whole message (URL and advice)."""
    url = mirror.url("missing")
    argv = ["replay", "lsol", "bluebirds", "--runs", "3", "--order", "shuffle", "--quiet"]
    assert main([*argv, "--mirror", url]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(mirror.requests) == 1  # the first file's 404 stops it
    assert len(err) == 1 and f"{url}bluebirds/answer.csv" in err[0] and "HTTP 404" in err[0]
    mirror.requests.clear()
    assert main([*argv, "--mirror", mirror.url(), "--jobs", "2"]) == 0
    assert sorted(rel for _, rel, _ in mirror.requests) == [f.path for f in
                                                            entry("bluebirds").files]


@pytest.mark.parametrize("paper", ["olas", "lsol", "optkg", "cltap", "selection"])
def test_every_reproduce_without_its_data_exits_2_before_any_work(machine, capsys, tmp_path,
                                                                   paper):
    out = tmp_path / "out"
    assert main(["--offline", "reproduce", paper, "-o", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "crowdopt datasets fetch" in err[0] and "CROWDOPT_DATA" in err[0]
    assert not out.exists()


def test_load_dataset_takes_mirror_data_dir_and_offline(data_dir, mirror, machine, tmp_path):
    """Python's way to the data: the arguments win over the environment (the suite runs with
    CROWDOPT_OFFLINE=1 and no mirror)."""
    from crowdopt.crowd.datasets import load_table
    from crowdopt.errors import DataError

    mine = tmp_path / "mine"
    with pytest.raises(DataError, match="CROWDOPT_DATASETS_MIRROR"):
        load_table("gal_toy", data_dir=mine, offline=True)
    table, gold = load_table("gal_toy", mirror=mirror.url(), data_dir=mine, offline=False)
    assert table.n_labels == 25 and gold.n == 5
    assert _files(mine) == sorted(f.path for f in entry("gal_toy").files)
    assert load_table("gal_toy", data_dir=mine, offline=True)[0].n_labels == 25
    assert not machine.exists() or _files(machine) == []  # nothing went to the cache
    pd = pytest.importorskip("pandas")
    df, g = __import__("crowdopt.crowd", fromlist=["load_dataset"]).load_dataset(
        "gal_toy", mirror=mirror.url("missing"), data_dir=mine, offline=False)
    assert isinstance(df, pd.DataFrame) and len(df) == 25 and len(g) == 5


def test_a_file_changed_after_download_is_refused_on_first_read(data_dir, mirror, machine,
                                                                capsys):
    import os

    datapath.fetch_set("gal_toy", mirror=mirror.url(), progress=False)
    assert main(["aggregate", "dataset:gal_toy", "--method", "mv"]) == 0
    capsys.readouterr()
    path = machine / entry("gal_toy").files[0].path
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([lines[1], lines[0], *lines[2:]]))  # two rows swapped, same size
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert main(["aggregate", "dataset:gal_toy", "--method", "mv"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0], err
    assert "`crowdopt datasets fetch gal_toy --force`" in err[0]
    assert main(["datasets", "fetch", "gal_toy", "--force", "--quiet", "--mirror",
                 mirror.url()]) == 0
    assert main(["aggregate", "dataset:gal_toy", "--method", "mv"]) == 0


def test_complete_root_and_missing_sets_follow_the_lookup(data_dir, mirror, machine):
    """What the `data_dir` fixture asks: the cache `datasets fetch` fills counts as much as
    $CROWDOPT_DATA."""
    assert datapath.complete_root(["gal_toy"]) is None
    assert "gal_toy" in datapath.missing_sets()
    datapath.fetch_set("gal_toy", mirror=mirror.url(), progress=False)
    assert datapath.complete_root(["gal_toy"]) == machine.resolve()
    assert "gal_toy" not in datapath.missing_sets() and datapath.complete_root() is None


def test_verify_finds_a_changed_file(data_dir, mirror, machine, capsys):
    datapath.fetch_set("gal_toy", mirror=mirror.url(), progress=False)
    assert main(["datasets", "verify", "gal_toy"]) == 0
    capsys.readouterr()
    path = machine / entry("gal_toy").files[0].path
    path.write_bytes(path.read_bytes()[::-1])  # same size, other bytes
    assert main(["datasets", "verify", "gal_toy"]) == 5
    err = capsys.readouterr().err
    assert f"{path}: expected SHA-256 {entry('gal_toy').files[0].sha256}" in err
    assert main(["datasets", "verify", "rte"]) == 2  # not on this machine


def test_verify_on_the_shared_folder_reports_every_set_equal(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("CROWDOPT_DATA", str(data_dir))
    assert main(["datasets", "verify", "--json"]) == 0
    sets = json.loads(capsys.readouterr().out)["sets"]
    assert len(sets) == len(catalogue()) and {s["status"] for s in sets} == {"ok"}


def test_bad_mirror_url_is_refused(machine, capsys):
    assert main(["datasets", "fetch", "rte", "--mirror", "ftp://example.org/x"]) == 2
    assert "--mirror: expected an http://, https:// or file:// base URL" in capsys.readouterr().err


def test_file_url_mirror(data_dir, machine):
    datapath.fetch_set("gal_toy", mirror=data_dir.as_uri(), progress=False)
    assert _files(machine) == sorted(f.path for f in entry("gal_toy").files)


@pytest.mark.slow
def test_load_dataset_in_crowd_kit_shape(data_dir, monkeypatch):
    pytest.importorskip("pandas")
    from crowdopt.crowd import load_dataset

    monkeypatch.setenv("CROWDOPT_DATA", str(data_dir))
    df, gold = load_dataset("rte")
    assert list(df.columns) == ["worker", "task", "label"] and len(df) == 8000
    assert gold.name == "true_label" and gold.index.name == "task" and len(gold) == 800
    assert set(gold.index) == set(df["task"])


@pytest.mark.slow
def test_gold_option_takes_a_dataset(data_dir, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CROWDOPT_DATA", str(data_dir))
    labels = str(data_dir / "bluebirds" / "answer.csv")
    assert main(["aggregate", labels, "--gold", "dataset:bluebirds", "--json"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert main(["aggregate", "dataset:bluebirds", "--json"]) == 0
    b = json.loads(capsys.readouterr().out)
    assert a["accuracy"] == b["accuracy"] and a["gold_tasks"] == 108


def test_concurrent_fetches_take_turns(data_dir, mirror, machine):
    import threading

    errors = []

    def run():
        try:
            datapath.fetch_set("web", mirror=mirror.url(), progress=False)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert _files(machine) == sorted(f.path for f in entry("web").files)
    assert sum(kind == "good" for kind, _, _ in mirror.requests) == 2  # each file once


def test_unwritable_download_folder_is_one_line(mirror, machine, tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv("CROWDOPT_DATA", str(tmp_path / "afile" / "data"))
    with pytest.raises(InputError, match="download folder: expected a writable folder"):
        datapath.fetch_set("gal_toy", mirror=mirror.url(), progress=False)


def test_uci_set_is_fetched_on_first_use(data_dir, mirror, machine, monkeypatch):
    from crowdopt.sim.uci import load_uci

    monkeypatch.setenv("CROWDOPT_DATASETS_MIRROR", mirror.url())
    d = load_uci("heart", seed=None)
    assert d.X.shape == (270, 13) and int(d.y.sum()) == 120
    assert _files(machine) == ["uci/heart/heart.dat"]


def test_global_mirror_flag_reaches_a_first_use_fetch(data_dir, mirror, machine, capsys):
    assert main(["--mirror", mirror.url(), "datasets", "fetch", "gal_toy", "--quiet"]) == 0
    assert main(["--mirror", mirror.url(), "aggregate", "dataset:temp", "--method", "mv"]) == 0
    assert _files(machine) == sorted(f.path for n in ("gal_toy", "temp")
                                     for f in entry(n).files)


def test_docs_table_lists_every_catalogued_set():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "datasets.md").read_text("utf-8")
    for e in catalogue().values():
        n = e.counts.get("items", e.counts.get("instances"))
        assert f"| `{e.name}` | {n:,} |" in text, e.name



def test_no_server_says_so_in_one_line(machine):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(InputError) as exc:
        datapath.fetch_set("gal_toy", mirror=f"http://127.0.0.1:{port}/", progress=False)
    msg = str(exc.value)
    assert "\n" not in msg and "found 0 (" in msg and "check the network" in msg
    assert all(w in msg for w in EVERY_WAY[1:]) and "crowdopt datasets fetch gal_toy" in msg
    assert _files(machine) == []


def test_load_dataset_without_pandas_is_one_line(data_dir, monkeypatch):
    import sys

    from crowdopt.crowd import load_dataset

    monkeypatch.setenv("CROWDOPT_DATA", str(data_dir))
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(InputError, match=r"^pandas: expected pandas installed \(pip install "
                                         r"crowdopt\[pandas\]\), found 'not installed'$"):
        load_dataset("gal_toy")
