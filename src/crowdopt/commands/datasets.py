"""`crowdopt datasets list | info NAME | fetch NAME... | path NAME | verify [NAME...]`: the
public data sets crowdopt reads by name (`dataset:NAME`), their sources, licences and hashes
(the catalogue in `crowdopt.dataset_catalogue`), and where their files are on this machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError

EXIT_OK, EXIT_INPUT, EXIT_CHECK = 0, 2, 5


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 1e4 else f"{n} B"


def _names(args_names: list[str], every: bool) -> list[str]:
    """The sets a command names: every one with --all (and then no NAME: `--all nope` is
    refused, not read as --all), else each NAME once (one given twice is refused)."""
    from ..dataset_catalogue import catalogue, entry
    from ..validate import Shown

    if every:
        if args_names:
            raise InputError("NAME", "no data set name with --all (--all is every set)",
                             " ".join(args_names))
        return list(catalogue())
    if not args_names:
        raise InputError("NAME", "one or more data set names, or --all", "nothing")
    twice = next((n for k, n in enumerate(args_names) if n in args_names[:k]), None)
    if twice is not None:
        raise InputError("NAME", "each data set once", Shown(f"{twice!r} twice"))
    return [entry(n).name for n in args_names]


def _status(name: str) -> dict[str, Any]:
    """Where set `name` is (first search folder holding all its files) and whether its files
    there equal the catalogue, by size only (verify hashes them)."""
    from ..datapath import find_set

    root = find_set(name)
    return {"status": "present" if root else "missing",
            "root": str(root.resolve()) if root else None}


def _doc(name: str, *, files: bool = False) -> dict[str, Any]:
    from ..dataset_catalogue import entry

    e = entry(name)
    d = {"name": e.name, "kind": e.kind, "title": e.title, "description": e.description,
         "citation": e.citation, "licence": e.licence, "counts": dict(e.counts),
         "size": e.size, **_status(name)}
    if files:
        d.update(folder=e.folder, reader=e.reader, references=list(e.references),
                 licence_note=e.licence_note,
                 files=[{"path": f.path, "size": f.size, "sha256": f.sha256, "url": f.url}
                        for f in e.files])
    return d


def _emit(sets: list[dict]) -> None:
    from ..cli import emit_json

    emit_json({"sets": sets})


def cmd_list(args: argparse.Namespace) -> int:
    """`crowdopt datasets list`: every catalogued set and whether it is here."""
    from ..cli import format_table
    from ..dataset_catalogue import catalogue

    sets = [_doc(n) for n in catalogue()]
    if args.json:
        _emit(sets)
        return EXIT_OK
    rows = []
    for s in sets:
        c = s["counts"]
        rows.append({"name": s["name"], "kind": s["kind"],
                     "items": c.get("items", c.get("instances")), "workers": c.get("workers"),
                     "labels": c.get("labels"), "classes": c.get("classes"),
                     "gold": c.get("gold"), "size": _mb(s["size"]), "licence": s["licence"],
                     "here": "yes" if s["status"] == "present" else "no"})
    print(format_table(rows, list(rows[0])))
    print("\nhere = its files are on this machine (`crowdopt datasets path NAME`); "
          "`crowdopt datasets fetch NAME` downloads one")
    return EXIT_OK


def cmd_info(args: argparse.Namespace) -> int:
    """`crowdopt datasets info`: one set's description, citation, licence, files."""
    d = _doc(args.name, files=True)
    if args.json:
        _emit([d])
        return EXIT_OK
    print(f"{d['name']}: {d['title']}")
    print(f"  {d['description']}")
    print("  counts: " + ", ".join(f"{k} {v}" for k, v in d["counts"].items()))
    print(f"  reader: {d['reader']}")
    print(f"  licence: {d['licence']} ({d['licence_note']})")
    print("  cite:")
    for r in d["references"]:
        print(f"    - {r}")
    print(f"  files ({_mb(d['size'])}):")
    for f in d["files"]:
        print(f"    {f['path']}  {f['size']} bytes  sha256 {f['sha256']}")
        print(f"      {f['url']}")
    where = d["root"] or "not on this machine: crowdopt datasets fetch " + d["name"]
    print(f"  here: {where}")
    return EXIT_OK


