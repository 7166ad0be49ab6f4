"""Beta-posterior machinery of Opt-KG (Chen, Lin & Zhou, JMLR 2015; paper 002, digest 002).

Everything a Bayesian budget-allocation policy needs about one instance's Beta(a, b) state:
I(a, b) = P(theta >= 1/2) (eqs. 5/26), the one-step rewards R1, R2 (eqs. 12-13), the KG
index R = p1 R1 + p2 R2 (eqs. 14/16/30), the Opt-KG index R+ = max(R1, R2) (eq. 17), the
pessimistic index R- = min(R1, R2) (Sec. 4.2), the upper-tail CVaR_alpha index (Sec. 4.1,
closed form and the Pyomo LP), exact rational versions for integer states, the one-coin moment
matching of heterogeneous workers (appendix eqs. 39-46), the Dirichlet class probabilities of the
multi-class extension (eqs. 56-58) and the tie rule every policy shares (digest section 3).

All float functions are numpy-vectorized and numerically stable (digest section 2.2): the
increments Delta+/- are evaluated in log space and the only subtraction of two probabilities
happens when |a - b| < 1, where one label can flip the Bayes decision.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache, lru_cache

import numpy as np
from scipy import special

from ..errors import InputError
from ..models.formulation import Formulation

LN2 = math.log(2.0)
# Scores are compared on a grid of 1e-12 (absolute; every index here lies in [-1/2, 1/2]).
# Distinct states with mathematically equal scores (R+(1,2) = R+(2,3) = 1/8) differ in the last
# ulp in floating point; quantizing makes them tie, as the digest's tolerance rule (tau = 1e-12)
# requires, and gives integer keys for the O(log K) bucket structure of the policies.
TIE_TOL = 1e-12


# ----------------------------------------------------------------------------- I(a, b) and h
def prob_positive(a, b):
    """I(a, b) = P(theta >= 1/2) for theta ~ Beta(a, b) (eq. 26) = betainc(b, a, 1/2)."""
    return special.betainc(b, a, 0.5)


def small_tail(a, b):
    """m(a, b) = 1 - h(I(a, b)) = min(I_{1/2}(a, b), I_{1/2}(b, a)), to relative precision."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return special.betainc(np.maximum(a, b), np.minimum(a, b), 0.5)  # the tail below 1/2


def h(x):
    """h(x) = max(x, 1 - x): probability that the Bayes decision is right (eq. 7)."""
    return np.maximum(x, 1.0 - np.asarray(x))


def delta_plus(a, b):
    """Delta+(a, b) = I(a+1, b) - I(a, b) = 0.5^(a+b) / (a B(a, b)) (eq. 35), in log space."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return np.exp(-(a + b) * LN2 - np.log(a) - special.betaln(a, b))


def delta_minus(a, b):
    """Delta-(a, b) = I(a, b) - I(a, b+1) = 0.5^(a+b) / (b B(a, b)) (eq. 36), in log space."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return np.exp(-(a + b) * LN2 - np.log(b) - special.betaln(a, b))


# ----------------------------------------------------------------------------- rewards
def outcome_rewards(a, b):
    """(R1, R2): gain in h(I) after a +1 label and after a -1 label (eqs. 12-13).

    Stable form (digest 2.2): with D = I(a, b) - 1/2, R1 = |D + Delta+| - |D| and
    R2 = |D - Delta-| - |D|; D is computed only where |a - b| < 1.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    a, b = np.broadcast_arrays(a, b)
    dp = delta_plus(a, b)
    dm = delta_minus(a, b)
    ge = a >= b
    r1 = np.where(ge, dp, -dp)
    r2 = np.where(ge, -dm, dm)
    near = np.abs(a - b) < 1.0
    if np.any(near):
        an, bn = a[near], b[near]
        d = np.where(an == bn, 0.0, prob_positive(an, bn) - 0.5)
        dpn, dmn = dp[near], dm[near]
        r1n = np.where(an >= bn, dpn, np.abs(d + dpn) + d)
        r2n = np.where(an >= bn, np.abs(d - dmn) - d, dmn)
        r1 = np.array(r1, dtype=float)
        r2 = np.array(r2, dtype=float)
        r1[near] = r1n
        r2[near] = r2n
    return r1, r2


def kg_index(a, b):
    """KG index R(a, b) = p1 R1 + p2 R2 (eqs. 14, 16)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    r1, r2 = outcome_rewards(a, b)
    p1 = a / (a + b)
    return p1 * r1 + (1.0 - p1) * r2


def optkg_index(a, b):
    """Opt-KG index R+(a, b) = max(R1, R2) (eq. 17)."""
    r1, r2 = outcome_rewards(a, b)
    return np.maximum(r1, r2)


def pessimistic_index(a, b):
    """Pessimistic-KG index R-(a, b) = min(R1, R2) (Sec. 4.2; inconsistent, Prop. 4.3)."""
    r1, r2 = outcome_rewards(a, b)
    return np.minimum(r1, r2)


def nlu_index(a, b):
    """NLU score: posterior probability of the minority class, 1 - h(I(a, b)) (digest A9)."""
    return small_tail(a, b)


