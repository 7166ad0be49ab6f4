"""Run every benchmark (bench_*.py) in turn; pass --quick for the short versions.

Usage: python benchmarks/run.py [--quick] [NAME ...]   (NAME: e.g. olas_assign)
Each benchmark prints its table and writes benchmarks/results/<topic>.json.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    flags = [a for a in argv if a.startswith("-")]
    names = [a for a in argv if not a.startswith("-")]
    scripts = sorted(HERE.glob("bench_*.py"))
    if names:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in names]
    failed = []
    for script in scripts:
        t0 = time.perf_counter()
        print(f"==> {script.name} {' '.join(flags)}", flush=True)
        rc = subprocess.call([sys.executable, str(script), *flags], cwd=HERE)
        print(f"<== {script.name}: exit {rc}, {time.perf_counter() - t0:.1f} s\n", flush=True)
        if rc:
            failed.append(script.name)
    if failed:
        print("failed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
