"""Walk the argparse tree of the `crowdopt` command (shared by the CLI contract tests)."""

from __future__ import annotations

import argparse

from crowdopt.cli import build_parser


def _subparsers(p: argparse.ArgumentParser):
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            helps = {c.dest: c.help for c in a._choices_actions}
            for name, sp in a.choices.items():
                yield name, sp, helps.get(name)


def leaves(p: argparse.ArgumentParser | None = None, path: tuple[str, ...] = ()):
    """(path, parser, help) of every leaf command, e.g. (('simulate', 'lsol'), parser, '...')."""
    p = p or build_parser()
    subs = list(_subparsers(p))
    if not subs and path:
        yield path, p, None
    for name, sp, h in subs:
        if any(True for _ in _subparsers(sp)):
            yield (*path, name), sp, h  # a group: listed too, for its help text
            yield from ((pp, ss, hh) for pp, ss, hh in leaves(sp, (*path, name)) if pp != (*path, name))
        else:
            yield (*path, name), sp, h


def options(p: argparse.ArgumentParser):
    """The visible options and positionals of one parser (hidden aliases and -h excluded)."""
    for a in p._actions:
        if isinstance(a, argparse._HelpAction | argparse._SubParsersAction):
            continue
        if a.help == argparse.SUPPRESS:
            continue
        yield a