def optkg_closed(a, b):
    """R+(a, b) = 0.5^(a+b) / (max(a, b) B(a, b)), valid when a - b is an integer (digest 2.2)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return np.exp(-(a + b) * LN2 - np.log(np.maximum(a, b)) - special.betaln(a, b))


def pessimistic_closed(a, b):
    """R-(a, b) for a - b integer: R(a, a) on the diagonal, else -0.5^(a+b)/(min(a,b) B(a,b))."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    off = -np.exp(-(a + b) * LN2 - np.log(np.minimum(a, b)) - special.betaln(a, b))
    return np.where(a == b, -off, off)


# ----------------------------------------------------------------------------- CVaR
def cvar_upper(values, probs, alpha: float) -> float:
    """Upper-tail CVaR_alpha of a discrete reward (Sec. 4.1): the fractional-knapsack optimum of
    max sum q_c R_c s.t. 0 <= q_c <= p_c/alpha, sum q_c = 1; alpha = 0 means max_c R_c."""
    values = np.asarray(values, dtype=float)
    probs = np.asarray(probs, dtype=float)
    if alpha <= 0.0:
        return float(values[probs > 0].max())
    left, total = 1.0, 0.0
    for c in np.argsort(-values, kind="stable"):
        q = min(left, probs[c] / alpha)
        total += q * values[c]
        left -= q
        if left <= 0.0:
            break
    return float(total)


def cvar_index(a, b, alpha: float):
    """CVaR_alpha-KG index of the two-point reward (R1 w.p. p1, R2 w.p. p2), vectorized:
    the better outcome k* gets q = min(1, p_k*/alpha). alpha = 1 is KG, alpha -> 0 is Opt-KG."""
    if not 0.0 <= alpha <= 1.0:
        raise InputError("alpha", "a number in [0, 1]", alpha)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    r1, r2 = outcome_rewards(a, b)
    p1 = a / (a + b)
    top1 = r1 >= r2
    hi = np.where(top1, r1, r2)
    lo = np.where(top1, r2, r1)
    if alpha == 0.0:
        return hi
    q = np.minimum(1.0, np.where(top1, p1, 1.0 - p1) / alpha)
    return q * hi + (1.0 - q) * lo


def build_cvar_lp(data: tuple) -> object:
    """The CVaR_alpha LP of Sec. 4.1 in Pyomo, data (values R_c, probabilities p_c, alpha):
    max sum_c q_c R_c s.t. 0 <= q_c <= p_c / alpha, sum_c q_c = 1."""
    import pyomo.environ as pyo
    from pyomo.core.util import quicksum

    vals, prb, alpha = data
    m = pyo.ConcreteModel(name="cvar_lp")
    m.C = pyo.RangeSet(0, len(vals) - 1)
    m.q = pyo.Var(m.C, bounds=lambda _m, c: (0.0, prb[c] / alpha))
    m.one = pyo.Constraint(expr=quicksum([m.q[c] for c in m.C]) == 1.0)
    m.obj = pyo.Objective(expr=quicksum([vals[c] * m.q[c] for c in m.C]), sense=pyo.maximize)
    return m


CVAR_LP = Formulation("optkg", "cvar-lp", build_cvar_lp, lambda data, m, res: None)


def cvar_lp(values, probs, alpha: float, time_limit: float | None = 30.0) -> float:
    """CVaR_alpha by its LP (`build_cvar_lp`) through the exact runner (cross-check of
    `cvar_upper`)."""
    from ..problems.catalogue import RunOptions
    from ..solvers.exact_runner import run
    from ..status import Status

    if not 0.0 < alpha <= 1.0:
        raise InputError("alpha", "a number in (0, 1] for the LP", alpha)
    data = ([float(v) for v in values], [float(p) for p in probs], alpha)
    res = run(CVAR_LP, data, RunOptions(time_limit=time_limit)).result.res
    if res.status != Status.OPTIMAL:
        raise RuntimeError(f"CVaR LP not solved: {res.status} {res.message}")
    return float(res.objective)


# ----------------------------------------------------------------------------- exact rationals
@cache
def prob_positive_exact(a: int, b: int) -> Fraction:
    """I(a, b) for positive integers: P(Bin(a+b-1, 1/2) <= a-1) (digest 2.1), exactly."""
    n = a + b - 1
    return Fraction(sum(math.comb(n, k) for k in range(a)), 2**n)


def h_exact(x: Fraction) -> Fraction:
    """h(x) = max(x, 1 - x) in exact arithmetic."""
    return max(x, 1 - x)


@cache
def outcome_rewards_exact(a: int, b: int) -> tuple[Fraction, Fraction]:
    """(R1, R2) of eqs. 12-13 as exact fractions, from the definition."""
    base = h_exact(prob_positive_exact(a, b))
    return (h_exact(prob_positive_exact(a + 1, b)) - base,
            h_exact(prob_positive_exact(a, b + 1)) - base)


# ----------------------------------------------------------------------------- ties
def tie_keys(scores) -> np.ndarray:
    """Integer keys of scores on the 1e-12 grid; equal keys are ties (digest section 3)."""
    return np.rint(np.asarray(scores, dtype=float) / TIE_TOL).astype(np.int64)


