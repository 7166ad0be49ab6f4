"""Download one file, verified: bytes go to a partial file, are checked against the expected
size and SHA-256, and only then renamed into place, so a reader never sees half a file.

An interrupted transfer (connection reset, timeout, Ctrl-C) keeps its partial file outside the
data layout; the next attempt asks for the rest with an HTTP Range request and starts over when
the server does not honour it. A complete response of the wrong size or hash is refused in one
line and its partial file deleted; a response longer than the expected size is refused as soon
as it passes it (the partial file never grows past the size). `timeout` is a deadline for the
whole download of the file, retries included, not a per-read idle time. urllib only (http,
https and file URLs).
"""

from __future__ import annotations

import hashlib
import http.client
import math
import os
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

from .errors import DataError, InputError
from .progress import ProgressBar

CHUNK = 1 << 16
USER_AGENT = "crowdopt-datasets"
MAX_TIMEOUT = 1e9  # seconds (~31 years): a longer deadline overflows the clock arithmetic
NO_NETWORK = "check the network, or download from a mirror: --mirror URL"


class DownloadError(DataError):
    """A download that cannot give the expected file (one line: file, expected, found)."""


class _TooLong(Exception):
    """The source sent more bytes than the file has."""


_RETRYABLE = (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout,
              TimeoutError)


def check_timeout(timeout: float) -> float:
    """`timeout` as seconds in (0, MAX_TIMEOUT]; InputError naming --timeout otherwise."""
    ok = isinstance(timeout, int | float) and not isinstance(timeout, bool)
    if not ok or not math.isfinite(timeout) or not 0 < timeout <= MAX_TIMEOUT:
        raise InputError("--timeout", f"seconds in (0, {MAX_TIMEOUT:g}]", timeout)
    return float(timeout)


def download(url: str, dest: Path, partial: Path, *, size: int, sha256: str, label: str,
             timeout: float = 60.0, attempts: int = 3, progress: bool = True,
             advice: str = NO_NETWORK) -> Path:
    """Fetch `url` into `dest` (via `partial`), checked against `size` and `sha256`, within
    `timeout` seconds in all. `advice` ends the message when nothing could be fetched."""
    deadline = time.monotonic() + check_timeout(timeout)
    partial.parent.mkdir(parents=True, exist_ok=True)
    last, complete = "", False
    with ProgressBar(size, f"fetch {label}", progress, unit="B") as bar:
        for _ in range(max(1, attempts)):
            if time.monotonic() >= deadline:
                last = last or "no time left"
                break
            have = partial.stat().st_size if partial.exists() else 0
            if have > size:
                partial.unlink()
                have = 0
            try:
                complete = have == size or _transfer(url, partial, have, size, deadline, bar)
            except urllib.error.HTTPError as exc:
                if exc.code == 416:  # the partial file is not a prefix of this source
                    partial.unlink(missing_ok=True)
                    last = "HTTP 416 for the rest of a partial file"
                    continue
                raise DownloadError(label, f"HTTP 200 from {url}",
                                    f"HTTP {exc.code} {exc.reason}") from None
            except _TooLong:
                partial.unlink(missing_ok=True)
                raise DownloadError(label, f"{size} bytes from {url}", "more (the source sent "
                                    "past the end of the file; stopped and not kept)") from None
            except _RETRYABLE as exc:
                last = _reason(exc)
                continue
            if complete:
                break
    got = partial.stat().st_size if partial.exists() else 0
    if got < size and not complete:
        late = time.monotonic() >= deadline
        if got:
            note = (f"stopped at the {timeout:g} s deadline (--timeout); " if late else
                    "interrupted; ") + "run the same command again to resume"
        else:
            note = (f"nothing within the {timeout:g} s deadline (--timeout); " if late
                    else "") + advice
        raise DownloadError(label, f"{size} bytes from {url}", f"{got} ({last})", note=note)
    _check(partial, size, sha256, label, url)
    with open(partial, "rb+") as fh:
        os.fsync(fh.fileno())
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.replace(partial, dest)
    return dest


def _transfer(url: str, partial: Path, have: int, size: int, deadline: float,
              bar: ProgressBar) -> bool:
    """Append the rest of `url` to `partial` (from byte `have`) until the response ends,
    `deadline` (time.monotonic) passes (TimeoutError) or the file would pass `size` bytes
    (_TooLong; nothing past `size` is written). True when the response ended cleanly (all the
    bytes its Content-Length announced)."""
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    if have:
        req.add_header("Range", f"bytes={have}-")
    with urllib.request.urlopen(req, timeout=_left(deadline)) as resp:
        status = getattr(resp, "status", None) or 200
        resumed = have and status == 206 and str(resp.headers.get("Content-Range", "")) \
            .startswith(f"bytes {have}-")
        room = size - (have if resumed else 0)  # bytes this response may still add
        announced = resp.headers.get("Content-Length")
        announced = int(announced) if announced is not None and announced.isdigit() else None
        if announced is not None and announced > room:
            raise _TooLong
        sock = _socket_of(resp)
        got = 0
        with open(partial, "ab" if resumed else "wb") as out:
            while announced is None or got < announced:
                if sock is not None:
                    sock.settimeout(_left(deadline))
                # one byte past the room shows a source that sends too much
                block = resp.read1(min(CHUNK, room - got + 1))  # what has arrived
                if not block:
                    break
                if got + len(block) > room:
                    raise _TooLong
                out.write(block)
                got += len(block)
                bar.update(len(block))
                if time.monotonic() >= deadline and (announced is None or got < announced):
                    raise TimeoutError("deadline passed")
    if announced is not None and got < announced:
        raise ConnectionError(f"connection closed after {got} of {announced} bytes")
    return True


def _left(deadline: float) -> float:
    """Seconds to `deadline`; TimeoutError when it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("deadline passed")
    return left


def _socket_of(resp) -> socket.socket | None:
    """The socket under an http(s) response (its per-read timeout is set to the time left),
    None for file:// and anything else."""
    raw = getattr(getattr(resp, "fp", None), "raw", None)
    sock = getattr(raw, "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


def _check(partial: Path, size: int, sha256: str, label: str, url: str) -> None:
    """Refuse (and delete) a partial file of the wrong size or SHA-256."""
    h = hashlib.sha256()
    with open(partial, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    found, got = h.hexdigest(), partial.stat().st_size
    if found != sha256:
        partial.unlink(missing_ok=True)
        note = f"{got} bytes from {url}, not kept" + ("" if got == size else f"; expected {size}")
        raise DownloadError(label, f"SHA-256 {sha256}", f"SHA-256 {found}", note=note)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.URLError) and not isinstance(exc, urllib.error.HTTPError):
        return f"{type(exc.reason).__name__}: {exc.reason}" if exc.reason else "URL error"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
