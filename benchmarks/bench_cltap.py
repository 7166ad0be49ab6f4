"""CL-TAP (paper 003): certification at scale, exact MILP vs CBP, column-generation masters.

Usage: python benchmarks/bench_cltap.py [--quick] [--repeat R] [--seed S] [--bounds-table]
       python benchmarks/bench_cltap.py --frontier [--cpu-limit S] [--wall-factor F] [--seeds N]
                                        [--a 3,10] [--trends dec,inc,flat] [--t0 5] [--t-max 320]
                                        [--t-list 50] [--methods head-cover]
       python benchmarks/bench_cltap.py --ceiling [--seeds N] [--shapes 20x3,30x3,...]
                                        [--trends dec,inc,nonmono,flat] [--exact-limit S]
       python benchmarks/bench_cltap.py --large-ceiling [--cells 100x10,200x20,1000x100]
                                        [--trends inc] [--seed 0] [--nodes 400|N1,N2,N3]
                                        [--ls-steps 2000] [--ls-time 120]
       python benchmarks/bench_cltap.py --level-tree [--cells 200x20,1000x100] [--trends inc]
                                        [--seed 0] [--ratio 0.95] [--nodes 20000] [--cap 3600]
                                        [--recent 3]
(--level-tree: the work of a certificate at a given ratio when its level is the only one
tried: the tree of boxes (`cltap_branch.level_tree`) that refutes the one level best plan /
--ratio from the root box, no other level tested, within --nodes node LPs (--cap seconds a
safety cap): its outcome, bound (valid at any stop), node LPs, leaves, those still open and
how many annotators a leaf's box narrows on average; the best plan is best-of's (the local-search steps of
`reproduce cltap --scale table3`) from the best construction; the LPs keep its annotators one
by one; --recent: the refuting prices each box tries before its LP (config-branch keeps 3).
Written to benchmarks/results/cltap_level_tree.json)
(--large-ceiling: at the Table 3 sizes (b = 2t), where the optimum is unknown, where it must
lie and which side is loose: the tightest cheap bound, the root configuration LP's own bound
(`cltap_branch.branch_bound` without branching, levels bisected to 1e-5 from the covering
bound, which it never exceeds: the best that LP says before any prefix length is fixed), the bound with branching on prefix lengths within --nodes
node LPs, and the best plan of every construction, of the best-of local search from it
(--ls-steps steps, --ls-time a safety cap) and of the branching's worlds; per bound the
certified ratio best plan / bound. Written to benchmarks/results/cltap_large_ceiling.json)
(--bounds-table: only Table 4, written to benchmarks/results/cltap_bounds.json)
(--ceiling: where the optimum is known (head-cover proves it, without the configuration-LP
stage of its start, so the optimum is not proven by a bound under test), each bound's
OPT / bound, the tightest older bound's (best-old) and the tightest bound's (best-bound), and
the best-of primal's value / OPT per shape and trend, and their means over every instance: how far each side of a certificate is from the optimum; written to
benchmarks/results/cltap_ceiling.json)
(--frontier: only the exact frontier, written to benchmarks/results/cltap_frontier.json (with
--t-list: cltap_frontier_tLIST.json): for
each a, trend and exact method (milp-compact, head-cover; their size guards bypassed), t doubles
from t0 (K = t, b = 2t) until the method no longer proves optimality of every seed within
--cpu-limit CPU seconds (process_time, one HiGHS thread; HiGHS's own limit is wall-clock, set to
cpu-limit x wall-factor: raise the factor on a loaded machine). Prints, per method, the largest
t proven, its CPU time, and the gap (bound - primal) / bound at the first t not proven. "flat":
constant curves, p_jk = p_j1 (the dec generator with tau = 100 and t-bar beyond 10^5).
--t-list replaces the doubling by the given sizes, e.g. `--t-list 50 --seeds 3 --a 3`.)
Table 1: certify (t, a) = (1000, 100), b = 3t: CBP time, closed-form bound time, ratio LB/UB,
and the whole `crowdopt certify` (every fast method incl. CBP + 2 s local search, every bound).
Table 2: the compact MILP (11)-(17) at gap 0 (HiGHS, 60 s limit, build included) on the largest
sizes it proves vs CBP: time ratio MILP/CBP and value ratio CBP/OPT.
Table 3: column generation on the faithful master (18)-(23): time per iteration with the master
kept live in HiGHS (columns added, primal simplex warm start) vs rebuilt through Pyomo each
iteration, same instance, each run to convergence from CBP's columns (their degenerate duals
differ, so the round counts may too).
Table 4: the new bounds (covering, covering-dp, counting, pairing, first-labels, config-lp,
config-branch) and constructions (cbp-phi, alloc-lpt, layered, best-of fast with a 2 s budget,
which resumes layered's bisection where the layered row left it) on the
Table 3 sizes, b = 2t: value, wall and CPU time, time relative to CBP and to column generation
(the paper's bound; 10 s limit, where it applies; config-branch: 60 s, 400 node LPs), and for a
bound the certified ratio best plan / bound (the best plan of the row's constructions and of
config-branch); config-lp/former-start: config-lp from the least of covering, counting and
pairing (its start before the first-labels bound joined it), in the same run.
Writes benchmarks/results/cltap.json.
"""