def cmd_fetch(args: argparse.Namespace) -> int:
    """`crowdopt datasets fetch`: download sets, verified by their hashes."""
    from ..datapath import download_dir, fetch_set, find_for_fetch, mirror_url
    from ..dataset_catalogue import entry

    mirror_url(args.mirror, "--mirror")  # a bad URL fails before anything is fetched
    quiet = args.quiet or args.json
    out = []
    for name in _names(args.names, args.all):
        found = None if args.force else find_for_fetch(name)
        if found is None:
            fetch_set(name, mirror=args.mirror, force=args.force, progress=not quiet,
                      timeout=args.timeout)
            found, action = download_dir(), "fetched"
        else:
            action = "present"
        d = {**_doc(name), "action": action}
        out.append(d)
        if not args.json:
            n = len(entry(name).files)
            check = ("SHA-256 checked" if action == "fetched"
                     else f"`crowdopt datasets verify {name}` checks their SHA-256")
            print(f"{name}: {action} in {Path(found).resolve()} ({n} file{'s' * (n > 1)}, "
                  f"{_mb(d['size'])}; {check})")
    if args.json:
        _emit(out)
    return EXIT_OK


def cmd_path(args: argparse.Namespace) -> int:
    """`crowdopt datasets path`: the folder holding a set's files."""
    from ..datapath import set_folder
    from ..dataset_catalogue import entry

    e = entry(args.name)
    root = set_folder(args.name, fetch=False, check=False)
    if args.files:
        for f in e.files:
            print(root / f.path)
    else:
        print(root / e.folder)
    return EXIT_OK


def verify_set(name: str) -> dict[str, Any]:
    """Hash every file of set `name` in each search folder holding any of them: status ok
    (all files equal the catalogue in one folder), mismatch (a file differs) or missing."""
    from ..datapath import search_dirs
    from ..dataset_catalogue import entry, sha256_of

    e = entry(name)
    checked, problems, ok_root = [], [], None
    for d in search_dirs():
        here = [f for f in e.files if (d / f.path).is_file()]
        if not here:
            continue
        good = 0
        for f in here:
            p = d / f.path
            size = p.stat().st_size
            digest = sha256_of(p) if size == f.size else None
            rec = {"path": str(p), "size": size, "sha256": digest,
                   "ok": digest == f.sha256}
            checked.append(rec)
            if rec["ok"]:
                good += 1
            else:
                problems.append(f"{p}: expected SHA-256 {f.sha256} ({f.size} bytes), found "
                                + (f"SHA-256 {digest}" if digest else f"{size} bytes"))
        if good == len(e.files) and ok_root is None:
            ok_root = d
    status = "mismatch" if problems else ("ok" if ok_root else "missing")
    return {"name": name, "status": status, "root": str(ok_root.resolve()) if ok_root else None,
            "files": checked, "problems": problems}


def cmd_verify(args: argparse.Namespace) -> int:
    """`crowdopt datasets verify`: hash the local files against the catalogue."""
    from ..dataset_catalogue import catalogue

    names = _names(args.names, not args.names)
    results = [verify_set(n) for n in names]
    if args.json:
        _emit(results)
    else:
        for r in results:
            where = f" in {r['root']}" if r["root"] else ""
            print(f"{r['name']:<20} {r['status']}{where}")
        counts = {s: sum(r["status"] == s for r in results) for s in ("ok", "mismatch",
                                                                      "missing")}
        print(f"\n{counts['ok']} of {len(results)} sets equal the catalogue (SHA-256 of every "
              f"file), {counts['mismatch']} differ, {counts['missing']} not on this machine"
              + (f" (of {len(catalogue())} catalogued)" if len(results) < len(catalogue())
                 else ""))
    for r in results:
        for p in r["problems"]:
            print(f"crowdopt datasets verify: {p}", file=sys.stderr)
    if any(r["status"] == "mismatch" for r in results):
        return EXIT_CHECK
    if args.names and any(r["status"] == "missing" for r in results):
        missing = [r["name"] for r in results if r["status"] == "missing"]
        raise InputError("NAME", "data sets on this machine (crowdopt datasets fetch "
                         + " ".join(missing) + ")", " ".join(missing))
    return EXIT_OK


