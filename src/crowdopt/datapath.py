"""Where the real data sets live, and how a missing one gets there (never in the repo).

A set's files are looked up, in order, in $CROWDOPT_DATA (when set; else the shared folder
../shared/data when present) and the per-user cache (`cache_dir()`). A set found in none of
them is fetched, verified by size and SHA-256, into $CROWDOPT_DATA when set, else the cache,
from the public sources of the catalogue or from a mirror laid out like the shared folder
(FOLDER/FILE; `--mirror URL` or $CROWDOPT_DATASETS_MIRROR). CROWDOPT_OFFLINE=1 (or
`crowdopt --offline`) refuses every download. Python callers pass the same choices as
arguments (`data_dir`, `mirror`, `offline`), which win over the environment.

A file found on disk is checked against the catalogue's size and SHA-256 the first time this
process reads it (about 15 ms for all 29 MB of the catalogue), so a file changed after its
download is refused in one line naming `crowdopt datasets fetch NAME --force`.
"""

from __future__ import annotations

import os
import sys
import urllib.parse
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .dataset_catalogue import catalogue, entry, sha256_of
from .errors import DataError, InputError
from .validate import env_flag
from .validate import flag as _flag

PARTIAL_DIR = ".partial"  # interrupted downloads, kept outside the FOLDER/FILE layout
DEFAULT_TIMEOUT = 60.0  # seconds for each file's whole download (`--timeout`)
# (resolved path, size, mtime_ns) of the files whose SHA-256 this process found equal to the
# catalogue's: each file is hashed once per process, and again once it changes
_CHECKED: set[tuple[str, int, int]] = set()


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


def folder_arg(data_dir: Any, field: str = "data_dir") -> Path | None:
    """The `data_dir` argument as a Path (a text or os.PathLike), or None; bytes, a number or
    anything else is a one-line InputError naming the argument (never a TypeError)."""
    if data_dir is None:
        return None
    if isinstance(data_dir, str) or (isinstance(data_dir, os.PathLike)
                                     and isinstance(os.fspath(data_dir), str)):
        if not str(data_dir):
            raise InputError(field, "a folder path", "''")
        return Path(data_dir)
    raise InputError(field, "a folder path (a str or pathlib.Path)", data_dir)


def download_dir(data_dir: str | Path | None = None) -> Path:
    """Where fetched files go: `data_dir` when given, else $CROWDOPT_DATA when set, else the
    per-user cache."""
    if data_dir is not None:
        return folder_arg(data_dir)
    env = os.environ.get("CROWDOPT_DATA")
    return Path(env) if env else cache_dir()


def search_dirs(data_dir: str | Path | None = None) -> list[Path]:
    """The folders a set's files are looked up in, first match wins: `data_dir` (else
    $CROWDOPT_DATA, else the shared folder when there is one), then the cache."""
    env = os.environ.get("CROWDOPT_DATA")
    if data_dir is not None:
        first = [folder_arg(data_dir)]
    else:
        first = [Path(env)] if env else [c for c in _shared_candidates() if c.is_dir()][:1]
    out = []
    for d in [*first, cache_dir()]:
        if d not in out:
            out.append(d)
    return out


def offline(flag: Any = None) -> bool:
    """True when downloads are refused: the `offline` argument when given (True or False),
    else CROWDOPT_OFFLINE (true/false, 1/0, yes/no); anything else (offline="no",
    CROWDOPT_OFFLINE=maybe) is a one-line InputError naming it (`validate.flag`)."""
    if flag is not None:
        return _flag(flag, "offline")
    return env_flag("CROWDOPT_OFFLINE")


def mirror_url(mirror: Any = None, field: str = "mirror") -> str | None:
    """The mirror base URL (`mirror`, else $CROWDOPT_DATASETS_MIRROR), checked; None: use the
    public sources. `field` names the argument in messages (`--mirror` on the command
    line)."""
    if mirror is not None and not isinstance(mirror, str):
        raise InputError(field, "a base URL text (http://, https:// or file://)", mirror)
    if mirror is None:
        field = "CROWDOPT_DATASETS_MIRROR"
    url = mirror if mirror is not None else os.environ.get("CROWDOPT_DATASETS_MIRROR") or None
    if url is None:
        return None
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme not in ("http", "https", "file"):
        raise InputError(field, "an http://, https:// or file:// base URL", url)
    return url.rstrip("/") + "/"


def _present(folder: Path, files) -> bool:
    return all((folder / f.path).is_file() and (folder / f.path).stat().st_size == f.size
               for f in files)


def find_set(name: str, data_dir: str | Path | None = None) -> Path | None:
    """The first search folder holding every file of catalogue set `name` (at its catalogued
    size), or None."""
    files = entry(name).files
    return next((d for d in search_dirs(data_dir) if _present(d, files)), None)


def find_for_fetch(name: str, data_dir: str | Path | None = None) -> Path | None:
    """Where `datasets fetch` finds set `name` present: the first search folder holding it
    that the lookup reaches no later than the download folder (with $CROWDOPT_DATA set, a copy
    only in the cache does not count: fetch puts one where it was asked to)."""
    dirs, dest = search_dirs(data_dir), download_dir(data_dir)
    upto = dirs[: dirs.index(dest) + 1] if dest in dirs else dirs
    files = entry(name).files
    return next((d for d in upto if _present(d, files)), None)


def complete_root(names: Iterable[str] | None = None,
                  data_dir: str | Path | None = None) -> Path | None:
    """The first search folder holding every file of every set of `names` (default: the whole
    catalogue), resolved; None when no one folder holds them all."""
    files = [f for n in (catalogue() if names is None else names) for f in entry(n).files]
    return next((d.resolve() for d in search_dirs(data_dir) if _present(d, files)), None)


