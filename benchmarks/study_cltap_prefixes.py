"""Study: is the gap of the CL-TAP bounds on increasing curves the LP over prefix lengths?

The covering, pairing and first-labels bounds (solvers/cltap_bounds.py) each refute a threshold
theta when an inequality that every assignment reaching theta satisfies, summed over the
annotators' prefixes, cannot reach its right side; "cannot" is decided by the LP relaxation of
the knapsack over prefix lengths (`mckp_lp`, `_lagrangian_lp`), which on rising curves may mix
a whole row and an empty one. This study runs the same tests with that knapsack solved exactly
in integers (the multiple-choice knapsack DP, `mckp_dp`), at the thresholds plan / r, and
prints which of them each version refutes. It also prints the covering bound's integer
allocation at theta = plan / 0.95: the best pairing of its labels when a task may take two
labels of one annotator (what the covering, counting and pairing arguments allow), against
the best pairing when it may not ((14): one label per task and annotator).

A second part asks whether the prefix rule itself can carry the bound: the configuration LP
(covers of distinct annotators) with its prefixes in the convex hull of integer prefix vectors
(Dantzig-Wolfe: prefix vectors priced by the integer knapsack, covers by an arc-flow network),
the strongest relaxation that is linear in the prefix configuration.

Finding (inc, seed 0, b = 2t, the plan of `reproduce cltap --scale table3`: 1.8429 at (100, 10),
3.0909 at (200, 20), both the `layered` construction's):
- the integer knapsack moves first-labels at (200, 20) from 86.2 % to 87.1 % of the plan and
  nothing else; neither bound refutes plan / 0.95 or plan / 0.9 at (100, 10) or (200, 20)
  either way: the integer prefixes are not the gap;
- the covering allocation at (200, 20), theta = plan / 0.95 = 3.25, is two whole rows whose
  labels pair to 3.54 when a task may hold two labels of one annotator and to 2.69 when it may
  not ((14): one label per task and annotator): these bounds miss that rule;
- the hull configuration LP, which has both, still covers t tasks at plan / 0.95 and at
  plan / 0.9 in both cells, on a mix of prefix vectors (at (200, 20), plan / 0.95: 0.49 of the
  whole rows {2, 6}, 0.28 of {2, 19}, 0.17 of {2, 6, 14}, 0.06 of {6, 7}; 19's strongest labels
  serve 2's weakest), which no integer plan is; only a disjunction over prefix lengths
  (branching: `config-branch`) removes such mixes;
- the mix's worlds, placed by LPT and searched for 1,000 steps, give 3.0998 at (200, 20)
  (the world {2, 6, 14}), a little above the table's 3.0909: the optimum there is at least
  3.0998.

A third part asks which side is loose at the Table 3 sizes, where the optimum is unknown: the
plan against the certified bound of its own world (its prefix lengths fixed: one box of
config-branch, `cltap_branch.world_bound`). Finding: the plan is optimal among the plans with its workloads:
1.8429 at (100, 10) and 3.0909 at (200, 20) each equal their world's bound, and at (1000, 100)
4.2356 is 99.91 % of 4.2392 (145 node LPs). At these worlds the relaxation "integer prefixes,
fractional covers" is exact or nearly so. Other worlds hold better plans (the hull's world
{2, 6, 14} above, at other lengths, holds 3.0998), and a bound must exclude every world that
might beat the plan: the gap left is the breadth of config-branch's tree (12 annotators
branched one by one, lengths up to t, the others pooled), not the strength of its LP at a
world.

Usage: python benchmarks/study_cltap_prefixes.py [--quick]
(about 25 min on a quiet 2-core machine; --quick: (100, 10) only, about 4 min)
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
from common import emit, parse_args

from crowdopt.experiments.cltap_repro import WORK_STEPS
from crowdopt.problems import cltap as P
from crowdopt.solvers import cltap_bounds as CB
from crowdopt.solvers.cltap_branch import world_bound
from crowdopt.solvers.cltap_colgen import mckp_dp
from crowdopt.solvers.cltap_construct import constructions, fast, lpt_place
from crowdopt.solvers.cltap_search import local_search

RATIOS = (0.95, 0.9, 0.85)
WORLD_BISECTIONS = 10  # levels tested in the plan's world
WORLD_STEPS = 1000  # local-search steps from each world of the hull's mix


def _int_prefix_sums(C: np.ndarray, b: int) -> tuple[float, np.ndarray]:
    """max sum_j C[j, n_j] over integer n (sum n <= b), C[:, 0] = 0, and the lengths."""
    val, items = mckp_dp(C[:, 1:], b)
    n = np.zeros(C.shape[0])
    for j, k in items:
        n[j] = k + 1
    return val, n


@contextmanager
def integer_prefixes():
    """The bounds' knapsack over prefix lengths solved exactly in integers, not as an LP."""
    saved = CB.mckp_lp, CB._lagrangian_lp

    def mckp_int(vals, b, kinds=None, target=None):
        C = np.concatenate([np.zeros((vals.shape[0], 1)), np.cumsum(vals, axis=1)], axis=1)
        return _int_prefix_sums(C, b)

    CB.mckp_lp = mckp_int
    CB._lagrangian_lp = lambda C, b, target=None, max_iter=200: _int_prefix_sums(C, b)
    try:
        yield
    finally:
        CB.mckp_lp, CB._lagrangian_lp = saved


