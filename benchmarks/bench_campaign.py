"""Live campaign throughput: answers per second of next+record through the Python API.

Usage: python benchmarks/bench_campaign.py [--quick] [--repeat R]
Opt-KG on 800 items (theta ~ U(0,1), labels drawn once per item and round), budget 3200, the
driver loop `next(n)` -> answers -> `record(answers)` with the file on disk (WAL,
synchronous=NORMAL), a fresh campaign per run. Batching 'exact' (decisions equal the
one-at-a-time replay; next(50) hands out fewer than 50 while the policy needs answers) and
'fill' (full batches), batch sizes 1 and 50; interleaved repetitions, median kept. The time
is the driver loop only (creating the file is not in it). One run with
CROWDOPT_CAMPAIGN_SYNC=FULL (an fsync per commit) shows the price of power-loss durability.
Writes benchmarks/results/campaign.json.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from common import emit, interleaved, parse_args, warm_up

from crowdopt.campaign import Campaign

K = 800


def make_labels(seed: int, rounds: int = 64) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    theta = rng.random(K)
    return [f"item{i}" for i in range(K)], (rng.random((K, rounds)) < theta[:, None])


def run(tmp: Path, name: str, batching: str, n: int, budget: int, labels, sync: str = "NORMAL"
        ) -> dict:
    ids, table = labels
    db = tmp / f"{name}-{time.perf_counter_ns()}.db"
    old = os.environ.get("CROWDOPT_CAMPAIGN_SYNC")
    os.environ["CROWDOPT_CAMPAIGN_SYNC"] = sync
    try:
        camp = Campaign.create(db, policy="optkg", items=ids, budget=budget, seed=0,
                               batching=batching)
        index = camp.item_index
        calls = answers = 0
        t0 = time.perf_counter()
        while True:
            qs = camp.next(n)
            calls += 1
            if not qs:
                break
            camp.record([(q.item, f"w{q.decision}", int(table[index[q.item], q.round]))
                         for q in qs])
            answers += len(qs)
        secs = time.perf_counter() - t0
        camp.close()
    finally:
        if old is None:
            os.environ.pop("CROWDOPT_CAMPAIGN_SYNC", None)
        else:
            os.environ["CROWDOPT_CAMPAIGN_SYNC"] = old
    return {"secs": secs, "answers": answers, "calls": calls}


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    warm_up()
    budget = 800 if args.quick else 3200
    labels = make_labels(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="bench_campaign_"))
    try:
        run(tmp, "warm", "exact", 50, 200, labels)  # first calls: imports, SQLite, caches
        configs = {f"{b} n={n}": (b, n) for b in ("exact", "fill") for n in (1, 50)}
        inner: dict[str, list[dict]] = {k: [] for k in configs}

        def job(key):
            def f():
                inner[key].append(run(tmp, key.replace(" ", ""), *configs[key], budget, labels))
            return f
        interleaved({k: job(k) for k in configs}, args.repeat)
        rows = []
        for key, (b, n) in configs.items():
            r = inner[key]
            secs = statistics.median(x["secs"] for x in r)
            rows.append({"batching": b, "n": n, "sync": "NORMAL", "answers": r[0]["answers"],
                         "next calls": r[0]["calls"], "seconds": secs,
                         "answers/s": r[0]["answers"] / secs,
                         "answers per next": r[0]["answers"] / max(1, r[0]["calls"] - 1)})
        full = run(tmp, "full", "exact", 50, budget, labels, sync="FULL")
        rows.append({"batching": "exact", "n": 50, "sync": "FULL", "answers": full["answers"],
                     "next calls": full["calls"], "seconds": full["secs"],
                     "answers/s": full["answers"] / full["secs"],
                     "answers per next": full["answers"] / max(1, full["calls"] - 1)})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    emit("campaign", rows, ["batching", "n", "sync", "answers", "next calls",
                            "answers per next", "seconds", "answers/s"], args,
         note=f"Opt-KG, {K} items, budget {budget}; next+record through the Python API, file "
              "on disk; median of interleaved runs (the FULL row: one run)")


if __name__ == "__main__":
    main()
