"""Live labeling campaigns: Opt-KG, LS_OL and CL-TAP on a real job, state in a SQLite file.

    from crowdopt.campaign import Campaign
    c = Campaign.create("job.db", policy="optkg", items="items.csv", budget=3200, seed=0)
    for q in c.next(50):          # leased queries: q.item (and q.worker when the policy chose)
        ...                       # send to the crowd platform
    c.record([(item, worker, label), ...])   # an outcome per row: stored/duplicate/late/rejected
    c.status()                    # budget, labels with confidence, worker reliabilities

The same policy objects as `simulate` / `replay` decide (see `drivers`); the file is the state
(see `store`, `core`); `crowdopt campaign serve` exposes it over HTTP (`http`) with a status
page (`page`) and webhooks (`webhooks`); `export` writes CSV, JSONL and Label Studio tasks.
"""

from __future__ import annotations

from typing import Any

from .core import DEFAULT_LEASE, Campaign, Query, StoreError
from .oracle import TableOracle


def __getattr__(name: str) -> Any:
    """The policy names and `Diverged` from `drivers`, imported when first asked for (the
    policies it brings are not needed to read a campaign's status)."""
    if name in ("BATCHING", "POLICIES", "Diverged"):
        from . import drivers

        return getattr(drivers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["Campaign", "Query", "TableOracle", "Diverged", "StoreError", "POLICIES", "BATCHING",
           "DEFAULT_LEASE"]
