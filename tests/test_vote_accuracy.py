"""pi(S): the O(h^2) recursion and the meet-in-the-middle WMV against 2^h enumeration."""

from __future__ import annotations

import numpy as np
import pytest

from crowdopt.problems.vote_accuracy import (
    correct_count_distribution,
    log_odds,
    pi_mv,
    pi_mv_enumerate,
    pi_mv_prefix,
    pi_wmv,
    pi_wmv_enumerate,
)


@pytest.mark.parametrize("h", range(0, 10))
def test_mv_recursion_equals_enumeration(h):
    rng = np.random.default_rng(h)
    for lo in (0.0, 0.5):
        p = rng.uniform(lo, 1, h)
        assert pi_mv(p) == pytest.approx(pi_mv_enumerate(p), abs=1e-12)


def test_mv_boundary_values_and_ties():
    assert pi_mv([]) == 0.5
    assert pi_mv([1.0, 0.0]) == pytest.approx(0.5)  # certain tie -> coin
    assert pi_mv([0.7] * 3) == pytest.approx(0.784)
    assert pi_mv([0.7] * 4) == pytest.approx(0.784)  # Thm 1 equality for equal p
    p = [0.0, 1.0, 0.5, 0.5, 1.0]
    assert pi_mv(p) == pytest.approx(pi_mv_enumerate(p))


def test_prefix_equals_per_set():
    p = np.random.default_rng(3).uniform(0, 1, 12)
    pref = pi_mv_prefix(p)
    assert np.allclose(pref, [pi_mv(p[:m]) for m in range(1, 13)], atol=1e-13)


def test_table1_prefix_values_from_digest():
    p = sorted([0.763, 0.781, 0.625, 0.783, 0.727], reverse=True)
    assert np.round(pi_mv_prefix(p), 4).tolist() == [0.783, 0.782, 0.8717, 0.8589, 0.8834]
    wmv = [pi_wmv(p[:m]) for m in range(1, 6)]
    assert np.round(wmv, 4).tolist() == [0.783, 0.783, 0.8717, 0.8717, 0.8834]


def test_distribution_sums_to_one():
    d = correct_count_distribution(np.random.default_rng(0).uniform(0, 1, 30))
    assert d.sum() == pytest.approx(1.0) and (d >= 0).all()


@pytest.mark.parametrize("h", range(0, 10))
def test_wmv_meet_in_the_middle_equals_enumeration(h):
    rng = np.random.default_rng(100 + h)
    p = rng.uniform(0.02, 0.98, h)
    assert pi_wmv(p) == pytest.approx(pi_wmv_enumerate(p), abs=1e-12)
    w = np.round(rng.normal(size=h))  # integer weights: many exact ties
    for eps in (0.0, 0.5, 1.5):
        assert pi_wmv(p, w, eps) == pytest.approx(pi_wmv_enumerate(p, w, eps), abs=1e-12)


def test_wmv_equal_weights_is_mv():
    p = np.full(6, 0.7)
    assert pi_wmv(p) == pytest.approx(pi_mv(p), abs=1e-12)
    q = np.random.default_rng(2).uniform(0.1, 0.9, 7)
    assert pi_wmv(q, np.ones(7)) == pytest.approx(pi_mv(q), abs=1e-12)


def test_wmv_bayes_full_set_best():
    rng = np.random.default_rng(9)
    p = rng.uniform(0.05, 0.95, 8)
    full = pi_wmv(p)
    for m in range(1, 8):
        assert pi_wmv(p[:m]) <= full + 1e-12


def test_log_odds_clip():
    w = log_odds([0.0, 0.5, 1.0], clip=1e-3)
    assert np.isfinite(w).all() and w[1] == 0.0