def pairings(inst: P.CltapInstance, theta: float) -> tuple[list[int], float, float | None]:
    """The covering allocation at theta (its used rows), the best min pair sum of its labels
    when two labels of one annotator may share a task, and (two rows) when they may not."""
    n = CB.covering_allocation(inst, theta)
    rows = [int(j) for j in np.flatnonzero(n)]
    labels = np.sort(np.concatenate([inst.phi[j, :n[j]] for j in rows]))
    half = len(labels) // 2
    any_pair = float((labels[:half] + labels[::-1][:half]).min()) if half else float("nan")
    cross = None
    if len(rows) == 2 and n[rows[0]] == n[rows[1]]:
        x, y = (np.sort(inst.phi[j, :n[j]]) for j in rows)
        cross = float((x + y[::-1]).min())
    return rows, any_pair, cross


def _used(seg: CB._Segments, n: np.ndarray) -> np.ndarray:
    """Labels of each segment inside the prefixes n."""
    return np.clip(n[seg.ann] - seg.k0, 0, seg.n).astype(float)


def hull_config_lp(inst: P.CltapInstance, theta: float, plans: list, grid: int = 200,
                   rounds: int = 60) -> tuple[str, float, str, list]:
    """The configuration LP with its prefixes in the convex hull of integer prefix vectors
    (Dantzig-Wolfe on the prefix rule and the budget), at the level of theta: covers of
    distinct annotators as paths of an arc-flow network (annotator by annotator, units of
    weight rounded up as in `config_lp_bound`: no cover pricing), prefix vectors as columns
    priced by the integer knapsack. Returns (verdict, the LP's value, its mix, the mix's prefix
    vectors): verdict "refuted" (LP < t), "stands" (LP >= t: no bound of this kind refutes
    theta) or "open"."""
    from scipy import sparse

    from crowdopt.problems.catalogue import RunOptions
    from crowdopt.solvers.highs import HighsModel, highs_options

    delta = theta / grid
    seg = CB._Segments(inst, delta * (1 - 1e-12), grid)  # a cover's units >= grid: >= theta
    a, S, t = inst.a, seg.S, inst.t
    G, need = grid, grid
    node = lambda j, c: (j - 1) * (G + 1) + c  # noqa: E731 (layer j = after annotator j)
    r_cap, r_conv = a * (G + 1), a * (G + 1) + S
    rows, cols, vals, cost = [], [], [], []
    reach = {0}
    for j in range(a):  # arcs (j, c) -> (j + 1, c'): skip annotator j or take one segment
        segs = np.flatnonzero((seg.ann == j) & (seg.u > 0))
        nxt = set()
        for c in sorted(reach):
            for s in [-1, *segs]:
                c2 = c if s < 0 else int(min(G, c + seg.u[s]))
                k = len(cost)
                if j > 0:
                    rows.append(node(j, c)), cols.append(k), vals.append(-1.0)
                rows.append(node(j + 1, c2)), cols.append(k), vals.append(1.0)
                if s >= 0:
                    rows.append(r_cap + int(s)), cols.append(k), vals.append(1.0)
                cost.append(1.0 if j == 0 else 0.0)
                nxt.add(c2)
        reach = nxt
    for c in range(need, G + 1):  # a path ends at a level >= need
        rows.append(node(a, c)), cols.append(len(cost)), vals.append(-1.0)
        cost.append(0.0)
    m = r_conv + 1
    A = sparse.csc_array((vals, (rows, cols)), shape=(m, len(cost)))
    lo_r, hi_r = np.zeros(m), np.zeros(m)
    lo_r[r_cap:r_conv] = -np.inf
    lo_r[r_conv] = hi_r[r_conv] = 1.0
    model = HighsModel.from_arrays(np.array(cost), A, lo_r, hi_r, np.zeros(len(cost)),
                                   np.full(len(cost), np.inf), sense="max",
                                   options=highs_options(RunOptions()))
    pool: set = set()
    order: list = []  # the prefix vectors in column order (after the arcs)

    def add(n: np.ndarray) -> None:
        pool.add(tuple(n))
        order.append(n)
        u = _used(seg, n)
        idx = np.flatnonzero(u)
        col = sparse.csc_array((np.append(-u[idx], 1.0), (np.append(r_cap + idx, r_conv),
                                                           np.zeros(len(idx) + 1, int))),
                               shape=(m, 1))
        model.add_columns([0.0], 0.0, np.inf, col)

    for n in plans:
        if tuple(n) not in pool:
            add(np.asarray(n))
    bound = np.inf
    first = len(cost)

    def mix(x: np.ndarray) -> tuple[str, list]:
        """The LP's mix as text, and its prefix vectors (worlds)."""
        used = [(x[first + i], n) for i, n in enumerate(order) if x[first + i] > 1e-6]
        return " + ".join(f"{w:.2f} {{{', '.join(map(str, np.flatnonzero(n)))}}}"
                          for w, n in used), [n for _, n in used]

    for _ in range(rounds):
        res = model.solve()
        z, y = float(res.objective), np.asarray(res.row_duals)
        gamma = np.maximum(y[r_cap:r_conv], 0.0)
        C = np.concatenate([np.zeros((a, 1)), np.cumsum(gamma[seg.of], axis=1)], axis=1)
        D, n = _int_prefix_sums(C, inst.b)  # the dual's value with every prefix vector priced
        bound = min(bound, D)
        if bound < t * (1 - 1e-9):
            return "refuted", z, "", []
        if z >= t * (1 - 1e-9):
            return ("stands", z, *mix(np.asarray(res.x)))
        if tuple(n.astype(int)) in pool:
            return ("open", z, *mix(np.asarray(res.x)))
        add(n.astype(int))
    return ("open", z, *mix(np.asarray(res.x)))


