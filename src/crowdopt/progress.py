"""Progress bars for long commands: tqdm when installed, else a plain stderr counter.

Never writes to stdout (so `--json` output stays clean); `enabled=False` (from `--quiet` or
`--json`) silences it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any


def progress(iterable: Iterable, total: int | None = None, desc: str = "",
             enabled: bool = True) -> Iterator:
    if not enabled:
        yield from iterable
        return
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - the `progress` extra is missing
        yield from _plain(iterable, total, desc)
        return
    yield from tqdm(iterable, total=total, desc=desc, file=sys.stderr, leave=False,
                    dynamic_ncols=True)


def _plain(iterable: Iterable, total: int | None, desc: str) -> Iterator[Any]:
    t0 = last = time.monotonic()
    n = 0
    for item in iterable:
        yield item
        n += 1
        now = time.monotonic()
        if now - last > 2.0:
            last = now
            of = f"/{total}" if total else ""
            print(f"\r{desc} {n}{of} ({now - t0:.0f}s)", end="", file=sys.stderr, flush=True)
    if n:
        print(file=sys.stderr)
