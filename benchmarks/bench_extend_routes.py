"""Models users change: which route `crowdopt.solve_model` took, how often, how long, and how
it agreed with an independent solver; and the cost of knowing what changed on the model as
built.

Usage: python benchmarks/bench_extend_routes.py [--quick] [--examples N] [--seed S]
                                                [--repeat R] [--no-unmodified]
                                                [--only routes|unmodified|speed]

0. `extend_speed`: the model you extend at the registered route's speed. Per problem at the
   sizes of the papers' exact routes (olas-select lp-prefix 20k and 100k points, worker-select
   milp-a 1,000 and 3,000 workers, labeler-set milp M = 10 and 12, cltap head-cover t = 10 and
   20, olas-assign milp-epigraph 100 x 8 and 500 x 12): CPU seconds of the whole call of the
   registered route (`solve(inst, method)`) and of the user route (`build_model` then
   `solve_model`) unchanged, with one added row and with 100, side by side in one run; the
   emitted formulations' user route is the mixed one (registered part emitted, additions
   compiled), the others' a Pyomo compile.

1. `extend_routes`: the campaign of tests/test_extend_differential.py. For every (problem,
   exact method), N random small instances (Hypothesis, seeded by --seed) and every kind of
   modification (tests/extend_oracle.py: extra row, forbidden pair, objective coefficient,
   objective over an Expression, fix, unfix, tighter bound, deactivated row(s), objective
   x 1e-8 and x 1e8, infeasible row, new variable with rows, flipped sense, none), solved by
   `solve_model` and by the independent route (Pyomo writes MPS, a fresh highspy object solves
   it; brute force where tiny). One row per (problem, method, route): solves, disagreements,
   false proofs (a proof where the independent route finds better), CPU seconds of
   `solve_model` (median, total) and of the independent route (median).
2. `extend_unmodified`: per problem, the default model (`build_model(inst)`, method m) at a
   moderate size, R runs (CPU seconds, medians): `solve(inst, m)`'s HiGHS time against
   `solve_model(inst, build_model(inst))`'s (`highs_x`: target <= 1.2, both run the
   formulation's passes on the same matrix; `solve(inst, "exact")` is the same method except
   for olas-assign, whose first exact method, threshold, runs no HiGHS), and what knowing the
   change costs: the snapshot taken at build (`record_s`) and compared at solve
   (`compare_s`), beside the Pyomo build and compile.
Writes benchmarks/results/extend_routes.json and extend_unmodified.json.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))  # the campaign and its independent route

from common import emit, parse_args, warm_up  # noqa: E402

HIGHS_X_TARGET = 1.2
# the default exact model of each problem at a moderate size (and --quick)
UNMODIFIED = {
    "olas-assign": ({"points": 60, "labelers": 8, "noise": "superellipse"},
                    {"points": 20, "labelers": 4, "noise": "superellipse"}),
    "olas-select": ({"points": 30_000, "labelers": 17, "capacity_min": 16, "capacity_max": 16,
                     "noise": "linear", "beta": 0.1},
                    {"points": 3_000, "labelers": 17, "capacity_min": 16, "capacity_max": 16,
                     "noise": "linear", "beta": 0.1}),
    "labeler-set": ({"labelers": 10}, {"labelers": 6}),
    "worker-select": ({"workers": 2_000, "max_workers": 40}, {"workers": 200, "max_workers": 20}),
    "cltap": ({"t": 8, "a": 4, "trend": "inc"}, {"t": 6, "a": 3, "trend": "inc"}),  # the search runs
}


def routes(args) -> list[dict]:
    """Table 1: the campaign, grouped by (problem, method, route)."""
    import logging
    import warnings

    from test_extend_differential import PAIRS, campaign

    logging.getLogger("pyomo").setLevel(logging.CRITICAL)  # the MPS writer's notes
    warnings.simplefilter("ignore")
    cases = campaign(PAIRS, 1 if args.quick else args.examples, False, args.seed)
    groups: dict[tuple, list] = defaultdict(list)
    for c in cases:
        route = "passes" if not c.passes.startswith("one HiGHS solve") else "one plain solve"
        groups[c.problem, c.method, route].append(c)
    rows = []
    for (problem, method, route), cs in sorted(groups.items()):
        kinds = sorted({c.change for c in cs})
        rows.append({"problem": problem, "method": method, "route": route,
                     "changes": "/".join(kinds), "solves": len(cs),
                     "disagree": sum(not c.verdict.agree for c in cs),
                     "false_proofs": sum(c.verdict.false_proof for c in cs),
                     "median_s": statistics.median(c.time_s for c in cs),
                     "total_s": sum(c.time_s for c in cs),
                     "independent_s": statistics.median(c.independent_s for c in cs)})
    total = {"problem": "all", "method": "", "route": "", "changes": "",
             "solves": len(cases), "disagree": sum(r["disagree"] for r in rows),
             "false_proofs": sum(r["false_proofs"] for r in rows),
             "median_s": statistics.median(c.time_s for c in cases),
             "total_s": sum(c.time_s for c in cases),
             "independent_s": statistics.median(c.independent_s for c in cases)}
    return rows + [total]


def unmodified(args) -> list[dict]:
    """Table 2: the model as built, registered route against the user's, CPU seconds."""
    import crowdopt
    from crowdopt.models import snapshot
    from crowdopt.solvers.certify import close
    from crowdopt.solvers.highs import capture

    clock = time.process_time
    rows = []
    for problem, (full, quick) in UNMODIFIED.items():
        params = quick if args.quick else full
        runs: dict[str, list[float]] = defaultdict(list)
        for r in range(max(args.repeat, 1)):
            inst = crowdopt.generate(problem, args.seed + r, **params)
            t0 = clock()
            m = crowdopt.build_model(inst)
            runs["build_s"].append(clock() - t0)
            method = m.crowdopt_build.method
            reg_inst = crowdopt.generate(problem, args.seed + r, **params)  # no cached matrices
            with capture(clock) as cap:
                reg = crowdopt.solve(reg_inst, method)
            runs["reg_highs_s"].append(cap.highs_s)
            t0 = clock()
            snap = snapshot.record(m)  # what build_model did once more, timed alone
            runs["record_s"].append(clock() - t0)
            t0 = clock()
            snapshot.compare(snap, m)
            runs["compare_s"].append(clock() - t0)
            with capture(clock) as cap:
                t0 = clock()
                user = crowdopt.solve_model(inst, m)
                runs["solve_model_s"].append(clock() - t0)
            runs["compile_s"].append(cap.compile_s)
            runs["user_highs_s"].append(cap.highs_s)
            if user.status != reg.status or not close(user.objective, reg.objective):
                raise AssertionError(f"{problem}: solve_model {user}, solve {reg}")
        row = {"problem": problem, "method": method, "passes": user.details["passes"],
               **{k: statistics.median(v) for k, v in runs.items()}}
        row["highs_x"] = row["user_highs_s"] / max(row["reg_highs_s"], 1e-9)
        row["criteria"] = "pass" if row["highs_x"] <= HIGHS_X_TARGET else "FAIL"
        rows.append(row)
    return rows