from __future__ import annotations

import json
import math
import sys
import time

import numpy as np
from common import (
    RESULTS,
    cached_versions,
    format_table,
    list_arg,
    parse_args,
    positive_int,
    shapes_arg,
    timed,
)

from crowdopt.api import certify
from crowdopt.problems import cltap as P
from crowdopt.registry import RunOptions, get_problem
from crowdopt.solvers.cltap import solve_milp
from crowdopt.solvers.cltap_cbp import cbp
from crowdopt.solvers.cltap_colgen import closed_form_bound, column_generation


def bench_certify(args, sizes):
    rows = []
    for t, a in sizes:
        for trend in ("dec", "inc"):
            inst = P.generate(args.seed, t=t, a=a, trend=trend, budget_factor=3.0)
            cbp_s, sol = timed(lambda inst=inst: cbp(inst), args.repeat)
            ub_s, ub = timed(lambda inst=inst: closed_form_bound(inst), args.repeat)
            lb = P.evaluate(inst, sol).objective
            t0 = time.perf_counter()
            cert = certify(inst, time_limit=2.0)
            cert_s = time.perf_counter() - t0
            rows.append({"t": t, "a": a, "b": inst.b, "trend": trend, "cbp_s": cbp_s,
                         "bound_s": ub_s, "cbp+bound_s": cbp_s + ub_s, "lb": lb, "ub": ub,
                         "ratio": lb / ub if ub > 0 else 1.0, "certify_s": cert_s,
                         "certify_ratio": cert["ratio"], "certify_primal": cert["primal_source"],
                         "certified": cert["certified"]})
    return rows


def bench_milp(args, sizes):
    rows = []
    for t, a in sizes:
        for trend in ("dec", "inc"):
            inst = P.generate(args.seed, t=t, a=a, trend=trend)
            cbp_s, sol = timed(lambda inst=inst: cbp(inst), args.repeat)
            t0 = time.perf_counter()
            out = solve_milp(inst, RunOptions(time_limit=60.0))
            milp_s = time.perf_counter() - t0
            v_cbp = P.evaluate(inst, sol).objective
            v_opt = P.evaluate(inst, out.solution).objective if out.solution is not None else None
            rows.append({"t": t, "a": a, "trend": trend, "binaries": t * a * inst.K,
                         "milp_status": out.status, "milp_s": milp_s, "cbp_s": cbp_s,
                         "time_ratio": milp_s / cbp_s, "opt": v_opt, "bound": out.bound,
                         "cbp": v_cbp,
                         "value_ratio": (1.0 if out.bound <= 1e-12 else v_cbp / out.bound)})
    return rows


def bench_colgen(args, cases):
    rows = []
    for t, a, trend in cases:
        inst = P.generate(args.seed, t=t, a=a, trend=trend)
        # unseeded (CBP columns only), so both masters go through a real number of rounds
        fast = column_generation(inst, engine="highspy", seed_closed_form=False)
        rounds = len(fast.rounds)
        slow = column_generation(inst, engine="pyomo", seed_closed_form=False, time_limit=120.0)
        per_fast = np.mean([r.master_s for r in fast.rounds])
        per_slow = np.mean([r.master_s for r in slow.rounds])
        rows.append({"t": t, "a": a, "trend": trend, "rounds": rounds,
                     "rounds_pyomo": len(slow.rounds), "highspy_ms/it": 1e3 * per_fast,
                     "pyomo_ms/it": 1e3 * per_slow, "speedup": per_slow / per_fast,
                     "pricing_ms/it": 1e3 * np.mean([r.pricing_s for r in fast.rounds]),
                     "total_s": fast.time_s, "total_pyomo_s": slow.time_s,
                     "bound": fast.bound, "bound_pyomo": slow.bound,
                     "closed_form": closed_form_bound(inst), "converged": fast.converged})
    return rows


