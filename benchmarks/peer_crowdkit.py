"""Run one crowd-kit aggregator on one shared data set in THIS process and print one JSON line.

Used by `bench_aggregation.py --peer`, which starts one subprocess per (method, data set) so
that a crowd-kit failure (an exception, NaN, running out of memory) or a time limit costs that
cell only. The data set is read by crowdopt's loader and handed to crowd-kit as the DataFrame
`LabelTable.to_dataframe()` gives (columns task, worker, label), so both libraries see the same
rows. Only crowd-kit's `fit_predict` is timed (no import, no data loading): when the first
call takes less than 5 s it is repeated REPEAT times and `time_s` is the median of those warm
calls (the first call pays pandas' one-off set-up), else `time_s` is the first call.
`ties` lists the tasks whose top class in crowd-kit's `probas_` is tied (scored with ties split
evenly, as crowdopt's are). For MACE, `same_as_one_restart` says whether its fit equals one with
`n_restarts=1`: crowd-kit 1.4.2 draws every restart's start with the same `random_state`, so
its 10 restarts are one start repeated (crowdopt's MACE draws a new start for each).

Usage: python benchmarks/peer_crowdkit.py METHOD DATASET [REPEAT]
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

PEER_METHODS = ("MajorityVote", "Wawa", "ZeroBasedSkill", "OneCoinDawidSkene", "DawidSkene",
                "GLAD", "MACE", "KOS", "MMSR")


def main(argv: list[str]) -> int:
    method, dataset = argv[:2]
    repeat = int(argv[2]) if len(argv) > 2 else 3
    warnings.filterwarnings("ignore")
    import crowdkit
    import crowdkit.aggregation as ck
    from crowdkit.aggregation.classification import wawa, zero_based_skill

    # crowd-kit 1.4.2's Wawa and ZeroBasedSkill call sklearn's check_is_fitted, which fails on
    # scikit-learn >= 1.6 ("no attribute __sklearn_tags__") for these non-sklearn classes; the
    # check only guards predict-before-fit, which fit_predict never does.
    wawa.check_is_fitted = zero_based_skill.check_is_fitted = lambda *a, **k: None

    from crowdopt.crowd.datasets import load_table

    table, gold = load_table(dataset)
    df = table.to_dataframe().infer_objects()
    out = {"method": method, "dataset": dataset, "version": crowdkit.__version__}
    if method == "KOS" and table.n_classes != 2:
        out["error"] = "binary only"
        print(json.dumps(out))
        return 0
    model = getattr(ck, method)()
    t0 = time.perf_counter()
    try:
        labels = model.fit_predict(df)
    except Exception as exc:  # noqa: BLE001 - a peer failure is a result, recorded as such
        out["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        out["time_s"] = time.perf_counter() - t0
        print(json.dumps(out))
        return 0
    out["time_s"] = out["time_first_s"] = time.perf_counter() - t0
    if out["time_first_s"] < 5.0 and repeat > 0:
        warm = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            getattr(ck, method)().fit_predict(df)
            warm.append(time.perf_counter() - t0)
        out["time_s"] = statistics.median(warm)
    pos = {v: i for i, v in enumerate(table.classes.tolist())}
    task_pos = {v: i for i, v in enumerate(table.task_ids.tolist())}
    pred = [-1] * table.n_tasks
    n_nan = 0
    for t, lab in labels.items():
        if isinstance(lab, float) and math.isnan(lab):
            n_nan += 1
            continue
        pred[task_pos[t]] = pos.get(lab, pos.get(type(next(iter(pos)))(lab), -1))
    out["labels"] = pred
    out["nan_labels"] = n_nan
    out["ties"] = tied_classes(model, task_pos, pos)
    hist = getattr(model, "loss_history_", None)
    if hist is not None:
        out["iterations"] = len(hist)
    if method == "MACE":  # are its n_restarts=10 starts different starts? (untimed)
        one = ck.MACE(n_restarts=1).fit(df)
        out["same_as_one_restart"] = bool(
            one.probas_.reindex_like(model.probas_).equals(model.probas_))
    print(json.dumps(out))
    return 0


def tied_classes(model, task_pos: dict, pos: dict) -> dict[int, list[int]] | None:
    """{task position: class positions} of the tasks whose top posterior in crowd-kit's
    `probas_` is shared by several classes (None when the model has no probas_), so that
    crowd-kit's labels can be scored with ties split evenly, as crowdopt's are."""
    probas = getattr(model, "probas_", None)
    if probas is None or not hasattr(probas, "to_numpy"):
        return None
    import numpy as np

    p = probas.to_numpy(dtype=float)
    top = p >= np.nanmax(p, axis=1, keepdims=True) - 1e-12
    cols = [pos.get(c, pos.get(type(next(iter(pos)))(c), -1)) for c in probas.columns]
    out = {}
    for r in np.flatnonzero(top.sum(1) > 1):
        out[task_pos[probas.index[r]]] = [cols[k] for k in np.flatnonzero(top[r])]
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
