"""Scores of worker selection (paper 004 Lemma 2, Theorem 3; digest 004 P1, P2, 4.1, P9)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from crowdopt.errors import InputError
from crowdopt.problems.worker_scores import score_plugin, score_unbiased, scores
from crowdopt.problems.worker_select import ci_halfwidth, set_value

# digest 004 section 4.1, n = 10, c = 0..10
G_L2 = [1.0, .6, .2889, .0667, -.0667, -.1111, -.0667, .0667, .2889, .6, 1.0]
PLUG_L2 = [1.0, .64, .36, .16, .04, 0, .04, .16, .36, .64, 1.0]
G_L4 = [1.0, .2, -.2444, -.3333, -.0667, .5556, 1.5333, 2.8667, 4.5556, 6.6, 9.0]
PLUG_L4 = [1.0, .36, .04, .04, .36, 1.0, 1.96, 3.24, 4.84, 6.76, 9.0]


def test_reference_table_of_the_digest():
    w = np.arange(11) / 10
    assert np.allclose(score_unbiased(w, 10, 2), G_L2, atol=5e-5)
    assert np.allclose(score_plugin(w, 2), PLUG_L2, atol=5e-5)
    assert np.allclose(score_unbiased(w, 10, 4), G_L4, atol=5e-5)
    assert np.allclose(score_plugin(w, 4), PLUG_L4, atol=5e-5)


@pytest.mark.parametrize("L", [2, 3, 4, 5])
def test_unbiased_score_has_expectation_of_the_true_score(L):
    """P1: E G(c/n) = (L w - 1)^2 exactly for c ~ Binomial(n, w) (Theorem 3)."""
    for n in (2, 3, 7, 10, 25, 50):
        c = np.arange(n + 1)
        g = score_unbiased(c / n, n, L)
        plug = score_plugin(c / n, L)
        for w in np.linspace(0, 1, 11):
            pmf = binom.pmf(c, n, w)
            assert abs(pmf @ g - (L * w - 1) ** 2) < 1e-12
            # the plugin bias is L^2 var(w_hat) = L^2 w (1 - w) / n >= 0
            assert abs(pmf @ plug - (L * w - 1) ** 2 - L * L * w * (1 - w) / n) < 1e-12


def test_eq25_equals_eq26_completed_square():
    """P2: eq. (25) equals the completed-square form used in the proof of Theorem 3."""
    for L in (2, 3, 4, 6):
        for n in (2, 5, 10, 31):
            w = np.arange(n + 1) / n
            lam = (L - 2) ** 2 / (4 * n * n) + (L - 1) / n
            eq26 = n / (n - 1) * ((L * w - 1 - (L - 2) / (2 * n)) ** 2 - lam)
            assert np.allclose(score_unbiased(w, n, L), eq26, atol=1e-12)


def test_unbiased_needs_two_gold_questions_and_names_the_estimator():
    with pytest.raises(InputError, match="n: expected at least 2 gold"):
        score_unbiased([0.5], 1, 2)
    with pytest.raises(InputError, match="estimator"):
        scores([0.5], 10, 2, "em")
    assert scores([1.0], 1, 2, "plugin")[0] == 1.0


@pytest.mark.parametrize("alpha", [0.5, 1.0, 1.5])
def test_theorem3_interval_covers_F_at_least_at_the_stated_rate(alpha):
    """P9: for a fixed S, |F_hat - F| <= n (L-1)^2 alpha/(n-1) w.p. >= 1 - 2 exp(-2 alpha^2)."""
    rng = np.random.default_rng(11)
    n, L, trials = 10, 2, 4000
    w = rng.beta(2.3, 2.0, 6)
    S = np.arange(6)
    F = set_value((L * w - 1) ** 2, S)
    c = rng.binomial(n, w, size=(trials, len(w)))
    g = score_unbiased(c / n, n, L)
    Fh = g.sum(axis=1) / math.sqrt(len(S))
    cover = np.mean(np.abs(Fh - F) <= ci_halfwidth(n, L, alpha))
    assert cover >= 1 - 2 * math.exp(-2 * alpha * alpha) - 0.01
    assert abs(Fh.mean() - F) < 0.03  # unbiased for a fixed S (Lemma 2)
