"""Real data sets load with the counts of their SOURCE.md (skips without the data)."""

from __future__ import annotations

import numpy as np
import pytest

from crowdopt.crowd.datasets import list_datasets, load_table
from crowdopt.errors import InputError

# name: (tasks, workers, labels with duplicates='all', classes, gold tasks), from SOURCE.md
EXPECTED = {
    "rte": (800, 164, 8000, 2, 800),
    "temp": (462, 76, 4620, 2, 462),
    "bluebirds": (108, 39, 4212, 2, 108),
    "ducks": (240, 53, 9600, 2, 240),
    "web": (2665, 177, 15567, 5, 2653),
    "dog": (807, 109, 8070, 4, 807),
    "face": (584, 27, 5242, 4, 584),
    "product": (8315, 176, 24945, 2, 8315),
    "sentiment_possent": (1000, 85, 20000, 2, 1000),
    "weather_cf_amt": (300, 110, 6030, 5, 300),
    "trec2010_relevance": (20232, 766, 98453, 4, 4460),
    "adult_content": (11040, 825, 92721, 4, 333),
    "zencrowd_all": (2040, 78, 21855, 2, 2040),
    "sp_amt": (500, 143, 10000, 2, 500),
    "hitspam_cf": (5380, 153, 42762, 2, 100),
    "copyright": (1593, 44, 7540, 3, 9),
    "gal_toy": (5, 5, 25, 2, 5),
    "trec2011": (2165, 445, 17395, 2, 290),
    "trec2011_all": (3387, 956, 58476, 2, 395),
}
NO_GOLD = {"adultcontent3": (496, 338, 44373, 5), "hitspam_mturk": (5840, 135, 28354, 2)}


def test_required_names_are_listed():
    assert set(EXPECTED) <= set(list_datasets())


def test_unknown_dataset_name():
    with pytest.raises(InputError, match="dataset"):
        load_table("nope")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts_match_source(data_dir, name):
    tb, gold = load_table(name, duplicates="all")
    assert (tb.n_tasks, tb.n_workers, tb.n_labels, tb.n_classes, gold.n) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(NO_GOLD))
def test_sets_without_gold(data_dir, name):
    tb, gold = load_table(name, duplicates="all")
    assert gold is None and (tb.n_tasks, tb.n_workers, tb.n_labels, tb.n_classes) == NO_GOLD[name]


def test_shared_sets_with_gold_are_25():
    assert len(list_datasets(with_gold=True)) == 25
    assert set(list_datasets(with_gold=False)) == set(NO_GOLD)


def test_mixed_case_labels_and_gold_are_folded(data_dir):
    tb, gold = load_table("hitspam_cf")
    assert tb.classes.tolist() == ["no", "yes"]
    assert np.bincount(gold.label).tolist() == [69, 31]   # SOURCE.md: 70 no, 31 yes, 1 no unlabelled


@pytest.mark.slow
def test_default_policy_keeps_first_of_repeated_pairs(data_dir):
    tb, _ = load_table("trec2010_relevance")
    assert tb.n_labels == 98453 - 1570 and tb.duplicate_count() == 0
    with pytest.raises(InputError, match="1570 repeated rows"):
        load_table("trec2010_relevance", duplicates="error")


def test_label_values(data_dir):
    assert load_table("temp")[0].classes.tolist() == ["after", "before"]
    assert load_table("adult_content")[0].classes.tolist() == ["G", "P", "R", "X"]
    assert load_table("web")[0].classes.tolist() == [1, 2, 3, 4, 5]


def test_raw_snow_file_reads_with_default_header_aliases(data_dir):
    """rte.standardized.csv has both `task` (a text column) and `orig_id` (the item id)."""
    from crowdopt.crowd.datasets import load_table
    from crowdopt.crowd.tables import read_gold, read_labels

    path = data_dir / "rte" / "rte.standardized.csv"
    table = read_labels(path)
    ref, _ = load_table("rte")
    assert (table.n_tasks, table.n_workers, table.n_labels) == (ref.n_tasks, ref.n_workers, ref.n_labels)
    gold = read_gold(path, table)
    assert len(np.unique(gold.task)) == 800


def test_labels_argument_forms_resolve_the_same(data_dir):
    """`dataset:NAME`, a bare NAME and the file path + --gold give the same table."""
    from crowdopt.crowd.datasets import dataset_name, load_labels_and_gold

    assert dataset_name("dataset:bluebirds") == dataset_name("bluebirds") == "bluebirds"
    assert dataset_name(str(data_dir / "bluebirds" / "answer.csv")) is None
    a, ga, _ = load_labels_and_gold("dataset:bluebirds")
    b, gb, _ = load_labels_and_gold("bluebirds")
    c, gc, src = load_labels_and_gold(str(data_dir / "bluebirds" / "answer.csv"),
                                      str(data_dir / "bluebirds" / "truth.csv"))
    assert a.n_labels == b.n_labels == c.n_labels == 4212 and src.endswith("answer.csv")
    assert len(ga.task) == len(gb.task) == len(gc.task) == 108
    with pytest.raises(InputError, match="existing file"):
        load_labels_and_gold("no-such-file.csv")
    with pytest.raises(InputError, match="dataset"):
        dataset_name("dataset:nope")


def test_catalogue_counts_are_the_source_counts():
    from crowdopt.dataset_catalogue import catalogue

    cat = catalogue()
    for name, (tasks, workers, labels, classes, gold) in EXPECTED.items():
        assert cat[name].counts == {"items": tasks, "workers": workers, "labels": labels,
                                    "classes": classes, "gold": gold}, name
    for name, (tasks, workers, labels, classes) in NO_GOLD.items():
        assert cat[name].counts == {"items": tasks, "workers": workers, "labels": labels,
                                    "classes": classes, "gold": 0}, name
