"""Crowd label data: label tables, real data sets, aggregation, worker reliability."""

from .datasets import list_datasets, load_dataset
from .tables import Gold, LabelTable, from_arrays, gold_from_arrays, read_gold, read_labels

__all__ = ["Gold", "LabelTable", "from_arrays", "gold_from_arrays", "list_datasets",
           "load_dataset", "read_gold", "read_labels"]
