"""The documentation runs as written: every ```bash and ```python block of README.md and of
docs/*.md is executed in order, one empty scratch folder per file, as a newcomer pasting them
would: no $CROWDOPT_DATA and no shared data folder, data sets downloaded from a local mirror
(CROWDOPT_DATASETS_MIRROR, served from the real files on 127.0.0.1), a scratch HOME so that
nothing outside the folder is touched. ```bash blocks run with `bash -e` and the venv's bin on
PATH; ```python blocks run in one namespace per file. ```text, ```json, ```console (and the
other data languages) are shown, not run. The site builds with `mkdocs build --strict`, and
its command-line reference is the parser's own help."""

from __future__ import annotations

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
SHOWN = {"text", "json", "console", "toml", "csv", "yaml"}
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


def _uses_data(bs: list[Block]) -> bool:
    """Whether a file's blocks name a data set the usual ways (a sanity check of the mirror)."""
    return any(re.search(r"dataset|load_table", b.code) for b in bs if b.lang in RUN)


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


def _run_python(block: Block, path: Path, namespace: dict) -> None:
    code = compile("\n" * (block.line) + block.code, str(path.relative_to(ROOT)), "exec")
    exec(code, namespace)


@pytest.mark.slow
@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_code_blocks_run_in_order(path, mirror_root, scratch, request, monkeypatch, capfd):
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
    for b in bs:
        if b.lang == "bash":
            _run_bash(b, path, work, env)
        else:
            _run_python(b, path, namespace)
    capfd.readouterr()
    if _uses_data(bs):  # the data really came from the mirror, not from a folder here
        assert mirror.requests, f"{path.name} uses a data set but fetched nothing"


def test_site_builds_without_a_warning(tmp_path):
    """`mkdocs build --strict` (warnings are errors: broken links and anchors, pages missing
    from the nav, API objects that do not resolve)."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (it is in the lock)")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                           "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
                          cwd=ROOT, env=env, text=True, capture_output=True, timeout=600)
    assert proc.returncode == 0 and "WARNING" not in proc.stderr, proc.stderr[-5000:]
    cli = (tmp_path / "site" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "usage: crowdopt campaign serve" in cli and "usage: crowdopt replay lsol" in cli


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
