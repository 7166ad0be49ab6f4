"""Fetching data sets by name through the real download code, from a mirror on 127.0.0.1
built from $CROWDOPT_DATA (never the internet): bytes equal, hashes checked, corrupt,
truncated and missing files refused in one line, interrupted downloads leave no file behind
and resume."""

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
    with pytest.raises(InputError, match="interrupted"):
        datapath.fetch_set("bluebirds", mirror=mirror.url("slow"), progress=False, timeout=0.1)
    assert not (machine / "bluebirds").exists()


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


def test_offline_refuses_in_one_line_naming_the_fetch_command(machine, capsys):
    assert main(["--offline", "aggregate", "dataset:rte"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "crowdopt datasets fetch rte" in err[0]
    assert _files(machine) == [] if machine.exists() else True


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
    if "this page is being written" in text:  # the placeholder, until the page has its table
        pytest.skip("docs/datasets.md is a placeholder")
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
    assert "\n" not in msg and "found 0 (" in msg and "--mirror URL" in msg
    assert _files(machine) == []


def test_load_dataset_without_pandas_is_one_line(data_dir, monkeypatch):
    import sys

    from crowdopt.crowd import load_dataset

    monkeypatch.setenv("CROWDOPT_DATA", str(data_dir))
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    with pytest.raises(InputError, match=r"^pandas: expected pandas installed \(pip install "
                                         r"crowdopt\[pandas\]\), found 'not installed'$"):
        load_dataset("gal_toy")
