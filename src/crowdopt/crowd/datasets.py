"""Readers for the real crowd data sets, by name: the files come from a data folder or are fetched
and verified on first use (`crowdopt.datapath`, catalogue in `crowdopt.dataset_catalogue`).

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

from ..datapath import set_folder
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
    reader: str = ""  # the file format, in a line (for `crowdopt datasets info`)
    extra: tuple[str, ...] = ()  # other files a custom reader opens

    @property
    def files(self) -> tuple[str, ...]:
        """Every file the reader opens (FOLDER/FILE), as the catalogue lists them."""
        return tuple(dict.fromkeys(f for f in (self.labels, self.gold, *self.extra) if f))


def _zheng(name: str, folder: str, desc: str) -> DatasetSpec:
    return DatasetSpec(name, desc, f"{folder}/answer.csv", f"{folder}/truth.csv", {}, {},
                       reader="Zheng et al. CSV: answer.csv (question,worker,answer), "
                       "truth.csv (question,truth)")


def _act(name: str, file: str, desc: str) -> DatasetSpec:
    return DatasetSpec(name, desc, file, file, {"columns": ACT, "header": False},
                       {"columns": ACT_GOLD, "header": False},
                       reader="ActiveCrowdToolkit CSV, no header: worker, task, label, gold "
                       "[, time]")


def _snow(name: str, folder: str, desc: str) -> DatasetSpec:
    f = f"{folder}/{folder}.standardized.csv"
    return DatasetSpec(name, desc, f, f, {"columns": {"task": "orig_id", "worker":
                                                     "!amt_worker_ids", "label": "response"}},
                       {"columns": {"task": "orig_id", "label": "gold"}},
                       reader="CrowdTruth CSV: orig_id, !amt_worker_ids, response, gold")


def _gal(name: str, folder: str, desc: str, gold: str = "gold.txt") -> DatasetSpec:
    return DatasetSpec(name, desc, f"{folder}/labels.txt", f"{folder}/{gold}",
                       {"columns": ACT, "header": False, "sep": "\t"},
                       {"columns": {"task": 0, "label": 1}, "header": False, "sep": "\t",
                        "unknown_tasks": "drop"},
                       reader=f"Get-Another-Label tab files: labels.txt (worker, item, label), "
                       f"{gold} (item, label)")


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


GAL_LOWER = "Get-Another-Label tab files (worker, item, label), labels lower-cased"
TREC2011_GOLD = "trec2011_vuurens/task1_unlabeled_g_truth_cons_public.txt.bz2"
_SPECS = [
    _snow("rte", "rte", "RTE textual entailment (Snow 2008), 800 items, binary"),
    _snow("temp", "temp", "TEMP temporal ordering (Snow 2008), 462 items, before/after"),
    _zheng("bluebirds", "bluebirds", "Bluebirds (Welinder 2010), dense 39 x 108, binary"),
    DatasetSpec("ducks", "Ducks (Welinder 2010), 240 x 53, binary, gold derived from species",
                "ducks_welinder/labels.txt", None, {}, {}, custom=_load_ducks,
                reader="CUBAM: labels.txt (count line, then image worker label), gold from "
                "the species in classes.yaml", extra=("ducks_welinder/classes.yaml",)),
    DatasetSpec("web", "Web search relevance (Zhou 2012), 5 classes",
                "web/web_crowd.txt", "web/web_truth.txt",
                {"header": False, "sep": "\t"}, {"header": False, "sep": "\t"},
                reader="tab files, no header: web_crowd.txt (item, worker, label), "
                "web_truth.txt (item, label)"),
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
                "gal_hitspam_crowdflower/labels.txt", "gal_hitspam_crowdflower/gold.txt", {}, {},
                custom=_gal_lower("gal_hitspam_crowdflower", "gold.txt"), reader=GAL_LOWER),
    _gal("copyright", "gal_copyright_infringement",
         "Copyright infringement (GAL), 3 classes, only 9 gold"),
    _gal("gal_toy", "gal_toy_adultcontent",
         "GAL toy example (5 x 5, a spammer and an adversary), full truth", gold="evaluation.txt"),
    DatasetSpec("trec2011", "TREC 2011 crowdsourcing, Vuurens team votes, binary, 290 gold",
                "trec2011_vuurens/votes", TREC2011_GOLD, {}, {},
                custom=lambda root, dup: _load_trec2011(root, dup, others=False),
                reader="tab files: votes (seq, item, worker, label); NIST gold (bzip2 TSV)"),
    DatasetSpec("trec2011_all", "TREC 2011 crowdsourcing, all 8 teams' votes, binary, 395 gold",
                "trec2011_vuurens/votes", TREC2011_GOLD, {}, {},
                custom=lambda root, dup: _load_trec2011(root, dup, others=True),
                reader="tab files: votes (seq, item, worker, label), otherparticipantsvotes "
                "(item, worker, label); NIST gold (bzip2 TSV)",
                extra=("trec2011_vuurens/otherparticipantsvotes",)),
    # no gold: convergence and speed only
    DatasetSpec("adultcontent3", "Adult content, dense, 5 classes (GAL HCOMP 2010), no gold",
                "gal_adultcontent3_hcomp2010/labels.txt", None, {}, {},
                custom=_gal_lower("gal_adultcontent3_hcomp2010", None), reader=GAL_LOWER),
    DatasetSpec("hitspam_mturk", "HIT spam via MTurk (GAL), binary, no joinable gold",
                "gal_hitspam_mturk/labels.txt", None, {}, {},
                custom=_gal_lower("gal_hitspam_mturk", None), reader=GAL_LOWER),
]
DATASETS: dict[str, DatasetSpec] = {s.name: s for s in _SPECS}
NO_GOLD = ("adultcontent3", "hitspam_mturk")


def list_datasets(*, with_gold: bool | None = None) -> list[str]:
    """Names accepted by `load_dataset` (`with_gold`: only the sets with / without gold)."""
    if with_gold is None:
        return list(DATASETS)
    return [n for n in DATASETS if (n not in NO_GOLD) == with_gold]


def describe_dataset(name: str) -> str:
    """The catalogue's one-line description of a data set."""
    return _spec(name).description