def world_plan(inst: P.CltapInstance, worlds: list) -> float:
    """The best plan placed in the given prefix vectors: LPT, then WORLD_STEPS local-search
    steps (the plan side of the gap: the hull's worlds hold plans the constructions miss)."""
    best = -np.inf
    for n in worlds:
        sol = local_search(inst, lpt_place(inst, np.asarray(n, dtype=np.int64)), time_limit=1e6,
                           seed=0, max_steps=WORLD_STEPS)
        best = max(best, P.evaluate(inst, sol).objective)
    return best


def world_row(inst: P.CltapInstance, cell: str, best: P.CltapSolution) -> dict:
    """The plan against the certified bound of its own world (its prefix lengths fixed)."""
    plan = P.evaluate(inst, best).objective
    n = (best.task_of >= 0).sum(axis=1).astype(np.int64)
    bound, nodes = world_bound(inst, n, plan, plan / min(RATIOS), WORLD_BISECTIONS)
    return {"cell": cell, "plan": plan,
            "world (annotator: labels)": ", ".join(f"{j}: {m}" for j, m in enumerate(n) if m),
            "world bound": bound, "plan / world bound": plan / bound, "node LPs": nodes}


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], quick_help="(100, 10) only (about 4 min)")
    cells = [(100, 10)] if args.quick else [(100, 10), (200, 20)]
    rows, hull, homes = [], [], []
    for t, a in cells:
        inst = P.generate(args.seed, t=t, a=a, trend="inc")
        best = fast(inst, time_limit=1e6, max_steps=WORK_STEPS[t])
        plan = P.evaluate(inst, best).objective
        homes.append(world_row(inst, f"inc ({t}, {a})", best))
        for name, bound in (("first-labels", CB.first_labels_bound),
                            ("pairing", CB.pairing_bound)):
            lp = bound(inst).value
            with integer_prefixes():
                whole = bound(inst).value
            row = {"cell": f"inc ({t}, {a})", "plan": plan, "bound": name,
                   "plan / bound (LP prefixes)": plan / lp,
                   "plan / bound (integer prefixes)": plan / whole}
            for r in RATIOS:  # refuted: the bound falls below theta = plan / r
                hi = plan / r * (1 + 1e-9)
                by_lp = bound(inst, lo=plan / r, hi=hi).value < hi
                with integer_prefixes():
                    by_int = bound(inst, lo=plan / r, hi=hi).value < hi
                row[f"refutes plan/{r} (LP, integer)"] = \
                    f"{'yes' if by_lp else 'no'}, {'yes' if by_int else 'no'}"
            rows.append(row)
        plans = [(sol.task_of >= 0).sum(axis=1) for sol in constructions(inst).values()]
        for r in RATIOS[:2]:
            verdict, z, used, worlds = hull_config_lp(inst, plan / r, plans)
            hull.append({"cell": f"inc ({t}, {a})", "theta": f"plan / {r}",
                         "LP covers at least": z, "t": t, "verdict": verdict,
                         "prefix vectors (weight {annotators})": used,
                         f"its worlds' best plan ({WORLD_STEPS} steps)": world_plan(inst, worlds)})
        used, any_pair, cross = pairings(inst, plan / 0.95)
        print(f"inc ({t}, {a}): covering allocation at theta = plan / 0.95 = "
              f"{plan / 0.95:.4f}: rows {used}; labels paired freely {any_pair:.4f}, "
              f"one per annotator {'-' if cross is None else f'{cross:.4f}'}")
    if not args.quick:  # the plan's world only: the LPs above do not reach this size
        inst = P.generate(args.seed, t=1000, a=100, trend="inc")
        homes.append(world_row(inst, "inc (1000, 100)",
                                fast(inst, time_limit=1e6, max_steps=WORK_STEPS[1000])))
    emit("study_cltap_prefixes", rows, ["cell", "plan", "bound", "plan / bound (LP prefixes)",
                                        "plan / bound (integer prefixes)"]
         + [f"refutes plan/{r} (LP, integer)" for r in RATIOS], args,
         note=f"seed {args.seed}, b = 2t, K = t; plan: the fast path with the search steps "
              "of `reproduce cltap --scale table3` (the same on every run)")
    emit("study_cltap_hull_config_lp", hull, ["cell", "theta", "LP covers at least", "t",
                                              "verdict", "prefix vectors (weight {annotators})",
                                              f"its worlds' best plan ({WORLD_STEPS} steps)"],
         args,
         note="configuration LP over the convex hull of integer prefix vectors, covers of "
              "distinct annotators by arc flow (200 units per theta, weights rounded up); "
              "stands: the LP covers t tasks, so no bound of this kind refutes theta")
    emit("study_cltap_plan_world", homes, ["cell", "plan", "world (annotator: labels)",
                                            "world bound", "plan / world bound", "node LPs"],
         args, note="world bound: config-branch's certified bound on the one box of the plan's "
                    "prefix lengths (integer prefixes, fractional covers), "
                    f"{WORLD_BISECTIONS} levels bisected")


if __name__ == "__main__":
    main()
