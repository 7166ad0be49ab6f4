"""MkDocs hooks of the documentation site (mkdocs.yml `hooks:`).

- docs/cli.md holds the marker `<!-- cli-reference -->`; at each build it is replaced by the
  `--help` of every command, written from the parser (tools/cli_reference.py), so the reference
  cannot drift from the command line.
- A problem's page holds `<!-- generator-parameters NAME -->`, replaced by the table of its
  generator's parameters, defaults and choices (what `crowdopt generate NAME --show-params`
  prints, from the same `GENERATOR_PARAMS` and `GENERATOR_HELP`).
- `<!-- model-components MODULE.NAME -->` is replaced by the table of a model's components,
  from the dict that its builder passes to Pyomo as each component's `doc=`.
- MathJax 3 is served from the site itself (`javascripts/mathjax/`), copied from the docs
  extra's django-static-mathjax (its es5 build: the combined TeX/MathML/CHTML file, its fonts and
  the parts it loads on demand), so that formulas render with no network.
- The footer names the installed package's version (`crowdopt --version`).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

MARKER = "<!-- cli-reference -->"
GENERATOR = re.compile(r"<!-- generator-parameters (\S+) -->")
COMPONENTS = re.compile(r"<!-- model-components (\S+)\.(\w+) -->")


def generator_table(problem: str) -> str:
    """A Markdown table: parameter, default, what it sets and its choices."""
    from crowdopt.registry import get_problem

    spec = get_problem(problem)
    rows = ["| parameter | default | what it sets |", "|---|---|---|"]
    for key, default in spec.generator_params.items():
        what = spec.generator_help[key].replace("|", "\\|")
        rows.append(f"| `{key}` | `{json.dumps(default)}` | {what} |")
    return "\n".join(rows)


MATHJAX_DEST = "javascripts/mathjax"
# what tex-mml-chtml.js loads: its fonts, the TeX extensions and the menu's parts on demand
MATHJAX_PARTS = ("tex-mml-chtml.js", "output/chtml", "input/tex/extensions", "ui", "a11y", "sre")


def mathjax_files() -> list[tuple[str, Path]]:
    """(site path, file) of each MathJax file the site serves."""
    import mathjax  # the docs extra (django-static-mathjax): MathJax's own release files

    root = Path(mathjax.__file__).resolve().parent / "static" / "mathjax"
    out = [(f"{MATHJAX_DEST}/LICENSE", root / "LICENSE")]
    for part in MATHJAX_PARTS:
        base = root / "es5" / part
        found = [base] if base.is_file() else sorted(f for f in base.rglob("*") if f.is_file())
        if not found:
            raise FileNotFoundError(f"MathJax part {part} not in {root}")
        out += [(f"{MATHJAX_DEST}/{f.relative_to(root / 'es5').as_posix()}", f) for f in found]
    return out


def on_config(config):
    from crowdopt.version import __version__

    config["copyright"] = f"crowdopt {__version__}"
    return config


def on_files(files, config):
    from mkdocs.structure.files import File

    for uri, path in mathjax_files():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def components_table(module: str, name: str) -> str:
    """A Markdown table: component, what it is (the model's Pyomo `doc` strings)."""
    import importlib

    docs = getattr(importlib.import_module(module), name)
    rows = ["| component | what it is |", "|---|---|"]
    rows += [f"| `{key}` | {what.replace('|', chr(92) + '|')} |" for key, what in docs.items()]
    return "\n".join(rows)


def on_page_markdown(markdown: str, page, config, files) -> str:
    markdown = GENERATOR.sub(lambda m: generator_table(m.group(1)), markdown)
    markdown = COMPONENTS.sub(lambda m: components_table(m.group(1), m.group(2)), markdown)
    if MARKER not in markdown:
        return markdown
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        from cli_reference import markdown as reference
    finally:
        sys.path.pop(0)
    return markdown.replace(MARKER, reference())
