"""What the documented commands create inside a clone stays out of `git status`, and nothing
of the project's own kinds of files is hidden by it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# files and folders the commands of README.md and docs/ write in the folder they run in
CREATED = ["inst.json", "pool.json", "workers.json", "result.json", "cert.json", "batch.json",
           "labels.csv", "gold.csv", "golden.csv", "answers.csv", "c.csv", "labels.tsv",
           "rte.db", "rte.db-wal", "rte.db-shm", "rte.db-journal", "rte.db.token",
           "rte.db.read-token", "result.json.tasks.jsonl", "plot.png", "instances/a.json",
           "mydata/rte/rte.standardized.csv", "out/lsol/report.md", "results/x.json",
           "runs/olas/summary.md", "cltap-smoke/report.md", "olas-smoke/report.md",
           "optkg-report/report.md", "reproduce-lsol/report.md",
           "reproduce-selection/report.md"]
# the project's own files of the same kinds, which must stay visible
OWN = ["src/crowdopt/data/datasets.json", "src/crowdopt/schemas/result.json",
       "docs/campaign-page.png", "docs/datasets.md", "examples/lsol_regret.toml",
       "tests/data/labels.csv", "benchmarks/bench_x.py", "README.md"]


def _ignored(paths: list[str]) -> set[str]:
    proc = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT,
                          input="\n".join(paths) + "\n", text=True, capture_output=True)
    if proc.returncode not in (0, 1):  # 1: none ignored
        pytest.skip(f"git check-ignore failed: {proc.stderr.strip()}")
    return set(proc.stdout.split())


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="not a git checkout")
def test_documented_outputs_are_ignored_and_the_projects_files_are_not():
    assert sorted(set(CREATED) - _ignored(CREATED)) == []
    assert sorted(_ignored(OWN)) == []
