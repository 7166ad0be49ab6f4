"""LS_OL (paper 001): learner speed, exact vote accuracy, and labeler-set fast vs exact.

1. Learner steps per second at M = 5..100 and T up to 1e6: the simulator's block mode (runs of
   exploitation steps as one numpy block) and the per-step select/observe API, ratio measured
   in the same run (per-step only up to T = 1e5).
2. pi(S): the O(h^2) counting recursion vs 2^h enumeration (MV), and meet-in-the-middle vs
   enumeration (WMV), as h grows; values checked equal.
3. labeler-set: top-k fast path vs the vote-margin MILP and exhaustive enumeration (objectives
   checked equal within 1e-7).
"""

from __future__ import annotations

import numpy as np
from common import emit, interleaved, parse_args, timed, warm_up

from crowdopt.problems import labeler_set as P
from crowdopt.problems.vote_accuracy import pi_mv, pi_mv_enumerate, pi_wmv, pi_wmv_enumerate
from crowdopt.registry import RunOptions
from crowdopt.sim.lsol_sim import simulate_run
from crowdopt.solvers.certify import close
from crowdopt.solvers.labeler_set import select_top_k, solve_enumeration, solve_milp


def learner_rows(args) -> list[dict]:
    Ms = [5, 20, 100] if args.quick else [5, 10, 20, 50, 100]
    Ts = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    rows = []
    for M in Ms:
        p = np.random.default_rng(args.seed).uniform(0.3, 1.0, M)
        for T in Ts:
            step_T = min(T, 10_000 if args.quick else 100_000)
            timing = interleaved(
                {"block": lambda p=p, T=T: simulate_run(p, T, seed=args.seed),
                 "step": lambda p=p, T=step_T: simulate_run(p, T, seed=args.seed, block=False)},
                1)
            (t_block, res), (t_step, _) = timing["block"], timing["step"]
            row = {"M": M, "T": T, "explore_steps": res["explore_steps"],
                   "block_steps_per_s": T / t_block, "block_s": t_block}
            row.update(step_T=step_T, step_steps_per_s=step_T / t_step,
                       block_vs_step=(T / t_block) / (step_T / t_step))
            rows.append(row)
    return rows


def pi_rows(args) -> list[dict]:
    hs = [4, 8, 12] if args.quick else [4, 8, 12, 14, 16]
    rows = []
    rng = np.random.default_rng(args.seed)
    for h in hs:
        p = rng.uniform(0.05, 0.95, h)
        timing = interleaved({"rec": lambda p=p: pi_mv(p), "enum": lambda p=p: pi_mv_enumerate(p),
                              "mitm": lambda p=p: pi_wmv(p),
                              "wenum": lambda p=p: pi_wmv_enumerate(p)},
                             args.repeat, {"enum": 1, "wenum": 1})
        (t_rec, a), (t_enum, b) = timing["rec"], timing["enum"]
        (t_mitm, c), (t_wenum, d) = timing["mitm"], timing["wenum"]
        assert close(a, b) and close(c, d), (a, b, c, d)
        rows.append({"h": h, "mv_recursion_s": t_rec, "mv_enumeration_s": t_enum,
                     "mv_enum/recursion": t_enum / t_rec, "wmv_mitm_s": t_mitm,
                     "wmv_enumeration_s": t_wenum, "wmv_enum/mitm": t_wenum / t_mitm,
                     "equal": True})
    for h in ([100, 500] if args.quick else [100, 500, 2000]):
        p = rng.uniform(0.05, 0.95, h)
        t_rec, _ = timed(lambda p=p: pi_mv(p), args.repeat)
        rows.append({"h": h, "mv_recursion_s": t_rec})
    return rows


def selection_rows(args) -> list[dict]:
    Ms = [5, 8] if args.quick else [5, 8, 10, 12]
    rows = []
    for M in Ms:
        for costs in ("none", "random"):
            inst = P.generate(args.seed, labelers=M, costs=costs)
            timing = interleaved({"fast": lambda inst=inst: select_top_k(inst),
                                  "enum": lambda inst=inst: solve_enumeration(inst),
                                  "milp": lambda inst=inst: solve_milp(inst, RunOptions())},
                                 args.repeat, {"enum": 1, "milp": 1})
            (t_fast, sol), (t_enum, en), (t_milp, mi) = (
                timing["fast"], timing["enum"], timing["milp"])
            fast = P.evaluate(inst, sol).objective
            exact = P.evaluate(inst, mi.solution).objective
            assert close(exact, P.evaluate(inst, en.solution).objective)
            if costs == "none":
                assert close(fast, exact)
            rows.append({"M": M, "costs": costs, "fast_obj": fast, "exact_obj": exact,
                         "fast_s": t_fast, "milp_s": t_milp, "enum_s": t_enum,
                         "milp/fast": t_milp / t_fast, "enum/fast": t_enum / t_fast,
                         "milp_nodes": mi.details.get("nodes")})
    return rows


def main() -> None:
    args = parse_args(__doc__)
    warm_up()
    rows = learner_rows(args)
    emit("lsol_learner", rows, list(rows[0]), args,
         note="block = exploitation runs simulated as numpy blocks (same trajectory as the "
              "per-step select/observe loop, see tests); step = one select/observe per task")
    rows = pi_rows(args)
    emit("lsol_pi", rows, list(rows[0]), args,
         note="recursion = O(h^2) counting DP; enumeration = 2^h patterns in Python; "
              "mitm = meet-in-the-middle WMV (2 x 2^(h/2) patterns)")
    rows = selection_rows(args)
    emit("lsol_labeler_set", rows, list(rows[0]), args,
         note="fast = best odd top-k (exact without costs); milp = vote-margin MILP, HiGHS "
              "gap 0; enum = all 2^M - 1 sets (vectorized counting DP)")


if __name__ == "__main__":
    main()
