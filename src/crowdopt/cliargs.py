"""Argument helpers every command shares, so one idea has one flag name and one meaning.

- `add_runs`: the replicate count is `--runs` everywhere; older spellings (`--reps`,
  `--trials`) still parse as hidden aliases for one release.
- `add_alias`: any other hidden alias of a flag (e.g. `--mode` for `--model`).
"""

from __future__ import annotations

import argparse


def add_alias(p: argparse.ArgumentParser, alias: str, dest: str, **kw) -> None:
    """A hidden old spelling of an option: same destination, not shown in --help, no default
    of its own (the visible option's default stays)."""
    p.add_argument(alias, dest=dest, help=argparse.SUPPRESS, default=argparse.SUPPRESS, **kw)


def add_runs(p: argparse.ArgumentParser, default: int | None, help: str,
             aliases: tuple[str, ...] = ("--reps", "--trials")) -> None:
    """`--runs N`: replications, each with its own seed (seed + r)."""
    p.add_argument("--runs", type=int, default=default, metavar="N", help=help)
    for a in aliases:
        add_alias(p, a, "runs", type=int, metavar="N")
