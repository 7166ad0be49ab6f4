"""Loaders for the real crowd data sets under `crowdopt.datapath.data_root()`.

Each entry records the file format and pitfalls documented in the set's SOURCE.md:
CrowdTruth copies (rte, temp: label `response`, item `orig_id`, gold repeated per row),
headerless ActiveCrowdToolkit files (worker, task, label, gold[, time]), Get-Another-Label
tab files (worker, item, label), Zheng `question,worker,answer` files with CRLF line
endings, and the Welinder ducks count-line format with gold derived from species.

Duplicate (worker, task) rows (trec2010_relevance, adult_content, zencrowd_*, weather_cf_amt)
are resolved by `duplicates='first'` by default: the earliest row of each pair is kept, as a
worker's first answer is the one given without feedback. Pass `duplicates='all'` to keep
every row (the Zheng et al. convention) or 'error' to see the count.
"""

from __future__ import annotations

import bz2
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..datapath import data_root
from ..errors import InputError
from .tables import (
    Gold,
    LabelTable,
    _read_rows,
    from_arrays,
    gold_from_arrays,
    read_gold,
    read_labels,
)

ACT = {"worker": 0, "task": 1, "label": 2}  # ActiveCrowdToolkit / Get-Another-Label order
ACT_GOLD = {"task": 1, "label": 3}


@dataclass(frozen=True)
class DatasetSpec:
    """Where a data set's files are and how to read them."""

    name: str
    description: str
    labels: str
    gold: str | None
    label_opts: dict
    gold_opts: dict
    custom: Callable[[Path, str], tuple[LabelTable, Gold | None]] | None = None


def _zheng(name: str, folder: str, desc: str) -> DatasetSpec:
    return DatasetSpec(name, desc, f"{folder}/answer.csv", f"{folder}/truth.csv", {}, {})


def _act(name: str, file: str, desc: str) -> DatasetSpec:
    return DatasetSpec(name, desc, file, file, {"columns": ACT, "header": False},
                       {"columns": ACT_GOLD, "header": False})


def _snow(name: str, folder: str, desc: str) -> DatasetSpec:
    f = f"{folder}/{folder}.standardized.csv"
    return DatasetSpec(name, desc, f, f, {"columns": {"task": "orig_id", "worker":
                                                     "!amt_worker_ids", "label": "response"}},
                       {"columns": {"task": "orig_id", "label": "gold"}})


def _gal(name: str, folder: str, desc: str, gold: str = "gold.txt") -> DatasetSpec:
    return DatasetSpec(name, desc, f"{folder}/labels.txt", f"{folder}/{gold}",
                       {"columns": ACT, "header": False, "sep": "\t"},
                       {"columns": {"task": 0, "label": 1}, "header": False, "sep": "\t",
                        "unknown_tasks": "drop"})


def _load_ducks(root: Path, duplicates: str) -> tuple[LabelTable, Gold]:
    """Welinder ducks: `n_images n_workers n_labels` line, then `image worker label` rows.

    Gold is DERIVED (see its SOURCE.md): 1 if the species is Mallard or American Black Duck.
    """
    table = read_labels(root / "ducks_welinder/labels.txt", header=False, skip_rows=1,
                        sep="whitespace", duplicates=duplicates)
    text = (root / "ducks_welinder/classes.yaml").read_text()
    species = dict(_flow_pairs(text, "species"))
    labels = dict(_flow_pairs(text, "labels"))
    ducks = {species["Mallard"], species["American Black Duck"]}
    tasks = [t for t in labels if t in set(table.task_ids.tolist())]
    return table, gold_from_arrays(table, tasks, [int(labels[t] in ducks) for t in tasks])


def _gal_lower(folder: str, gold: str | None) -> Callable[[Path, str], tuple]:
    """Get-Another-Label tab files whose labels (and gold) mix case (`No`/`no`/`NO`): both are
    lower-cased before encoding (SOURCE.md of gal_hitspam_*)."""
    def load(root: Path, duplicates: str) -> tuple[LabelTable, Gold | None]:
        rows, _ = _read_rows(root / folder / "labels.txt", sep="\t", header=False, skip_rows=0,
                             field="labels")
        rows = [r for r in rows if len(r) >= 3]
        table = from_arrays([r[1].strip() for r in rows], [r[0].strip() for r in rows],
                            [r[2].strip().lower() for r in rows], duplicates=duplicates)
        if gold is None:
            return table, None
        grows, _ = _read_rows(root / folder / gold, sep="\t", header=False, skip_rows=0,
                              field="gold")
        pairs = [(r[0].strip(), r[1].strip().lower()) for r in grows if len(r) >= 2]
        known = set(table.task_ids.tolist())
        pairs = [p for p in pairs if p[0] in known]
        return table, gold_from_arrays(table, [p[0] for p in pairs], [p[1] for p in pairs])
    return load


