"""Campaign tests on both stores: the parameter that runs a test on each (`STORES`, with the
`campaign_at` fixture of conftest.py) and the audit of a campaign's paid answers, whichever
store holds it."""

from __future__ import annotations

import pytest

STORES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
# both stores, the PostgreSQL run only under `make soak` (the slow kill and race tests: `make
# test` samples them with the 3-server fault run of test_campaign_faults.py)
STORES_SOAK = ["sqlite", pytest.param("postgresql", marks=[pytest.mark.postgres,
                                                           pytest.mark.soak])]


def is_pg(target) -> bool:
    """Whether a campaign target is a PostgreSQL URL."""
    return isinstance(target, str) and target.startswith("postgresql://")


def sidecar(target, suffix: str, folder) -> object:
    """Where the CLI writes a campaign's token (or secret) file: beside a file, in the
    current folder (`folder` in the tests) for a PostgreSQL campaign."""
    from pathlib import Path

    from crowdopt.campaign.stores import sidecar as where

    p = where(target, suffix)
    return p if Path(p).is_absolute() else Path(folder) / p
