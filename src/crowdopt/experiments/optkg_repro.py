"""`crowdopt reproduce optkg`: the experiments of paper 002 (Chen, Lin & Zhou 2015) as a report.

Sections: Opt-KG vs the exact DP optimum on small instances (digest 4.2 values beside ours), the
synthetic homogeneous panels (Fig. 10, with the uniform-vs-true-prior comparison of Fig. 7), the
heterogeneous panels (Figs. 9/11), the real-data replays (Fig. 12 on RTE, the same on temp and
bluebirds) and the CPU-time comparison of Table 4 as a same-run ratio. Every replication is one
executor task; the paper gives only plots except Table 4 and "92.05 % at T = 3200" (RTE,
heterogeneous Opt-KG); those numbers are shown beside ours, and claims we do not reproduce are
listed as such.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..datapath import require_sets
from ..errors import InputError
from ..policies.optkg_dp import evaluate_policy, solve_dp
from ..sim.optkg_sim import mean_curves
from .executor import Task, run_tasks
from .report import Report, line_plot

SIM = "crowdopt.sim.optkg_sim"
REPLAY = "crowdopt.sim.optkg_replay"
HOMO_POLICIES = ["optkg", "uniform", "kg", "gittins", "nlu"]
HET_POLICIES = ["optkg", "uniform", "kg"]
FIG11_POLICIES = HET_POLICIES + ["kos"]  # KOS: non-adaptive, synthetic panels only
# Fig. 10 panels: (label, generating Beta, prior used by the policies)
FIG10 = [("a", (1.0, 1.0), "uniform"), ("b", (0.5, 0.5), "true"), ("c", (0.5, 0.5), "uniform"),
         ("d", (2.0, 2.0), "true"), ("e", (2.0, 2.0), "uniform"), ("f", (2.0, 1.0), "true"),
         ("g", (2.0, 1.0), "uniform"), ("h", (4.0, 1.0), "true"), ("i", (4.0, 1.0), "uniform")]
# Fig. 11 panels: (label, rho generating Beta, worker prior)
FIG11 = [("a", (4.0, 1.0), "true"), ("b", (3.0, 1.0), "true"), ("c", (3.0, 1.0), (4.0, 1.0)),
         ("d", (8.0, 1.0), "true"), ("e", (8.0, 1.0), (4.0, 1.0)), ("f", (5.0, 2.0), "true"),
         ("g", (5.0, 2.0), (4.0, 1.0))]
TABLE4 = {1600: (1.09, 25.87), 3200: (2.19, 35.70), 4800: (3.29, 45.59), 8000: (5.48, 130.68)}
PAPER_RTE_HET_PEAK = (3200, 0.9205)
DIGEST_DP = {  # digest 4.2 [ours]: (K, T) -> (DP*, Opt-KG rand, KG rand, Uniform)
    (2, 12): (0.865853, 0.865611, 0.854850, 0.845019),
    (3, 9): (0.823302, 0.822942, 0.810087, 0.787112),
    (3, 12): (0.843774, 0.843605, 0.829893, 0.812119),
    (4, 8): (227 / 288, 227 / 288, 0.783366, 0.745923),
    (5, 10): (0.789815, 0.789759, 0.784057, 0.744336),
}

SCALES = {
    "smoke": {"K": 50, "mults": [2, 5, 10], "reps": 3, "sim_gittins": False,
              "replay_mults": [1, 2, 4, 6, 10], "replay_reps": 2, "datasets": ["rte", "temp",
                                                                              "bluebirds"],
              "dp": [(2, 12), (3, 9), (4, 8)]},
    "paper": {"K": 50, "mults": list(range(2, 21)), "reps": 20, "sim_gittins": True,
              "replay_mults": list(range(1, 11)), "replay_reps": 20,
              "datasets": ["rte", "temp", "bluebirds"],
              "dp": [(2, 12), (3, 9), (3, 12), (4, 8), (5, 10)]},
}


SECTIONS = ("dp", "fig45", "fig10", "fig11", "replay", "table4")


def reproduce(out_dir: str | Path, *, scale: str = "smoke", jobs: int = 1, seed: int = 2013,
              show_progress: bool = True, resume: bool = False, fresh: bool = False,
              scheduler: Any = None, only: list[str] | None = None,
              sim_gittins: bool | None = None) -> dict:
    """Run the experiments of the scale (all sections, or `only` some of them), write
    DIR/report.md + PNGs; return the summary. `sim_gittins` overrides whether Gittins-Inf
    runs in the synthetic panels (one index table per delta = 1 - 1/T: slow)."""
    if scale not in SCALES:
        raise InputError("--scale", "smoke or paper", scale)
    only = list(only or SECTIONS)
    bad = [s for s in only if s not in SECTIONS]
    if bad:
        raise InputError("--only", f"sections among {', '.join(SECTIONS)}", bad)
    cfg = dict(SCALES[scale])
    if {"replay", "table4"} & set(only):  # the real sets, before any work
        require_sets(cfg["datasets"] if "replay" in only else ["rte"],
                     hint="or leave out the real data: --only " + ",".join(SECTIONS[:4]),
                     progress=show_progress)
    if sim_gittins is not None:
        cfg["sim_gittins"] = bool(sim_gittins)
    out = Path(out_dir)
    rep = Report(out, "Opt-KG (paper 002): reproduction", seeds=f"base seed {seed}")
    rep.text(f"Scale `{scale}`: K = {cfg['K']}, budgets T = "
             f"{', '.join(str(m) + 'K' for m in cfg['mults'])}, {cfg['reps']} replications per "
             f"synthetic setting; replays with T = "
             f"{', '.join(str(m) + 'K' for m in cfg['replay_mults'])} and "
             f"{cfg['replay_reps']} runs. The paper reports plots only, except Table 4 and the "
             "92.05 % RTE peak; for the plots we list the paper's stated trends and whether ours "
             "show them. Ties are broken at random (seeded); the Bayes decision sends ties to "
             "the positive class (class index 1 of each table).")
    summary: dict = {"scale": scale, "seed": seed, "sections": only, "accuracy": {}}
    if "dp" in only:
        _dp_section(rep, cfg, summary)
    if "fig45" in only:
        _fig45_section(rep, cfg, seed, jobs, out, show_progress, (resume, fresh, scheduler),
                       summary)
    K = cfg["K"]
    budgets = [m * K for m in cfg["mults"]]
    pols = HOMO_POLICIES if cfg["sim_gittins"] else [p for p in HOMO_POLICIES if p != "gittins"]
    tasks = [] if "fig10" not in only else [Task(f"{SIM}:homogeneous_replication",
                  {"theta_dist": list(d), "K": K, "budgets": budgets, "policies": pols,
                   "prior": pr}, seed=seed + 1000 * _dist_id(d) + r, key=f"fig10{lab}-{r}")
             for lab, d, pr in FIG10 for r in range(cfg["reps"])]
    tasks += [] if "fig11" not in only else [Task(f"{SIM}:heterogeneous_replication",
                   {"theta_dist": [1.0, 1.0], "rho_dist": list(d), "K": K, "M": 100,
                    "budgets": budgets, "policies": FIG11_POLICIES,
                    "worker_prior": wp if wp == "true" else list(wp)},
                   seed=seed + 50_000 + 1000 * _dist_id(d) + r, key=f"fig11{lab}-{r}")
              for lab, d, wp in FIG11 for r in range(cfg["reps"])]
    have = _datasets(cfg["datasets"] if "replay" in only else ["rte"]) \
        if {"replay", "table4"} & set(only) else {}
    for name, n_items in have.items() if "replay" in only else ():
        rb = [m * n_items for m in cfg["replay_mults"]]
        for mode, plist in (("homogeneous", HOMO_POLICIES), ("heterogeneous", HET_POLICIES)):
            tasks += [Task(f"{REPLAY}:replay_replication",
                           {"dataset": name, "policies": plist, "budgets": rb, "mode": mode},
                           seed=seed + r, key=f"{name}-{mode}-{r}")
                      for r in range(cfg["replay_reps"])]
    if "rte" in have and "table4" in only:
        tasks.append(Task(f"{REPLAY}:timing_replication",
                          {"dataset": "rte", "budgets": sorted(TABLE4)}, seed=seed,
                          key="table4"))
    recs = run_tasks(tasks, jobs=jobs, results_path=out / "results.jsonl", resume=resume,
                     fresh=fresh, scheduler=scheduler, show_progress=show_progress, desc="optkg")
    by = {r["key"]: r for r in recs}
    failed = [r["key"] + ": " + str(r["error"]) for r in recs if r.get("error")]
    if "fig10" in only:
        _fig10_section(rep, cfg, by, summary)
    if "fig11" in only:
        _fig11_section(rep, cfg, by, summary)
    for name in have if "replay" in only else ():
        _replay_section(rep, cfg, by, name, summary)
    if "rte" in have and "table4" in only:
        _table4_section(rep, by.get("table4"), summary)
    if failed:
        rep.text("## Failed\n\n" + "\n".join(f"- task {f}" for f in failed))
    _not_done(rep, cfg)
    rep.write()
    summary["report"] = str(out / "report.md")
    summary["failed_tasks"] = failed
    return summary


def _dist_id(d: tuple) -> int:
    """Seed offset per generating distribution: panels that differ only in the prior share
    their theta/rho sets and label streams (paired comparisons, Figs. 7 and 9)."""
    return int(round(d[0] * 100)) * 100 + int(round(d[1] * 100))


def _datasets(names: list[str]) -> dict[str, int]:
    from ..sim.optkg_replay import load_table

    return {n: load_table(n)[0].n_tasks for n in names}


def _dp_section(rep: Report, cfg: dict, summary: dict) -> None:
    rows = []
    for K, T in cfg["dp"]:
        dp = float(solve_dp(K, T).accuracy)
        vals = {p: float(evaluate_policy(K, T, p).accuracy)
                for p in ("optkg", "kg", "uniform", "gittins")}
        ref = DIGEST_DP.get((K, T))
        rows.append({"K": K, "T": T, "DP*": dp, "Opt-KG": vals["optkg"],
                     "Gittins-Inf": vals["gittins"], "KG(rand)": vals["kg"],
                     "Uniform": vals["uniform"], "gap Opt-KG": dp - vals["optkg"],
                     "digest DP*": ref[0] if ref else None,
                     "digest Opt-KG": ref[1] if ref else None})
    summary["dp"] = rows
    rep.text("## Opt-KG against the exact DP optimum (Bayes-expected accuracy, prior Beta(1,1))")
    rep.table("Exact DP (row-sorted canonical states) and exact policy evaluation", rows,
              note="Ties averaged ('random'). The digest's reference values (section 4.2, "
                   "computed in rational arithmetic by its authors, not in the paper) are "
                   "beside ours; exact fraction tests live in tests/test_optkg_dp.py.",
              digits=6)


FIG4_THETA = [round(0.05 * k, 2) for k in range(21)]
FIG5_RHO = [round(0.10 + 0.05 * k, 3) for k in range(9)] + [round(0.505 + 0.01 * k, 3)
                                                             for k in range(50)]


def _fig45_section(rep: Report, cfg: dict, seed: int, jobs: int, out: Path,
                   show_progress: bool, batch: tuple, summary: dict) -> None:
    resume, fresh, scheduler = batch
    budgets = [5 * 21, 15 * 21, 50 * 21]
    tasks = [Task(f"{SIM}:label_counts_replication", {"theta": FIG4_THETA, "budgets": budgets},
                  seed=seed + 90_000 + r, key=f"fig4-{r}") for r in range(cfg["reps"])]
    tasks += [Task(f"{SIM}:label_counts_replication",
                   {"theta": FIG4_THETA, "rho": FIG5_RHO, "budgets": budgets},
                   seed=seed + 95_000 + r, key=f"fig5-{r}") for r in range(cfg["reps"])]
    recs = [r for r in run_tasks(tasks, jobs=jobs, results_path=out / "results_fig45.jsonl",
                                 resume=resume, fresh=fresh, scheduler=scheduler,
                                 show_progress=show_progress, desc="fig4-5")
            if r.get("result")]
    f4 = [r["result"] for r in recs if r["key"].startswith("fig4")]
    f5 = [r["result"] for r in recs if r["key"].startswith("fig5")]
    rep.text("## Labels per instance and per worker under Opt-KG (Figs. 4-5)\n\n"
             "K = 21 instances with theta = 0, 0.05, ..., 1; T = 5K, 15K, 50K; Fig. 5 adds "
             "M = 59 workers with rho = 0.10, 0.15, ..., 0.50, 0.505, ..., 0.995 (priors Beta(1,1) "
             "and Beta(4,1), digest 7.12). Paper: ambiguous instances get more labels; at 5K "
             "theta = 0.45 and 0.5 get fewer than 0.35, 0.4, 0.6; at 15K theta = 0.45 and 0.55 "
             "get more than 0.5; at 50K theta = 0.5 gets the most; in Fig. 5 more reliable "
             "workers get more instances as T grows.")
    for name, res, key, xs, xlabel in (("fig4", f4, "per_instance", FIG4_THETA, "theta"),
                                       ("fig5", f5, "per_worker", FIG5_RHO, "rho")):
        if not res:
            continue
        mean = np.mean([r[key] for r in res], axis=0)  # (budgets, items or workers)
        series = {f"T = {t // 21}K": (xs, mean[k].tolist()) for k, t in enumerate(budgets)}
        ylabel = "mean labels per instance" if name == "fig4" else "mean instances per worker"
        rep.figure(line_plot(series, xlabel=xlabel, ylabel=ylabel, logy=True,
                             title=f"Fig. {name[-1]}: Opt-KG ({len(res)} runs)"), name,
                   f"Fig. {name[-1]}: {ylabel} vs {xlabel} ({len(res)} runs)")
        if name == "fig4":
            rows = [{"theta": f"{th:.2f}", **{f"T={t // 21}K": float(mean[k][i])
                                     for k, t in enumerate(budgets)}}
                    for i, th in enumerate(xs) if 0.25 <= th <= 0.75]
            rep.table("Fig. 4: mean labels per instance (theta in [0.25, 0.75])", rows, digits=1)
        else:
            corr = [float(np.corrcoef(FIG5_RHO, mean[k])[0, 1]) for k in range(len(budgets))]
            top = [float(np.mean([max(r[key][k]) / t for r in res]))
                   for k, t in enumerate(budgets)]
            rows = [{"T": f"{t // 21}K", "corr(rho, instances)": corr[k],
                     "busiest worker share": top[k]} for k, t in enumerate(budgets)]
            rep.table("Fig. 5: does reliability attract labels?", rows, digits=3,
                      note="Digest 7.8: Opt-KG's worker choice depends only on E[rho_j] and "
                           "never explores, so one worker takes most labels; the paper's "
                           "trend is reproduced only if the correlation is clearly positive.")
            summary["fig5"] = rows
        summary[name] = {"budgets": budgets, key: mean.tolist()}


def _curves(by: dict, prefix: str, reps: int) -> dict:
    return mean_curves([by[f"{prefix}-{r}"] for r in range(reps)
                        if f"{prefix}-{r}" in by and by[f"{prefix}-{r}"].get("result")])


def _panel(rep: Report, cur: dict, name: str, title: str, summary_key: str, summary: dict,
           scale_x: float) -> None:
    if not cur:
        rep.text(f"_{title}: no results_")
        return
    x = [t / scale_x for t in cur["budgets"]]
    series = {p: (x, cur["mean"][p]) for p in cur["mean"]}
    fig = line_plot(series, xlabel="budget T / K", ylabel="accuracy",
                    title=title, errors={p: cur["se"][p] for p in cur["se"]})
    rep.figure(fig, name, f"{title} (mean of {cur['reps']} runs, error bars = 1 SE)")
    rows = [{"T": t, **{p: cur["mean"][p][k] for p in cur["mean"]}}
            for k, t in enumerate(cur["budgets"])]
    rep.table(title, rows, digits=4)
    summary["accuracy"][summary_key] = {"budgets": cur["budgets"], **cur["mean"]}


def _best_or_tied(cur: dict, who: str, from_t: int) -> str:
    """'yes' if `who` is within 2 SE of the best policy at every budget >= from_t."""
    ok = True
    for k, t in enumerate(cur["budgets"]):
        if t < from_t:
            continue
        best = max(cur["mean"][p][k] for p in cur["mean"])
        se = max(cur["se"][who][k], 1e-9)
        ok &= cur["mean"][who][k] >= best - 2 * se
    return "yes" if ok else "no"


def _fig10_section(rep: Report, cfg: dict, by: dict, summary: dict) -> None:
    rep.text("## Synthetic data, homogeneous workers (Fig. 10; Fig. 7)\n\n"
             "K = 50, theta_i from the generating Beta, labels y ~ Bernoulli(theta_i), common "
             "random numbers across policies. Paper (plots only): Opt-KG outperforms the others "
             "in most settings; NLU matches Opt-KG for Beta(.5,.5); Gittins-Inf matches Opt-KG "
             "for Beta(2,2); KG(Random) only slightly improves on Uniform."
             + ("" if cfg["sim_gittins"] else "\n\nGittins-Inf is left out of the synthetic "
                "panels in this run (one index table per delta = 1 - 1/T costs minutes; enable "
                "with `--sim-gittins`, the default at `--scale paper`); it runs in the replays."))
    checks = []
    K = cfg["K"]
    for lab, d, pr in FIG10:
        cur = _curves(by, f"fig10{lab}", cfg["reps"])
        title = f"Fig. 10({lab}): theta ~ Beta{d}, {pr} prior"
        _panel(rep, cur, f"fig10{lab}", title, f"fig10{lab}", summary, K)
        if cur:
            checks.append({"panel": lab, "theta": f"Beta{d}", "prior": pr,
                           "Opt-KG best or within 2 SE (T >= 4K)":
                           _best_or_tied(cur, "optkg", 4 * K),
                           "Opt-KG - Uniform at max T": cur["mean"]["optkg"][-1]
                           - cur["mean"]["uniform"][-1],
                           "KG(rand) - Uniform at max T": cur["mean"]["kg"][-1]
                           - cur["mean"]["uniform"][-1],
                           "NLU - Opt-KG at max T": cur["mean"]["nlu"][-1]
                           - cur["mean"]["optkg"][-1]})
    rep.table("Trend checks (Fig. 10)", checks, digits=4)
    rows = []
    for (lab_t, d, _), (lab_u, _, _) in zip(FIG10[1::2], FIG10[2::2], strict=True):
        ct, cu = _curves(by, f"fig10{lab_t}", cfg["reps"]), _curves(by, f"fig10{lab_u}",
                                                                      cfg["reps"])
        if ct and cu:
            for k, t in enumerate(ct["budgets"]):
                rows.append({"theta": f"Beta{d}", "T": t, "Opt-KG true prior": ct["mean"]["optkg"][k],
                             "Opt-KG uniform prior": cu["mean"]["optkg"][k]})
    rep.table("Fig. 7: Opt-KG with the true vs the uniform prior", rows,
              note="Paper: nearly identical except Beta(4,1), where the uniform prior needs "
                   "T >= 16K to catch up.", digits=4)


def _fig11_section(rep: Report, cfg: dict, by: dict, summary: dict) -> None:
    rep.text("## Synthetic data, heterogeneous workers (Fig. 11; Fig. 9)\n\n"
             "K = 50, M = 100, theta ~ Beta(1,1), rho_j from the generating Beta, one-coin labels, "
             "repeated pairs allowed, sequential moment matching for every policy (digest 7.6). "
             "Paper: Opt-KG outperforms all competitors whatever the prior. The digest could not "
             "reproduce this against KG(Random) (section 5.9). KOS (digest A12) is the "
             "non-adaptive baseline: for each T a fresh random (T/K, T/M)-biregular simple "
             "graph, every pair labelled once, KOS messages from y ~ N(1,1) until they stop moving "
             "(at most 200 iterations; 20 leave them rotating at this size), ties to +1. "
             "At T = 2K each worker answers T/M = 1 task, so every worker message is 0 and KOS "
             "labels every task +1 (its accuracy is then the share of positive tasks).")
    checks = []
    K = cfg["K"]
    for lab, d, wp in FIG11:
        cur = _curves(by, f"fig11{lab}", cfg["reps"])
        title = f"Fig. 11({lab}): rho ~ Beta{d}, worker prior {wp}"
        _panel(rep, cur, f"fig11{lab}", title, f"fig11{lab}", summary, K)
        if cur:
            shares = [by[f"fig11{lab}-{r}"]["result"]["top_worker_share"]["optkg"][-1]
                      for r in range(cfg["reps"]) if by.get(f"fig11{lab}-{r}", {}).get("result")]
            checks.append({"panel": lab, "rho": f"Beta{d}", "worker prior": str(wp),
                           "Opt-KG best or within 2 SE (T >= 4K)":
                           _best_or_tied(cur, "optkg", 4 * K),
                           "Opt-KG - KG(rand) at max T": cur["mean"]["optkg"][-1]
                           - cur["mean"]["kg"][-1],
                           **({"Opt-KG - KOS at max T": cur["mean"]["optkg"][-1]
                               - cur["mean"]["kos"][-1]} if "kos" in cur["mean"] else {}),
                           "Opt-KG busiest worker share": float(np.mean(shares))})
    rep.table("Trend checks (Fig. 11)", checks, digits=4,
              note="'busiest worker share' = labels of the most-used worker / T under Opt-KG "
                   "(digest 7.8: worker choice depends only on E[rho_j], no exploration).")


def _replay_section(rep: Report, cfg: dict, by: dict, name: str, summary: dict) -> None:
    reps = cfg["replay_reps"]
    rep.text(f"## Real data replay: {name} (Fig. 12 protocol)\n\nHomogeneous: each query of an "
             "item reveals one of its recorded labels, drawn without replacement; heterogeneous: "
             "the actions are the recorded (item, worker) pairs, each used once; worker prior "
             "Beta(4,1), item prior Beta(1,1).")
    for mode in ("homogeneous", "heterogeneous"):
        cur = _curves(by, f"{name}-{mode}", reps)
        if not cur:
            continue
        n_items = cur["budgets"][0] // cfg["replay_mults"][0]
        ref = None
        title = f"{name}, {mode} workers"
        x = [t / n_items for t in cur["budgets"]]
        if name == "rte" and mode == "heterogeneous":
            t, v = PAPER_RTE_HET_PEAK
            ref = {"paper Opt-KG peak (92.05 % at T = 3200)": ([t / n_items], [v])}
        fig = line_plot({p: (x, cur["mean"][p]) for p in cur["mean"]}, xlabel="budget T / K",
                        ylabel="accuracy", title=title,
                        errors={p: cur["se"][p] for p in cur["se"]}, reference=ref)
        rep.figure(fig, f"{name}_{mode}", f"{title} (mean of {cur['reps']} runs)")
        rows = [{"T": t, **{p: cur["mean"][p][k] for p in cur["mean"]}}
                for k, t in enumerate(cur["budgets"])]
        note = ""
        if name == "rte" and mode == "heterogeneous":
            k_best = int(np.argmax(cur["mean"]["optkg"]))
            at = cur["budgets"].index(3200) if 3200 in cur["budgets"] else None
            note = (f"Paper: heterogeneous Opt-KG peaks at 92.05 % at T = 3200. Ours: "
                    f"{cur['mean']['optkg'][at]:.4f} at T = 3200; " if at is not None else
                    "Paper: peak 92.05 % at T = 3200 (not in this budget grid); ours: ")
            note += (f"peak {cur['mean']['optkg'][k_best]:.4f} at T = "
                     f"{cur['budgets'][k_best]}.")
            summary["rte_het_optkg_peak"] = {"T": cur["budgets"][k_best],
                                             "accuracy": cur["mean"]["optkg"][k_best],
                                             "paper": PAPER_RTE_HET_PEAK}
        if name == "rte" and mode == "homogeneous":
            note = ("Paper (plot only): Opt-KG, Gittins-Inf and NLU all perform well, "
                    "Gittins-Inf slightly better than Opt-KG.")
        rep.table(title, rows, note=note, digits=4)
        summary["accuracy"][f"{name}/{mode}"] = {"budgets": cur["budgets"], **cur["mean"]}


def _table4_section(rep: Report, rec: dict | None, summary: dict) -> None:
    if not rec or not rec.get("result"):
        rep.text("## Table 4: not run")
        return
    rows = []
    for r in rec["result"]["rows"]:
        p_opt, p_git = TABLE4.get(r["T"], (None, None))
        rows.append({"T": r["T"], "Opt-KG s": r["optkg_s"], "Gittins-Inf s": r["gittins_s"],
                     "ratio": r["ratio"], "paper Opt-KG s": p_opt, "paper Gittins s": p_git,
                     "paper ratio": p_git / p_opt if p_opt else None})
    summary["table4"] = rows
    rep.table("Table 4: CPU time of an RTE replay, Opt-KG vs Gittins-Inf (same process)", rows,
              note="Our Gittins-Inf cost includes computing its index by calibration from a cold "
                   "cache (truncation 300 labels below each state); absolute times depend on "
                   "hardware and language (digest 7.22), so compare the ratios.", digits=3)


def _not_done(rep: Report, cfg: dict) -> None:
    rep.text("## Not reproduced / not implemented\n\n"
             "- KOS runs in the synthetic Fig. 11 panels only: it is non-adaptive (it chooses "
             "its own task-worker graph), which a replay of recorded pairs cannot provide.\n"
             "- Accuracy numbers of the paper's figures are not available (plots only); the trend "
             "checks above are ours.\n"
             "- The paper's Gittins-Inf used Xie & Frazier's code; ours is a calibration with "
             "truncation (digest A7), so its RTE curve may differ slightly.")