def config_lp_former_start(inst: P.CltapInstance, limit: float):
    """config-lp started, as it was before it took `cheap_upper_bound`, at the least of the
    covering, counting and pairing bounds (no first-labels bound, no zero-optimum check first)."""
    from crowdopt.solvers import cltap_bounds as CB
    from crowdopt.solvers.cltap import config_lp_from
    from crowdopt.solvers.cltap_construct import cheap_bound

    t0 = time.perf_counter()
    hi, src = cheap_bound(inst)
    pairing = CB.pairing_bound(inst, hi=hi)
    if pairing.value < hi:
        hi, src = pairing.value, pairing.source
    return config_lp_from(inst, hi, src, limit, t0)


def bench_bounds_table(args, sizes):
    """One row per (size, trend, method): value (bound or min c'), wall and CPU time, time /
    CBP's, time / column generation's (the paper's UB; None where its master is too large).
    `config-lp/former-start` is config-lp from the bound it started at before, in the same run."""
    spec = get_problem("cltap")
    names = ["cbp", "cbp-phi", "alloc-lpt", "layered", "best-of", "lp-closed-form", "column-generation",
             "covering", "covering-dp", "counting", "pairing", "first-labels",
             "config-lp", "config-lp/former-start", "config-branch"]
    limits = {"best-of": 2.0, "config-branch": 60.0}
    rows = []
    for t, a in sizes:
        for trend in ("dec", "inc"):
            inst = P.generate(args.seed, t=t, a=a, trend=trend)
            res, plans = {}, []
            for name in names:
                m = spec.method(name.split("/")[0])
                if m.refuses(inst) is not None:
                    continue
                limit = limits.get(name, 10.0)
                reps = 1 if name in ("layered", "best-of", "column-generation") or name.startswith(
                    "config-") else args.repeat
                if name == "config-lp/former-start":
                    def run(inst=inst, limit=limit):
                        return config_lp_former_start(inst, limit).value
                else:
                    def run(m=m, inst=inst, limit=limit, plans=plans):
                        out = m.run(inst, RunOptions(time_limit=limit))
                        if out.solution is not None:
                            plans.append(P.evaluate(inst, out.solution).objective)
                        return out.bound if m.kind == "bound" else P.evaluate(
                            inst, out.solution).objective
                c0 = time.process_time()
                sec, val = timed(run, reps)
                res[name] = (m.kind, val, sec, (time.process_time() - c0) / reps)
            base, cg = res["cbp"][2], res.get("column-generation", (None, None, None))[2]
            best = max(plans)
            for name, (kind, val, sec, cpu) in res.items():
                rows.append({"t": t, "a": a, "trend": trend, "method": name, "kind": kind,
                             "value": val, "time_s": sec, "cpu_s": cpu,
                             "x_cbp": sec / base if base else None,
                             "x_colgen": sec / cg if cg else None,
                             "best/bound": (best / val if kind == "bound" and val > 0 else None)})
    return rows


CEILING_BOUNDS = ("lp-closed-form", "covering", "covering-dp", "counting", "pairing",
                  "first-labels", "config-lp", "config-branch")


