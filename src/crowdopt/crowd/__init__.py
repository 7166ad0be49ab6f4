"""Crowd label data: label tables, real data sets, aggregation, worker reliability.

Functions (`dawid_skene`, `glad`, ...) take a `LabelTable` and return an `AggregationResult`;
the estimator classes (`DawidSkene().fit_predict(df)`, ...) wrap them for pandas DataFrames in
crowd-kit's style; `run_method(table, method)` is the one door they, the CLI and campaigns go
through: any method by its CLI name or 'auto', the weighted vote's weights, option checks, and
an `AggregationReport` whose `to_dict()` is `crowdopt aggregate --json`. `choose_method(table)`
picks a method without gold as `--method auto` does.

The names load on first use (PEP 562): importing one module of the package (a label table, a
campaign) does not import every aggregation method and SciPy's sparse matrices.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> module of the package that defines it (imported on first access)
_LAZY = {
    "accuracy": "aggregate",
    "AggregationResult": "aggregate",
    "dawid_skene": "aggregate",
    "majority_vote": "aggregate",
    "one_coin_em": "aggregate",
    "weighted_majority_vote": "aggregate",
    "weights_from_accuracy": "aggregate",
    "wawa": "agreement",
    "zero_based_skill": "agreement",
    "AutoChoice": "auto",
    "choose_method": "auto",
    "mace": "competence",
    "list_datasets": "datasets",
    "load_dataset": "datasets",
    "glad": "difficulty",
    "DawidSkene": "estimators",
    "EBCC": "estimators",
    "GLAD": "estimators",
    "KOS": "estimators",
    "MACE": "estimators",
    "MajorityVote": "estimators",
    "MMSR": "estimators",
    "OneCoinDawidSkene": "estimators",
    "Wawa": "estimators",
    "WeightedMajorityVote": "estimators",
    "ZeroBasedSkill": "estimators",
    "kos": "messages",
    "METHODS": "methods",
    "mmsr": "rank_one",
    "from_em": "reliability",
    "from_gold": "reliability",
    "read_accuracies": "reliability",
    "WorkerReliability": "reliability",
    "AggregationReport": "runner",
    "run_method": "runner",
    "ebcc": "subtypes",
    "from_arrays": "tables",
    "from_dataframe": "tables",
    "Gold": "tables",
    "gold_from_arrays": "tables",
    "LabelTable": "tables",
    "read_gold": "tables",
    "read_labels": "tables",
    "to_dataframe": "tables",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .aggregate import (
        AggregationResult,
        accuracy,
        dawid_skene,
        majority_vote,
        one_coin_em,
        weighted_majority_vote,
        weights_from_accuracy,
    )
    from .agreement import wawa, zero_based_skill
    from .auto import AutoChoice, choose_method
    from .competence import mace
    from .datasets import list_datasets, load_dataset
    from .difficulty import glad
    from .estimators import (
        EBCC,
        GLAD,
        KOS,
        MACE,
        MMSR,
        DawidSkene,
        MajorityVote,
        OneCoinDawidSkene,
        Wawa,
        WeightedMajorityVote,
        ZeroBasedSkill,
    )
    from .messages import kos
    from .methods import METHODS
    from .rank_one import mmsr
    from .reliability import WorkerReliability, from_em, from_gold, read_accuracies
    from .runner import AggregationReport, run_method
    from .subtypes import ebcc
    from .tables import (
        Gold,
        LabelTable,
        from_arrays,
        from_dataframe,
        gold_from_arrays,
        read_gold,
        read_labels,
        to_dataframe,
    )


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["EBCC", "GLAD", "KOS", "MACE", "METHODS", "MMSR", "AggregationReport", "AggregationResult", "AutoChoice",
           "DawidSkene", "Gold", "LabelTable", "MajorityVote", "OneCoinDawidSkene", "Wawa",
           "WeightedMajorityVote",
           "WorkerReliability", "ZeroBasedSkill", "accuracy", "choose_method", "dawid_skene", "ebcc",
           "from_arrays", "from_dataframe", "from_em", "from_gold", "glad", "gold_from_arrays",
           "kos", "list_datasets", "load_dataset", "mace", "majority_vote", "mmsr",
           "one_coin_em", "read_accuracies", "read_gold", "read_labels", "run_method",
           "to_dataframe", "wawa",
           "weighted_majority_vote", "weights_from_accuracy", "zero_based_skill"]
