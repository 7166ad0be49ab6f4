"""MkDocs hooks of the documentation site (mkdocs.yml `hooks:`).

- docs/cli.md holds the marker `<!-- cli-reference -->`; at each build it is replaced by the
  `--help` of every command, written from the parser (tools/cli_reference.py), so the reference
  cannot drift from the command line.
- A problem's page holds `<!-- generator-parameters NAME -->`, replaced by the table of its
  generator's parameters, defaults and choices (what `crowdopt generate NAME --show-params`
  prints, from the same `GENERATOR_PARAMS` and `GENERATOR_HELP`).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

MARKER = "<!-- cli-reference -->"
GENERATOR = re.compile(r"<!-- generator-parameters (\S+) -->")


def generator_table(problem: str) -> str:
    """A Markdown table: parameter, default, what it sets and its choices."""
    from crowdopt.registry import get_problem

    spec = get_problem(problem)
    rows = ["| parameter | default | what it sets |", "|---|---|---|"]
    for key, default in spec.generator_params.items():
        what = spec.generator_help[key].replace("|", "\\|")
        rows.append(f"| `{key}` | `{json.dumps(default)}` | {what} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, page, config, files) -> str:
    markdown = GENERATOR.sub(lambda m: generator_table(m.group(1)), markdown)
    if MARKER not in markdown:
        return markdown
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        from cli_reference import markdown as reference
    finally:
        sys.path.pop(0)
    return markdown.replace(MARKER, reference())
