"""Every iterative method on every shared data set (the 25 with gold and the two without):
converged at its defaults, objective trace non-decreasing, and Dawid-Skene holding crowd-kit
1.4.2's accuracy on rte, web and product. Skips without the data."""

from __future__ import annotations

import numpy as np
import pytest

from crowdopt.crowd import run_method
from crowdopt.crowd.aggregate import accuracy
from crowdopt.crowd.datasets import list_datasets, load_table
from crowdopt.crowd.methods import METHODS

ITERATIVE = [m for m, i in METHODS.items() if i.iterative]
BIG = {"trec2010_relevance", "adult_content", "trec2011_all", "trec2011", "hitspam_cf", "product",
       "hitspam_mturk", "sp", "adultcontent3", "sentiment_possent", "zencrowd_all", "web"}


def nondecreasing(trace) -> bool:
    o = np.asarray(trace, dtype=float)
    return bool(np.all(np.diff(o) >= -1e-12 * np.maximum(np.abs(o[1:]), 1.0)))


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.soak) if n in BIG else n
                                  for n in list_datasets()])
def test_every_iterative_method_converges_with_a_monotone_trace(data_dir, name):
    """Every iterative method on every shared data set converges with a monotone objective
    trace (the large sets, minutes in all, under `make soak`)."""
    table, _ = load_table(name)
    for method in ITERATIVE:
        r = run_method(table, method)
        assert r.converged, (name, method, r.iterations)
        assert r.iterations >= 1
        if METHODS[method].objective:
            assert len(r.objective) >= 2 and nondecreasing(r.objective), (name, method)


@pytest.mark.parametrize("name,crowdkit", [("rte", 0.9275), ("web", 0.8292),
                                           ("product", 0.9397)])
def test_dawid_skene_holds_crowd_kit_accuracy(data_dir, name, crowdkit):
    table, gold = load_table(name)
    r = run_method(table, "dawid-skene")
    assert r.converged and accuracy(r, gold) >= crowdkit
