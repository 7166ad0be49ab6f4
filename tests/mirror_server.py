"""A data set mirror on 127.0.0.1 for the download tests (no internet): serves the files of a
data folder under URL prefixes that behave well or badly.

    /good/FOLDER/FILE       the file, with HTTP Range support (206)
    /norange/FOLDER/FILE    the file, ignoring Range (always 200, whole file)
    /corrupt/FOLDER/FILE    the file with one byte changed
    /truncated/FOLDER/FILE  the first half of the file (an honest, shorter response)
    /missing/FOLDER/FILE    404
    /drop/FOLDER/FILE       announces the whole file, sends half, closes the connection
    /slow/FOLDER/FILE       announces the whole file, sends 1 KiB, then stalls
"""

from __future__ import annotations

import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


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
                self.send_header("Content-Length", str(len(data) - start))
                self.end_headers()
                body = data[start:]
                if kind == "drop":
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if kind == "slow":
                    self.wfile.write(body[:1024])
                    self.wfile.flush()
                    mirror.stop.wait(10)
                    return
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