def tie_key(score: float) -> int:
    """The integer key under which two scores within TIE_TOL tie."""
    return int(round(float(score) / TIE_TOL))


def argmax_ties(scores) -> np.ndarray:
    """Indices whose score ties with the maximum (within the 1e-12 grid)."""
    k = tie_keys(scores)
    return np.flatnonzero(k == k.max())


# ----------------------------------------------------------------------------- one-coin workers
def moment_match(a, b, c, d, z):
    """Posterior (a~, b~, c~, d~) after label z in {+1, -1} from a worker with reliability
    rho ~ Beta(c, d), projected on a product of Betas by matching two moments (eqs. 39-46).

    Each exact one-step marginal is a two-component mixture, w1 Beta(x+1, y) + w2 Beta(x, y+1)
    (for z = +1, both theta and rho have w1 = ac / (ac + bd)), so its mean and variance follow
    without the cancellation of m2 - m1^2; the values equal the digest's closed forms (2.4).
    """
    a, b, c, d = (np.asarray(v, dtype=float) for v in (a, b, c, d))
    pos = np.asarray(z) > 0
    ac, bd, ad, bc = a * c, b * d, a * d, b * c
    den = np.where(pos, ac + bd, ad + bc)
    wt = np.where(pos, ac, ad) / den  # theta: weight of Beta(a+1, b)
    wr = np.where(pos, ac, bc) / den  # rho: weight of Beta(c+1, d)
    na, nb = _match_mixture(a, b, wt)
    nc, nd = _match_mixture(c, d, wr)
    return na, nb, nc, nd


def _match_mixture(x, y, w1):
    """Beta with the mean and variance of w1 Beta(x+1, y) + (1-w1) Beta(x, y+1) (eqs. 41-42)."""
    w2 = 1.0 - w1
    n = x + y
    up, dn = x + w1, y + w2  # (n+1) * mean, (n+1) * (1 - mean)
    var_num = (w1 * (x + 1.0) * y + w2 * x * (y + 1.0)) / (n + 2.0) + w1 * w2
    k = up * dn / var_num - 1.0  # a~ + b~ = mean (1 - mean) / var - 1
    return up / (n + 1.0) * k, dn / (n + 1.0) * k


def worker_outcome_rewards(a, b, c, d):
    """(R1, R2, P(z=+1)) for asking a worker with rho ~ Beta(c, d) about an instance in state
    (a, b) (eqs. 22-23 / 47-48), via the small-tail form m(a,b) - m(a~, b~) (digest 2.2)."""
    a, b, c, d = (np.asarray(v, dtype=float) for v in (a, b, c, d))
    base = small_tail(a, b)
    a1, b1, _, _ = moment_match(a, b, c, d, 1)
    a2, b2, _, _ = moment_match(a, b, c, d, -1)
    p_plus = (a * c + b * d) / ((a + b) * (c + d))
    return base - small_tail(a1, b1), base - small_tail(a2, b2), p_plus


# ----------------------------------------------------------------------------- Dirichlet
@lru_cache(maxsize=200_000)
def dirichlet_prob_max(alpha: tuple[float, ...]) -> tuple[float, ...]:
    """I_c(alpha) = P(theta_c >= theta_c' for all c') under Dir(alpha) (eqs. 56-58): a 1-D
    integral over Gamma densities and cdfs; C = 2 is exactly (I(a, b), 1 - I(a, b))."""
    al = [float(x) for x in alpha]
    if len(al) == 2:
        p = float(prob_positive(al[0], al[1]))
        return (p, 1.0 - p)
    return tuple(dirichlet_prob_max_quad(al))


def dirichlet_prob_max_quad(alpha) -> list[float]:
    """The quadrature of eq. 58 for any C >= 2 (used directly for C >= 3)."""
    from scipy import integrate, stats  # here only: importing them costs ~1 s per process

    al = [float(x) for x in alpha]
    out = []
    for c, ac in enumerate(al):
        others = [x for k, x in enumerate(al) if k != c]

        def f(x, ac=ac, others=others):
            v = stats.gamma.pdf(x, ac)
            for o in others:
                v *= special.gammainc(o, x)
            return v

        hi = stats.gamma.ppf(1.0 - 1e-15, max(al)) + 10.0
        val, _ = integrate.quad(f, 0.0, hi, epsabs=1e-13, epsrel=1e-11, limit=200,
                                points=[max(ac - 1.0, 0.0)])
        out.append(val)
    s = sum(out)
    return [v / s for v in out]


def dirichlet_outcome_rewards(alpha) -> np.ndarray:
    """[h(I(alpha + e_c)) - h(I(alpha))]_c with h = max_c (multi-class eq. 56 and Opt-KG)."""
    al = tuple(float(x) for x in alpha)
    base = max(dirichlet_prob_max(al))
    out = np.empty(len(al))
    for c in range(len(al)):
        nxt = list(al)
        nxt[c] += 1.0
        out[c] = max(dirichlet_prob_max(tuple(nxt))) - base
    return out
