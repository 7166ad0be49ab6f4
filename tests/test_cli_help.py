"""One name per idea, help on every option, documented flags that exist."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from cli_tree import leaves, options

from crowdopt.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]  # README and the docs site
REPLICATE_COMMANDS = [("simulate", "lsol"), ("simulate", "optkg"), ("simulate", "olas"),
                      ("replay", "lsol"), ("replay", "optkg"), ("reproduce", "olas"),
                      ("reproduce", "selection")]


def _parsers() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    return {path: p for path, p, _ in leaves()}


def test_every_subcommand_and_option_has_help():
    missing = []
    for path, p, h in leaves():
        if not h:
            missing.append(" ".join(path))
        missing += [f"{' '.join(path)} {a.option_strings or a.dest}" for a in options(p)
                    if not (a.help and a.help.strip())]
    assert not missing, f"{len(missing)} without help: {missing}"


def test_one_replicate_flag_name():
    parsers = _parsers()
    for path, p in parsers.items():
        visible = {s for a in options(p) for s in a.option_strings}
        assert not visible & {"--reps", "--trials", "--mode"}, path
    for path in REPLICATE_COMMANDS:
        assert "--runs" in {s for a in options(parsers[path]) for s in a.option_strings}, path


@pytest.mark.parametrize("argv, dest, value", [
    (["simulate", "optkg", "--reps", "3"], "runs", 3),
    (["replay", "optkg", "rte", "--mode", "heterogeneous"], "model", "heterogeneous"),
    (["reproduce", "selection", "--trials", "2"], "runs", 2),
    (["simulate", "olas", "--reps", "4"], "runs", 4),
])
def test_old_spellings_still_parse_as_hidden_aliases(argv, dest, value):
    args = build_parser().parse_args(argv)
    assert getattr(args, dest) == value


def test_hidden_alias_keeps_the_visible_default():
    assert build_parser().parse_args(["simulate", "optkg"]).runs == 20


def test_every_output_option_says_file_or_directory():
    for path, p in _parsers().items():
        for a in options(p):
            if "-o" in a.option_strings:
                assert re.search(r"\bFILE\b|\bDIRECTORY\b", a.help), (path, a.help)


def _readme_commands() -> list[list[str]]:
    """Every `crowdopt ...` command line of README.md and docs/: in fenced blocks and in
    inline code."""
    text = "\n".join(p.read_text() for p in DOCS)
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced:
            lines.append(line.split(" #")[0])
    lines += re.findall(r"`(crowdopt [^`]+)`", text)
    cmds = []
    for line in lines:
        for part in line.replace("[", " ").replace("]", " ").split("|"):
            toks = part.strip().removeprefix("$ ").split()
            if toks[:1] == ["crowdopt"]:
                cmds.append(toks[1:])
    return cmds


def test_every_readme_flag_is_in_its_commands_help():
    parsers = _parsers()
    checked, missing = 0, []
    for toks in _readme_commands():
        path = max((k for k in parsers if tuple(toks[:len(k)]) == k), key=len, default=None)
        if path is None:
            continue
        targets = [parsers[path]]
        rest = toks[len(path):]
        children = [p for k, p in parsers.items() if len(k) == len(path) + 1
                    and k[:len(path)] == path]
        if children and rest and rest[0].isupper():  # `crowdopt reproduce PAPER`: every PAPER
            targets, rest = children, rest[1:]
        known = set.intersection(*({s for a in options(p) for s in a.option_strings}
                                   for p in targets))
        for t in rest:
            flag = t.split("=")[0]
            if flag.startswith("--") or re.fullmatch(r"-[a-zA-Z]", flag):
                checked += 1
                if flag not in known:
                    missing.append(f"crowdopt {' '.join(path)} {flag}")
    assert checked > 30 and not missing, missing


def test_docs_list_every_exit_code():
    import crowdopt.cli as cli

    text = (ROOT / "docs" / "cli.md").read_text()
    codes = {cli.EXIT_OK, cli.EXIT_INPUT, cli.EXIT_INFEASIBLE, cli.EXIT_TIME_LIMIT,
             cli.EXIT_CERT, 1, 130}  # 1: sweep with failed tasks; 130: Ctrl-C
    for c in codes:
        assert re.search(rf"^\| {c} \|", text, re.M), c
