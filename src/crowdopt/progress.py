"""Progress bars for long commands: tqdm when installed, else a plain stderr counter.

Never writes to stdout (so `--json` output stays clean); `enabled=False` (from `--quiet` or
`--json`) silences it, and so does the environment variable `CROWDOPT_PROGRESS=0`.
`progress(iterable)` wraps a loop; `ProgressBar` is the same bar driven by hand (`update()`),
for results that arrive from a pool.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any


def progress_enabled(enabled: bool = True) -> bool:
    """False when the caller says so or the flag CROWDOPT_PROGRESS is off (0/false/no;
    `validate.flag`: another word is an InputError naming the variable)."""
    from .validate import env_flag

    return bool(enabled) and env_flag("CROWDOPT_PROGRESS", default=True)


class ProgressBar:
    """A bar on stderr updated by hand; a no-op when disabled. Use as a context manager."""

    def __init__(self, total: int | None = None, desc: str = "", enabled: bool = True,
                 unit: str = "it") -> None:
        self.total = total
        self.desc = desc
        self.n = 0
        self._bar: Any = None
        self._plain = False
        self._t0 = self._last = time.monotonic()
        self._postfix = ""
        if not progress_enabled(enabled):
            return
        try:
            from tqdm import tqdm
        except ImportError:  # pragma: no cover - the `progress` extra is missing
            self._plain = True
            return
        # unit "B": byte counts shown as kB/MB (downloads)
        self._bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=False,
                         dynamic_ncols=True, unit=unit, unit_scale=unit == "B")

    def update(self, n: int = 1, postfix: str | None = None) -> None:
        """Advance by `n` steps, optionally with a postfix text."""
        self.n += n
        if postfix is not None:
            self._postfix = postfix
        if self._bar is not None:
            if postfix is not None:
                self._bar.set_postfix_str(postfix, refresh=False)
            self._bar.update(n)
        elif self._plain:
            now = time.monotonic()
            if now - self._last > 2.0:
                self._last = now
                self._print_plain(now)

    def _print_plain(self, now: float) -> None:
        of = f"/{self.total}" if self.total else ""
        extra = f" {self._postfix}" if self._postfix else ""
        print(f"\r{self.desc} {self.n}{of} ({now - self._t0:.0f}s){extra}", end="",
              file=sys.stderr, flush=True)

    def close(self) -> None:
        """Finish the bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._plain and self.n:
            self._print_plain(time.monotonic())
            print(file=sys.stderr, flush=True)
            self._plain = False

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def progress(iterable: Iterable, total: int | None = None, desc: str = "",
             enabled: bool = True) -> Iterator:
    """Yield the items of `iterable` while a bar on stderr counts them."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    if not progress_enabled(enabled):
        yield from iterable
        return
    with ProgressBar(total, desc, True) as bar:
        for item in iterable:
            yield item
            bar.update()