def bench_ceiling(argv: list[str]) -> None:
    """Each bound's OPT / bound and the best-of primal's value / OPT where head-cover proves the
    optimum (see the module docstring)."""
    import argparse

    from crowdopt.solvers import cltap_exact
    from crowdopt.solvers.cltap_construct import fast

    ap = argparse.ArgumentParser(prog="bench_cltap.py --ceiling")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--shapes", default="20x3,30x3,50x3,20x5,30x5,20x10")
    ap.add_argument("--trends", default="dec,inc,nonmono,flat")
    ap.add_argument("--exact-limit", type=float, default=300.0)
    args = ap.parse_args(argv)
    spec = get_problem("cltap")
    cltap_exact.BRANCH_NODES = 0  # head-cover's own proof, not the bound under test
    runs, unproven = [], []
    for shape in args.shapes.split(","):
        t, a = (int(x) for x in shape.split("x"))
        for trend in args.trends.split(","):
            for seed in range(args.seeds):
                inst = frontier_instance(seed, t, a, trend)
                ref = cltap_exact.solve_head_cover(inst, RunOptions(time_limit=args.exact_limit))
                if str(ref.status) != "optimal":
                    unproven.append(f"{trend} t={t} a={a} seed {seed}")
                    continue
                opt = P.evaluate(inst, ref.solution).objective
                row = {"t": t, "a": a, "trend": trend, "seed": seed, "opt": opt,
                       "best-of": P.evaluate(inst, fast(inst, time_limit=2.0, seed=seed,
                                                        max_steps=100)).objective}
                for name in CEILING_BOUNDS:
                    m = spec.method(name)
                    if m.refuses(inst) is not None:
                        continue
                    c0 = time.process_time()
                    out = m.run(inst, RunOptions(time_limit=60.0))
                    row[name] = out.bound
                    row[name + "_cpu_s"] = time.process_time() - c0
                runs.append(row)
                print(format_table([row], list(row)), file=sys.stderr)

    def ratio(x: float, y: float) -> float:
        return 1.0 if abs(x - y) <= 1e-7 * max(abs(x), abs(y), 1e-300) else x / y

    summary = []
    groups = sorted({(r["t"], r["a"], r["trend"]) for r in runs})
    for key in groups + [None, "positive"]:
        # "all": every instance; "OPT > 0": without those whose optimum is 0 (every valid
        # bound meets it: they only raise the mean)
        rs = [r for r in runs if key is None or (key == "positive" and r["opt"] > 0)
              or (r["t"], r["a"], r["trend"]) == key]
        if not rs:
            continue
        name = {None: "all", "positive": "OPT > 0"}.get(key) if not isinstance(key, tuple) \
            else f"t={key[0]} a={key[1]} {key[2]}"
        out = {"shape": name,
               "n": len(rs), "best/opt": float(np.mean([ratio(r["best-of"], r["opt"])
                                                         for r in rs]))}
        for name in CEILING_BOUNDS:
            vals = [ratio(r["opt"], r[name]) for r in rs if r.get(name) is not None]
            out[name] = float(np.mean(vals)) if vals else None
        # the tightest of the older bounds, and of all (the new one included), per instance
        out["best-old"] = float(np.mean([ratio(r["opt"], min(
            r[n] for n in CEILING_BOUNDS if n != "config-branch" and r.get(n) is not None))
            for r in rs]))
        out["best-bound"] = float(np.mean([ratio(r["opt"], min(
            r[n] for n in CEILING_BOUNDS if r.get(n) is not None)) for r in rs]))
        out["config-branch_cpu_s"] = float(np.mean([r["config-branch_cpu_s"] for r in rs
                                                    if "config-branch_cpu_s" in r] or [0.0]))
        summary.append(out)
    print(f"## bound ceilings where the optimum is known ({args.seeds} seed(s) per shape and "
          "trend; OPT / bound per bound, best-of / OPT; means; 1 = meets the optimum)")
    print(format_table(summary, ["shape", "n", "best/opt", *CEILING_BOUNDS, "best-old",
                                 "best-bound", "config-branch_cpu_s"]))
    if unproven:
        print(f"(not proven by head-cover within {args.exact_limit:g} s, left out: "
              + "; ".join(unproven) + ")")
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "cltap_ceiling.json"
    path.write_text(json.dumps({"topic": "cltap-ceiling", "args": vars(args), "runs": runs,
                                "summary": summary, "unproven": unproven,
                                "versions": cached_versions()}, indent=1, default=str))
    print(f"\n(written {path.relative_to(RESULTS.parent.parent)})")


