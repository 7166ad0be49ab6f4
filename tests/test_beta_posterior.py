"""Beta-posterior machinery of Opt-KG (paper 002): closed forms against definitions."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import special, stats

from crowdopt.errors import InputError
from crowdopt.policies import beta_posterior as bp


def _rewards_by_definition(a, b):
    base = bp.h(bp.prob_positive(a, b))
    return bp.h(bp.prob_positive(a + 1, b)) - base, bp.h(bp.prob_positive(a, b + 1)) - base


def test_table3_toy_example_exact_and_float():
    # digest 1.6 / paper Table 3: (R1, R2, R) for states (3,1), (2,2), (2,1)
    want = {(3, 1): (Fraction(1, 16), Fraction(-3, 16), 0),
            (2, 2): (Fraction(3, 16), Fraction(3, 16), Fraction(3, 16)),
            (2, 1): (Fraction(1, 8), Fraction(-1, 4), 0)}
    for (a, b), (r1, r2, r) in want.items():
        e1, e2 = bp.outcome_rewards_exact(a, b)
        assert (e1, e2) == (r1, r2)
        assert Fraction(a, a + b) * e1 + Fraction(b, a + b) * e2 == r
        f1, f2 = bp.outcome_rewards(a, b)
        assert abs(f1 - r1) < 1e-15 and abs(f2 - r2) < 1e-15
        assert abs(bp.kg_index(a, b) - float(r)) < 1e-15
    # Opt-KG picks instance 2 too: R+ = 1/16, 3/16, 1/8
    assert np.argmax(bp.optkg_index([3, 2, 2], [1, 2, 1])) == 1


def test_prob_positive_integer_formula_and_cor32():
    assert bp.prob_positive_exact(3, 1) == Fraction(7, 8)
    for a in range(1, 8):
        for b in range(1, 8):
            assert abs(float(bp.prob_positive_exact(a, b)) - bp.prob_positive(a, b)) < 1e-15
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.05, 30, 500), rng.uniform(0.05, 30, 500)
    p = bp.prob_positive(a, b)
    assert np.all((p > 0.5) == (a > b))
    assert np.allclose(bp.prob_positive(a, a), 0.5, atol=1e-15)


def test_recurrences_eqs_34_36_random_reals():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(0.1, 40, 300), rng.uniform(0.1, 40, 300)
    assert np.allclose(bp.prob_positive(a, b), 1 - bp.prob_positive(b, a), atol=1e-14)
    assert np.allclose(bp.prob_positive(a + 1, b) - bp.prob_positive(a, b),
                       bp.delta_plus(a, b), atol=1e-14)
    assert np.allclose(bp.prob_positive(a, b) - bp.prob_positive(a, b + 1),
                       bp.delta_minus(a, b), atol=1e-14)
    # kappa: p1 Delta+ = p2 Delta-
    assert np.allclose(a / (a + b) * bp.delta_plus(a, b), b / (a + b) * bp.delta_minus(a, b))


def test_stable_rewards_equal_definition_on_real_grid():
    rng = np.random.default_rng(2)
    a, b = rng.uniform(0.2, 25, 2000), rng.uniform(0.2, 25, 2000)
    a[:200] = b[:200] + rng.uniform(-1, 1, 200)  # the |a - b| < 1 branch
    a = np.abs(a) + 0.05
    r1, r2 = bp.outcome_rewards(a, b)
    d1, d2 = _rewards_by_definition(a, b)
    assert np.max(np.abs(r1 - d1)) < 1e-13 and np.max(np.abs(r2 - d2)) < 1e-13
    assert np.min(bp.kg_index(a, b)) > -1e-15  # R >= 0 (Jensen), up to rounding


def test_optkg_closed_form_integer_and_half_integer_states():
    A, B = np.meshgrid(np.arange(1, 40), np.arange(1, 40), indexing="ij")
    for off in (0.0, 0.5):
        a, b = A + off, B + off
        assert np.allclose(bp.optkg_index(a, b), bp.optkg_closed(a, b), rtol=1e-11, atol=0)
        assert np.allclose(bp.pessimistic_index(a, b), bp.pessimistic_closed(a, b), rtol=1e-10)
    grid = bp.optkg_index(A[:6, :6], B[:6, :6])
    assert np.allclose(grid[0], [0.25, 0.125, 0.0625, 0.0312, 0.0156, 0.0078], atol=6e-5)
    assert abs(grid[5, 5] - 0.1128) < 5e-5 and abs(grid[2, 3] - 0.1172) < 5e-5
    for a in range(1, 8):  # exact closed form against the rational definition
        for b in range(1, 8):
            want = Fraction(1, 2**(a + b)) / (max(a, b) * _beta_exact(a, b))
            assert max(bp.outcome_rewards_exact(a, b)) == want


def _beta_exact(a: int, b: int) -> Fraction:
    from math import factorial
    return Fraction(factorial(a - 1) * factorial(b - 1), factorial(a + b - 1))


def test_lemma_a1_kg_zero_off_diagonal_and_diagonal_values():
    for a in range(1, 9):
        for b in range(1, 9):
            r1, r2 = bp.outcome_rewards_exact(a, b)
            r = Fraction(a, a + b) * r1 + Fraction(b, a + b) * r2
            if a != b:
                assert r == 0
    diag = {1: Fraction(1, 4), 2: Fraction(3, 16), 3: Fraction(5, 32), 4: Fraction(35, 256),
            5: Fraction(63, 512)}
    for a, v in diag.items():
        assert bp.outcome_rewards_exact(a, a)[0] == v
    # non-integer difference: KG is not degenerate (digest 2.2 note)
    assert bp.kg_index(1.5, 1.0) > 0.09


def test_lemma_a2_and_a3_properties():
    A, B = np.meshgrid(np.arange(1, 40.0), np.arange(1, 40.0), indexing="ij")
    rp = bp.optkg_index(A, B)
    assert np.allclose(rp, rp.T, rtol=1e-12)
    m = np.floor((A + B) / 2)
    off = A != B
    assert np.all(rp[off] < bp.optkg_index(m, m)[off])
    a = np.arange(2, 40.0)
    assert np.allclose(bp.optkg_index(a, a) / bp.optkg_index(a - 1, a - 1), (2 * a - 1) / (2 * a))
    # R- (Lemma A.3, eq. 38): positive only on the diagonal; -1/4 at (1,2) is the strict minimum
    rm = bp.pessimistic_index(A, B)
    assert np.all((rm > 0) == (A == B))
    assert abs(bp.pessimistic_index(1, 2) + 0.25) < 1e-15
    assert np.all(rm[(A + B) != 3] > -0.25 + 1e-9)
    assert abs(bp.pessimistic_index(3, 1) - bp.pessimistic_index(3, 2)) < 1e-15  # both -3/16


def test_tie_keys_make_equal_values_tie():
    s = bp.optkg_index(np.array([1.0, 2.0, 1.0]), np.array([2.0, 3.0, 1.0]))
    assert bp.argmax_ties(s).tolist() == [2]
    assert bp.argmax_ties(s[:2]).tolist() == [0, 1]  # R+(1,2) = R+(2,3) = 1/8 tie exactly


@pytest.mark.parametrize("state", [(3, 1), (2, 2), (2, 1), (1, 3), (4.5, 2.0), (1.3, 1.7)])
def test_cvar_lp_equals_closed_form(state):
    a, b = state
    r1, r2 = (float(x) for x in bp.outcome_rewards(a, b))
    p = [a / (a + b), b / (a + b)]
    for alpha in (1.0, 0.7, 0.5, 0.2, 1e-9):
        lp = bp.cvar_lp([r1, r2], p, alpha)
        assert abs(lp - bp.cvar_upper([r1, r2], p, alpha)) < 1e-9
        assert abs(lp - float(bp.cvar_index(a, b, alpha))) < 1e-9
    assert abs(bp.cvar_lp([r1, r2], p, 1.0) - float(bp.kg_index(a, b))) < 1e-9
    assert abs(bp.cvar_lp([r1, r2], p, 1e-9) - float(bp.optkg_index(a, b))) < 1e-9


def test_cvar_positive_below_one_on_integer_states_and_bad_alpha():
    A, B = np.meshgrid(np.arange(1, 20.0), np.arange(1, 20.0), indexing="ij")
    assert np.all(bp.cvar_index(A, B, 0.5) > 0)
    assert np.allclose(bp.cvar_index(A, B, 0.0), bp.optkg_index(A, B))
    with pytest.raises(InputError):
        bp.cvar_index(2, 1, 1.5)
    with pytest.raises(InputError):
        bp.cvar_lp([0.1, 0.2], [0.5, 0.5], 0.0)


def test_moment_matching_test_vectors():
    cases = {((1, 1, 4, 1), 1): (1.363636, 0.909091, 4, 1),
             ((1, 1, 4, 1), -1): (0.909091, 1.363636, 4, 1),
             ((2, 1, 4, 1), 1): (2.493151, 0.958904, 4.327869, 0.983607),
             ((2, 1, 4, 1), -1): (1.790698, 1.279070, 3.705882, 1.058824)}
    for (state, z), want in cases.items():
        got = bp.moment_match(*state, z)
        assert np.allclose(got, want, atol=1e-6), (state, z, got)
    # rho -> 1 recovers the conjugate update; E theta = 1/2 says nothing about rho
    assert np.allclose(bp.moment_match(2.5, 1.5, 1e8, 1e-8, 1)[:2], (3.5, 1.5), rtol=1e-9)
    assert np.allclose(bp.moment_match(2.5, 1.5, 1e8, 1e-8, -1)[:2], (2.5, 2.5), rtol=1e-9)
    assert np.allclose(bp.moment_match(3, 3, 2.5, 1.2, 1)[2:], (2.5, 1.2), rtol=1e-12)


def test_moment_matching_against_2d_quadrature():
    # independent check: moments of the exact one-step posterior on a 2-D Gauss-Legendre grid
    a, b, c, d = 2.3, 1.7, 4.0, 1.5
    x, w = special.roots_legendre(800)
    x, w = (x + 1) / 2, w / 2
    T, R = np.meshgrid(x, x, indexing="ij")
    W = np.outer(w, w) * stats.beta.pdf(T, a, b) * stats.beta.pdf(R, c, d)
    for z in (1, -1):
        q = R * T + (1 - R) * (1 - T)
        post = W * (q if z > 0 else 1 - q)
        post /= post.sum()
        mt, mt2 = (post * T).sum(), (post * T * T).sum()
        mr, mr2 = (post * R).sum(), (post * R * R).sum()
        na, nb, nc, nd = bp.moment_match(a, b, c, d, z)
        assert abs(na / (na + nb) - mt) < 1e-6
        assert abs(na * (na + 1) / ((na + nb) * (na + nb + 1)) - mt2) < 1e-6
        assert abs(nc / (nc + nd) - mr) < 1e-6
        assert abs(nc * (nc + 1) / ((nc + nd) * (nc + nd + 1)) - mr2) < 1e-6


def test_worker_rewards_reduce_to_homogeneous_and_depend_on_mean_reliability():
    a = np.array([1.0, 2.0, 3.0, 5.0])
    b = np.array([1.0, 1.0, 3.0, 2.0])
    r1, r2, p = bp.worker_outcome_rewards(a, b, 1e8, 1e-8)
    h1, h2 = bp.outcome_rewards(a, b)
    assert np.allclose(r1, h1, atol=1e-12) and np.allclose(r2, h2, atol=1e-12)
    assert np.allclose(p, a / (a + b))
    # degree-0 homogeneity in (c, d): only r = c / (c + d) matters
    x = bp.worker_outcome_rewards(a, b, 4.0, 1.0)
    y = bp.worker_outcome_rewards(a, b, 40.0, 10.0)
    assert np.allclose(x, y, atol=1e-12)


def test_dirichlet_probabilities():
    assert np.allclose(bp.dirichlet_prob_max((1.0, 1.0, 1.0)), [1 / 3] * 3, atol=1e-9)
    assert np.allclose(bp.dirichlet_prob_max((2.0, 1.0, 1.0)), [0.6111, 0.1944, 0.1944],
                       atol=1e-4)
    rng = np.random.default_rng(3)
    for _ in range(5):
        a, b = rng.uniform(0.5, 8, 2)
        assert np.allclose(bp.dirichlet_prob_max_quad([a, b]), [bp.prob_positive(a, b),
                                                               1 - bp.prob_positive(a, b)],
                           atol=1e-9)
        al = tuple(rng.uniform(0.5, 6, 4))
        p = bp.dirichlet_prob_max(al)
        assert abs(sum(p) - 1) < 1e-12
        perm = (2, 0, 3, 1)
        q = bp.dirichlet_prob_max(tuple(al[k] for k in perm))
        assert np.allclose(q, [p[k] for k in perm], atol=1e-9)
    # Monte Carlo agreement for one C = 3 state
    th = rng.dirichlet([2.0, 3.0, 1.5], size=200_000)
    mc = np.bincount(th.argmax(1), minlength=3) / len(th)
    assert np.allclose(bp.dirichlet_prob_max((2.0, 3.0, 1.5)), mc, atol=4e-3)
    assert special.betainc(3, 2, 0.5) > 0  # sanity of the scipy convention
