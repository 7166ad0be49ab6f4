"""The command-line reference page, written from the `crowdopt` argparse parser itself.

The documentation build calls `markdown()` (through tools/mkdocs_hooks.py) each time it renders
docs/cli.md, so the page is always the parser's own `--help` of every command and subcommand;
`python tools/cli_reference.py` prints the same Markdown.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator

WIDTH = 100  # the help text's line width on the page


def commands(parser: argparse.ArgumentParser | None = None,
             path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """(command words, parser) of the top level and of every command and subcommand, depth
    first in the parser's own order (('',) is the top level)."""
    if parser is None:
        from crowdopt.cli import build_parser

        parser = build_parser()
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*path, name))


def anchor(path: tuple[str, ...]) -> str:
    """The heading anchor of a command on the page: 'crowdopt-campaign-init'."""
    return "-".join(("crowdopt", *path))


def markdown() -> str:
    """The reference: an index of the commands, then each command's `--help`."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)  # argparse reads the width when it formats
    try:
        found = [(path, p.format_help()) for path, p in commands()]
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    out = ["Every command and subcommand, with the text its `--help` prints (this page is "
           "written from the parser at each build of the documentation).", ""]
    for path, _ in found[1:]:
        indent = "    " * (len(path) - 1)
        out.append(f"{indent}- [`crowdopt {' '.join(path)}`](#{anchor(path)})")
    out.append("")
    for path, text in found:
        title = " ".join(("crowdopt", *path))
        out += [f"## `{title}` {{#{anchor(path)}}}", "", "```text", text.rstrip(), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(markdown())