# the extended model's speed: (problem, method, params, quick params, the variable rows use)
SPEED = [
    ("olas-select", "lp-prefix", {"points": 20_000, "labelers": 17, "capacity_min": 16,
                                  "capacity_max": 16}, {"points": 2_000, "labelers": 5}, "s"),
    ("olas-select", "lp-prefix", {"points": 100_000, "labelers": 17, "capacity_min": 16,
                                  "capacity_max": 16}, {"points": 5_000, "labelers": 5}, "s"),
    ("worker-select", "milp-a", {"workers": 1_000, "max_workers": 40},
     {"workers": 200, "max_workers": 10}, "z"),
    ("worker-select", "milp-a", {"workers": 3_000, "max_workers": 40},
     {"workers": 400, "max_workers": 10}, "z"),
    # (the default generator's margin MILP takes about 50 s CPU at M = 14 and minutes past
    # it: M = 10 and 12 put more weight on what the user route adds)
    ("labeler-set", "milp", {"labelers": 10}, {"labelers": 6}, "x"),
    ("labeler-set", "milp", {"labelers": 12}, {"labelers": 8}, "x"),
    ("cltap", "head-cover", {"t": 10, "a": 4, "trend": "inc"}, {"t": 6, "a": 3, "trend": "inc"},
     "u"),
    ("cltap", "head-cover", {"t": 20, "a": 4, "trend": "inc"}, {"t": 8, "a": 3, "trend": "inc"},
     "u"),
    ("olas-assign", "milp-epigraph", {"points": 100, "labelers": 8},
     {"points": 30, "labelers": 4}, "z"),
    ("olas-assign", "milp-epigraph", {"points": 500, "labelers": 12},
     {"points": 60, "labelers": 5}, "z"),
]
EMITTED_X, EMITTED_100_X, PYOMO_X = 1.5, 2.0, 1.1  # the targets of user / registered CPU
# the LP-like formulations whose answer added rows of this kind barely move: the targets with one
# and 100 added rows apply to them; elsewhere (head-cover, emitted too) rows that cap prefixes
# cut off the registered route's plan and the user solves another MILP, so only "unchanged"
# compares like with like
ROW_TARGETS = {("olas-select", "lp-prefix"), ("worker-select", "milp-a")}


def _add_rows(m, name: str, count: int, rng) -> None:
    """`count` rows, each capping the sum of 3 entries of the decision variable `name` at 2
    (the entries drawn with `rng`): what a user adds."""
    import pyomo.environ as pyo

    var = getattr(m, name)
    keys = list(var.index_set())
    picks = [[keys[int(k)] for k in rng.choice(len(keys), min(3, len(keys)), replace=False)]
             for _ in range(count)]
    m.user_rows = pyo.Constraint(range(count), rule=lambda m, r: sum(
        var[k] for k in picks[r]) <= 2)