def _load_trec2011(root: Path, duplicates: str, *, others: bool) -> tuple[LabelTable, Gold]:
    """TREC 2011 crowdsourcing track, Vuurens et al.'s votes (`seq item worker label`), and
    with `others` the 7 other teams' votes (`item worker label`, worker ids space-padded).
    Gold: NIST G-Truth of `TopicId_DocId` binarised (> 0 -> 1, 0 -> 0, -1 missing), as in
    SOURCE.md. Worker ids of the two files are kept apart (prefixes `v:` and `o:`)."""
    folder = root / "trec2011_vuurens"
    rows, _ = _read_rows(folder / "votes", sep="\t", header=False, skip_rows=0, field="labels")
    tasks = [r[1].strip() for r in rows]
    workers = ["v:" + r[2].strip() for r in rows]
    labels = [r[3].strip() for r in rows]
    if others:
        rows, _ = _read_rows(folder / "otherparticipantsvotes", sep="\t", header=False,
                             skip_rows=0, field="labels")
        tasks += [r[0].strip() for r in rows]
        workers += ["o:" + r[1].strip() for r in rows]
        labels += [r[2].strip() for r in rows]
    table = from_arrays(tasks, workers, [int(v) for v in labels], duplicates=duplicates)
    text = bz2.decompress((folder / "task1_unlabeled_g_truth_cons_public.txt.bz2")
                          .read_bytes()).decode("utf-8")
    lines = [ln.split("\t") for ln in text.splitlines()[1:] if ln.strip()]
    known = set(table.task_ids.tolist())
    truth: dict[str, int] = {}
    for f in lines:
        key, g = f"{f[1].strip()}_{f[2].strip()}", int(f[3])
        if g >= 0 and key in known:
            truth.setdefault(key, int(g > 0))
    return table, gold_from_arrays(table, list(truth), list(truth.values()))


def _flow_pairs(text: str, key: str) -> list[tuple[str, str]]:
    """`key: {a: b, c: d}` pairs of a flow-style YAML mapping (values as text)."""
    m = re.search(rf"^{key}:\s*\{{(.*?)\}}", text, re.S | re.M)
    if m is None:
        raise InputError("classes.yaml", f"a '{key}: {{...}}' mapping", "none")
    pairs = [p.split(":", 1) for p in m.group(1).split(",") if p.strip()]
    return [(a.strip(), b.strip()) for a, b in pairs]


_SPECS = [
    _snow("rte", "rte", "RTE textual entailment (Snow 2008), 800 items, binary"),
    _snow("temp", "temp", "TEMP temporal ordering (Snow 2008), 462 items, before/after"),
    _zheng("bluebirds", "bluebirds", "Bluebirds (Welinder 2010), dense 39 x 108, binary"),
    DatasetSpec("ducks", "Ducks (Welinder 2010), 240 x 53, binary, gold derived from species",
                "ducks_welinder/labels.txt", None, {}, {}, custom=_load_ducks),
    DatasetSpec("web", "Web search relevance (Zhou 2012), 5 classes",
                "web/web_crowd.txt", "web/web_truth.txt",
                {"header": False, "sep": "\t"}, {"header": False, "sep": "\t"}),
    _zheng("dog", "dog", "Dog breeds (Zhou 2012), 4 classes"),
    _zheng("face", "face", "Face expression (Mozafari 2014), 4 classes"),
    _zheng("product", "product", "Product matching CrowdER (Wang 2012), binary"),
    _zheng("sentiment_possent", "sentiment_possent", "Tweet positive sentiment, binary, dense"),
    _zheng("trec2010_relevance", "trec2010_relevance",
           "TREC 2010 relevance (Zheng S_Rel), 98k labels, 4 classes, repeated pairs"),
    _gal("adult_content", "adult_content",
         "Adult content (GAL AdultContent2), 4 classes; gold of unlabelled sites dropped"),
    _gal("barzan_mozafari", "gal_barzan_mozafari", "GAL binary set BM", gold="evaluation.txt"),
    _act("weather_cf", "weather_sentiment/CF.csv", "Weather sentiment CrowdFlower, 5 classes"),
    _act("weather_cf_amt", "weather_sentiment/CF_amt.csv", "Weather sentiment AMT, 5 classes"),
    _act("sp", "sentiment_polarity/SP.csv", "Sentence polarity (Rodrigues 2013), binary"),
    _act("sp_amt", "sentiment_polarity/SP_amt.csv", "Sentence polarity AMT, 20 per item"),
    _act("music_genre", "music_genre/MS.csv", "Music genre (Rodrigues 2014), 10 classes"),
    _act("zencrowd_all", "zencrowd/ZenCrowd_all.csv", "ZenCrowd entity linking, all workers"),
    _act("zencrowd_in", "zencrowd/ZenCrowd_in.csv", "ZenCrowd, India workers"),
    _act("zencrowd_us", "zencrowd/ZenCrowd_us.csv", "ZenCrowd, US workers"),
    DatasetSpec("hitspam_cf", "HIT spam via CrowdFlower (GAL), binary, 100 gold",
                "gal_hitspam_crowdflower/labels.txt", None, {}, {},
                custom=_gal_lower("gal_hitspam_crowdflower", "gold.txt")),
    _gal("copyright", "gal_copyright_infringement",
         "Copyright infringement (GAL), 3 classes, only 9 gold"),
    _gal("gal_toy", "gal_toy_adultcontent",
         "GAL toy example (5 x 5, a spammer and an adversary), full truth", gold="evaluation.txt"),
    DatasetSpec("trec2011", "TREC 2011 crowdsourcing, Vuurens team votes, binary, 290 gold",
                "trec2011_vuurens/votes", None, {}, {},
                custom=lambda root, dup: _load_trec2011(root, dup, others=False)),
    DatasetSpec("trec2011_all", "TREC 2011 crowdsourcing, all 8 teams' votes, binary, 395 gold",
                "trec2011_vuurens/votes", None, {}, {},
                custom=lambda root, dup: _load_trec2011(root, dup, others=True)),
    # no gold: convergence and speed only
    DatasetSpec("adultcontent3", "Adult content, dense, 5 classes (GAL HCOMP 2010), no gold",
                "gal_adultcontent3_hcomp2010/labels.txt", None, {}, {},
                custom=_gal_lower("gal_adultcontent3_hcomp2010", None)),
    DatasetSpec("hitspam_mturk", "HIT spam via MTurk (GAL), binary, no joinable gold",
                "gal_hitspam_mturk/labels.txt", None, {}, {},
                custom=_gal_lower("gal_hitspam_mturk", None)),
]
DATASETS: dict[str, DatasetSpec] = {s.name: s for s in _SPECS}
NO_GOLD = ("adultcontent3", "hitspam_mturk")


