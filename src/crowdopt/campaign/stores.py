"""Which store a campaign target names, and opening or creating it: a file path is a SQLite
file (`store.SqliteStore`), `postgresql://host/db?campaign=NAME` a campaign of a PostgreSQL
database (`store_postgres.PostgresStore`, imported only then: psycopg is an optional extra).
Also where the files that go with a campaign live (`sidecar`) and how it is shown (`describe`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .store import (
    DEFAULT_BUSY_TIMEOUT,
    CampaignStore,
    create_sqlite,
    is_url,
    open_sqlite,
)

__all__ = ["is_url", "open_store", "create_store", "default_name", "sidecar", "describe"]

def open_store(target: str | os.PathLike, *, readonly: bool | None = None,
               busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> CampaignStore:
    """The store of an existing campaign: a SQLite file (migrated in place; `readonly`,
    default: when the file or its folder may not be written, opens it `mode=ro`) or a
    PostgreSQL URL (`postgresql://host/db?campaign=NAME`). A write waits at most
    `busy_timeout` seconds for another writer (then `Busy`, nothing changed)."""
    if is_url(target):
        from .store_postgres import open_postgres

        return open_postgres(str(target), readonly=bool(readonly), busy_timeout=busy_timeout)
    return open_sqlite(target, readonly=readonly, busy_timeout=busy_timeout)


def create_store(target: str | os.PathLike, fill: Callable[[CampaignStore], None]) -> None:
    """Create a new campaign at `target` (refused when one is there), filled by `fill` in
    the creating transaction: the campaign appears complete or not at all."""
    if is_url(target):
        from .store_postgres import create_postgres

        create_postgres(str(target), fill)
    else:
        create_sqlite(Path(target), fill)


def default_name(target: str | os.PathLike) -> str:
    """The name a campaign gets when init gives none: the file's name (never its folder),
    the URL's campaign."""
    if is_url(target):
        from .store_postgres import parse_url

        return parse_url(str(target))[1]
    return Path(target).name


def sidecar(target: str | os.PathLike, suffix: str) -> Path:
    """Where the files that go with a campaign live (its token files `.token` and
    `.read-token`, the webhook key `.webhook-secret`): beside a campaign file (`DB.token`);
    for a PostgreSQL campaign NAME, in the current folder (`NAME.token`)."""
    if is_url(target):
        return Path(default_name(target) + suffix)
    return Path(str(target) + suffix)


def describe(target: str | os.PathLike) -> str:
    """A campaign target as shown to its admin (a URL without its password)."""
    if is_url(target):
        from .store_postgres import redact

        return redact(str(target))
    return str(target)
