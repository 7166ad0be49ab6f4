"""Every ```python block of README.md runs as written (each on its own, in a scratch folder)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import crowdopt

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"),
                    flags=re.M | re.S)


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("k", range(len(BLOCKS)))
def test_readme_python_block_runs(k, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = compile(BLOCKS[k], f"README.md python block {k + 1}", "exec")
    try:
        exec(code, {"__name__": f"readme_block_{k + 1}"})
    except ModuleNotFoundError as exc:  # a block that shows an optional extra (e.g. pandas)
        if exc.name in ("pandas", "crowdkit", "matplotlib", "sklearn"):
            pytest.skip(f"README block {k + 1} needs the optional {exc.name}")
        raise
    except crowdopt.InputError as exc:  # a block on the real data sets, which may be absent
        if exc.field in ("CROWDOPT_DATA", "data file"):
            pytest.skip(f"README block {k + 1} needs the real data sets ($CROWDOPT_DATA)")
        raise
    assert capsys.readouterr().out.strip(), "a README example should show its result"
