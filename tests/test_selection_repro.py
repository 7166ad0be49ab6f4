"""`crowdopt reproduce selection` (paper 004 Figs. 1, 4(b)): simulator, one trial, smoke report."""

from __future__ import annotations

import numpy as np
import pytest

from crowdopt.experiments.selection_repro import (
    METHODS,
    build_tasks,
    k_grid,
    reproduce,
    simulate_table,
    trial,
)


def test_simulated_workers_answer_with_their_reliability():
    table, gold, w = simulate_table(np.random.default_rng(0), 5, 20000, 3, 2.3, 2.0)
    z = table.dense()
    acc = (z == gold.truth(table.n_tasks)[:, None]).mean(axis=0)
    assert np.allclose(acc, w, atol=0.015)
    wrong = z[z != gold.truth(table.n_tasks)[:, None]]
    assert set(np.unique(wrong).tolist()) <= {0, 1, 2}


def test_one_trial_is_seeded_and_respects_the_budget():
    a = trial(source="sim", k_values=[3, 8, 31], workers=31, items=200, seed=5)
    b = trial(source="sim", k_values=[3, 8, 31], workers=31, items=200, seed=5)
    assert a == b
    assert all(s <= k for s, k in zip(a["size_selected"], a["K"]))
    assert all(s <= k for s, k in zip(a["size_plugin"], a["K"]))
    for m in METHODS:
        assert all(0.0 <= v <= 1.0 for v in a["acc"][m])


def test_grid_and_tasks():
    assert k_grid("sim", 1, 31) == list(range(3, 32))
    assert k_grid("bluebirds", 7, 31)[-1] == 39
    tasks = build_tasks(scale="smoke", sources=["sim"], trials=2, seed=4)
    assert [t.seed for t in tasks] == [4, 5]


def test_smoke_report(tmp_path):
    pytest.importorskip("matplotlib", reason="report plots need the plot extra")
    res = reproduce(tmp_path, sources=["sim"], trials=1, workers=9, items=80,
                    show_progress=False)
    assert res["failed"] == 0 and (tmp_path / "report.md").exists()
    assert (tmp_path / "selection_sim.png").exists()
    text = (tmp_path / "report.md").read_text()
    assert "WMV-lin selected" in text and "|S| selected" in text


def test_fig2_sweeps_report(tmp_path):
    """Fig. 2(a)/(b): one row per swept value at K = 20, WMV methods only, and a PNG each."""
    pytest.importorskip("matplotlib", reason="report plots need the plot extra")
    from crowdopt.experiments.selection_repro import SWEEPS, reproduce

    res = reproduce(tmp_path, sources=["fig2a", "fig2b"], trials=1, show_progress=False)
    assert res["failed"] == 0 and not res["rows"]
    for fig, sw in SWEEPS.items():
        part = [r for r in res["sweep_rows"] if r["figure"] == fig]
        assert [r[sw["param"]] for r in part] == sorted(sw["smoke"])
        assert all(0.0 <= r["WMV-lin selected"] <= 1.0 and 1 <= r["|S| selected"] <= 20
                   for r in part)
        assert (tmp_path / f"selection_{fig}.png").exists()
    assert "Fig. 2(a)" in (tmp_path / "report.md").read_text()
