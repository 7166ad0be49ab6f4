"""Pyomo -> HiGHS routes on OLAS Model 2 MILPs: our adapter vs pyomo.contrib.solver's Highs.

Route A (crowdopt.solvers.highs): LinearStandardFormCompiler -> arrays -> highspy.
Route B: pyomo.contrib.solver.solvers.highs.Highs (the new Pyomo interface, persistent).
Same models, same run; prints build, translate+solve times and the ratio B/A.
"""

from __future__ import annotations

from common import emit, interleaved, parse_args, warm_up

from crowdopt.models.olas_assign import build_model2
from crowdopt.problems.olas_assign import generate
from crowdopt.solvers.certify import close
from crowdopt.solvers.highs import solve_model


def route_b(model):
    from pyomo.contrib.solver.solvers.highs import Highs

    opt = Highs()
    res = opt.solve(model, load_solutions=False, raise_exception_on_nonoptimal_result=False,
                    rel_gap=0.0, abs_gap=0.0, threads=1)
    return res.incumbent_objective, res.objective_bound


def main() -> None:
    args = parse_args(__doc__)
    warm_up()
    route_b(build_model2(generate(args.seed, points=15, labelers=3)))  # warm the other route
    sizes = [(15, 3), (60, 8), (120, 12)] if args.quick else [(15, 3), (60, 8), (120, 12), (260, 17)]
    rows = []
    for n, m in sizes:
        inst = generate(args.seed, points=n, labelers=m, noise="superellipse")
        timing = interleaved({"build": lambda inst=inst: build_model2(inst),
                              "a": lambda inst=inst: solve_model(build_model2(inst)),
                              "b": lambda inst=inst: route_b(build_model2(inst))}, args.repeat)
        (t_build, _), (t_a, ra), (t_b, rb) = timing["build"], timing["a"], timing["b"]
        assert close(ra.objective, rb[0], 1e-6), (ra.objective, rb)
        rows.append({"N": n, "M": m, "nonzeros": 3 * n * m, "build_s": t_build,
                     "adapter_s": t_a - t_build, "adapter_compile_s": ra.compile_s,
                     "contrib_highs_s": t_b - t_build, "ratio_contrib/adapter":
                     (t_b - t_build) / max(t_a - t_build, 1e-9), "objective": ra.objective})
    emit("highs_routes", rows, list(rows[0]), args,
         note="times exclude the Pyomo model build (same for both routes); median of --repeat runs")


if __name__ == "__main__":
    main()
