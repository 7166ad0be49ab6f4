"""An independent CL-TAP oracle for the soundness tests: the exact optimum by enumeration.

Written apart from the package's solvers (it imports nothing from them). A plan is, per
annotator, a prefix of n labels (n <= K, the prefixes within the budget b) placed on n
different tasks (digest 1.7); tasks are interchangeable, so a partial plan is the sorted vector
of task values. `_best` enumerates plans annotator by annotator and label by label (heaviest
first), merging equal states, with every task value capped at `cap` and pruned at `goal`:

- capping: a value above cap is cap. min_i min(v_i, cap) = min(min_i v_i, cap), so the best
  capped minimum is min(OPT, cap): exact when OPT <= cap, and states above cap merge;
- pruning: a partial plan in which some task cannot reach `goal` even with the next label of
  the current annotator (if that task has none of hers yet) and the best label of every later
  annotator (at most one per annotator and task) has no completion reaching goal; nor one where
  the tasks below goal need more than the heaviest labels left in the budget can give (each
  truncated at the largest need);
- dominance: at an annotator's end, a state with no more labels used and every sorted value at
  least as large as another's replaces it (adding labels only raises values).

`optimum` bisects: "can every task reach theta?" is `_best` with goal = cap = theta; once the
reached value lo and the refuted value hi are within 1e-3, `_best(goal=lo, cap=hi)` is exact.
Weights are compared as the floats they are (no rounding): exact at any scale.
"""

from __future__ import annotations

import time

import numpy as np


class OracleTimeout(Exception):
    """The enumeration passed its CPU budget (rising curves with all-distinct weights at
    t = 6, a = 4, K = 6 keep thousands of undominated states): the instance is not checked."""


def _undominated(states: dict[tuple[float, ...], int]) -> dict[tuple[float, ...], int]:
    """The states no other state dominates (fewer or equal labels, sorted values all >=)."""
    if len(states) <= 1:
        return states
    keys = list(states)
    vals = np.array(keys, dtype=float)
    used = np.array([states[k] for k in keys])
    order = np.lexsort((-vals.sum(axis=1), used))  # likely dominators first
    kept: list[int] = []
    for i in order:
        if kept:
            dom = np.all(vals[kept] >= vals[i], axis=1) & (used[kept] <= used[i])
            if dom.any():
                continue
        kept.append(i)
    return {keys[i]: int(used[i]) for i in kept}


def _hopeless(vals: np.ndarray, free: np.ndarray, nxt: float, goal: float, after: float,
              pool: np.ndarray) -> bool:
    """Whether no completion lifts every task to goal (the module docstring's pruning): vals
    the task values, free the tasks without a label of the current annotator, nxt her best
    label still to come (0 if none), after the best labels of the later annotators summed, pool the weights
    still placeable (her remaining labels and the later ones within the budget, decreasing)."""
    reach = vals + np.where(free, nxt, 0.0) + after
    if np.any(reach < goal):
        return True
    need = np.maximum(goal - vals, 0.0)
    if not need.any():
        return False
    give = np.minimum(pool, float(need.max()))
    # sums of equal numbers in another order differ in the last bit (numpy sums by blocks of
    # 8): only a shortfall beyond rounding prunes (a weaker test keeps the enumeration exact)
    return bool(give.sum() < need.sum() * (1.0 - 1e-9)
                or np.count_nonzero(give) < np.count_nonzero(need))


