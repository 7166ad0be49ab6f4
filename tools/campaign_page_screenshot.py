"""Make docs/campaign-page.png: the status page of a campaign half-way through, as a read-only
viewer sees it, in headless Chromium.

Usage: python tools/campaign_page_screenshot.py [--out docs/campaign-page.png]
                                                 [--dataset rte] [--chromium PATH]

An Opt-KG campaign on the data set's tasks (budget: 2/5 of its labels) is served by
`crowdopt campaign serve`; the data set's own answers are recorded over HTTP for about 70 % of
the budget, some of them after their lease ran out (re-issued, late), and some queries stay
leased; then Chromium opens the page with the read token and saves a 1100 x 1000 screenshot.
Needs the data set (CROWDOPT_DATA or `crowdopt datasets fetch rte`), the serve extra and
Debian's chromium.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from crowdopt.campaign import Campaign, TableOracle  # noqa: E402
from crowdopt.crowd.datasets import load_table  # noqa: E402


class _Q:
    def __init__(self, d: dict):
        self.item, self.worker, self.round = d["item"], d["worker"], d["round"]


def _call(port: int, token: str, path: str, body: dict) -> dict:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("POST", path, json.dumps(body), {"Authorization": f"Bearer {token}"})
    doc = json.loads(c.getresponse().read())
    c.close()
    return doc


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(ROOT / "docs" / "campaign-page.png"))
    p.add_argument("--dataset", default="rte")
    p.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = p.parse_args()
    table = load_table(args.dataset)[0]
    budget = int(table.n_labels * 0.4)
    tmp = Path(tempfile.mkdtemp(prefix="campaign_page_"))
    db = tmp / f"{args.dataset}.db"
    camp = Campaign.create(db, policy="optkg", items=f"dataset:{args.dataset}", budget=budget,
                           seed=0, batching="fill", name=f"{args.dataset} pilot")
    admin, read = camp.new_tokens["admin"], camp.new_tokens["read"]
    camp.close()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = subprocess.Popen([sys.executable, "-m", "crowdopt", "campaign", "serve", str(db),
                            "--port", str(port)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                _call(port, admin, "/next", {"n": 1, "lease": 0.5})
                break
            except OSError:
                time.sleep(0.1)
        oracle, rng = TableOracle(table, seed=0), random.Random(0)
        spent = 0
        while spent < 0.7 * budget:
            qs = _call(port, admin, "/next", {"n": 20, "lease": 60})["queries"]
            if not qs:
                break
            rows = []
            if rng.random() < 0.15:  # these leases run out: re-issued, answered by both
                first = _call(port, admin, "/next", {"n": 5, "lease": 0.2,
                                                     "late_window": 60})["queries"]
                time.sleep(0.3)
                _call(port, admin, "/next", {"n": len(first), "lease": 60})
                for q in first:  # the first holder answers too, late: another worker
                    a = oracle.answer(_Q(q))
                    if a is not None:
                        w = str(table.worker_ids[rng.randrange(table.n_workers)])
                        rows.append({"item": a[0], "worker": w, "label": a[2]})
                qs = first + qs
            for q in qs:
                a = oracle.answer(_Q(q))
                if a is not None:
                    rows.append({"item": a[0], "worker": a[1], "label": a[2]})
            spent = _call(port, admin, "/record", {"answers": rows})["spent"]
            time.sleep(0.01)
        _call(port, admin, "/next", {"n": 40, "lease": 600})  # some leases stay open
        _call(port, admin, "/next", {"n": 8, "lease": 0.1, "late_window": 600})
        time.sleep(0.5)  # ... and some ran out (still inside their late window)
        subprocess.run([args.chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--window-size=1100,1000",
                        f"--screenshot={Path(args.out).resolve()}",
                        f"http://127.0.0.1:{port}/?token={read}"], check=True,
                       capture_output=True, timeout=120)
    finally:
        srv.terminate()
        srv.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
