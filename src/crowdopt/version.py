"""The package version, read from the installed package's metadata (pyproject.toml is the one
place it is written); a source tree that is not installed reports '0+unknown'."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("crowdopt")
except PackageNotFoundError:  # pragma: no cover - running from an uninstalled source tree
    __version__ = "0+unknown"