def _json_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")


def register(cli) -> None:
    """Add `crowdopt datasets` and its subcommands to the CLI."""
    from ..cliargs import seconds

    g = cli.top.add_parser(
        "datasets", help="public data sets by name: list, info, fetch (verified), path, verify",
        description="The public crowd label sets (and the UCI sets of the OLAS reproduction) "
        "that `dataset:NAME` reads. Files are looked up in $CROWDOPT_DATA and the per-user "
        "cache ($XDG_CACHE_HOME/crowdopt, ~/.cache/crowdopt); a missing set is downloaded on "
        "first use from its public source at a pinned commit, or from a mirror (--mirror URL, "
        "$CROWDOPT_DATASETS_MIRROR), and refused unless every file's size and SHA-256 equal "
        "the catalogue's; a file is checked again the first time each command reads it. "
        "--offline (or CROWDOPT_OFFLINE=1) stops every download, `datasets fetch` too.")
    sub = g.add_subparsers(dest="action", metavar="ACTION")
    g.set_defaults(func=lambda a: (g.print_help(), EXIT_INPUT)[1])

    p = sub.add_parser("list", help="every catalogued set: counts, size, licence, whether here")
    _json_flag(p)
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("info", help="one set: description, citation, licence, files, hashes")
    p.add_argument("name", metavar="NAME", help="data set name (crowdopt datasets list)")
    _json_flag(p)
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("fetch", help="download sets into $CROWDOPT_DATA or the cache, verified",
                       description="Download the files of each NAME that is not already on "
                       "this machine (with $CROWDOPT_DATA set: not already in it) into "
                       "$CROWDOPT_DATA, else the per-user cache, each checked against the "
                       "catalogue's size and SHA-256 "
                       "before it is renamed into place (progress on stderr). An interrupted "
                       "download resumes where it stopped on the next run.")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="data set names (each once; options may come between them)")
    p.add_argument("--all", action="store_true", help="every catalogued set (then no NAME)")
    p.add_argument("--mirror", default=None, metavar="URL",
                   help="base URL laid out as a data folder (URL/FOLDER/FILE) instead of "
                   "the public sources (default $CROWDOPT_DATASETS_MIRROR)")
    p.add_argument("--force", action="store_true",
                   help="download again even when the files are already here")
    p.add_argument("--timeout", type=seconds, default=60.0, metavar="S",
                   help="deadline for each file's whole download, retries included, seconds "
                   "(default 60; at most 1e9); a file stopped by it resumes on the next run")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    _json_flag(p)
    p.set_defaults(func=cmd_fetch, intermixed="names")

    p = sub.add_parser("path", help="the folder holding a set's files (never downloads)")
    p.add_argument("name", metavar="NAME", help="data set name")
    p.add_argument("--files", action="store_true", help="print each file's path instead")
    p.set_defaults(func=cmd_path)

    p = sub.add_parser("verify", help="hash the files on this machine against the catalogue",
                       description="SHA-256 of every file of every set (or of each NAME) found "
                       "on this machine, against the catalogue. Exit 5 when a file differs, "
                       "2 when a NAME given is not here.")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="data set names (default: all; each once; options may come between "
                   "them)")
    _json_flag(p)
    p.set_defaults(func=cmd_verify, intermixed="names")