def read_set(name: str, root: Path, *, duplicates: str = "first") -> tuple[LabelTable,
                                                                         Gold | None]:
    """(labels, gold) of set `name` read from the data folder `root` (FOLDER/FILE layout)."""
    spec = _spec(name)
    if spec.custom is not None:
        return spec.custom(root, duplicates)
    table = read_labels(root / spec.labels, duplicates=duplicates, **spec.label_opts)
    gold = read_gold(root / spec.gold, table, **spec.gold_opts)
    return table, gold


def load_table(name: str, *, duplicates: str = "first", mirror: str | None = None,
               data_dir: str | Path | None = None, offline: bool | None = None
               ) -> tuple[LabelTable, Gold | None]:
    """(labels, gold) of a named real data set (gold None for the sets in `NO_GOLD`), from
    the first data folder holding it, fetched and verified on first use (`datapath`).

    `duplicates` applies to repeated (worker, task) rows (default 'first', see module doc).
    `data_dir`: a folder laid out FOLDER/FILE looked in first and fetched into (default
    $CROWDOPT_DATA, else the per-user cache); `mirror`: a base URL to fetch from instead of
    the public sources (default $CROWDOPT_DATASETS_MIRROR); `offline`: True never downloads,
    False may even when CROWDOPT_OFFLINE is set (default: CROWDOPT_OFFLINE).
    """
    _spec(name)
    root = set_folder(name, mirror=mirror, data_dir=data_dir, offline=offline)
    return read_set(name, root, duplicates=duplicates)