def missing_sets(names: Iterable[str] | None = None,
                 data_dir: str | Path | None = None) -> list[str]:
    """The sets of `names` (default: the whole catalogue) found in no search folder."""
    return [n for n in (catalogue() if names is None else names) if find_set(n, data_dir) is None]


def how_to_get(name: str) -> str:
    """What gets set `name` onto this machine, in a clause of a one-line message."""
    return (f"`crowdopt datasets fetch {name}` gets it (from a mirror: add --mirror URL or set "
            f"CROWDOPT_DATASETS_MIRROR=URL), or set CROWDOPT_DATA to a folder holding it")


OFF = "downloads are off (--offline or CROWDOPT_OFFLINE=1); without them "


def _missing(name: str, data_dir: str | Path | None, why: str) -> DataError:
    looked = ", ".join(str(d) for d in search_dirs(data_dir))
    return DataError("CROWDOPT_DATA", f"a folder holding data set {name}",
                     f"none (looked in {looked})", note=why + how_to_get(name))


def set_folder(name: str, *, fetch: bool = True, mirror: str | None = None,
               data_dir: str | Path | None = None, offline: bool | None = None,
               progress: bool = True, check: bool = True) -> Path:
    """A folder holding every file of set `name`: found (`search_dirs`), or fetched into
    `download_dir()` unless `fetch` is False or downloads are off (DataError naming every
    way to get it). With `check`, each file is verified against the catalogue's SHA-256 the
    first time this process reads it (`check_set`). `mirror`, `data_dir` and `offline` are
    checked whether or not a download is needed (a wrong one is an error either way)."""
    check_source_args(mirror=mirror, data_dir=data_dir, offline=offline)
    found = find_set(name, data_dir)
    if found is None:
        if not fetch:
            raise _missing(name, data_dir, "not downloaded: ")
        if _offline(offline):
            raise _missing(name, data_dir, OFF)
        fetch_set(name, mirror=mirror, data_dir=data_dir, offline=offline, progress=progress)
        found = download_dir(data_dir)
    found = found.resolve()
    if check:
        check_set(name, found)
    return found


_offline = offline  # `set_folder` and `fetch_set` take an argument of that name


def check_source_args(*, mirror: Any = None, data_dir: Any = None, offline: Any = None) -> None:
    """The arguments that say where a set comes from, each by its rule (a URL text, a folder
    path, a flag): a one-line InputError naming the first wrong one."""
    folder_arg(data_dir)
    mirror_url(mirror)
    _offline(offline)


def require_sets(names: Iterable[str], *, mirror: str | None = None,
                 data_dir: str | Path | None = None, offline: bool | None = None,
                 progress: bool = True, hint: str = "") -> None:
    """Every set of `names` on this machine, fetched once where missing: what a command checks
    before it starts the runs that read them, so that data that cannot be had stops it at
    once, in one line (with `hint` appended), instead of failing every run."""
    for name in dict.fromkeys(names):
        try:
            set_folder(name, mirror=mirror, data_dir=data_dir, offline=offline,
                       progress=progress)
        except DataError as exc:
            if hint:
                exc.args = (f"{exc.args[0]}; {hint}",)
            raise


def check_set(name: str, root: Path) -> None:
    """Every file of set `name` under `root` against the catalogue's size and SHA-256, hashed
    the first time this process reads it (and again once it changes); DataError naming the
    file and `crowdopt datasets fetch NAME --force` for one that differs."""
    for f in entry(name).files:
        path = root / f.path
        st = path.stat()
        key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
        if key in _CHECKED:
            continue
        digest = sha256_of(path) if st.st_size == f.size else None
        if digest != f.sha256:
            found = f"SHA-256 {digest}" if digest else f"{st.st_size} bytes"
            raise DataError(str(path), f"the catalogue's {f.size} bytes with SHA-256 {f.sha256}",
                            found, note="changed after it was fetched: download it again with "
                            f"`crowdopt datasets fetch {name} --force`")
        _CHECKED.add(key)


def _mark_checked(path: Path) -> None:
    st = path.stat()
    _CHECKED.add((str(path.resolve()), st.st_size, st.st_mtime_ns))


def fetch_set(name: str, *, mirror: str | None = None, data_dir: str | Path | None = None,
              offline: bool | None = None, force: bool = False, progress: bool = True,
              timeout: float = DEFAULT_TIMEOUT) -> list[Path]:
    """Download the files of set `name` missing from `download_dir()` (every file with
    `force`), each verified by size and SHA-256 before it is renamed into place, each within
    `timeout` seconds in all. Refused when downloads are off. Processes fetching into the same
    folder take turns (a lock on its partial-files folder)."""
    from .download import check_timeout, download  # urllib.request: only when fetching

    check_source_args(mirror=mirror, data_dir=data_dir, offline=offline)
    check_timeout(timeout)
    base, root, files = mirror_url(mirror), download_dir(data_dir), entry(name).files
    if _offline(offline) and (force or not _present(root, files)):
        raise _missing(name, data_dir, OFF)
    advice = f"check the network; {how_to_get(name)}"
    out = []
    try:
        with _fetch_lock(root / PARTIAL_DIR):
            for f in files:
                dest = root / f.path
                if force or not _present(root, [f]):  # checked under the lock
                    url = base + urllib.parse.quote(f.path) if base else f.url
                    download(url, dest, root / PARTIAL_DIR / (f.path + ".part"), size=f.size,
                             sha256=f.sha256, label=f.path, timeout=timeout,
                             progress=progress, advice=advice)
                    _mark_checked(dest)
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
