"""`crowdopt reproduce selection`: Figs. 1(a,b) and 4(b) of paper 004 (Li & Liu).

Protocol (paper Sec. 4, digest 004 section 6.1): in each trial n = 10 items are drawn as control
(gold) questions, w_hat = c/n (eq. 10); workers are chosen by each method for every budget K and
the remaining items are aggregated with the chosen workers; accuracy is measured on those
non-control items only (digest E9). Methods (digest 6.2): WMV top K (top K by w_hat, random
tie-breaks, E6), WMV-lin selected (Algorithm 1, unbiased G), WMV-log selected (log-odds weights,
w_hat clipped to [1/(2n), 1 - 1/(2n)], E8), WMV-lin plugin (Algorithm 1 with (L w_hat - 1)^2),
EM random K, EM top K, EM selected (one-coin EM, majority-vote start, 100 iterations, E7).

Sources: `sim` = Fig. 1 (31 workers, w ~ Beta(2.3, 2), 1000 items with uniform binary labels,
everything redrawn per trial, E9) and `bluebirds` = Fig. 4(b) (39 x 108, complete). One executor
task = one (source, trial) running every K and method on shared control items.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..datapath import require_sets
from ..errors import InputError
from ..validate import choice, integer
from .executor import Task, run_tasks
from .report import Report, line_plot, pyplot, series_style

METHODS = ("WMV top K", "WMV-lin selected", "WMV-log selected", "WMV-lin plugin",
           "EM random K", "EM top K", "EM selected")
SOURCES = ("sim", "bluebirds")
# Fig. 2 of paper 004: K = 20 and WMV-linear; (a) n = 3..45 control items, (b) w ~ Beta(a, 2)
# with n = 10 (the range of a is not stated, digest E9: 0.5..5 here).
SWEEPS: dict[str, dict[str, Any]] = {
    "fig2a": {"param": "n_control", "label": "control questions n",
              "paper": [3, 5, 10, 15, 20, 25, 30, 35, 40, 45], "smoke": [3, 10, 45],
              "note": "Paper (plot only): every method improves as n grows, and the gap "
                      "between selected and plugin shrinks."},
    "fig2b": {"param": "beta_a", "label": "prior parameter a of Beta(a, 2)",
              "paper": [0.5, 1.0, 1.5, 2.0, 2.3, 3.0, 4.0, 5.0], "smoke": [0.5, 2.3, 5.0],
              "note": "Paper (plot only): top K improves with a; selected and plugin only "
                      "slightly. With a < 1 most workers are adversarial (w near 0) and "
                      "WMV-linear's negative weights turn them into informative votes."},
}
SWEEP_K = 20
WMV_METHODS = METHODS[:4]
SCALES: dict[str, dict[str, Any]] = {
    "smoke": {"trials": 3, "k_step": 7},
    "paper": {"trials": 100, "k_step": 1},
}


def simulate_table(rng: np.random.Generator, workers: int, items: int, classes: int,
                   beta_a: float, beta_b: float):
    """One-coin crowd (eq. 3): complete workers x items answers, truth uniform on L classes."""
    from ..crowd.tables import Gold, LabelTable

    w = rng.beta(beta_a, beta_b, workers)
    y = rng.integers(classes, size=items)
    right = rng.random((items, workers)) < w
    wrong = (y[:, None] + rng.integers(1, classes, size=(items, workers))) % classes
    z = np.where(right, y[:, None], wrong)
    task = np.repeat(np.arange(items), workers)
    worker = np.tile(np.arange(workers), items)
    table = LabelTable(np.arange(items).astype(object), np.arange(workers).astype(object),
                       np.arange(classes).astype(object), task, worker, z.ravel())
    return table, Gold(np.arange(items), y.astype(np.int64)), w


def trial(*, source: str, k_values: list[int], n_control: int = 10, workers: int = 31,
          items: int = 1000, classes: int = 2, beta_a: float = 2.3, beta_b: float = 2.0,
          em_iter: int = 100, seed: int = 0) -> dict:
    """One trial: accuracy of every method and the selected-set sizes, for every K."""
    from ..crowd.aggregate import accuracy, majority_vote, one_coin_em, weighted_majority_vote
    from ..crowd.aggregate import weights_from_accuracy as weights
    from ..crowd.datasets import load_table
    from ..crowd.reliability import from_gold
    from ..problems.worker_scores import scores
    from ..solvers.worker_select import select_prefix

    rng = np.random.default_rng(seed)
    if source == "sim":
        table, gold, _ = simulate_table(rng, workers, items, classes, beta_a, beta_b)
    else:
        table, gold = load_table(source)
    L, M = table.n_classes, table.n_workers
    control = np.sort(rng.choice(gold.task, n_control, replace=False))
    rest = np.setdiff1d(gold.task, control)
    eval_gold = gold.subset(rest)
    rel = from_gold(table, gold, tasks=control)
    w_hat, n = rel.accuracy, rel.n
    g_unb = scores(w_hat, n, L, "unbiased")
    g_plug = scores(w_hat, n, L, "plugin")
    lin = weights(w_hat, L, "linear")
    log = weights(w_hat, L, "log-odds", clip=1.0 / (2 * n_control))
    by_w = np.lexsort((rng.random(M), -w_hat))  # top K by w_hat, random tie-breaks (E6)
    main = table.subset(tasks=rest)
    em_cache: dict[tuple, float] = {}

    def acc_wmv(S: np.ndarray, wts: np.ndarray) -> float:
        res = weighted_majority_vote(main.subset(workers=S), wts, seed=seed)
        return accuracy(res, eval_gold)

    def acc_em(S: np.ndarray) -> float:
        key = tuple(np.sort(S).tolist())
        if key not in em_cache:
            res = one_coin_em(main.subset(workers=S), max_iter=em_iter, seed=seed)
            em_cache[key] = accuracy(res, eval_gold)
        return em_cache[key]

    out: dict[str, Any] = {"K": [], "acc": {m: [] for m in METHODS}, "size_selected": [],
                           "size_plugin": [], "acc_mv_all": None}
    out["acc_mv_all"] = accuracy(majority_vote(main, seed=seed), eval_gold)
    for K in k_values:
        if K > M:
            continue
        sel = select_prefix(g_unb, K).selected
        plug = select_prefix(g_plug, K).selected
        top = by_w[:K]
        rand = rng.choice(M, K, replace=False)
        vals = {"WMV top K": acc_wmv(top, lin), "WMV-lin selected": acc_wmv(sel, lin),
                "WMV-log selected": acc_wmv(sel, log), "WMV-lin plugin": acc_wmv(plug, lin),
                "EM random K": acc_em(rand), "EM top K": acc_em(top), "EM selected": acc_em(sel)}
        out["K"].append(int(K))
        for m in METHODS:
            out["acc"][m].append(float(vals[m]))
        out["size_selected"].append(len(sel))
        out["size_plugin"].append(len(plug))
    return out


def sweep_trial(*, figure: str, x: float, seed: int = 0, **params: Any) -> dict:
    """One Fig. 2 trial: `trial` at K = 20 with the swept parameter set to x."""
    out = trial(source="sim", k_values=[SWEEP_K], seed=seed, **params)
    out.update(figure=figure, x=x)
    return out


def k_grid(source: str, step: int, workers: int) -> list[int]:
    """K = 3..M (paper Fig. 1: 3..31; E9: real data K from 3 to M), every `step`, M included."""
    M = workers if source == "sim" else 39
    ks = list(range(3, M + 1, step))
    return ks if ks[-1] == M else ks + [M]


def build_tasks(*, scale: str = "smoke", sources: list[str] | None = None,
                trials: int | None = None, seed: int = 0, n_control: int = 10,
                workers: int = 31, items: int = 1000) -> list[Task]:
    """One task per (source or Fig. 2 point, trial); trial t uses seed + t."""
    sc = SCALES[choice(scale, "--scale", sorted(SCALES))]
    sources = sources or [*SOURCES, *SWEEPS]
    for s in sources:
        choice(s, "--sources", [*SOURCES, *SWEEPS])
    trials = integer(trials if trials is not None else sc["trials"], "--runs", lo=1)
    n_control = integer(n_control, "--n-control", lo=2)
    tasks = []
    for s in sources:
        if s in SWEEPS:
            sw = SWEEPS[s]
            for x in sw[scale]:
                params = {"figure": s, "x": x, "n_control": n_control, "workers": workers,
                          "items": items, sw["param"]: x}
                tasks += [Task("crowdopt.experiments.selection_repro:sweep_trial", params,
                               seed=int(seed) + t) for t in range(trials)]
            continue
        params = {"source": s, "k_values": k_grid(s, sc["k_step"], workers),
                  "n_control": n_control}
        if s == "sim":
            params.update(workers=integer(workers, "--workers", lo=1),
                          items=integer(items, "--items", lo=n_control + 1))
        for t in range(trials):
            tasks.append(Task("crowdopt.experiments.selection_repro:trial", params,
                              seed=int(seed) + t))
    return tasks


def summarize(records: list[dict]) -> list[dict]:
    """Rows per (source, K): mean accuracy of each method and mean selected-set sizes."""
    rows = []
    for s in SOURCES:
        res = [r["result"] for r in records
               if not r.get("error") and r.get("result") and r["params"].get("source") == s]
        if not res:
            continue
        for j, K in enumerate(res[0]["K"]):
            row: dict[str, Any] = {"source": s, "K": K, "trials": len(res)}
            for m in METHODS:
                row[m] = float(np.mean([r["acc"][m][j] for r in res]))
            row["max s.e. WMV"] = max(float(np.std([r["acc"][m][j] for r in res], ddof=1)
                                        / np.sqrt(len(res))) if len(res) > 1 else 0.0
                                  for m in METHODS[:4])
            row["EM sel. flipped"] = float(np.mean([r["acc"]["EM selected"][j] < 0.5
                                                    for r in res]))
            row["|S| selected"] = float(np.mean([r["size_selected"][j] for r in res]))
            row["|S| plugin"] = float(np.mean([r["size_plugin"][j] for r in res]))
            row["max |S| selected"] = int(max(r["size_selected"][j] for r in res))
            rows.append(row)
    return rows


def summarize_sweeps(records: list[dict]) -> list[dict]:
    """Rows per (Fig. 2 panel, x): mean WMV accuracies at K = 20 and mean workers used."""
    rows = []
    for fig, sw in SWEEPS.items():
        res = [r["result"] for r in records if not r.get("error") and r.get("result")
               and r["params"].get("figure") == fig]
        for x in sorted({r["x"] for r in res}):
            at = [r for r in res if r["x"] == x]
            row: dict[str, Any] = {"figure": fig, sw["param"]: x, "trials": len(at)}
            for m in WMV_METHODS:
                row[m] = float(np.mean([r["acc"][m][0] for r in at]))
            row["|S| selected"] = float(np.mean([r["size_selected"][0] for r in at]))
            row["|S| plugin"] = float(np.mean([r["size_plugin"][0] for r in at]))
            rows.append(row)
    return rows


def _sweep_figure(rows: list[dict], fig: str):

    sw = SWEEPS[fig]
    part = [r for r in rows if r["figure"] == fig]
    xs = [r[sw["param"]] for r in part]
    return line_plot({m: (xs, [r[m] for r in part]) for m in WMV_METHODS},
                     xlabel=sw["label"], ylabel="accuracy (K = 20)",
                     title=f"Fig. 2({fig[-1]}): 31 workers, 1000 items, K = {SWEEP_K}")


def _figure(rows: list[dict], source: str):
    plt = pyplot()
    sel = [r for r in rows if r["source"] == source]
    K = [r["K"] for r in sel]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11.5, 4.4))
    for k, m in enumerate(METHODS):  # own marker + line style each: equal curves stay visible
        a.plot(K, [r[m] for r in sel], **series_style(k, m))
    a.set_xlabel("budget K")
    a.set_ylabel("accuracy on non-control items")
    a.grid(alpha=0.3)
    a.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0.0, -0.16), ncol=3,
             frameon=False)
    b.plot(K, K, label="top K / random K (= K)", color="gray", linestyle=":")
    b.plot(K, [r["|S| selected"] for r in sel], **series_style(1, "Algorithm 1 (unbiased G)"))
    b.plot(K, [r["|S| plugin"] for r in sel], **series_style(3, "Algorithm 1 (plugin)"))
    b.set_xlabel("budget K")
    b.set_ylabel("workers used (mean)")
    b.grid(alpha=0.3)
    b.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0.0, -0.16), frameon=False)
    title = {"sim": "Fig. 1: simulated, 31 workers, w ~ Beta(2.3, 2), 1000 items",
             "bluebirds": "Fig. 4(b): bluebirds, 39 workers x 108 items"}[source]
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


NOTES = """\
Setup: n = 10 control items per trial drawn at random from the gold items; w_hat = c/n (eq. 10);
accuracy on the other items (digest E9) with tied votes counted as 1/m (expected accuracy of a
random tie-break). Top K ranks by w_hat with random tie-breaks (E6); WMV-log clips w_hat to
[1/(2n), 1 - 1/(2n)] (E8); EM is one-coin, started from majority vote, at most 100 iterations,
no gold clamping (E7). Simulation: workers, truth and answers redrawn in every trial (E9).
Columns: mean accuracy over trials; `max s.e. WMV` = the largest standard error of the WMV means;
`EM sel. flipped` = share of trials in which EM on the selected set ends below 0.5 accuracy.
Fig. 1 of the paper uses WMV-linear only; the EM columns of the simulation are extra. With
w ~ Beta(2.3, 2) about 40% of the workers are worse than random, Algorithm 1 keeps the
informative ones at both ends (w_hat near 0 or 1, digest 4.1), and one-coin EM started from
majority vote then often converges to the label-swapped fixed point: its accuracy is bimodal
(near 0 or near 1), which is what pulls the EM means down.

