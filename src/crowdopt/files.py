"""The one writer of files crowdopt is asked to write (`-o FILE`, exports, token files), and
the one reader of the files it is given (instances, solutions, label tables, configurations).

Reading (`read_input`): a path that is not a text or os.PathLike, a missing file, a folder, a
device or socket, and a file this process may not read (permissions) are each one InputError
naming the file, never an OSError traceback; a regular file or a pipe (`<(zcat f.gz)`) is read.

Only regular files are written (DESIGN rule 9): the text goes to a temporary file in the
target's folder, which is then renamed over the target, so a reader never sees half a file
and a crash leaves the old one. A path that exists and is not a regular file (a FIFO, a
device, a directory, a socket, or a symlink to one of those) is refused in one line, with or
without `force`: a rename would replace it (running as root, a rename onto /dev/stdout
replaces the device for every process), and opening it would block (a FIFO) or write
elsewhere. An existing regular file (or a symlink to one) is replaced only with `force`; a
symlink is then replaced by the new file, never written through.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import Any

from .errors import InputError
from .validate import Shown

KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
         (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"),
         (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str | None:
    for test, name in KINDS:
        if test(mode):
            return name
    return None if stat.S_ISREG(mode) else "not a regular file"


def check_target(path: str | os.PathLike, *, force: bool = False, field: str = "--output"
                 ) -> Path:
    """Refuse `path` unless writing it is safe: a new path in an existing folder, or (with
    `force`) an existing regular file. Returns it as a Path."""
    p = Path(path)
    if not str(path) or not p.parent.is_dir():
        raise InputError(field, "a file in an existing folder", str(path))
    try:
        st = p.lstat()
    except FileNotFoundError:
        return p
    what = _kind(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        try:
            what = _kind(p.stat().st_mode)
        except FileNotFoundError:  # a dangling link: nothing behind it is touched
            what = None
        if what is not None:
            what = f"a symlink to {what}"
    if what is not None:
        raise InputError(field, "a regular file", what,
                         note=f"{p}: only regular files are written, --force or not")
    if not force:
        raise InputError(field, "a new file (or --force to replace it)", "an existing file",
                         note=str(p))
    return p


def write_file(path: str | os.PathLike, data: str | bytes, *, force: bool = False,
               mode: int = 0o644, field: str = "--output") -> Path:
    """Write `data` (text: UTF-8, newlines as given) to `path` safely (see the module): a
    temporary file created O_EXCL in the same folder (`mode` under the umask, e.g. 0600 for a
    secret), synced,
    then renamed over `path`. Returns the path."""
    p = check_target(path, force=force, field=field)
    raw = data.encode() if isinstance(data, str) else bytes(data)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(tmp, flags, mode)
    except OSError as exc:
        raise InputError(field, "a folder this process may write", f"{p.parent} "
                         f"({exc.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        check_target(p, force=force, field=field)  # what appeared meanwhile is not replaced
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return p


def read_input(path: Any, field: str) -> bytes:
    """The bytes of the input file at `path` (see the module): a regular file or a pipe; a
    directory, device or socket is refused before it is opened (reading /dev/zero would never
    end), and an unreadable file (permissions) is one line naming it."""
    if not (isinstance(path, str) or (isinstance(path, os.PathLike)
                                      and isinstance(os.fspath(path), str))) or not str(path):
        raise InputError(field, "a file path (a str or pathlib.Path)", path)
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(field, "an existing file", str(p)) from None
    except OSError as exc:
        raise InputError(field, "a file this process may read", Shown(exc.strerror or exc),
                         note=str(p)) from None
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        raise InputError(field, "a regular file", Shown(_kind(st.st_mode)), note=str(p))
    try:
        with open(p, "rb") as fh:
            return fh.read()
    except OSError as exc:  # permissions (another user's file), an I/O error
        raise InputError(field, "a file this process may read", Shown(exc.strerror or exc),
                         note=str(p)) from None
