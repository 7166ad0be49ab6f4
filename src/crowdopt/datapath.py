"""Where the real data sets live: $CROWDOPT_DATA, default ../shared/data (never in the repo)."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import InputError


def data_root(required: bool = True) -> Path | None:
    """The shared data folder; InputError (or None) when it is absent."""
    env = os.environ.get("CROWDOPT_DATA")
    candidates = [Path(env)] if env else [
        Path.cwd() / ".." / "shared" / "data",
        Path(__file__).resolve().parents[3] / "shared" / "data",  # src/crowdopt -> repo/..
    ]
    for c in candidates:
        if c.is_dir():
            return c.resolve()
    if required:
        raise InputError("CROWDOPT_DATA", "a folder holding the shared data sets",
                         str(candidates[0]))
    return None


def data_file(*parts: str) -> Path:
    """A file under the data root; InputError naming it when missing."""
    root = data_root()
    path = root.joinpath(*parts)
    if not path.exists():
        raise InputError("data file", "an existing file under $CROWDOPT_DATA", str(path))
    return path
