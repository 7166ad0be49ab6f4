"""The catalogue of public data sets: where each file comes from, its size and SHA-256.

Data about data, shipped inside the package (`crowdopt/data/datasets.json`, written by
`tools/dataset_catalogue.py` from the shared folder's SOURCE.md files and the files
themselves); the data files are fetched from their public sources (or a mirror) on demand.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from .errors import InputError

CATALOGUE_FILE = "datasets.json"


@dataclass(frozen=True)
class CatalogueFile:
    """One file of a set: `path` relative to a data folder (FOLDER/FILE), size, SHA-256 and
    its public source (repository, commit, path and the raw URL at that commit)."""

    path: str
    size: int
    sha256: str
    url: str
    repo: str
    commit: str
    source_path: str


@dataclass(frozen=True)
class CatalogueEntry:
    """One named set: what it is, whom to cite, under which licence, how it is read."""

    name: str
    kind: str  # "labels" (worker-item-label triples) or "uci" (a classification table)
    title: str
    description: str
    folder: str
    citation: str  # short form, e.g. "Snow et al. 2008"
    references: tuple[str, ...]
    licence: str
    licence_note: str
    reader: str
    counts: dict
    files: tuple[CatalogueFile, ...]

    @property
    def size(self) -> int:
        """Total bytes of the set's files."""
        return sum(f.size for f in self.files)


@lru_cache(maxsize=1)
def catalogue() -> dict[str, CatalogueEntry]:
    """name -> entry, in catalogue order."""
    text = resources.files("crowdopt").joinpath("data", CATALOGUE_FILE).read_text("utf-8")
    doc = json.loads(text)
    out = {}
    for s in doc["sets"]:
        files = tuple(CatalogueFile(**f) for f in s["files"])
        out[s["name"]] = CatalogueEntry(**{**s, "references": tuple(s["references"]),
                                           "files": files})
    return out


def entry(name: str) -> CatalogueEntry:
    """The entry of `name`; InputError listing the names otherwise."""
    cat = catalogue()
    if name not in cat:
        raise InputError("data set", "one of " + ", ".join(cat), name)
    return cat[name]


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()
