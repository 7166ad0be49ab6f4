"""LS_OL (paper 001): learner speed, exact vote accuracy, and labeler-set fast vs exact.

1. Learner steps per second at M = 5..100 and T up to 1e6: the simulator's block mode (runs of
   exploitation steps as one numpy block) and the per-step select/observe API, ratio measured
   in the same run (per-step only up to T = 1e5).
1b. Per estimator (first, pooled, em, and em fitted on every label bought: em_labels='all') at
   M = 5, 20, 100: steps per CPU second, block and per-step, the ratio to the paper's estimator
   in the same run, and the CPU time of one refit of p_hat on the final labels (em: EM from the
   previous fit, linear in the tester labels and the distinct exploitation label vectors).
2. pi(S): the O(h^2) counting recursion vs 2^h enumeration (MV), and meet-in-the-middle vs
   enumeration (WMV), as h grows; values checked equal.
3. labeler-set: top-k fast path vs the vote-margin MILP and exhaustive enumeration (objectives
   checked equal within 1e-7).
"""

from __future__ import annotations

import time

import numpy as np
from common import emit, interleaved, parse_args, timed, warm_up

from crowdopt.policies.lsol import ESTIMATORS, LSOL, Schedule
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


def _cpu(fn, repeat: int) -> tuple[float, object]:
    """Median CPU seconds (process_time: other users' load does not count) and the result."""
    times, out = [], None
    for _ in range(max(1, repeat)):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return float(np.median(times)), out


def _refit_ms(M: int, est: str, T: int, seed: int, em_labels: str = "testers"
              ) -> tuple[float, int]:
    """CPU ms of one p_hat refit on the labels of a T-step run (version bumped to force it)."""
    p = np.random.default_rng(seed).uniform(0.3, 1.0, M)
    lr = LSOL(M, estimator=est, schedule=Schedule(2.0, 2.0), em_labels=em_labels, seed=seed)
    rng = np.random.default_rng(seed)
    truth: list[int] = []
    for t in range(1, T + 1):
        a = lr.select(t)
        if a.kind == "exploit":
            if lr.takes_exploit_labels:
                y = int(rng.integers(2))
                right = rng.random(len(a.labelers)) < p[a.labelers]
                lr.observe(a, np.where(right, y, 1 - y))
            continue
        if a.kind == "explore_new":
            truth.append(int(rng.integers(2)))
        right = rng.random(M) < p
        y = truth[a.tester]
        lr.observe(a, np.where(right, y, 1 - y))
    lr.p_hat()
    n = 20
    t0 = time.process_time()
    for _ in range(n):
        lr.version += 1
        lr.p_hat()
    return 1e3 * (time.process_time() - t0) / n, int(lr.N[: lr.n].sum()) * M


def estimator_rows(args) -> list[dict]:
    T, step_T = (10_000, 5_000) if args.quick else (100_000, 20_000)
    rows = []
    for M in (5, 20, 100):
        p = np.random.default_rng(args.seed).uniform(0.3, 1.0, M)
        base = {}
        for est, lab in [(e, "testers") for e in ESTIMATORS] + [("em", "all")]:
            kw = {"estimator": est, "em_labels": lab, "seed": args.seed}
            tb, res = _cpu(lambda p=p, kw=kw: simulate_run(p, T, **kw), args.repeat)
            ts, _ = _cpu(lambda p=p, kw=kw: simulate_run(p, step_T, block=False, **kw), 1)
            base.setdefault("block", T / tb)
            base.setdefault("step", step_T / ts)
            refit, labels = _refit_ms(M, est, min(T, 20_000), args.seed, lab)
            name = est if lab == "testers" else f"{est}, all labels"
            rows.append({"M": M, "estimator": name, "T": T, "block_steps_per_cpu_s": T / tb,
                         "vs_first_block": (T / tb) / base["block"], "step_T": step_T,
                         "step_steps_per_cpu_s": step_T / ts,
                         "vs_first_step": (step_T / ts) / base["step"],
                         "tester_labels": labels, "refit_cpu_ms": refit,
                         "explore_steps": res["explore_steps"]})
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
    rows = estimator_rows(args)
    emit("lsol_estimators", rows, list(rows[0]), args,
         note="steps per CPU second (time.process_time, so other users' load does not count) "
              "of simulate_run with each estimator; vs_first = ratio to the paper's estimator "
              "in the same run; refit = one p_hat computation on the final labels (em: warm "
              "EM, O(tester labels) per iteration, plus the distinct exploitation label "
              "vectors for `em, all labels`; tester_labels = testers' assignments x M)")
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
