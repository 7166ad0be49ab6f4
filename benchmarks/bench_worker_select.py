"""Worker selection (paper 004): Algorithm 1 vs formulation A; the cost DP vs the cost MILP.

Part 1: M = 100, 1000, 10000 workers (K = 50, w ~ Beta(2.3, 2), n = 10 gold questions, so G has
heavy ties). Algorithm 1 (sort + scan every prefix) against formulation A through HiGHS (gap 0,
presolve off, then the min-|S| second pass), build + compile + both solves, same run. At the
largest size HiGHS may hit the time limit: the row then reports its bound and gap.
Part 2 (extension, digest 2.6): integer costs 1..10, budget C = 40, K = M: the DP over
(worker, size, spend) against formulation A with one budget row per cardinality.
Every row checks the objective of the fast path against the exact one (1e-7).
"""

from __future__ import annotations

from common import emit, parse_args, timed, warm_up

from crowdopt.problems import worker_select as P
from crowdopt.registry import RunOptions
from crowdopt.solvers.certify import close
from crowdopt.solvers.worker_select import select_costs_dp, select_prefix, solve_formulation_a


def _exact_row(inst, fast_value, fast_k, t_fast, time_limit):
    t_exact, out = timed(lambda: solve_formulation_a(inst, RunOptions(time_limit=time_limit)), 1)
    row = {"status": out.status, "k_exact": None, "exact_obj": None,
           "bound": out.bound, "gap": None, "build_s": out.details.get("build_s"),
           "nodes": out.details.get("nodes"), "exact_s": t_exact, "exact/fast": t_exact / t_fast}
    if out.solution is not None:
        v = P.evaluate(inst, out.solution).objective
        row.update(k_exact=len(out.solution.selected), exact_obj=v)
        if out.bound is not None:
            row["gap"] = out.bound - v
    if out.status == "optimal":
        assert close(fast_value, row["exact_obj"]) and fast_k == row["k_exact"], row
    elif out.bound is not None:
        assert fast_value <= out.bound + 1e-7 * (1 + abs(out.bound)), row  # bound is valid
    row["equal"] = out.status == "optimal"
    return row


def main() -> None:
    args = parse_args(__doc__)
    warm_up()
    quick = args.quick
    sizes = [(100, 20), (1000, 20)] if quick else [(100, 50), (1000, 50), (10000, 50)]
    limit = 20.0 if quick else 120.0
    rows = []
    for M, K in sizes:
        inst = P.generate(args.seed, workers=M, max_workers=K)
        t_fast, r = timed(lambda inst=inst: select_prefix(inst.scores, inst.max_workers),
                          max(args.repeat, 5))
        row = {"M": M, "K": K, "binaries": M * K + K, "k_fast": r.k, "fast_obj": r.value,
               "fast_s": t_fast}
        row.update(_exact_row(inst, r.value, r.k, t_fast, limit))
        rows.append(row)
    emit("worker_select", rows, list(rows[0]), args,
         note="fast = Algorithm 1; exact = formulation A via HiGHS (gap 0, presolve off) + "
              f"min-|S| pass, build+compile+solve, time limit {limit:g} s; gap = bound - exact_obj;"
              " equal = same objective (1e-7) and same k*")

    cost_sizes = [20, 40] if quick else [20, 40, 80, 120]
    crows = []
    for M in cost_sizes:
        base = P.generate(args.seed + 1, workers=M, max_workers=M, cost_max=10)
        inst = P.make_instance(max_workers=M, scores_=base.scores, costs=base.costs, budget=40)
        t_dp, r = timed(lambda inst=inst: select_costs_dp(inst.scores, inst.costs, inst.budget,
                                                          inst.max_workers), args.repeat)
        row = {"M": M, "C": 40, "k_dp": r.k, "dp_obj": r.value, "dp_s": t_dp}
        row.update(_exact_row(inst, r.value, r.k, t_dp, limit))
        crows.append(row)
    emit("worker_select_costs", crows, list(crows[0]), args,
         note="dp = integer-cost DP (exact); exact = formulation A with sum c_i z_ik <= C y_k "
              "(presolve off), gap 0 + min-|S| pass")


if __name__ == "__main__":
    main()