def speed(args) -> list[dict]:
    """Table 3: CPU seconds of the registered route (`solve(inst, method)`) beside the user
    route (`build_model` + `solve_model`) unchanged, with one added row and with 100, in one
    run after a warm-up; medians of --repeat."""
    import numpy as np

    import crowdopt

    clock = time.process_time
    rows = []
    for problem, method, full, quick, var in SPEED:
        params = quick if args.quick else full
        inst = crowdopt.generate(problem, args.seed, **params)
        crowdopt.solve(inst, method)  # warm-up: imports, first calls
        runs: dict[str, list[float]] = defaultdict(list)
        answers: dict[str, object] = {}
        for _ in range(max(args.repeat, 1)):
            t0 = clock()
            reg = crowdopt.solve(inst, method)
            runs["registered_s"].append(clock() - t0)
            for label, count in (("unchanged_s", 0), ("one_row_s", 1), ("rows_100_s", 100)):
                t0 = clock()
                m = crowdopt.build_model(inst, method)
                if count:
                    _add_rows(m, var, count, np.random.default_rng(args.seed))
                r = crowdopt.solve_model(inst, m)
                runs[label].append(clock() - t0)
                answers[label] = r
        row = {"problem": problem, "method": method,
               "size": ", ".join(f"{k}={v}" for k, v in params.items() if k != "trend"),
               "route": answers["one_row_s"].details["route"],
               **{k: statistics.median(v) for k, v in runs.items()}}
        base = max(row["registered_s"], 1e-9)
        for label in ("unchanged", "one_row", "rows_100"):
            row[f"{label}_x"] = row[f"{label}_s"] / base
        emitted = (problem, method) in ROW_TARGETS
        ok = (row["unchanged_x"] <= (EMITTED_X if emitted else PYOMO_X)
              and (not emitted or (row["one_row_x"] <= EMITTED_X
                                   and row["rows_100_x"] <= EMITTED_100_X)))
        if answers["unchanged_s"].status != reg.status or (
                reg.objective is not None and abs(answers["unchanged_s"].objective
                                                  - reg.objective) > 1e-7 * abs(reg.objective)):
            raise AssertionError(f"{problem} {method}: solve_model {answers['unchanged_s']}, "
                                 f"solve {reg}")
        row["criteria"] = "pass" if ok else "FAIL"
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> None:
    def extend(p):
        p.add_argument("--examples", type=int, default=5,
                       help="Hypothesis examples (instances) per (problem, method)")
        p.add_argument("--no-unmodified", action="store_true",
                       help="only the campaign table")
        p.add_argument("--only", choices=["routes", "unmodified", "speed"], default=None,
                       help="one table only")

    args = parse_args(__doc__.splitlines()[0], extend=extend, argv=argv)
    warm_up()
    if args.only in (None, "speed"):
        emit("extend_speed", speed(args),
             ["problem", "method", "size", "route", "registered_s", "unchanged_s",
              "one_row_s", "rows_100_s", "unchanged_x", "one_row_x", "rows_100_x", "criteria"],
             args, note=f"CPU seconds of the whole call, medians of {args.repeat} after a "
                        "warm-up: registered = solve(inst, method); the user route = "
                        "build_model + solve_model, unchanged, with one added row, with 100; "
                        "x = user / registered (targets: lp-prefix and milp-a "
                        f"<= {EMITTED_X} unchanged and with one row, <= {EMITTED_100_X} with 100; "
                        f"the others <= {PYOMO_X} unchanged: there added rows make another "
                        "MILP).")
        if args.only == "speed":
            return
    if args.only == "unmodified":
        args.no_unmodified = False
    if args.only in (None, "routes"):
        emit("extend_routes", routes(args),
             ["problem", "method", "route", "changes", "solves", "disagree", "false_proofs",
              "median_s", "total_s", "independent_s"], args,
             note="route: the formulation's passes (the model as built, or a change they stay "
                  "exact under) or one plain HiGHS solve of the model as given; times: CPU "
                  "seconds of solve_model (median, total) and of the independent route "
                  "(median).")
    if not args.no_unmodified and args.only in (None, "unmodified"):
        emit("extend_unmodified", unmodified(args),
             ["problem", "method", "passes", "reg_highs_s", "user_highs_s", "highs_x",
              "build_s", "record_s", "compare_s", "compile_s", "solve_model_s", "criteria"],
             args, note=f"CPU seconds, medians of {args.repeat}; highs_x = solve_model's HiGHS "
                        f"time / solve's (target <= {HIGHS_X_TARGET}); record_s, compare_s: the "
                        "snapshot build_model takes and solve_model compares.")


if __name__ == "__main__":
    main()
