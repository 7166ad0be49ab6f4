"""The command line as a user meets it: whole-process wall time of `crowdopt` commands.

Every command runs as a fresh process (python -m crowdopt), in turn (A B C A B C ...), median of
--repeat runs after one untimed run of each. The reference is `crowdopt --help`: a fast solve
should cost little more than starting the program (within 1.5x), because a fast path
imports neither Pyomo nor highspy (the `solver modules` column says which of them a run loaded).
Instance: olas-assign with N = 1500 points and M = 17 labelers (generated, seed 0).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import emit, parse_args

PROBE = """
import json, sys
from crowdopt.cli import main
try:
    rc = main(sys.argv[1:])
except SystemExit as exc:  # --help exits from argparse
    rc = exc.code
print(json.dumps({"rc": rc, "loaded": sorted(m for m in ("pyomo", "highspy")
                                                 if m in sys.modules)}), file=sys.stderr)
sys.exit(rc)
"""


def run(argv: list[str]) -> tuple[float, int, str, str]:
    """(wall seconds, exit code, stdout, stderr) of one `crowdopt ARGV` process."""
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True)
    return time.perf_counter() - t0, p.returncode, p.stdout, p.stderr


def main() -> None:
    args = parse_args(__doc__)
    repeat = max(args.repeat, 5)
    tmp = Path(tempfile.mkdtemp())
    inst = tmp / "olas_assign_1500.json"
    subprocess.run([sys.executable, "-m", "crowdopt", "generate", "olas-assign", "--seed",
                    str(args.seed), "--param", "points=1500", "--param", "labelers=17",
                    "-o", str(inst)], check=True)
    cmds = {
        "--help": ["--help"],
        "solve --method fast --json": ["solve", str(inst), "--method", "fast", "--json"],
        "solve --method exact --json": ["solve", str(inst), "--method", "exact", "--json"],
        "solve --method threshold --json": ["solve", str(inst), "--method", "threshold",
                                            "--json"],
        "solve --method milp-epigraph --time-limit 5 --json": [
            "solve", str(inst), "--method", "milp-epigraph", "--time-limit", "5", "--json"],
    }
    if args.quick:
        del cmds["solve --method milp-epigraph --time-limit 5 --json"]
    times: dict[str, list[float]] = {k: [] for k in cmds}
    last: dict[str, tuple] = {}
    for argv in cmds.values():  # one untimed run each (file-system caches, .pyc)
        run(argv)
    for r in range(repeat):
        for k, argv in cmds.items():
            if k.startswith("solve --method milp") and r >= 1:
                continue  # one run: it takes its time limit
            t, rc, out, err = run(argv)
            times[k].append(t)
            last[k] = (rc, out, err)
    ref = statistics.median(times["--help"])
    rows = []
    for k in cmds:
        rc, out, err = last[k]
        probe = json.loads(err.strip().splitlines()[-1])
        row = {"command": f"crowdopt {k}", "wall_s": statistics.median(times[k]),
               "x --help": statistics.median(times[k]) / ref, "exit": rc,
               "solver modules": ",".join(probe["loaded"]) or "none"}
        if k != "--help":
            res = json.loads(out)  # stdout must be one JSON document (Result.to_dict())
            row.update(algorithm=res["algorithm"], status=res["status"],
                       objective=res["objective"], bound=res["bound"])
        rows.append(row)
    emit("cli", rows, list(rows[-1]), args,
         note=f"whole processes, median of {repeat} interleaved runs (milp: 1 run); "
              "x --help = wall time over `crowdopt --help` in the same run")


if __name__ == "__main__":
    main()
