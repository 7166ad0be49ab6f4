"""Agreement-based weighted votes: Wawa and Zero-Based Skill (the two heuristics of crowd-kit).

Neither has a paper; both are defined by crowd-kit's documentation (Toloka, "Worker Agreement
with Aggregate" and "Zero-Based Skill"), restated here with the objective ZBS increases.

Wawa: (1) majority vote; (2) skill s_w = the fraction of w's answers that agree with it;
(3) the vote weighted by s. Under ties='random', agreement with a tied majority counts 1/m for
each of the m tied classes (the expectation under random tie-breaking), so the result does not
depend on a seed; under ties='first' the vote is the first tied class throughout (crowd-kit's
rule, so both give the same labels).

Zero-Based Skill alternates, from equal skills (so the first vote is majority vote):

    y-step  y_t = argmax_k sum_{w answered k on t} s_w                 (weighted vote)
    s-step  s_w <- s_w + lr_i (a_w - s_w),  a_w = agreement of w with y (as in Wawa)

with lr_i = lr_init * factor^floor(i / steps) (crowd-kit's schedule: 1, halved every 20
iterations). Both steps increase

    G(y, s) = sum_e s_{w_e} [l_e = y_{t_e}] - 1/2 sum_w n_w s_w^2:

the y-step maximises G over y for fixed s, and for fixed y G is a concave quadratic in each
s_w with maximum at a_w, which a step of size lr in (0, 2) towards a_w increases by
n_w lr (1 - lr/2) (a_w - s_w)^2 >= 0. `objective` is the trace of G; ZBS stops when G rises by
at most `tol * |G|` with the vote unchanged. Posteriors are the weighted vote fractions.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..validate import real
from .aggregate import (
    EM_TOL,
    AggregationResult,
    _agreement_skills,
    _check_ties,
    _require_rows,
    _top_mask,
    break_ties,
    check_iteration_args,
    relative_rise,
)
from .rows import row_sum
from .tables import LabelTable

ZBS_MAX_ITER = 1000


def wawa(table: LabelTable, *, ties: str = "random", seed: int = 0) -> AggregationResult:
    """Worker Agreement With Aggregate (module docstring): majority vote, skills = agreement
    with it, then the skill-weighted vote. `skills` are the agreements."""
    _check_ties(ties, seed)
    _require_rows(table)
    y = _vote_rows(table.vote_counts().astype(float), ties)
    skills = _agreement_skills(table, y)
    scores = table.vote_counts(np.nan_to_num(skills))
    return AggregationResult("wawa", break_ties(scores, ties=ties, seed=seed),
                             _fractions(scores), skills)


def zero_based_skill(table: LabelTable, *, lr_init: float = 1.0, lr_steps: int = 20,
                     lr_factor: float = 0.5, tol: float = EM_TOL, max_iter: int = ZBS_MAX_ITER,
                     ties: str = "random", seed: int = 0) -> AggregationResult:
    """Zero-Based Skill: alternate the skill-weighted vote and a step of the skills towards
    each worker's agreement with it (module docstring); `objective` is the trace of G."""
    _check_ties(ties, seed)
    _require_rows(table)
    check_iteration_args(tol, max_iter)
    lr_init, lr_factor = real(lr_init, "lr_init"), real(lr_factor, "lr_factor")
    if not (0 < lr_init < 2) or not (0 < lr_factor <= 1):
        raise InputError("lr_init / lr_factor", "0 < lr_init < 2 and 0 < lr_factor <= 1",
                         (lr_init, lr_factor))
    if isinstance(lr_steps, bool) or not isinstance(lr_steps, int) or lr_steps < 1:
        raise InputError("lr_steps", "an integer >= 1", lr_steps)
    n = table.labels_per_worker().astype(float)
    s = np.full(table.n_workers, 1.0 / table.n_classes)
    y = _vote_rows(table.vote_counts(s), ties)
    objs: list[float] = []
    it, converged, lr = 0, False, lr_init
    while it < max_iter:
        if it and it % lr_steps == 0:
            lr *= lr_factor
        a = np.nan_to_num(_agreement_skills(table, y))
        s = s + lr * (a - s)
        y_new = _vote_rows(table.vote_counts(s), ties)
        it += 1
        same = np.array_equal(y_new, y)
        y = y_new
        objs.append(float(np.sum(s * n * np.nan_to_num(_agreement_skills(table, y)))
                          - 0.5 * np.sum(n * s * s)))
        if same and len(objs) > 1 and relative_rise(objs[-1], objs[-2]) <= tol:
            converged = True
            break
    scores = table.vote_counts(s)
    skills = np.where(n > 0, s, np.nan)
    return AggregationResult("zbs", break_ties(scores, ties=ties, seed=seed), _fractions(scores),
                             skills, it, converged, objective=objs,
                             objective_name="weighted agreement G (Zero-Based Skill)")


def _vote_rows(scores: np.ndarray, ties: str) -> np.ndarray:
    """Rows of the vote as class weights: 1/m on each of the m classes tied for the maximum
    (ties='random': the expectation), or 1 on the first tied class (ties='first')."""
    top = _top_mask(scores).astype(float)
    if ties == "first":
        first = np.zeros_like(top)
        first[np.arange(len(top)), top.argmax(1)] = 1.0
        return first
    return top / row_sum(top)[:, None]


def _fractions(scores: np.ndarray) -> np.ndarray:
    tot = row_sum(scores)[:, None]
    return np.divide(scores, tot, out=np.full_like(scores, 1.0 / scores.shape[1]),
                     where=tot > 0)