def bench_large_ceiling(argv: list[str]) -> None:
    """Where the optimum lies at the Table 3 sizes: cheap bound, root configuration LP,
    configuration LP with branching, and the best plans (see the module docstring)."""
    import argparse

    from crowdopt.solvers.cltap_bounds import covering_bound
    from crowdopt.solvers.cltap_branch import branch_bound
    from crowdopt.solvers.cltap_construct import constructions, fast
    from crowdopt.solvers.cltap_exact import cheap_upper_bound

    ap = argparse.ArgumentParser(prog="bench_cltap.py --large-ceiling")
    ap.add_argument("--cells", default="100x10,200x20,1000x100")
    ap.add_argument("--trends", default="inc")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--nodes", default="400",
                    help="node LPs of the branching: one number, or one per cell (comma list)")
    ap.add_argument("--ls-steps", type=int, default=2000, help="local-search steps of best-of")
    ap.add_argument("--ls-time", type=float, default=120.0, help="its safety cap, seconds")
    ap.add_argument("--cap", type=float, default=3600.0, help="safety cap of each LP search, s")
    args = ap.parse_args(argv)
    rows = []
    cells = args.cells.split(",")
    nodes = [int(x) for x in args.nodes.split(",")]
    nodes = nodes * len(cells) if len(nodes) == 1 else nodes
    for cell, cell_nodes in zip(cells, nodes, strict=True):
        t, a = (int(x) for x in cell.split("x"))
        for trend in args.trends.split(","):
            inst = P.generate(args.seed, t=t, a=a, trend=trend)
            row: dict = {"t": t, "a": a, "trend": trend, "nodes": cell_nodes}
            c0 = time.process_time()
            hi, src = cheap_upper_bound(inst)
            cands = constructions(inst, theta=hi)
            scores = {k: P.evaluate(inst, s).objective for k, s in cands.items()}
            name = max(scores, key=lambda k: scores[k])
            start, lo = cands[name], scores[name]
            row.update(cheap=hi, cheap_source=src.split(" (")[0], construct=lo,
                       construct_name=name, cheap_cpu_s=time.process_time() - c0)
            c0 = time.process_time()
            ls = fast(inst, time_limit=args.ls_time, seed=args.seed, target=hi,
                      max_steps=args.ls_steps)
            row.update(ls=P.evaluate(inst, ls).objective, ls_cpu_s=time.process_time() - c0)
            plans = [lo, row["ls"]]
            # the root LP bisected from the covering bound (its special price min(phi, theta) /
            # theta: the LP is never above it), so that its own value shows even where it is
            # above the cheap bound; the branching from the cheap bound, as certify runs it
            cover = covering_bound(inst).value
            row["covering"] = cover
            for key, top, kw in (("root", cover, {"branching": False, "max_nodes": 10**6,
                                                  "search_steps": 0}),
                                 ("branch", hi, {"max_nodes": cell_nodes})):
                c0 = time.process_time()
                res, plan = branch_bound(inst, lo, top, start=start, time_limit=args.cap, **kw)
                row[key] = res.value
                row[key + "_nodes"] = res.details.get("nodes", 0)
                row[key + "_stop"] = res.details.get("stopped", "")
                row[key + "_cpu_s"] = time.process_time() - c0
                row[key + "_levels"] = res.details.get("levels", [])  # the JSON's, not printed
                if plan is not None:
                    plans.append(P.evaluate(inst, plan).objective)
                    row[key + "_plan"] = plans[-1]
            best = max(plans)
            row["best_plan"] = best
            for key in ("covering", "cheap", "root", "branch"):
                row[f"best/{key}_%"] = 100.0 * best / row[key] if row[key] > 0 else 100.0
            rows.append(row)
            shown = [k for k in row if not k.endswith("_levels")]
            print(format_table([row], shown), file=sys.stderr)
    cols = ["t", "a", "trend", "covering", "cheap", "cheap_source", "root", "root_nodes", "root_cpu_s",
            "branch", "nodes", "branch_nodes", "branch_cpu_s", "construct", "ls", "branch_plan",
            "best_plan", "best/covering_%", "best/cheap_%", "best/root_%", "best/branch_%"]
    print(f"## Table 3 sizes (b = 2t, seed {args.seed}): where the optimum lies: best_plan <= "
          f"OPT <= min(cheap, root, branch); root = the configuration LP without branching, "
          "branch = with branching on prefix lengths (at most `nodes` node LPs)")
    print(format_table(rows, cols))
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "cltap_large_ceiling.json"
    path.write_text(json.dumps({"topic": "cltap-large-ceiling", "args": vars(args), "runs": rows,
                                "versions": cached_versions()}, indent=1, default=str))
    print(f"\n(written {path.relative_to(RESULTS.parent.parent)})")


