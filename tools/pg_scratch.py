"""A scratch PostgreSQL server for the tests and the benchmarks: a fresh data folder, a free
port on 127.0.0.1, trust authentication, stopped (and its folder removed) at the end.

PostgreSQL refuses to run as root, and this project's machines and CI run as root: the server
then runs as the `postgres` user that Debian's package creates (`runuser`), in a folder that
user owns. The binaries are found on PATH or in /usr/lib/postgresql/*/bin (Debian's layout).

    with ScratchPostgres() as pg:
        url = pg.url("crowdopt")          # postgresql://postgres@127.0.0.1:PORT/crowdopt

Usage: python tools/pg_scratch.py [--durable] (starts one, prints its URL, stops on Ctrl-C)
"""

from __future__ import annotations

import argparse
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

USER = "postgres"


def bindir() -> Path | None:
    """The folder of initdb/pg_ctl (PATH first, then Debian's newest version), or None."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                  key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return Path(dirs[-1]).parent if dirs else None


def missing() -> str | None:
    """Why no scratch server can be started here (None: it can)."""
    if bindir() is None:
        return ("no PostgreSQL server binaries (initdb): install Debian's postgresql package "
                "(apt-get install postgresql)")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(USER)
        except KeyError:
            return "running as root and no 'postgres' user to run the server as"
        if shutil.which("runuser") is None:
            return "running as root and no runuser(1) to start the server as 'postgres'"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ScratchPostgres:
    """A PostgreSQL server in a new folder (see the module). `durable=False` (the tests)
    turns fsync off: the server is never crashed, only the processes that use it."""

    def __init__(self, *, durable: bool = False, max_connections: int = 200):
        why = missing()
        if why:
            raise RuntimeError(why)
        self.bin = bindir()
        self.root = Path(tempfile.mkdtemp(prefix="crowdopt-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            pw = pwd.getpwnam(USER)
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", USER, "--auth=trust", "-E", "UTF8",
                  "--no-sync", "--locale=C")
        opts = [f"-p {self.port}", "-c listen_addresses=127.0.0.1",
                f"-c unix_socket_directories={self.root}", f"-c max_connections={max_connections}"]
        if not durable:
            opts += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-t", "60",
                  "-o", " ".join(opts), "start")
        self.create_db("crowdopt")

    def _run(self, tool: str, *args: str) -> None:
        cmd = [str(self.bin / tool), *args]
        if self.as_root:
            cmd = ["runuser", "-u", USER, "--", *cmd]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=self.root)
        if r.returncode != 0:
            raise RuntimeError(f"{tool} failed: {r.stderr.strip() or r.stdout.strip()}")

    def url(self, db: str = "crowdopt", campaign: str | None = None) -> str:
        """The URL of database `db` (with `?campaign=NAME` when given)."""
        u = f"postgresql://{USER}@127.0.0.1:{self.port}/{db}"
        return u + (f"?campaign={campaign}" if campaign else "")

    def create_db(self, name: str, template: str | None = None) -> str:
        """Create database `name` (from `template`); returns its URL."""
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template
                                                     else ""))
        return self.url(name)

    def stop(self) -> None:
        """Stop the server and remove its folder."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> ScratchPostgres:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--durable", action="store_true", help="keep fsync on (benchmarks)")
    args = p.parse_args()
    with ScratchPostgres(durable=args.durable) as pg:
        print(pg.url("crowdopt"), flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