def load_dataset(name: str, *, duplicates: str = "first", mirror: str | None = None,
                 data_dir: str | Path | None = None, offline: bool | None = None):
    """(labels DataFrame with columns worker, task, label; gold Series `true_label` indexed
    by task) of a named set, in crowd-kit's `load_dataset` shape (needs pandas). The gold
    Series is empty for the sets in `NO_GOLD`. `mirror`, `data_dir`, `offline`: where the
    files come from, as in `load_table`."""
    from .tables import _pandas

    pd = _pandas()
    table, gold = load_table(name, duplicates=duplicates, mirror=mirror, data_dir=data_dir,
                             offline=offline)
    df = pd.DataFrame({"worker": table.worker_ids[table.worker].tolist(),
                       "task": table.task_ids[table.task].tolist(),
                       "label": table.classes[table.label].tolist()})
    if gold is None:
        return df, pd.Series([], name="true_label", dtype=object,
                             index=pd.Index([], name="task", dtype=object))
    return df, pd.Series(table.classes[gold.label].tolist(), name="true_label",
                         index=pd.Index(table.task_ids[gold.task].tolist(), name="task"))


def dataset_gold(name: str, table: LabelTable) -> Gold:
    """Set `name`'s gold labels matched to another `table` by task id (`--gold dataset:NAME`);
    gold tasks the table does not have are dropped."""
    own, gold = load_table(name)
    if gold is None:
        raise InputError("--gold", "a data set with gold labels (not " + ", ".join(NO_GOLD)
                         + ")", f"dataset:{name}")
    return gold_from_arrays(table, own.task_ids[gold.task].tolist(),
                            own.classes[gold.label].tolist(), unknown_tasks="drop")


def _spec(name: str) -> DatasetSpec:
    if not isinstance(name, str) or name not in DATASETS:
        raise InputError("dataset", f"one of {list(DATASETS)}", name)
    return DATASETS[name]



def dataset_name(labels: str) -> str | None:
    """The data set a LABELS argument names: `dataset:NAME`, or a bare NAME that is not an
    existing file; None for a file path."""
    if labels.startswith("dataset:"):
        return _dataset_arg(labels)
    if labels in DATASETS and not Path(labels).exists():
        return labels
    return None


def read_gold_arg(gold: str, table: LabelTable, **read_opts) -> Gold:
    """A `--gold` argument matched to `table`: a gold file (`read_opts` as `read_gold`) or
    `dataset:NAME` (that set's gold, by task id)."""
    if str(gold).startswith("dataset:"):
        return dataset_gold(_dataset_arg(str(gold)), table)
    return read_gold(gold, table, **read_opts)


def _dataset_arg(arg: str) -> str:
    """NAME of a `dataset:NAME` argument (InputError for an unknown name)."""
    name = arg.split(":", 1)[1]
    _spec(name)
    return name


def load_labels_and_gold(labels: str, gold: str | None = None, *, duplicates: str | None = None,
                         **read_opts) -> tuple[LabelTable, Gold | None, str]:
    """(table, gold or None, source) for every command taking LABELS [--gold GOLD].

    LABELS is a label file, `dataset:NAME` or a bare data set NAME; an explicit GOLD (a file
    or `dataset:NAME`) overrides a data set's own gold. `read_opts` (columns, sep, header) apply to files;
    `gold_columns` to the gold file.
    """
    gold_columns = read_opts.pop("gold_columns", None)
    name = dataset_name(labels)
    if name is not None:
        table, g = load_table(name, duplicates=duplicates or "first")
        source = f"dataset:{name}"
    else:
        if not Path(labels).is_file():
            raise InputError("LABELS", "an existing file, dataset:NAME or a data set name ("
                             + ", ".join(DATASETS) + ")", labels)
        table = read_labels(labels, duplicates=duplicates or "error", **read_opts)
        g, source = None, labels
    if gold:
        gold_opts = {k: v for k, v in read_opts.items() if k in ("sep", "header")}
        g = read_gold_arg(gold, table, columns=gold_columns, **gold_opts)
    return table, g, source
