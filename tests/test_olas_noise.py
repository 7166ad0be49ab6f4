"""OLAS noise functions and entropy (paper 000 Sec. 3.1, 4.1, eq. 1; digest 2.5, 7.7, 7.18)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from crowdopt.errors import InputError
from crowdopt.problems.olas_noise import (
    CallableNoise,
    LinearNoise,
    LogisticNoise,
    SuperellipseNoise,
    check_monotone,
    entropy,
    noise_from_spec,
)

# Digest 000 section 2.5: NM2 reference values, rows e, columns a, to 6 decimals.
NM2_A = [0.0, 0.5, 0.7, 0.9, 0.95, 1.0]
NM2_TABLE = {
    0.1: [1.0, 0.000036, 0.000002, 0.0, 0.0, 0.0],
    0.2: [1.0, 0.028852, 0.006446, 0.000346, 0.000059, 0.0],
    0.4: [1.0, 0.343809, 0.175224, 0.043101, 0.018003, 0.0],
    0.5: [1.0, 0.5, 0.3, 0.1, 0.05, 0.0],
    0.6: [1.0, 0.656191, 0.4517, 0.194019, 0.11246, 0.0],
    0.8: [1.0, 0.971148, 0.909692, 0.718941, 0.592534, 0.0],
    0.95: [1.0, 1.0, 1.0, 1.0, 0.999999, 0.0],
}


@pytest.mark.parametrize("e", sorted(NM2_TABLE))
def test_nm2_reference_table(e):
    got = SuperellipseNoise()(np.array(NM2_A), e)
    assert np.round(got, 6).tolist() == pytest.approx(NM2_TABLE[e], abs=1.5e-6)


def test_nm2_continuity_endpoints_and_underflow():
    nm2 = SuperellipseNoise()
    a = np.linspace(0, 1, 21)
    assert np.allclose(nm2(a, 0.5), 1 - a)  # N.2: the line 1 - a at e = 1/2
    assert np.allclose(nm2(a, 0.5 - 1e-9), nm2(a, 0.5 + 1e-9), atol=1e-6)  # continuous at 1/2
    assert nm2(0.7, 0.0) == 0.0 and nm2(0.0, 0.0) == 1.0  # eps(a, 0) := 0 for a > 0
    assert nm2(0.7, 1.0) == 1.0 and nm2(1.0, 1.0) == 0.0  # eps(a, 1) := 1 for a < 1
    assert nm2(1.0, 0.3) == 0.0 and nm2(0.0, 0.3) == 1.0
    tiny = float(nm2(0.93, 0.017))  # about 1e-78: must underflow cleanly, never NaN
    assert 0.0 <= tiny < 1e-70


def test_nm1_formula():
    assert LinearNoise()(0.9, 0.6) == pytest.approx(0.06)
    assert np.allclose(LinearNoise().matrix(np.array([0.9, 0.8]), np.array([0.6, 0.5])),
                       [[0.06, 0.05], [0.12, 0.1]])


@pytest.mark.parametrize("noise", [LinearNoise(), SuperellipseNoise(),
                                   LogisticNoise(2.0, -4.0, 3.0)])
def test_paper_noise_models_pass_the_monotonicity_check(noise):
    check_monotone(noise)  # N.1: in [0, 1], non-increasing in a, non-decreasing in e
    vals = noise.matrix(np.linspace(0, 1, 51), np.linspace(0, 1, 51))
    assert vals.min() >= 0.0 and vals.max() <= 1.0
    assert np.all(np.diff(vals, axis=0) <= 1e-12) and np.all(np.diff(vals, axis=1) >= -1e-12)


@pytest.mark.parametrize("fn, what", [
    (lambda a, e: e * a, "non-increasing in accuracy"),  # increases with accuracy
    (lambda a, e: (1 - e) * (1 - a), "non-decreasing in entropy"),  # decreases with entropy
    (lambda a, e: 2 * e * (1 - a), "values in [0, 1]"),  # exceeds 1
    (lambda a, e: np.full(np.shape(a), np.nan), "values in [0, 1]"),
])
def test_monotonicity_check_rejects_bad_models(fn, what):
    with pytest.raises(InputError, match=re.escape(what)) as err:
        CallableNoise(fn)
    assert err.value.field == "noise"
    assert "\n" not in str(err.value)


def test_callable_noise_scalar_function_is_vectorized_and_checked():
    nf = CallableNoise(lambda a, e: e * (1.0 - a) if e < 0.5 else min(1.0, e) * (1.0 - a))
    assert nf.matrix(np.array([0.5, 1.0]), np.array([0.2, 0.8])).shape == (2, 2)
    assert noise_from_spec(lambda a, e: e * (1 - a))(0.5, 0.5) == pytest.approx(0.25)


def test_noise_spec_parsing_and_errors():
    assert isinstance(noise_from_spec("NM2"), SuperellipseNoise)
    assert isinstance(noise_from_spec({"type": "linear"}), LinearNoise)
    lg = noise_from_spec("logistic:1,-2,3")
    assert (lg.w0, lg.we, lg.wa) == (1.0, -2.0, 3.0)
    assert noise_from_spec(lg.to_spec()).to_spec() == lg.to_spec()
    with pytest.raises(InputError, match="monotone logistic"):
        noise_from_spec("logistic:1,2,3")  # w_e > 0: noise would fall with entropy
    with pytest.raises(InputError, match="monotone logistic"):
        noise_from_spec({"type": "logistic", "w0": 0, "we": -1, "wa": -1})
    with pytest.raises(InputError, match="noise"):
        noise_from_spec("quadratic")
    with pytest.raises(InputError):
        noise_from_spec("logistic:1,2")
    with pytest.raises(InputError, match="serializable"):
        CallableNoise(lambda a, e: e * (1 - a)).to_spec()


def test_logistic_noise_is_one_minus_sigmoid():
    lg = LogisticNoise(0.5, -2.0, 3.0)
    z = 0.5 - 2.0 * 0.3 + 3.0 * 0.8
    assert lg(0.8, 0.3) == pytest.approx(1 - 1 / (1 + math.exp(-z)))
    assert LogisticNoise(800.0, 0.0, 0.0)(0.5, 0.5) == 0.0  # no overflow


def test_entropy_binary_and_normalization():
    P = np.array([[0.5, 0.5], [1.0, 0.0], [0.9, 0.1]])
    e = entropy(P)
    assert e[0] == pytest.approx(math.log(2)) and e[1] == 0.0  # 0 ln 0 := 0
    assert e[2] == pytest.approx(-(0.9 * math.log(0.9) + 0.1 * math.log(0.1)))
    en = entropy(P, normalize="lnC")
    assert en[0] == pytest.approx(1.0) and np.allclose(en, e / math.log(2))


def test_entropy_lnC_maps_many_classes_into_unit_interval():
    C = 36  # the case-study class count: raw entropy reaches ln 36 > 1 (digest 7.7)
    uniform = np.full((1, C), 1.0 / C)
    assert entropy(uniform)[0] == pytest.approx(math.log(C))
    for k in range(2, 60):  # never above 1 (rounding gave 1 + 2^-52 for C = 5, 12, 36, ...)
        top = entropy(np.full((1, k), 1.0 / k), normalize="lnC")[0]
        assert top == pytest.approx(1.0) and top <= 1.0
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(C), size=50)
    en = entropy(P, normalize="lnC")
    assert en.min() >= 0.0 and en.max() <= 1.0 + 1e-12
    assert entropy(np.ones((3, 1)), normalize="lnC").tolist() == [0.0, 0.0, 0.0]  # C = 1


def test_entropy_rejects_bad_input():
    with pytest.raises(InputError, match="entropy_normalize"):
        entropy(np.array([[0.5, 0.5]]), normalize="log2")
    with pytest.raises(InputError, match="2-d"):
        entropy(np.array([0.5, 0.5]))


def test_callable_noise_that_fails_is_an_input_error():
    def broken(a, e):
        raise ZeroDivisionError("boom")

    with pytest.raises(InputError, match="ZeroDivisionError: boom"):
        CallableNoise(broken)
