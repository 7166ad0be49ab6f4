"""Where the real data sets live, and how a missing one gets there (never in the repo).

A set's files are looked up, in order, in $CROWDOPT_DATA (when set; else the shared folder
../shared/data when present) and the per-user cache (`cache_dir()`). A set found in none of
them is fetched, verified by SHA-256, into $CROWDOPT_DATA when set, else the cache, from the
public sources of the catalogue or from a mirror laid out like the shared folder
(FOLDER/FILE; `--mirror URL` or $CROWDOPT_DATASETS_MIRROR). CROWDOPT_OFFLINE=1 (or
`crowdopt --offline`) refuses to download.
"""

from __future__ import annotations

import os
import sys
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .dataset_catalogue import catalogue, entry
from .errors import InputError

PARTIAL_DIR = ".partial"  # interrupted downloads, kept outside the FOLDER/FILE layout


def _shared_candidates() -> list[Path]:
    """The shared folder next to the working directory or next to the source tree."""
    return [Path.cwd() / ".." / "shared" / "data",
            Path(__file__).resolve().parents[3] / "shared" / "data"]  # src/crowdopt -> repo/..


def data_root(required: bool = True) -> Path | None:
    """The shared data folder ($CROWDOPT_DATA, else ../shared/data); InputError (or None)
    when it is absent. Sets fetched into the cache are not in it: see `set_folder`."""
    env = os.environ.get("CROWDOPT_DATA")
    candidates = [Path(env)] if env else _shared_candidates()
    for c in candidates:
        if c.is_dir():
            return c.resolve()
    if required:
        raise InputError("CROWDOPT_DATA", "a folder holding the shared data sets",
                         str(candidates[0]))
    return None


def cache_dir() -> Path:
    """The per-user cache folder: $XDG_CACHE_HOME/crowdopt (default ~/.cache/crowdopt),
    ~/Library/Caches/crowdopt on macOS, %LOCALAPPDATA%/crowdopt/Cache on Windows."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "crowdopt" / "Cache"
    if sys.platform == "darwin" and not os.environ.get("XDG_CACHE_HOME"):
        return Path.home() / "Library" / "Caches" / "crowdopt"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "crowdopt"


def download_dir() -> Path:
    """Where fetched files go: $CROWDOPT_DATA when set, else the per-user cache."""
    env = os.environ.get("CROWDOPT_DATA")
    return Path(env) if env else cache_dir()


def search_dirs() -> list[Path]:
    """The folders a set's files are looked up in, first match wins."""
    env = os.environ.get("CROWDOPT_DATA")
    first = [Path(env)] if env else [c for c in _shared_candidates() if c.is_dir()][:1]
    out = []
    for d in [*first, cache_dir()]:
        if d not in out:
            out.append(d)
    return out


def offline() -> bool:
    """True when downloads are refused (CROWDOPT_OFFLINE=1/true/yes/on)."""
    return os.environ.get("CROWDOPT_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def mirror_url(mirror: str | None = None) -> str | None:
    """The mirror base URL (`mirror`, else $CROWDOPT_DATASETS_MIRROR), checked; None: use the
    public sources."""
    url = mirror if mirror is not None else os.environ.get("CROWDOPT_DATASETS_MIRROR") or None
    if url is None:
        return None
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme not in ("http", "https", "file"):
        raise InputError("--mirror", "an http://, https:// or file:// base URL", url)
    return url.rstrip("/") + "/"


def _present(folder: Path, files) -> bool:
    return all((folder / f.path).is_file() and (folder / f.path).stat().st_size == f.size
               for f in files)


def find_set(name: str) -> Path | None:
    """The first search folder holding every file of catalogue set `name` (at its catalogued
    size), or None."""
    files = entry(name).files
    return next((d for d in search_dirs() if _present(d, files)), None)


def set_folder(name: str, *, fetch: bool = True, mirror: str | None = None,
               progress: bool = True) -> Path:
    """A folder holding every file of set `name`: found, or fetched into `download_dir()`
    (InputError when offline or `fetch` is False, naming the command that fetches it)."""
    found = find_set(name)
    if found is not None:
        return found.resolve()
    if not fetch or offline():
        why = "offline" if fetch else "not downloaded"
        raise InputError("CROWDOPT_DATA", f"a folder holding data set {name} ({why}: fetch it "
                         f"with `crowdopt datasets fetch {name}`)", str(download_dir()))
    fetch_set(name, mirror=mirror, progress=progress)
    return download_dir().resolve()


def fetch_set(name: str, *, mirror: str | None = None, force: bool = False,
              progress: bool = True, timeout: float = 60.0) -> list[Path]:
    """Download the files of set `name` missing from `download_dir()` (every file with
    `force`), each verified by SHA-256 before it is renamed into place. Processes fetching
    into the same folder take turns (a lock on its partial-files folder)."""
    from .download import download  # urllib.request: only when something is fetched

    base, root = mirror_url(mirror), download_dir()
    out = []
    try:
        with _fetch_lock(root / PARTIAL_DIR):
            for f in entry(name).files:
                dest = root / f.path
                if force or not _present(root, [f]):  # checked under the lock
                    url = base + urllib.parse.quote(f.path) if base else f.url
                    download(url, dest, root / PARTIAL_DIR / (f.path + ".part"), size=f.size,
                             sha256=f.sha256, label=f.path, timeout=timeout,
                             progress=progress)
                out.append(dest)
    except InputError:
        raise
    except OSError as exc:  # the folder, not the network (download() handles that)
        raise InputError("download folder", "a writable folder ($CROWDOPT_DATA or the cache)",
                         str(root), note=f"{type(exc).__name__}: {exc.strerror or exc}") from None
    return out


@contextmanager
def _fetch_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on `folder` (created) while downloading; none where the platform
    has no fcntl (Windows)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def data_file(*parts: str) -> Path:
    """A file under a data folder; a catalogued file is fetched with its set when missing.
    InputError naming it when it cannot be had."""
    rel = "/".join(parts)
    owner = next((e.name for e in catalogue().values()
                  if any(f.path == rel for f in e.files)), None)
    if owner is not None:
        return set_folder(owner) / rel
    root = data_root()
    path = root.joinpath(*parts)
    if not path.exists():
        raise InputError("data file", "an existing file under $CROWDOPT_DATA", str(path))
    return path