def list_datasets(*, with_gold: bool | None = None) -> list[str]:
    """Names accepted by `load_dataset` (`with_gold`: only the sets with / without gold)."""
    if with_gold is None:
        return list(DATASETS)
    return [n for n in DATASETS if (n not in NO_GOLD) == with_gold]


def describe_dataset(name: str) -> str:
    return _spec(name).description


def load_dataset(name: str, *, duplicates: str = "first") -> tuple[LabelTable, Gold | None]:
    """(labels, gold) of a named real data set read from `data_root()` (gold None for the
    sets in `NO_GOLD`).

    `duplicates` applies to repeated (worker, task) rows (default 'first', see module doc).
    """
    spec = _spec(name)
    root = data_root()
    if spec.custom is not None:
        return spec.custom(root, duplicates)
    table = read_labels(root / spec.labels, duplicates=duplicates, **spec.label_opts)
    gold = read_gold(root / spec.gold, table, **spec.gold_opts)
    return table, gold


def _spec(name: str) -> DatasetSpec:
    if name not in DATASETS:
        raise InputError("dataset", f"one of {list(DATASETS)}", name)
    return DATASETS[name]



def dataset_name(labels: str) -> str | None:
    """The data set a LABELS argument names: `dataset:NAME`, or a bare NAME that is not an
    existing file; None for a file path."""
    if labels.startswith("dataset:"):
        name = labels.split(":", 1)[1]
        _spec(name)  # a clear error for an unknown name
        return name
    if labels in DATASETS and not Path(labels).exists():
        return labels
    return None


def load_labels_and_gold(labels: str, gold: str | None = None, *, duplicates: str | None = None,
                         **read_opts) -> tuple[LabelTable, Gold | None, str]:
    """(table, gold or None, source) for every command taking LABELS [--gold GOLD].

    LABELS is a label file, `dataset:NAME` or a bare data set NAME; an explicit GOLD file
    overrides a data set's own gold. `read_opts` (columns, sep, header) apply to files;
    `gold_columns` to the gold file.
    """
    gold_columns = read_opts.pop("gold_columns", None)
    name = dataset_name(labels)
    if name is not None:
        table, g = load_dataset(name, duplicates=duplicates or "first")
        source = f"dataset:{name}"
    else:
        if not Path(labels).is_file():
            raise InputError("LABELS", "an existing file, dataset:NAME or a data set name ("
                             + ", ".join(DATASETS) + ")", labels)
        table = read_labels(labels, duplicates=duplicates or "error", **read_opts)
        g, source = None, labels
    if gold:
        gold_opts = {k: v for k, v in read_opts.items() if k in ("sep", "header")}
        g = read_gold(gold, table, columns=gold_columns, **gold_opts)
    return table, g, source
