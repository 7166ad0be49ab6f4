"""Exact DP of the Opt-KG MDP: the digest's reference values (section 4.2), self-consistency,
the Pyomo/HiGHS LP, Gittins indices."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from crowdopt.errors import InputError
from crowdopt.policies.allocation import make_policy
from crowdopt.policies.optkg_dp import evaluate_policy, gittins_index, mdp_lp, solve_dp

# (K, T) -> (DP*, Opt-KG first, KG first, Uniform), exact (digest 4.2)
EXACT = {
    (2, 5): (F(77, 96), F(77, 96), F(25, 32), F(793, 1024)),
    (2, 7): (F(239, 288), F(199, 240), F(51, 64), F(26333, 32768)),
    (2, 9): (F(407, 480), F(6511, 7680), F(413, 512), F(215955, 262144)),
    (2, 10): (F(1747, 2048), F(655, 768), F(833, 1024), F(436109, 524288)),
    (3, 6): (F(113, 144), F(113, 144), F(37, 48), F(5821, 7776)),
    (3, 8): (F(175, 216), F(583, 720), F(25, 32), F(1303853, 1679616)),
    (3, 10): (F(2149, 2592), F(3581, 4320), F(605, 768), F(24081181, 30233088)),
}


@pytest.mark.parametrize("KT", sorted(EXACT))
def test_exact_fractions(KT):
    K, T = KT
    dp, opt, kg, uni = EXACT[KT]
    assert solve_dp(K, T, exact=True).accuracy == dp
    assert evaluate_policy(K, T, "optkg", tie="first", exact=True).accuracy == opt
    assert evaluate_policy(K, T, "kg", tie="first", exact=True).accuracy == kg
    assert evaluate_policy(K, T, "uniform", exact=True).accuracy == uni


def test_exact_dp_longer_horizons_and_k4():
    assert solve_dp(2, 11, exact=True).accuracy == F(138917, 161280)
    assert solve_dp(2, 12, exact=True).accuracy == F(26599, 30720)
    k4 = [F(9, 16), F(5, 8), F(11, 16), F(3, 4), F(3, 4), F(49, 64), F(149, 192), F(227, 288)]
    for T, want in enumerate(k4, start=1):
        assert solve_dp(4, T, exact=True).accuracy == want
        assert evaluate_policy(4, T, "optkg", exact=True).accuracy == want  # DP* = Opt-KG


def test_float_reference_table_k2_random_ties():
    kg_rand = [0.625, 0.75, 0.75, 0.78125, 0.791667, 0.808594, 0.817274, 0.828410, 0.835217,
               0.843260, 0.848693, 0.854850]
    opt_rand = {7: 0.829514, 12: 0.865611}
    for T in range(1, 13):
        assert abs(float(evaluate_policy(2, T, "kg").accuracy) - kg_rand[T - 1]) < 1e-6
    for T, v in opt_rand.items():
        assert abs(float(evaluate_policy(2, T, "optkg").accuracy) - v) < 1e-6
    assert abs(float(evaluate_policy(3, 10, "optkg").accuracy) - 0.828969) < 1e-6
    assert abs(float(solve_dp(3, 12).accuracy) - 0.843774) < 1e-6
    assert abs(float(solve_dp(3, 12, prior=(0.5, 0.5)).accuracy) - 0.897997) < 1e-6
    assert abs(float(evaluate_policy(3, 12, "optkg", prior=(0.5, 0.5)).accuracy)
               - 0.897545) < 1e-6


def test_shaped_unshaped_canonical_full_float_fraction_agree():
    for K, T in ((2, 8), (3, 6)):
        ref = solve_dp(K, T, exact=True, canonical=False, keep_policy=True)
        for kw in ({"shaped": True}, {"canonical": True}, {"exact": False}):
            got = solve_dp(K, T, **{"exact": True, **kw}) if "exact" not in kw else \
                solve_dp(K, T, **kw)
            assert abs(float(got.value) - float(ref.value)) < 1e-12
        shaped = solve_dp(K, T, exact=True, canonical=False, shaped=True, keep_policy=True)
        assert shaped.policy == ref.policy  # same argmax sets at every state
    full = solve_dp(3, 6, canonical=False)
    assert full.states > solve_dp(3, 6).states


def test_mdp_lp_equals_dp():
    for K, T, want in ((2, 6, 0.8125), (3, 5, 0.770833333), (2, 10, 0.853027344)):
        lp = mdp_lp(K, T)
        assert abs(lp["accuracy"] - float(solve_dp(K, T).accuracy)) < 1e-7
        assert abs(lp["accuracy"] - want) < 1e-8
    lp = mdp_lp(2, 5, canonical=False)
    assert abs(lp["accuracy"] - 77 / 96) < 1e-7


def test_dp_regressions_and_dominance():
    for K in (2, 3, 4):
        assert solve_dp(K, K, exact=True).accuracy == F(3, 4)
        assert solve_dp(K, K + 1, exact=True).accuracy == F(3, 4)
    for K in (2, 3):  # KG is optimal with one label left; any policy <= V*
        assert evaluate_policy(K, 1, "kg", exact=True).value == solve_dp(K, 1, exact=True).value
        prev = 0
        for T in range(1, 8):
            v = solve_dp(K, T, exact=True).value
            assert v >= prev
            prev = v
            for pol in ("optkg", "kg", "pessimistic", "uniform"):
                assert evaluate_policy(K, T, pol, exact=True).value <= v
    # Opt-KG equals DP* up to T = 6 (K = 2) and T = 7 (K = 3)
    for K, Tmax in ((2, 6), (3, 7)):
        for T in range(1, Tmax + 1):
            assert evaluate_policy(K, T, "optkg", tie="first", exact=True).value == \
                solve_dp(K, T, exact=True).value


@pytest.mark.slow
def test_gittins_index_reference_values_and_dp_value():
    for delta, want in ((0.9, (0.04327, 0.04136, 0.01293, 0.00438)),
                        (0.99, (0.046523, 0.044323, 0.016038, 0.006884))):
        got = [gittins_index(a, b, delta=delta) for a, b in ((2, 1), (3, 2), (3, 1), (4, 1))]
        assert np.allclose(got, want, atol=6e-6)
    assert gittins_index(3, 3, delta=0.95) == pytest.approx(5 / 32, abs=1e-15)
    assert gittins_index(1, 2, delta=0.9) == gittins_index(2, 1, delta=0.9)
    # finite horizon: one label left = the KG index; more labels cannot lower it
    assert gittins_index(2, 2, horizon=1) == pytest.approx(3 / 16, abs=1e-12)
    assert gittins_index(3, 1, horizon=5) >= gittins_index(3, 1, horizon=1) - 1e-12
    assert abs(float(evaluate_policy(3, 9, "gittins").accuracy) - 0.823302) < 1e-6
    assert abs(float(evaluate_policy(2, 12, "gittins").accuracy) - 0.865611) < 1e-6
    with pytest.raises(InputError):
        gittins_index(2, 1)


@pytest.mark.slow
def test_monte_carlo_matches_dp_value_t17():
    # tower property: theta from the prior, real policy code; mean accuracy -> DP value
    rng = np.random.default_rng(11)
    K, T, n = 3, 6, 6000
    theta = rng.random((n, K))
    u = rng.random((n, T))
    acc = np.empty(n)
    for r in range(n):
        pol = make_policy("optkg", K, seed=r)
        for t in range(T):
            i = pol.next()
            pol.observe(i, 1 if u[r, t] < theta[r, i] else -1)
        acc[r] = np.mean(pol.estimate() == (theta[r] >= 0.5))
    se = acc.std() / np.sqrt(n)
    assert abs(acc.mean() - 113 / 144) < 4 * se


def test_bad_input():
    with pytest.raises(InputError):
        solve_dp(0, 3)
    with pytest.raises(InputError):
        solve_dp(2, 3, prior=(1.5, 1), exact=True)
    with pytest.raises(InputError):
        evaluate_policy(2, 3, "optkg", tie="first", canonical=True)
    with pytest.raises(InputError):
        evaluate_policy(2, 3, "nonsense")