def _ratio_arg(text: str) -> float:
    """A ratio in (0, 1] for argparse (a one-line usage error otherwise)."""
    import argparse

    try:
        r = float(text)
    except ValueError:
        r = math.nan
    if not 0 < r <= 1:
        raise argparse.ArgumentTypeError(f"expected a ratio in (0, 1], found {text!r}")
    return r


def bench_level_tree(argv: list[str]) -> None:
    """The tree that refutes one level best plan / ratio (see the module docstring)."""
    import argparse

    from crowdopt.experiments.cltap_repro import WORK_STEPS
    from crowdopt.solvers import cltap_branch as B
    from crowdopt.solvers.cltap_branch import level_tree
    from crowdopt.solvers.cltap_construct import fast
    from crowdopt.solvers.cltap_exact import cheap_upper_bound

    ap = argparse.ArgumentParser(prog="bench_cltap.py --level-tree")
    ap.add_argument("--cells", default="200x20,1000x100", type=shapes_arg)
    ap.add_argument("--trends", default="inc", type=list_arg(("dec", "inc", "nonmono")))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ratio", type=_ratio_arg, default=0.95,
                    help="the certificate asked for, in (0, 1]")
    ap.add_argument("--nodes", type=positive_int, default=20_000,
                    help="node LPs of the tree at most")
    ap.add_argument("--cap", type=float, default=3600.0, help="safety cap of a tree, seconds")
    ap.add_argument("--recent", type=int, default=None,
                    help="refuting prices each box tries before its LP (default: config-branch's)")
    args = ap.parse_args(argv)
    if args.recent is not None:
        if args.recent < 0:
            ap.error(f"--recent: expected a count >= 0, found {args.recent}")
        B.RECENT = args.recent
    rows = []
    for t, a in args.cells:
        for trend in args.trends:
            inst = P.generate(args.seed, t=t, a=a, trend=trend)
            hi, _ = cheap_upper_bound(inst)
            plan = fast(inst, time_limit=600.0, seed=args.seed, target=hi,
                        max_steps=WORK_STEPS.get(t, 50))
            best = P.evaluate(inst, plan).objective
            keep = (plan.task_of >= 0).sum(axis=1)
            theta = best / args.ratio
            c0 = time.process_time()
            if theta >= hi:  # the cheap bound certifies the ratio already: no tree
                out = {"outcome": "cheap bound", "bound": hi, "nodes": 0, "leaves": 0,
                       "open": 0, "split": [0] * inst.a}
            else:
                out = level_tree(inst, theta, hi, keep=keep, max_nodes=args.nodes,
                                 time_limit=args.cap)
            cpu = time.process_time() - c0
            narrowed = float(np.sum(out["split"])) / max(out["leaves"], 1)
            row = {"t": t, "a": a, "trend": trend, "recent": B.RECENT, "best_plan": best,
                   "cheap": hi,
                   "ratio": args.ratio, "theta": theta, "outcome": out["outcome"],
                   "bound": out["bound"], "best/bound_%": 100.0 * best / out["bound"],
                   "nodes": out["nodes"], "leaves": out["leaves"], "open": out["open"],
                   "narrowed_per_leaf": narrowed, "cpu_s": cpu, "lp_s": out.get("lp_s"),
                   "split": out["split"]}
            rows.append(row)
            print(format_table([row], [k for k in row if k != "split"]), file=sys.stderr)
    print(f"## One level refuted alone (b = 2t, seed {args.seed}): the tree of boxes that shows "
          f"no plan reaches best plan / {args.ratio:g} (outcome fell), within {args.nodes} node "
          "LPs; open: leaves not yet below theta when the node LPs ran out; narrowed_per_leaf: "
          "annotators whose length a leaf's box narrows, on average")
    print(format_table(rows, ["t", "a", "trend", "recent", "best_plan", "theta", "outcome", "bound",
                              "best/bound_%", "nodes", "leaves", "open", "narrowed_per_leaf",
                              "cpu_s"]))
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "cltap_level_tree.json"
    path.write_text(json.dumps({"topic": "cltap-level-tree", "args": vars(args), "runs": rows,
                                "versions": cached_versions()}, indent=1, default=str))
    print(f"\n(written {path.relative_to(RESULTS.parent.parent)})")


