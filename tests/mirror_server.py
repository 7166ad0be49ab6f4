"""A data set mirror on 127.0.0.1 for the download tests (no internet): serves the files of a
data folder under URL prefixes that behave well or badly.

    /good/FOLDER/FILE       the file, with HTTP Range support (206)
    /norange/FOLDER/FILE    the file, ignoring Range (always 200, whole file)
    /corrupt/FOLDER/FILE    the file with one byte changed
    /truncated/FOLDER/FILE  the first half of the file (an honest, shorter response)
    /missing/FOLDER/FILE    404
    /drop/FOLDER/FILE       announces the whole file, sends half, closes the connection
    /slow/FOLDER/FILE       announces the whole file, sends 1 KiB, then stalls
    /trickle/FOLDER/FILE    announces the whole file, sends 16 bytes every 50 ms
    /long/FOLDER/FILE       announces and sends the file followed by 64 KiB more
    /endless/FOLDER/FILE    no length announced: the file, then zeros without end

`mirror_env(root)` is the environment a docs or README harness gives a shell so that
`crowdopt datasets fetch NAME` (and every first use of a set) downloads from such a mirror into
a fresh cache; `python tests/mirror_server.py ROOT` serves ROOT until interrupted.
"""

from __future__ import annotations

import os
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

# the variables that decide where data comes from and goes (crowdopt.datapath)
DATA_VARS = ("CROWDOPT_DATA", "CROWDOPT_DATASETS_MIRROR", "CROWDOPT_OFFLINE", "XDG_CACHE_HOME")


class Mirror:
    """`with Mirror(root) as m:` serves `root` at `m.url(kind)`; `m.requests` logs
    (kind, path, Range header) of every request."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.requests: list[tuple[str, str, str | None]] = []
        self.stop = threading.Event()
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep the test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                kind, _, rel = urllib.parse.unquote(self.path).lstrip("/").partition("/")
                mirror.requests.append((kind, rel, self.headers.get("Range")))
                path = mirror.root / rel
                if kind == "missing" or ".." in rel or not path.is_file():
                    self.send_error(404)
                    return
                data = path.read_bytes()
                if kind == "corrupt":
                    data = data[:10] + bytes([data[10] ^ 0xFF]) + data[11:]
                elif kind == "truncated":
                    data = data[: len(data) // 2]
                elif kind == "long":
                    data += b"x" * (1 << 16)
                start = 0
                rng = self.headers.get("Range")
                if kind == "good" and rng and rng.startswith("bytes="):
                    start = int(rng[6:].split("-")[0])
                    if start >= len(data):
                        self.send_error(416)
                        return
                    self.send_response(206)
                    self.send_header("Content-Range",
                                     f"bytes {start}-{len(data) - 1}/{len(data)}")
                else:
                    self.send_response(200)
                if kind != "endless":
                    self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                body = data[start:]
                try:
                    self._send(kind, body)
                except OSError:  # the client stopped reading: what the tests ask of it
                    self.close_connection = True

            def _send(self, kind: str, body: bytes) -> None:
                if kind == "drop":
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                elif kind == "slow":
                    self.wfile.write(body[:1024])
                    self.wfile.flush()
                    mirror.stop.wait(10)
                elif kind == "trickle":
                    for k in range(0, len(body), 16):
                        if mirror.stop.wait(0.05):
                            return
                        self.wfile.write(body[k:k + 16])
                        self.wfile.flush()
                elif kind == "endless":
                    self.wfile.write(body)
                    zeros = bytes(1 << 14)
                    while not mirror.stop.is_set():
                        self.wfile.write(zeros)
                    self.close_connection = True
                else:
                    self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,),
                                       daemon=True)

    def url(self, kind: str = "good") -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{kind}/"

    def __enter__(self) -> Mirror:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def mirror_env(root: Path, cache: Path, base: dict[str, str] | None = None
               ) -> Iterator[dict[str, str]]:
    """A mirror of data folder `root` running, and the environment (a copy of `base`, default
    os.environ) in which `crowdopt` downloads from it into the empty cache folder `cache`:
    CROWDOPT_DATASETS_MIRROR set to the mirror, XDG_CACHE_HOME to `cache`, CROWDOPT_DATA and
    CROWDOPT_OFFLINE removed (the test suite sets CROWDOPT_OFFLINE=1 for itself). Run the
    commands in a folder with no ../shared/data next to it."""
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if k not in DATA_VARS}
    with Mirror(root) as m:
        yield {**env, "CROWDOPT_DATASETS_MIRROR": m.url(), "XDG_CACHE_HOME": str(cache)}


if __name__ == "__main__":  # pragma: no cover - a manual mirror: python tests/mirror_server.py ROOT
    import sys

    with Mirror(Path(sys.argv[1])) as served:
        print(served.url(), flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
