"""Write the data set catalogue (src/crowdopt/data/datasets.json) from a data folder.

Maintainer script: for every set crowdopt reads by name (crowd label sets and the UCI sets of
the OLAS reproduction) it records the files its reader opens, each with its size, SHA-256
(computed here from the files) and public source (repository, commit, path, raw URL) taken
from the folder's SOURCE.md, plus title, citation and licence from SOURCE.md and the counts
parsed by crowdopt's own reader. The catalogue is data about data; the data stay out of the
repository.

    PYTHONPATH=src python tools/dataset_catalogue.py [--data DIR] [--check]

--check compares with the committed catalogue instead of writing it (exit 1 on a difference).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.parse
from pathlib import Path

from crowdopt.crowd.datasets import DATASETS, read_set
from crowdopt.dataset_catalogue import sha256_of
from crowdopt.sim.uci import PRESETS, _rows

OUT = Path(__file__).resolve().parents[1] / "src" / "crowdopt" / "data" / "datasets.json"

# licence of each source repository, as its SOURCE.md states it
REPO_LICENCE = {
    "CrowdTruth/CrowdTruth-core": "Apache-2.0",
    "ipeirotis/Get-Another-Label": "Apache-2.0",
    "orchidproject/active-crowd-toolkit": "Apache-2.0",
    "welinder/cubam": "Clear BSD",
}
UCI_LICENCE = "CC BY 4.0"
# short citations where the first reference of SOURCE.md is not the set's own paper
CITATION = {
    "sp": "Rodrigues et al. 2013", "sp_amt": "Venanzi et al. 2016",
    "weather_cf": "Venanzi et al. 2014", "weather_cf_amt": "Venanzi et al. 2016",
    "trec2011": "Vuurens et al. 2011", "trec2011_all": "Lease and Kazai 2011",
    "heart": "UCI Statlog (Heart)", "sonar": "Gorman and Sejnowski 1988",
}
UCI_READER = "{fmt}, no header; class in the last column (positive class {pos!r})"


def sections(text: str) -> dict[str, str]:
    """'## Heading' -> body of a SOURCE.md; '#' -> the title line."""
    out = {"#": text.splitlines()[0].lstrip("# ").strip()}
    for m in re.finditer(r"^## (.+?)\n(.*?)(?=^## |\Z)", text, re.S | re.M):
        out[m.group(1).strip()] = m.group(2)
    return out


def bullets(body: str) -> list[str]:
    return [ln[2:].strip() for ln in body.splitlines() if ln.startswith("- ")]


def sources(folder: Path) -> dict[str, dict]:
    """local file name -> {repo, commit, path} from the 'Where it came from' section."""
    body = sections((folder / "SOURCE.md").read_text("utf-8"))["Where it came from"]
    out: dict[str, dict] = {}
    repo = commit = None
    for line in body.splitlines():
        m = re.match(r"- Repository `([^`]+)`, commit `([0-9a-f]{40})`:", line)
        if m:
            repo, commit = m.groups()
            continue
        m = re.match(r"\s+- `([^`]+)` -> `([^`]+)`", line)
        if m and repo:
            out[m.group(2)] = {"repo": repo, "commit": commit, "path": m.group(1)}
            continue
        m = re.match(r"- `([^`]+)` \(.*?repository `([^`]+)`, path `([^`]+)`, commit "
                     r"`([0-9a-f]{40})`", line)  # the UCI form: one line per file
        if m:
            out[m.group(1)] = {"repo": m.group(2), "commit": m.group(4), "path": m.group(3)}
    return out


def short_citation(ref: str) -> str:
    m = re.match(r"([A-Z][\w'-]+), [^()]*?\((\d{4})\)", ref)
    if not m:
        raise SystemExit(f"cannot shorten citation {ref!r}: add it to CITATION")
    n_authors = ref.split("(")[0].count(".,") + 1
    return f"{m.group(1)} et al. {m.group(2)}" if n_authors > 1 else f"{m.group(1)} {m.group(2)}"


def file_entry(root: Path, rel: str, src: dict) -> dict:
    path = root / rel
    url = ("https://raw.githubusercontent.com/" + src["repo"] + "/" + src["commit"] + "/"
           + urllib.parse.quote(src["path"]))
    return {"path": rel, "size": path.stat().st_size, "sha256": sha256_of(path), "url": url,
            "repo": src["repo"], "commit": src["commit"], "source_path": src["path"]}


def licence_of(repos: list[str], note: str) -> str:
    names = []
    for r in repos:
        lic = REPO_LICENCE.get(r, "none stated")
        if lic != "none stated" and lic.split("-")[0] not in note.replace("License ", ""):
            raise SystemExit(f"licence {lic} of {r} not in SOURCE.md: {note}")
        if lic not in names:
            names.append(lic)
    return " / ".join(names)


def entry(root: Path, name: str, folder: str, files: list[str], **extra) -> dict:
    sec = sections((root / folder / "SOURCE.md").read_text("utf-8"))
    src = sources(root / folder)
    missing = [f for f in files if f.split("/")[-1] not in src]
    if missing:
        raise SystemExit(f"{name}: no source in {folder}/SOURCE.md for {missing}")
    refs = bullets(sec["Citation"])
    note = " ".join(bullets(sec["Licence"]))
    fentries = [file_entry(root, f, src[f.split("/")[-1]]) for f in files]
    return {"name": name, "title": sec["#"], "folder": folder,
            "citation": CITATION.get(name) or short_citation(refs[0]), "references": refs,
            "licence_note": note, "files": fentries, **extra}


def build(root: Path) -> dict:
    sets = []
    for name, spec in DATASETS.items():
        folder = spec.labels.split("/")[0]
        table, gold = read_set(name, root, duplicates="all")
        counts = {"items": table.n_tasks, "workers": table.n_workers, "labels": table.n_labels,
                  "classes": table.n_classes, "gold": 0 if gold is None else gold.n}
        e = entry(root, name, folder, list(spec.files), kind="labels",
                  description=spec.description,
                  reader=spec.reader, counts=counts, licence="")
        e["licence"] = licence_of([f["repo"] for f in e["files"]], e["licence_note"])
        sets.append(e)
    for name, pre in PRESETS.items():
        rel = "/".join(pre.path)
        rows = _rows(root / rel, pre.delimiter)
        counts = {"instances": len(rows), "attributes": len(rows[0]) - 1,
                  "classes": len({r[-1] for r in rows})}
        fmt = "space separated" if pre.delimiter is None else "comma separated"
        e = entry(root, name, "/".join(pre.path[:2]), [rel], kind="uci",
                  description=f"{pre.title} (UCI), {counts['instances']} instances, "
                  f"{counts['attributes']} attributes, binary",
                  reader=UCI_READER.format(fmt=fmt, pos=pre.positive), counts=counts,
                  licence=UCI_LICENCE)
        if "CC BY 4.0" not in e["licence_note"]:
            raise SystemExit(f"{name}: SOURCE.md does not state CC BY 4.0")
        sets.append(e)
    keys = ["name", "kind", "title", "description", "folder", "citation", "references",
            "licence", "licence_note", "reader", "counts", "files"]
    return {"about": "Public data sets crowdopt reads by name: sources at pinned commits, "
                     "sizes and SHA-256 of the files (written by tools/dataset_catalogue.py).",
            "sets": [{k: e[k] for k in keys} for e in sets]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("CROWDOPT_DATA", "../shared/data"),
                    help="data folder with the SOURCE.md files (default $CROWDOPT_DATA)")
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    args = ap.parse_args(argv)
    text = json.dumps(build(Path(args.data)), indent=1, ensure_ascii=False) + "\n"
    if args.check:
        same = OUT.exists() and OUT.read_text("utf-8") == text
        print(f"{OUT}: {'up to date' if same else 'DIFFERS from ' + args.data}")
        return 0 if same else 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, "utf-8")
    print(f"wrote {OUT} ({len(json.loads(text)['sets'])} sets)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
