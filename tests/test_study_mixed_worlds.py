"""The prefix study's claims that a relaxation "stands" at theta (benchmarks/study_cltap_prefixes.py):
the hull LP with weights rounded down and the coupled LP (covers inside one world, labels pooled
over the worlds) may only say so where the exact LP, every world and cover enumerated with the
weights as they are, covers every task. Tiny increasing instances, levels around their
optima."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import study_cltap_prefixes as S  # noqa: E402

from crowdopt.problems import cltap as P  # noqa: E402
from crowdopt.problems.catalogue import RunOptions  # noqa: E402
from crowdopt.solvers import cltap_bounds as CB  # noqa: E402
from crowdopt.solvers.cltap_construct import constructions  # noqa: E402
from crowdopt.solvers.highs import HighsModel, highs_options  # noqa: E402

GRID = 5  # coarse units: rounding the wrong way would show at once


def _worlds(inst: P.CltapInstance) -> list[tuple[int, ...]]:
    return [n for n in itertools.product(range(inst.K + 1), repeat=inst.a) if sum(n) <= inst.b]


def _covers(inst: P.CltapInstance, n: tuple[int, ...], theta: float) -> list[tuple]:
    """Every set of labels, at most one per annotator inside the prefixes n, weighing theta."""
    out = []
    for pick in itertools.product(*[range(-1, m) for m in n]):
        labels = tuple((j, k) for j, k in enumerate(pick) if k >= 0)
        if labels and sum(inst.phi[j, k] for j, k in labels) >= theta:
            out.append(labels)
    return out


def exact_covered(inst: P.CltapInstance, theta: float, coupled: bool) -> float:
    """The tasks the exact LP covers at theta: the hull (a mix of worlds, covers of any labels,
    each label used at most its availability) or, `coupled`, covers drawn inside one world
    (at most t rho_w of them in world w)."""
    worlds, K, t = _worlds(inst), inst.K, inst.t
    L = inst.a * K
    rows, cols, vals, cost = [], [], [], []
    for i, n in enumerate(worlds):  # lambda_n: availability, its tasks (coupled), the mix
        labels = [j * K + k for j in range(inst.a) for k in range(n[j])]
        rows += labels + ([L + 1 + i] if coupled else []) + [L]
        vals += [-1.0] * len(labels) + ([-float(t)] if coupled else []) + [1.0]
        cols += [len(cost)] * (len(labels) + 1 + coupled)
        cost.append(0.0)
    full = tuple([K] * inst.a)
    for i, n in enumerate(worlds if coupled else [full]):
        for cover in _covers(inst, n, theta):
            rows += [j * K + k for j, k in cover] + ([L + 1 + i] if coupled else [])
            vals += [1.0] * (len(cover) + coupled)
            cols += [len(cost)] * (len(cover) + coupled)
            cost.append(1.0)
    m = L + 1 + (len(worlds) if coupled else 0)
    lo, hi = np.full(m, -np.inf), np.zeros(m)
    lo[L] = hi[L] = 1.0
    res = HighsModel.from_arrays(np.array(cost), sp.csc_array((vals, (rows, cols)),
                                                               shape=(m, len(cost))),
                                 lo, hi, np.zeros(len(cost)), np.full(len(cost), np.inf),
                                 sense="max", options=highs_options(RunOptions())).solve()
    return float(res.objective)


def _instance(seed: int) -> P.CltapInstance:
    rng = np.random.default_rng(seed)
    t, a = int(rng.integers(2, 5)), int(rng.integers(2, 4))
    return P.generate(seed, t=t, a=a, trend="inc", tau="mixed", b=int(rng.integers(t, 2 * t + 1)))


@pytest.mark.parametrize("down", [True, False])
def test_units_round_the_way_they_claim(down):
    inst = P.generate(3, t=30, a=4, trend="inc")
    delta = 0.037
    seg = CB._Segments(inst, delta, 10**6, down=down)
    u = seg.u[seg.of] * delta
    if down:
        assert np.all(u <= inst.phi)
    else:
        assert np.all(u[inst.phi > 0] >= inst.phi[inst.phi > 0])


def _edge(inst: P.CltapInstance, coupled: bool) -> float:
    """The largest theta (to 1e-4) at which the exact LP still covers every task."""
    lo, hi = 0.0, float(np.sort(inst.phi, axis=None)[-inst.a:].sum()) + 1.0
    for _ in range(16):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if exact_covered(inst, mid, coupled) >= inst.t * (1 - 1e-9) else (lo, mid)
    return lo


@pytest.mark.parametrize("seed", range(30))
def test_stands_only_where_the_exact_lp_covers_every_task(seed):
    inst = _instance(seed)
    plans = [(sol.task_of >= 0).sum(axis=1) for sol in constructions(inst).values()]
    for coupled in (False, True):
        edge = _edge(inst, coupled)
        for f in (0.3, 0.5, 0.8, 1.002, 1.05, 1.2, 1.5):
            theta = edge * f
            if coupled:
                verdict, *_ = S.coupled_lp(inst, theta, plans, grid=GRID)
            else:
                verdict, *_ = S.hull_config_lp(inst, theta, plans, grid=GRID, down=True)
            if verdict == "stands":
                assert exact_covered(inst, theta, coupled) >= inst.t * (1 - 1e-9), (f, coupled)
