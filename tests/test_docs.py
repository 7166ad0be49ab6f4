"""The documentation runs as written: every ```bash and ```python block of README.md and of
docs/*.md is executed in order, one empty scratch folder per file, as a newcomer pasting them
would: no $CROWDOPT_DATA and no shared data folder, data sets downloaded from a local mirror
(CROWDOPT_DATASETS_MIRROR, served from the real files on 127.0.0.1), a scratch HOME so that
nothing outside the folder is touched. ```bash blocks run with `bash -e` and the venv's bin on
PATH; ```python blocks run in one namespace per file; a block that created a file runs a second
time right after the file's last block, in the same folder, as a reader pasting it again does
(README's in make test, every page's under make soak).
```sh blocks (the install and the suite itself), ```text, ```json, ```console (and the other
data languages) are shown, not run. Every ```python block is also pasted, line by line, into
`code.InteractiveConsole` (what `python` does with a paste: an indented body ends at a blank
line), and no block carries a prompt (`$ `, `>>> `) that a copy would take along. The site
builds with `mkdocs build --strict` and works offline (tests/test_site_offline.py), and its
command-line reference is the parser's own help."""

from __future__ import annotations

import code
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from mirror_server import Mirror

from crowdopt import datapath

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
RUN = {"bash", "python"}
# sh: shell commands shown, not run (installing, the suite itself); console: a session's output
SHOWN = {"text", "json", "console", "toml", "csv", "yaml", "sh"}
PROMPT = re.compile(r"^(\$|>>>|\.\.\.|%) ", re.M)
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[^\s`]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                   re.M | re.S)
# a subprocess of a bash block must not see the shared data folder either: this module, put
# first on its PYTHONPATH, hides it (as `_shared_candidates` is patched in this process)
HIDE_SHARED = ("import crowdopt.datapath as _d\n"
               "_d._shared_candidates = lambda: []\n")
CROWDOPT_VARS = ("CROWDOPT_DATA", "CROWDOPT_OFFLINE", "CROWDOPT_DATASETS_MIRROR",
                 "CROWDOPT_SCHEDULER", "CROWDOPT_VERBOSE", "XDG_CACHE_HOME")


@dataclass
class Block:
    lang: str
    code: str
    line: int  # line of the opening fence in its file

    def where(self, path: Path) -> str:
        return f"{path.relative_to(ROOT)}:{self.line} ({self.lang} block)"


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, in order (indented fences included)."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        indent = m["indent"]
        body = "".join(line[len(indent):] if line.startswith(indent) else line
                       for line in m["body"].splitlines(keepends=True))
        out.append(Block(m["lang"], body, text.count("\n", 0, m.start()) + 1))
    return out


class PasteConsole(code.InteractiveConsole):
    """`python`'s prompt fed a paste: each line is pushed as typed, a statement runs when it is
    complete (an indented body ends at a blank line), an error is raised instead of printed.
    `run=False` compiles each statement as the prompt does without running it."""

    def __init__(self, namespace: dict, run: bool):
        super().__init__(namespace)
        self.run = run

    def runcode(self, code_obj) -> None:
        if self.run:
            exec(code_obj, self.locals)

    def showsyntaxerror(self, filename=None, **kwargs) -> None:
        raise sys.exc_info()[1]

    def paste(self, block: Block, path: Path) -> None:
        """Push the block's lines and, as a paste ends, one empty line."""
        buffer: list[str] = []
        for n, line in enumerate([*block.code.splitlines(), ""]):
            buffer.append(line)
            try:
                more = self.push(line)
            except SyntaxError as exc:
                pytest.fail(f"{block.where(path)}: pasted into `python`, line {n + 1} is a "
                            f"{type(exc).__name__} ({exc.msg}) after\n" + "\n".join(buffer),
                            pytrace=False)
            if not more:
                buffer = []


def _uses_data(bs: list[Block]) -> bool:
    """Whether a file's blocks name a data set the usual ways (a sanity check of the mirror)."""
    return any(re.search(r"dataset|load_table", b.code) for b in bs if b.lang in RUN)


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks_paste_into_the_interpreter(path):
    """Every ```python block, pasted line by line into `python`'s prompt, is the statements
    it shows: no dedented line right after an indented body (a SyntaxError there), no blank
    line inside one (the body would end early). Compiled as the prompt compiles, not run (the
    exec test runs them)."""
    for b in blocks(path):
        if b.lang == "python":
            PasteConsole({"__name__": "__main__"}, run=False).paste(b, path)


def test_the_paste_check_catches_what_exec_accepts():
    """The two shapes a paste breaks and exec does not."""
    for src in ("while False:\n    pass\nprint(1)\n",
                "def f():\n    x = 1\n\n    return x\n"):
        compile(src, "<block>", "exec")
        with pytest.raises(pytest.fail.Exception, match="pasted into"):
            PasteConsole({}, run=False).paste(Block("python", src, 1), ROOT / "README.md")
    ns: dict = {}
    PasteConsole(ns, run=True).paste(Block("python", "for i in range(3):\n    x = i\n\n"
                                                     "y = x + 1\n", 1), ROOT / "README.md")
    assert ns["y"] == 3


def test_no_block_carries_a_prompt():
    """A copied command must run as copied: no `$ ` or `>>> ` prompt lines in a shell or
    Python block (the copy button copies everything)."""
    bad = [b.where(p) for p in DOC_FILES for b in blocks(p)
           if b.lang in {"bash", "sh", "console", "python"} and PROMPT.search(b.code)]
    assert not bad, bad


def test_every_block_says_whether_it_runs():
    """A fence without a language, or with one that is neither run nor a data format, would
    be neither tested nor meant: refused."""
    bad = [b.where(p) + f" language {b.lang!r}" for p in DOC_FILES for b in blocks(p)
           if b.lang not in RUN | SHOWN]
    assert not bad, "code blocks must be ```bash, ```python or one of " + ", ".join(sorted(SHOWN))
    assert sum(b.lang in RUN for b in blocks(ROOT / "README.md")) >= 4


@pytest.fixture(scope="session")
def mirror_root():
    """The real data folder the mirror serves, found as the package finds data (looked up before
    `scratch` hides the shared folder): one folder holding every catalogued file."""
    return datapath.complete_root()


@pytest.fixture
def scratch(tmp_path, monkeypatch, request):
    """An empty folder, a scratch HOME, no crowdopt variables, no shared data; returns
    (folder, environment for subprocesses)."""
    work, home, site = tmp_path / "work", tmp_path / "home", tmp_path / "site"
    for d in (work, home, site):
        d.mkdir()
    (site / "sitecustomize.py").write_text(HIDE_SHARED)
    for var in CROWDOPT_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setattr(datapath, "_shared_candidates", lambda: [])
    monkeypatch.chdir(work)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH")) if p)
    return work, env


def _run_bash(block: Block, path: Path, work: Path, env: dict) -> None:
    proc = subprocess.run(["bash", "-e", "-c", block.code], cwd=work, env=env, text=True,
                          capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        pytest.fail(f"{block.where(path)} exited {proc.returncode}\n--- code\n{block.code}"
                    f"--- stdout (end)\n{proc.stdout[-3000:]}\n--- stderr (end)\n"
                    f"{proc.stderr[-3000:]}", pytrace=False)


def _listing(work: Path) -> set[str]:
    return {str(f.relative_to(work)) for f in work.rglob("*")}


def _run_python(block: Block, path: Path, namespace: dict) -> None:
    code = compile("\n" * (block.line) + block.code, str(path.relative_to(ROOT)), "exec")
    exec(code, namespace)


AGAIN_IN_MAKE_TEST = {"README.md"}  # the pages whose file-making blocks run again in make test


@pytest.mark.slow
@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_code_blocks_run_in_order(path, mirror_root, scratch, request, monkeypatch, capfd):
    """Every block of the page in order; README's file-making blocks once more (every page's
    under make soak: `test_code_blocks_run_again`)."""
    _run_page(path, mirror_root, scratch, request, monkeypatch, capfd,
              again=str(path.relative_to(ROOT)) in AGAIN_IN_MAKE_TEST)


@pytest.mark.soak
@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_code_blocks_run_again(path, mirror_root, scratch, request, monkeypatch, capfd):
    """Every page's blocks in order, then each block that made a file once more in the same
    folder, as a reader pasting it again does."""
    _run_page(path, mirror_root, scratch, request, monkeypatch, capfd, again=True)


def _run_page(path, mirror_root, scratch, request, monkeypatch, capfd, *, again: bool) -> None:
    bs = [b for b in blocks(path) if b.lang in RUN]
    if not bs:
        return
    if mirror_root is None:  # the tours fetch real data sets; the mirror serves them
        pytest.skip("real data sets not found: run `crowdopt datasets fetch --all` (or set "
                    "CROWDOPT_DATA)")
    work, env = scratch
    mirror = Mirror(mirror_root).__enter__()
    request.addfinalizer(lambda: mirror.__exit__(None, None, None))
    monkeypatch.setenv("CROWDOPT_DATASETS_MIRROR", mirror.url())
    env["CROWDOPT_DATASETS_MIRROR"] = mirror.url()
    namespace = {"__name__": "__main__"}
    creators = []  # the blocks that made a file: pasted again, they must run again
    for b in bs:
        before = _listing(work)
        if b.lang == "bash":
            _run_bash(b, path, work, env)
        else:
            _run_python(b, path, namespace)
        if again and _listing(work) - before:
            creators.append(b)
    for b in creators:
        if b.lang == "bash":
            _run_bash(b, path, work, env)
        else:
            PasteConsole(namespace, run=True).paste(b, path)
    capfd.readouterr()
    if _uses_data(bs):  # the data really came from the mirror, not from a folder here
        assert mirror.requests, f"{path.name} uses a data set but fetched nothing"


def test_the_default_cltap_model_documents_every_component():
    """Every set, variable, row and objective of the model `build_model` returns for CL-TAP
    has its Pyomo `doc` (what the problem's page tables), and the page holds that table."""
    import pyomo.environ as pyo

    import crowdopt
    from crowdopt.models.cltap import HEADS_DOC

    inst = crowdopt.generate("cltap", 1, t=5, a=3, trend="dec")  # ties: the ordering rows too
    model = crowdopt.build_model(inst)
    names = {c.local_name: c.doc for c in model.component_objects(
        (pyo.Set, pyo.Var, pyo.Constraint, pyo.Objective), descend_into=False)
        if not c.local_name.endswith("_index")}
    assert names == {k: HEADS_DOC[k] for k in names}, set(names) ^ set(HEADS_DOC)
    assert set(HEADS_DOC) - set(names) <= {"heads", "heads_first", "used_first"}
    assert "<!-- model-components crowdopt.models.cltap.HEADS_DOC -->" in \
        (ROOT / "docs" / "problems" / "cltap.md").read_text(encoding="utf-8")


def test_cli_reference_is_the_parser():
    """The generated reference has a section for every command and subcommand the parser
    knows, each holding that parser's own usage line."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import cli_reference
    finally:
        sys.path.pop(0)
    page = cli_reference.markdown()
    paths = [path for path, _ in cli_reference.commands()]
    assert ("campaign", "serve") in paths and ("reproduce", "cltap") in paths
    assert len(paths) > 40
    for path, parser in cli_reference.commands():
        assert parser.prog == " ".join(("crowdopt", *path))
        assert f"{{#{cli_reference.anchor(path)}}}" in page and f"usage: {parser.prog}" in page