FRONTIER_METHODS = ("milp-compact", "head-cover")


def frontier_instance(seed: int, t: int, a: int, trend: str) -> P.CltapInstance:
    """K = t, b = 2t; "flat" = constant curves (dec draw of p_j1, tau = 100, t-bar ~ 10^5)."""
    if trend == "flat":
        return P.generate(seed, t=t, a=a, trend="dec", tau=100.0, horizon=1e6)
    return P.generate(seed, t=t, a=a, trend=trend)


def frontier_run(method: str, inst: P.CltapInstance, cpu_limit: float, wall_limit: float):
    """(proven within cpu_limit, CPU s, primal, bound) of one exact run, its guard bypassed."""
    from crowdopt.solvers.cltap_exact import solve_head_cover

    run = solve_milp if method == "milp-compact" else solve_head_cover
    c0 = time.process_time()
    out = run(inst, RunOptions(time_limit=wall_limit, threads=1))
    cpu = time.process_time() - c0
    primal = P.evaluate(inst, out.solution).objective if out.solution is not None else None
    return out.status == "optimal" and cpu <= cpu_limit, cpu, primal, out.bound


def bench_frontier(argv: list[str]) -> None:
    import argparse

    ap = argparse.ArgumentParser(prog="bench_cltap.py --frontier")
    ap.add_argument("--cpu-limit", type=float, default=60.0)
    ap.add_argument("--wall-factor", type=float, default=1.0)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--a", default="3,10")
    ap.add_argument("--trends", default="dec,inc,flat")
    ap.add_argument("--t0", type=int, default=5)
    ap.add_argument("--t-max", type=int, default=320)
    ap.add_argument("--t-list", default=None, help="sizes to run instead of the doubling")
    ap.add_argument("--methods", default=",".join(FRONTIER_METHODS))
    args = ap.parse_args(argv)
    sizes = ([int(x) for x in args.t_list.split(",")] if args.t_list else
             [args.t0 * 2 ** i for i in range(64) if args.t0 * 2 ** i <= args.t_max])
    rows, summary = [], []
    for a in [int(x) for x in args.a.split(",")]:
        for trend in args.trends.split(","):
            for method in args.methods.split(","):
                best, best_cpu, first_fail, gap = None, None, None, None
                for t in sizes:
                    ok_all, cpus, gaps = True, [], []
                    for seed in range(args.seeds):
                        inst = frontier_instance(seed, t, a, trend)
                        ok, cpu, primal, bound = frontier_run(
                            method, inst, args.cpu_limit, args.cpu_limit * args.wall_factor)
                        g = (None if primal is None or bound is None else
                             (bound - primal) / bound if bound > 0 else 0.0)
                        rows.append({"a": a, "trend": trend, "method": method, "t": t,
                                     "seed": seed, "proven": ok, "cpu_s": cpu, "primal": primal,
                                     "bound": bound, "gap": g})
                        print(format_table(rows[-1:], list(rows[-1])), file=sys.stderr)
                        ok_all &= ok
                        cpus.append(cpu)
                        gaps.append(g)
                        if not ok:
                            break
                    if not ok_all:
                        first_fail = t
                        known = [x for x in gaps if x is not None]
                        gap = max(known) if known else None
                        break
                    best, best_cpu = t, max(cpus)
                summary.append({"a": a, "trend": trend, "method": method, "largest_t_proven": best,
                                "max_cpu_s_there": best_cpu, "first_t_not_proven": first_fail,
                                "gap_there": gap})
    print(f"## exact frontier: t in {sizes} (K = t, b = 2t, {args.seeds} seed(s)); "
          f"proven = optimal within {args.cpu_limit:g} s CPU, one thread")
    print(format_table(summary, ["a", "trend", "method", "largest_t_proven", "max_cpu_s_there",
                                 "first_t_not_proven", "gap_there"]))
    RESULTS.mkdir(exist_ok=True)
    name = "cltap_frontier" + ("_t" + args.t_list.replace(",", "_") if args.t_list else "")
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"topic": "cltap-frontier", "args": vars(args), "runs": rows,
                                "summary": summary, "versions": cached_versions()},
                               indent=1, default=str))
    print(f"\n(written {path.relative_to(RESULTS.parent.parent)})")


