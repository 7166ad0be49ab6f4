"""Crowd label data: label tables, real data sets, aggregation, worker reliability."""

from .aggregate import (
    AggregationResult,
    accuracy,
    dawid_skene,
    majority_vote,
    one_coin_em,
    weighted_majority_vote,
    weights_from_accuracy,
)
from .datasets import list_datasets, load_dataset
from .reliability import WorkerReliability, from_em, from_gold, read_accuracies
from .tables import Gold, LabelTable, from_arrays, gold_from_arrays, read_gold, read_labels

__all__ = ["AggregationResult", "Gold", "LabelTable", "WorkerReliability", "accuracy",
           "dawid_skene", "from_arrays", "from_em", "from_gold", "gold_from_arrays",
           "list_datasets", "load_dataset", "majority_vote", "one_coin_em", "read_accuracies",
           "read_gold", "read_labels", "weighted_majority_vote", "weights_from_accuracy"]
