"""The built documentation site works with no network: served on 127.0.0.1 to headless
Chromium whose host resolver finds no other host, a page with formulas shows them typeset by
the site's own MathJax (no raw \\( or \\[ left in its text), the Python API page shows
parameter tables, and the footer names the version."""

from __future__ import annotations

import contextlib
import functools
import html
import os
import re
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BROWSER = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                if shutil.which(n)), None)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def serve(folder: Path):
    """`folder` served over HTTP on 127.0.0.1; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def rendered(url: str, profile: Path) -> str:
    """The page's DOM after its scripts ran, in a browser that can reach 127.0.0.1 only."""
    proc = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu",
                           f"--user-data-dir={profile}",
                           "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                           "--virtual-time-budget=5000", "--dump-dom", url],
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def text_of(dom: str) -> str:
    """The visible text of the page's article (scripts, styles and tags left out)."""
    m = re.search(r"<article\b.*?</article>", dom, re.S)
    body = m.group(0) if m else dom
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", body, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def outside_resources(site: Path) -> set[tuple[str, str]]:
    """(page, host) of every script, stylesheet or font a page loads from another site."""
    outside = set()
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"<(script|link)\b[^>]*>", text):
            tag = m.group(0)
            if m.group(1) == "link" and not re.search(r'rel="(stylesheet|preconnect|preload)"',
                                                      tag):
                continue  # a link to a page (the repository), not a resource
            url = re.search(r'(?:src|href)="((?:https?:)?//[^"/]+)', tag)
            if url:
                outside.add((page.relative_to(site).as_posix(), url.group(1)))
    return outside


@pytest.mark.slow
def test_site_builds_strict_and_works_offline(tmp_path):
    """`mkdocs build --strict` (warnings are errors: broken links and anchors, pages missing
    from the nav, API objects that do not resolve); the command-line reference is the parser's;
    no page loads anything from another site; and, in headless Chromium that can reach
    127.0.0.1 only, formulas are typeset (no raw \\( or \\[ in the text), the API page has
    parameter tables, the footer names the version. One build for all of it."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (it is in the lock)")
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                           "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
                          cwd=ROOT, env=env, text=True, capture_output=True, timeout=600)
    assert proc.returncode == 0 and "WARNING" not in proc.stderr, proc.stderr[-5000:]
    cli = (site / "cli" / "index.html").read_text(encoding="utf-8")
    assert "usage: crowdopt campaign serve" in cli and "usage: crowdopt replay lsol" in cli
    assert not outside_resources(site), sorted(outside_resources(site))[:10]
    mathjax = site / "javascripts" / "mathjax"
    assert (mathjax / "tex-mml-chtml.js").is_file() and (mathjax / "LICENSE").is_file()
    assert list((mathjax / "output" / "chtml" / "fonts").rglob("*.woff"))
    assert "Changelog" in (site / "changelog" / "index.html").read_text(encoding="utf-8")
    if BROWSER is None:
        pytest.skip("no headless browser: install Debian's chromium package (apt-get install "
                    "chromium) to test the built site in it")
    from concurrent.futures import ThreadPoolExecutor

    from crowdopt.version import __version__

    with serve(site) as base, ThreadPoolExecutor(2) as pool:
        formulas, api = pool.map(lambda a: rendered(*a),
                                 [(f"{base}/problems/cltap/", tmp_path / "p1"),
                                  (f"{base}/api/", tmp_path / "p2")])
    text = text_of(formulas)
    assert formulas.count("<mjx-container") >= 10, formulas[:2000]
    assert "\\(" not in text and "\\[" not in text, re.findall(r".{40}\\[(\[].{40}", text)[:5]
    assert f"crowdopt {__version__}" in formulas

    tables = re.findall(r'doc-section-title">\s*Parameters:.*?<table\b.*?</table>', api, re.S)
    assert len(tables) >= 10, len(tables)
    solve = api[api.index('id="crowdopt.api.solve"'):]
    first = re.search(r"<table\b.*?</table>", solve, re.S).group(0)
    for name in ("instance", "method", "time_limit"):
        assert f"<code>{name}</code>" in first, (name, first[:1500])