def main() -> None:
    if "--frontier" in sys.argv:
        bench_frontier([x for x in sys.argv[1:] if x != "--frontier"])
        return
    if "--level-tree" in sys.argv:
        bench_level_tree([x for x in sys.argv[1:] if x != "--level-tree"])
        return
    if "--large-ceiling" in sys.argv:
        bench_large_ceiling([x for x in sys.argv[1:] if x != "--large-ceiling"])
        return
    if "--ceiling" in sys.argv:
        bench_ceiling([x for x in sys.argv[1:] if x != "--ceiling"])
        return
    only_bounds = "--bounds-table" in sys.argv
    if only_bounds:
        sys.argv.remove("--bounds-table")
    # --help shows every mode's usage (the docstring up to the modes' notes)
    args = parse_args(__doc__.split("\n(--large-ceiling")[0])
    if only_bounds:
        rows = bench_bounds_table(args, [(100, 10)] if args.quick else
                             [(100, 10), (200, 20), (1000, 100)])
        print("## Table 4: new bounds and constructions vs CBP and column generation (b = 2t)")
        print(format_table(rows, ["t", "a", "trend", "method", "kind", "value", "time_s",
                                  "cpu_s", "x_cbp", "x_colgen", "best/bound"]))
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / "cltap_bounds.json"
        path.write_text(json.dumps({"topic": "cltap-bounds", "args": vars(args),
                                    "bounds": rows, "versions": cached_versions()},
                                   indent=1, default=str))
        print(f"\n(written {path.relative_to(RESULTS.parent.parent)})")
        return
    if args.quick:
        args.repeat = 1
        cert_sizes, milp_sizes = [(1000, 100)], [(5, 3), (8, 3)]
        cg_cases = [(10, 3, "inc")]
    else:
        cert_sizes, milp_sizes = [(1000, 100)], [(8, 3), (10, 3), (10, 5), (12, 5)]
        cg_cases = [(20, 4, "inc"), (30, 5, "inc"), (40, 5, "dec")]
    out = {}
    out["certify"] = bench_certify(args, cert_sizes)
    print("## certify (b = 3t): CBP + closed-form bound, and the full `crowdopt certify`")
    print(format_table(out["certify"], ["t", "a", "trend", "cbp_s", "bound_s", "cbp+bound_s",
                                        "lb", "ub", "ratio", "certify_s", "certify_ratio",
                                        "certify_primal"]))
    out["milp"] = bench_milp(args, milp_sizes)
    print("\n## exact compact MILP (gap 0, 60 s limit) vs CBP (b = 2t)")
    print(format_table(out["milp"], ["t", "a", "trend", "binaries", "milp_status", "milp_s",
                                     "cbp_s", "time_ratio", "opt", "bound", "cbp",
                                     "value_ratio"]))
    out["colgen"] = bench_colgen(args, cg_cases)
    print("\n## column generation, faithful master: live HiGHS (add_columns) vs Pyomo rebuild")
    print(format_table(out["colgen"], ["t", "a", "trend", "rounds", "rounds_pyomo",
                                       "highspy_ms/it", "pyomo_ms/it", "speedup",
                                       "pricing_ms/it", "total_s", "total_pyomo_s", "bound",
                                       "bound_pyomo", "closed_form"]))
    out["bounds"] = bench_bounds_table(args, [(100, 10)] if args.quick else
                                   [(100, 10), (200, 20), (1000, 100)])
    print("\n## Table 4: new bounds and constructions vs CBP and column generation (b = 2t)")
    print(format_table(out["bounds"], ["t", "a", "trend", "method", "kind", "value", "time_s",
                                        "cpu_s", "x_cbp", "x_colgen", "best/bound"]))
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "cltap.json"
    path.write_text(json.dumps({"topic": "cltap", "args": vars(args), **out,
                                "versions": cached_versions()}, indent=1, default=str))
    print(f"\n(written {path.relative_to(RESULTS.parent.parent)})")


if __name__ == "__main__":
    main()
