"""Download one file, verified: bytes go to a partial file, are checked against the expected
size and SHA-256, and only then renamed into place, so a reader never sees half a file.

An interrupted transfer (connection reset, timeout, Ctrl-C) keeps its partial file outside the
data layout; the next attempt asks for the rest with an HTTP Range request and starts over when
the server does not honour it. A complete response of the wrong size or hash is refused in one
line and its partial file deleted. urllib only (http, https and file URLs).
"""

from __future__ import annotations

import hashlib
import http.client
import os
import socket
import urllib.error
import urllib.request
from pathlib import Path

from .errors import InputError
from .progress import ProgressBar

CHUNK = 1 << 16
USER_AGENT = "crowdopt-datasets"


class DownloadError(InputError):
    """A download that cannot give the expected file (one line: file, expected, found)."""

    def __init__(self, label: str, expected: str, found: str, *, note: str = ""):
        super().__init__(label, expected, found, note=note)
        self.args = (f"{label}: expected {expected}, found {found}"
                     + (f" ({note})" if note else ""),)

    def __str__(self) -> str:
        return self.args[0]


_RETRYABLE = (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout,
              TimeoutError)


def download(url: str, dest: Path, partial: Path, *, size: int, sha256: str, label: str,
             timeout: float = 60.0, attempts: int = 3, progress: bool = True) -> Path:
    """Fetch `url` into `dest` (via `partial`), checked against `size` and `sha256`."""
    partial.parent.mkdir(parents=True, exist_ok=True)
    last, complete = "", False
    with ProgressBar(size, f"fetch {label}", progress, unit="B") as bar:
        for _ in range(max(1, attempts)):
            have = partial.stat().st_size if partial.exists() else 0
            if have > size:
                partial.unlink()
                have = 0
            try:
                complete = have == size or _transfer(url, partial, have, timeout, bar)
            except urllib.error.HTTPError as exc:
                if exc.code == 416:  # the partial file is not a prefix of this source
                    partial.unlink(missing_ok=True)
                    last = "HTTP 416 for the rest of a partial file"
                    continue
                raise DownloadError(label, f"HTTP 200 from {url}",
                                    f"HTTP {exc.code} {exc.reason}") from None
            except _RETRYABLE as exc:
                last = _reason(exc)
                continue
            if complete:
                break
    got = partial.stat().st_size if partial.exists() else 0
    if got < size and not complete:
        note = ("interrupted; run the same command again to resume" if got else
                "check the network, or download from a mirror: --mirror URL")
        raise DownloadError(label, f"{size} bytes from {url}", f"{got} ({last})", note=note)
    _check(partial, size, sha256, label, url)
    with open(partial, "rb+") as fh:
        os.fsync(fh.fileno())
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.replace(partial, dest)
    return dest


def _transfer(url: str, partial: Path, have: int, timeout: float, bar: ProgressBar) -> bool:
    """Append the rest of `url` to `partial` (from byte `have`); True when the response ended
    cleanly (all the bytes its Content-Length announced), whatever its size."""
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    if have:
        req.add_header("Range", f"bytes={have}-")
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        status = getattr(resp, "status", None) or 200
        resumed = have and status == 206 and str(resp.headers.get("Content-Range", "")) \
            .startswith(f"bytes {have}-")
        announced = resp.headers.get("Content-Length")
        got = 0
        with open(partial, "ab" if resumed else "wb") as out:
            while block := resp.read1(CHUNK):  # what has arrived: kept on a stall
                out.write(block)
                got += len(block)
                bar.update(len(block))
    if announced is not None and announced.isdigit() and got < int(announced):
        raise ConnectionError(f"connection closed after {got} of {announced} bytes")
    return True


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
