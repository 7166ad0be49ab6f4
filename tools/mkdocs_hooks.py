"""MkDocs hooks of the documentation site (mkdocs.yml `hooks:`).

docs/cli.md holds the marker `<!-- cli-reference -->`; at each build it is replaced by the
`--help` of every command, written from the parser (tools/cli_reference.py), so the reference
cannot drift from the command line.
"""

from __future__ import annotations

import sys
from pathlib import Path

MARKER = "<!-- cli-reference -->"


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER not in markdown:
        return markdown
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        from cli_reference import markdown as reference
    finally:
        sys.path.pop(0)
    return markdown.replace(MARKER, reference())