def _best(phi: np.ndarray, t: int, b: int, goal: float, cap: float,
          deadline: float = np.inf) -> float:
    """The best capped smallest-task value over the plans that can still reach goal (pruned
    ones left out); -inf if none reaches goal."""
    a, K = phi.shape
    best = phi.max(axis=1) if K else np.zeros(a)
    goal_t = goal * (1.0 - 1e-12)
    states: dict[tuple[float, ...], int] = {(0.0,) * t: 0}
    for j in range(a):
        after = float(best[j + 1:].sum())
        later = np.sort(phi[j + 1:].ravel())[::-1]
        done: dict[tuple[float, ...], int] = {}
        for vals0, used in states.items():
            if time.process_time() > deadline:
                raise OracleTimeout
            # label by label: (values, flags of the tasks she labelled) -> nothing more needed
            layer = {(vals0, (False,) * t)}
            for n in range(0, min(K, b - used) + 1):
                new_layer = set()
                for vals, flags in layer:
                    key = tuple(sorted(vals))
                    if done.get(key, b + 1) > used + n:
                        done[key] = used + n
                    if n == min(K, b - used):
                        continue
                    w = float(phi[j, n])
                    rest = np.sort(np.concatenate([phi[j, n + 1:min(K, b - used)], later]))[::-1]
                    pool = rest[:max(b - used - n - 1, 0)]
                    mine = phi[j, n + 1:min(K, b - used)]
                    more = float(mine.max()) if mine.size else 0.0  # her best label still to come
                    tried = set()
                    for i in range(t):
                        if flags[i] or vals[i] in tried:
                            continue
                        tried.add(vals[i])
                        v2 = list(vals)
                        v2[i] = min(v2[i] + w, cap)
                        f2 = list(flags)
                        f2[i] = True
                        order = sorted(range(t), key=lambda k: (v2[k], f2[k]))
                        state = (tuple(v2[k] for k in order), tuple(f2[k] for k in order))
                        if goal > 0 and _hopeless(np.array(state[0]), ~np.array(state[1]),
                                                  more, goal_t, after, pool):
                            continue
                        new_layer.add(state)
                layer = new_layer
        if goal > 0:
            done = {k: u for k, u in done.items()
                    if not _hopeless(np.array(k), np.zeros(t, bool), 0.0, goal_t, after,
                                     later[:max(b - u, 0)])}
        states = _undominated(done)
    return max((s[0] for s in states), default=-np.inf)


def optimum(phi: np.ndarray, t: int, b: int, lb: float = 0.0,
            cpu_s: float = np.inf) -> float:
    """max over feasible plans of min_i c'(W_i) (eqs. 11-17): phi is the a x K weight matrix,
    t tasks, budget b. `lb` must be the value of some feasible plan (0 always is): it is
    checked, a value no plan reaches is an AssertionError. Past `cpu_s` seconds of CPU:
    OracleTimeout."""
    deadline = time.process_time() + cpu_s
    phi = np.asarray(phi, dtype=float)
    a, K = phi.shape
    if K == 0 or b < t:
        return 0.0
    best = phi.max(axis=1)
    phi = phi[np.argsort(-best, kind="stable")]  # annotators are interchangeable in the model
    best = phi.max(axis=1)
    # no plan's smallest task exceeds the average of the min(b, aK) heaviest labels, nor one
    # best label per annotator
    top = np.sort(phi.ravel())[::-1][:min(b, a * K)]
    hi = min(float(top.sum()) / t, float(best.sum())) * (1.0 + 1e-9)
    if hi <= 0:
        return 0.0
    positive = phi[phi > 0]
    lo = float(lb)
    if lo <= 0:  # OPT > 0 iff every task can have a positive label: test the smallest one
        low = float(positive.min())
        if _best(phi, t, b, low, cap=low, deadline=deadline) < low * (1.0 - 1e-12):
            return 0.0
        lo = low
    elif _best(phi, t, b, lo, cap=lo, deadline=deadline) < lo * (1.0 - 1e-12):
        raise AssertionError(f"oracle: no plan reaches lb = {lb!r}: it is not a feasible value")
    while hi > lo * (1.0 + 1e-3):
        mid = float(np.sqrt(lo * hi))
        if _best(phi, t, b, mid, cap=mid, deadline=deadline) >= mid * (1.0 - 1e-12):
            lo = mid
        else:
            hi = mid
    return _best(phi, t, b, lo, cap=hi, deadline=deadline)
