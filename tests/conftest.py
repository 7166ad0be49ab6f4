"""Shared fixtures: the real-data folder (skips when absent), small seeds."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

from crowdopt import datapath

FETCH_ALL = "crowdopt datasets fetch --all"

# the local-search heuristics search 0.2 s instead of their 2 s default, here and in every CLI
# the suite starts (tests check what the searches return, never how good 2 s of search gets);
# a test of the default unsets it
os.environ.setdefault("CROWDOPT_SEARCH_TIME", "0.2")


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory):
    """A folder laid out FOLDER/FILE holding every catalogued data set, found the way the
    package finds a set ($CROWDOPT_DATA, else the shared folder, then the per-user cache that
    `crowdopt datasets fetch` fills); skips, naming the command that fetches them, when a set
    is on no search folder. Sets spread over several folders are gathered by symlinks."""
    root = datapath.complete_root()
    if root is not None:
        return root
    missing = datapath.missing_sets()
    if missing:
        where = ", ".join(str(d) for d in datapath.search_dirs())
        pytest.skip(f"real data sets not found ({len(missing)} missing, e.g. {missing[0]}; "
                    f"looked in {where}): run `{FETCH_ALL}` (from a mirror: --mirror URL) or "
                    "set CROWDOPT_DATA to a folder holding them")
    return _gathered(tmp_path_factory.mktemp("data"))


def _gathered(folder: Path) -> Path:
    """`folder` with a symlink to every catalogued file where the package finds its set."""
    from crowdopt.dataset_catalogue import catalogue

    for name, e in catalogue().items():
        src = datapath.find_set(name)
        for f in e.files:
            link = folder / f.path
            if not link.is_symlink():  # a file two sets share (trec2011, trec2011_all)
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to((src / f.path).resolve())
    return folder


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marker
def pytest_collection_modifyitems(config, items):
    """Tests that use `data_dir` are marked `data` (`-m data` runs them). Tests marked soak
    run only under `make soak` (CROWDOPT_SOAK=1): they are the long soundness campaigns
    (thousands of random instances) that `make test` samples; elsewhere they are deselected,
    not skipped, so a skip always means something is missing."""
    for item in items:  # `-m data` selects every test that reads the real data sets
        if "data_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.data)
    if os.environ.get("CROWDOPT_SOAK") == "1":
        return
    soak = [item for item in items if "soak" in item.keywords]
    if soak:
        config.hook.pytest_deselected(items=soak)
        items[:] = [item for item in items if "soak" not in item.keywords]


# ----------------------------------------------------------------------------- campaign stores
@pytest.fixture(scope="session")
def postgres():
    """A scratch PostgreSQL server of this test process (each xdist worker starts its own:
    no state is shared), stopped at the end; skips, with the reason, where none can run
    (no server binaries: Debian's postgresql package; no psycopg: the postgres extra)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from pg_scratch import ScratchPostgres, missing

    why = missing()
    if why:
        pytest.skip(why)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg not installed: pip install 'crowdopt[postgres]'")
    pg = ScratchPostgres()
    yield pg
    pg.stop()


@pytest.fixture
def campaign_at(request, tmp_path):
    """where(name) -> a new campaign target in the test's store: a file in tmp_path
    (`sqlite`, the default) or a campaign of its own in the scratch PostgreSQL database
    (`postgresql`). Tests run on both with `@pytest.mark.parametrize("campaign_at", STORES,
    indirect=True)` (`STORES` in campaign_db.py)."""
    kind = getattr(request, "param", "sqlite")
    if kind == "sqlite":
        return lambda name: tmp_path / name
    pg = request.getfixturevalue("postgres")

    def where(name: str) -> str:
        stem = "".join(c if c.isalnum() else "_" for c in name.split(".")[0].lower())
        return pg.url(campaign=f"t{uuid.uuid4().hex[:10]}_{stem}"[:48])
    return where


# Property tests explore new random cases locally; under CI (CI=true) they are derandomized so
# that a run is repeatable and a landing never depends on a lucky draw.
try:
    from hypothesis import settings

    settings.register_profile("ci", derandomize=True, print_blob=True)
    if os.environ.get("CI"):
        settings.load_profile("ci")
except ImportError:  # pragma: no cover - hypothesis is a test extra
    pass


# The suite never downloads: a data set that is not on this machine is an error (the download
# tests serve a mirror on 127.0.0.1 and lift this for themselves).
os.environ["CROWDOPT_OFFLINE"] = "1"