What the paper reports (plots only, digest 6.3-6.4): Fig. 1(a) WMV-lin selected dominates and the
plugin selection is slightly worse; Fig. 1(b) Algorithm 1 always uses fewer than 10 workers and
the plugin version slightly more; Fig. 4(b) bluebirds: EM top K falls as K grows, selection stays
flat, 9 workers selected. The digest's own re-run (section 6.5) did not reproduce "selected
dominates at K = M" nor "plugin worse than unbiased"; these are reported as curves, not claims.
"""


def reproduce(out_dir: str | Path, *, scale: str = "smoke", jobs: int = 1, seed: int = 0,
              resume: bool = False, show_progress: bool = True, fresh: bool = False,
              scheduler: Any = None, **grid: Any) -> dict:
    """Run the trials through the executor; write DIR/report.md, PNGs and results.jsonl."""
    tasks = build_tasks(scale=scale, seed=seed, **grid)
    require_sets(sorted({t.params["source"] for t in tasks
                         if t.params.get("source") not in (None, "sim")}),
                 hint="or leave out the real data: --sources sim fig2a fig2b",
                 progress=show_progress)
    out = Path(out_dir)
    records = run_tasks(tasks, jobs=integer(jobs, "--jobs", lo=0),
                        results_path=out / "results.jsonl", resume=resume,
                        fresh=fresh, scheduler=scheduler,
                        show_progress=show_progress, desc="selection")
    errors = [r for r in records if r.get("error")]
    rows = summarize(records)
    sweep_rows = summarize_sweeps(records)
    if not rows and not sweep_rows:
        first = errors[0]["error"] if errors else "no results"
        raise InputError("reproduce selection", "at least one finished trial", first)
    seeds = sorted({t.seed for t in tasks})
    rep = Report(out, "Worker selection (paper 004): Figs. 1, 2 and 4(b)",
                 seeds=f"{seeds[0]}..{seeds[-1]} (trial t uses seed {seed} + t)")
    rep.text(f"Scale: `{scale}`; {len(records) - len(errors)} of {len(tasks)} trials finished "
             f"({len(errors)} failed).\n\n" + NOTES)
    figures = []
    for s in SOURCES:
        part = [r for r in rows if r["source"] == s]
        if not part:
            continue
        rep.table(f"{s}: mean accuracy per method and workers used, per budget K", part,
                  ["K", "trials", *METHODS, "max s.e. WMV", "EM sel. flipped", "|S| selected",
                   "|S| plugin", "max |S| selected"],
                  digits=3)
        figures.append(str(rep.figure(_figure(rows, s), f"selection_{s}",
                                      f"{s}: accuracy (left) and workers used (right) vs K.")))
    for fig, sw in SWEEPS.items():
        part = [r for r in sweep_rows if r["figure"] == fig]
        if not part:
            continue
        rep.table(f"Fig. 2({fig[-1]}): WMV-linear accuracy at K = {SWEEP_K} vs {sw['label']}",
                  part, [sw["param"], "trials", *WMV_METHODS, "|S| selected", "|S| plugin"],
                  digits=3, note=sw["note"])
        figures.append(str(rep.figure(_sweep_figure(sweep_rows, fig), f"selection_{fig}",
                                      f"Fig. 2({fig[-1]}): accuracy vs {sw['label']}.")))
    if errors:
        rep.text("Failed trials (first 5):\n\n" + "\n".join(
            f"- seed {e['seed']} {e['params'].get('source', e['params'].get('figure'))}: "
            f"{e['error']}" for e in errors[:5]))
    report = rep.write()
    return {"scale": scale, "out_dir": str(out), "report": str(report), "figures": figures,
            "tasks": len(tasks), "failed": len(errors), "rows": rows,
            "sweep_rows": sweep_rows}
