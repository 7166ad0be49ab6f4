"""CL-TAP fast paths: CBP rules, local search, baselines, spec/CLI (digest 003 P5, P16, P21)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.optimize import brentq

from crowdopt.api import certify, compare
from crowdopt.cli import main
from crowdopt.instances import dump_instance
from crowdopt.problems import cltap as P
from crowdopt.registry import get_problem
from crowdopt.solvers.cltap import brute_force
from crowdopt.solvers.cltap_baselines import BASELINES
from crowdopt.solvers.cltap_cbp import cbp, run_ends
from crowdopt.solvers.cltap_search import local_search

SPEC = get_problem("cltap")


def _instances():
    out = [P.example(), P.example2()]
    for seed, trend in enumerate(["dec", "inc", "nonmono"] * 2):
        out.append(P.generate(seed, t=int(12 + 5 * seed), a=4, trend=trend,
                              budget_factor=1.0 + 0.5 * seed))
    out.append(P.make_instance(np.full((3, 4), 0.5), 4, 9))  # all spammers
    out.append(P.make_instance([[0.9, 0.9, 0.9]], 5, 20))  # budget above capacity
    return out


@pytest.mark.parametrize("name", ["cbp", "ta", "pa", "rgl", "rnd"])
def test_policies_are_feasible_and_use_the_budget(name):  # P5
    for inst in _instances():
        sol = cbp(inst) if name == "cbp" else BASELINES[name](inst, seed=3)
        ev = P.evaluate(inst, sol)
        assert ev.feasible, ev.violations
        if name in ("cbp", "rnd"):
            assert sol.labels == inst.capacity


def test_baselines_are_seeded():
    inst = P.generate(1, t=30, a=5)
    for name in ("rnd", "rgl", "pa"):
        a = BASELINES[name](inst, seed=7).task_of
        assert np.array_equal(a, BASELINES[name](inst, seed=7).task_of)


def test_run_ends():
    p = np.array([[0.6, 0.7, 0.7, 0.65, 0.9]])
    assert run_ends(p).tolist() == [[2, 2, 2, 4, 4]]


def test_cbp_first_step_on_nondecreasing_takes_whole_run():  # P16
    inst = P.generate(2, t=25, a=5, trend="inc", K=20, b=60)
    first = cbp(inst, budget=min(inst.K, inst.b))
    counts = (first.task_of >= 0).sum(axis=1)
    assert sorted(counts.tolist())[-1] == min(inst.K, inst.b) and counts.sum() == counts.max()


def test_cbp_decreasing_is_best_pair_to_neediest():  # P15 (h* = 1)
    inst = P.example2()
    z = cbp(inst, budget=2).task_of
    assert z[0, 0] == 0 and z[3, 0] == 1 and (z >= 0).sum() == 2


def _inverse_weight(w):
    return brentq(lambda p: float(P.weight(p)) - w, 0.5, 1 - 1e-15)


def test_local_search_fixes_the_counterexample():  # P20 + Sec. 4.3
    inst = P.make_instance([[_inverse_weight(w)] for w in (3, 3, 2, 2, 2)], 2, 5)
    sol = local_search(inst, cbp(inst), time_limit=float("inf"), max_steps=100_000,
                       target=6.0)  # stops on the proof (steps, not a clock, bound it)
    assert P.evaluate(inst, sol).objective == pytest.approx(6.0)


def test_local_search_kicks_by_the_labels_that_fit_not_the_budget():
    """A budget past every slot (b = 10^9, a K = 9) kicks as few labels as b = a K: the kick
    once grew with b (2 + b/50 random moves per restart: the search never came back)."""
    p = [[0.64, 0.56, 0.51], [0.5, 0.5, 0.5], [0.74, 0.5, 0.5]]
    for b in (9, 10**9):
        inst = P.make_instance(p, 3, b)
        stats: dict = {}
        sol = local_search(inst, cbp(inst), time_limit=0.05, stall_steps=1, stats=stats)
        assert stats["kick"] == 2 and P.evaluate(inst, sol).feasible


def test_local_search_step_budget_is_deterministic_and_respected():
    """With a step budget the search ends on it (the clock only a cap): the same seed gives
    the same assignment twice, and no more steps are taken than the budget allows."""
    inst = P.generate(3, t=8, a=3, trend="inc")
    runs = []
    for _ in range(2):
        stats: dict = {}
        sol = local_search(inst, cbp(inst), time_limit=1e6, max_steps=8, seed=7, stats=stats,
                           stall_steps=3)
        runs.append(sol.task_of)
        assert stats["stop"] == "step cap" and stats["steps"] == 8
        assert P.evaluate(inst, sol).feasible
    assert np.array_equal(runs[0], runs[1])
    with pytest.raises(ValueError, match="max_steps"):
        local_search(inst, cbp(inst), max_steps=0)


def test_certify_work_budgets_reach_the_methods_and_are_validated():
    from crowdopt.errors import InputError

    inst = P.generate(1, t=12, a=3, trend="dec")
    cert = certify(inst, time_limit=1e6, max_steps=5, max_rounds=3, colgen_rounds=2,
                   branch_nodes=4, seed=2)
    runs = {r["algorithm"]: r for r in cert.details["runs"]}
    ls = runs["cbp+ls"]["certificate"]["details"]["local_search"]
    assert ls["steps"] <= 5 and ls["stop"] != "time limit"
    assert cert.details["max_steps"] == 5 and cert.details["max_rounds"] == 3
    assert cert.details["colgen_rounds"] == 2 and cert.details["branch_nodes"] == 4
    for bad in ({"max_steps": 0}, {"max_rounds": 1.5}, {"colgen_rounds": 0},
                {"branch_nodes": -3}):
        with pytest.raises(InputError, match="max_|colgen_|branch_"):
            certify(inst, **bad)


def test_colgen_round_budget_stops_column_generation_alone_with_a_valid_bound():
    """colgen_rounds caps column generation only (config-lp keeps max_rounds); stopped by it,
    the bound is the best Lagrangian one (at or above the LP optimum), never the RMP value."""
    from crowdopt.problems.catalogue import RunOptions
    from crowdopt.solvers import cltap as C

    inst = P.generate(0, t=20, a=4, trend="inc")
    full = C._colgen(inst, RunOptions(max_rounds=50))
    # more rounds than the cut below (12 here; how many depends on which optimal duals HiGHS
    # returns, which may differ between processors: t = 12, a = 3 took 4 on one and 2 on another)
    assert full.details["converged"] and full.details["rounds"] > 2
    lp = full.bound  # the LP optimum, >= OPT
    opts = RunOptions(max_rounds=4, colgen_rounds=2)
    cut = C._colgen(inst, opts)
    det = cut.details
    assert det["rounds"] == 2 and det["colgen_status"] == "round cap" and not det["converged"]
    assert det["lagrangian_bound"] >= lp - 1e-7 and det["rmp"] <= lp + 1e-7
    assert cut.bound == min(det["lagrangian_bound"], det["closed_form"]) >= lp - 1e-7
    assert "stopped after 2 rounds" in cut.bound_source
    assert C._config_lp(inst, opts).details["rounds"] == 4
    assert C._colgen(inst, RunOptions(max_rounds=2)).details["rounds"] == 2  # the fallback


def test_branch_node_budget_stops_config_branch_alone_with_a_valid_bound(monkeypatch):
    """branch_nodes caps the configuration LP with branching only (max_rounds when unset);
    cut by it, the bound is still at or above the optimum head-cover proves without it."""
    import crowdopt
    from crowdopt.problems.catalogue import RunOptions
    from crowdopt.solvers import cltap as C
    from crowdopt.solvers import cltap_exact

    monkeypatch.setattr(cltap_exact, "BRANCH_NODES", 0)  # head-cover's start without it
    inst = P.generate(0, t=20, a=3, trend="inc")
    exact = crowdopt.solve(inst, "head-cover", time_limit=120, force=True)
    assert exact.proven_optimal
    nodes = []
    for budget, opts in ((3, RunOptions(max_rounds=50, branch_nodes=3)),
                         (3, RunOptions(max_rounds=3)),
                         (9, RunOptions(max_rounds=3, branch_nodes=9))):
        out = C._config_branch(inst, opts)
        nodes.append(out.details["nodes"])
        assert out.details["nodes"] <= budget
        assert out.bound >= exact.objective * (1 - 1e-9)
    assert nodes[2] > 3  # the budget, not the max_rounds beside it, stopped the tree


@pytest.mark.slow
def test_local_search_never_worse_and_feasible():  # P21
    rng = np.random.default_rng(31)
    for inst in _instances():
        for name in ("rnd", "ta"):
            start = BASELINES[name](inst, seed=int(rng.integers(100)))
            sol = local_search(inst, start, time_limit=0.25, seed=1)
            ev, ev0 = P.evaluate(inst, sol), P.evaluate(inst, start)
            assert ev.feasible, ev.violations
            assert ev.objective >= ev0.objective - 1e-12


def _removal_moves_one_by_one(st, i1, js, ks, free_tabu):
    """The deletions and external swaps onto i1 of the removals (js, ks), each key taken from
    c after applying the move to a copy of the state: the reference of the batched scorer."""
    import copy

    from crowdopt.solvers.cltap_search import objective_key

    out = []
    for j, k in zip(js.tolist(), ks.tolist()):
        tasks, _ = st.removal_effect(j, k)
        if (tasks[1:] == i1).any():
            s2 = copy.deepcopy(st)
            s2.apply(("del", j, k))
            out.append((objective_key(s2.c), ("del", j, k)))
        after_n = st.n - (np.arange(st.inst.a) == j)
        has = st.lab[:, i1].copy()
        if st.z[j, k] == i1:
            has[j] = False
        ok = (after_n < st.inst.K) & ~has & free_tabu
        if ok.any():
            gain = np.where(ok, st.inst.phi[np.arange(st.inst.a),
                                            np.minimum(after_n, st.inst.K - 1)], -np.inf)
            mv = ("ext", j, k, int(np.argmax(gain)), i1)
            s2 = copy.deepcopy(st)
            s2.apply(mv)
            out.append((objective_key(s2.c), mv))
    return out


def test_batched_removal_moves_equal_the_moves_applied_one_by_one():
    """The local search scores every removal of a step at once (one row of a matrix each):
    the same moves, in the same order, with keys equal to the bit to those of the state after
    the move (ties are broken by order, so an inexact key would change the search)."""
    from crowdopt.solvers.cltap_search import _removal_moves, _State

    rng = np.random.default_rng(33)
    checked = 0
    for inst in _instances():
        for name in ("rnd", "ta", "cbp"):
            start = (cbp(inst) if name == "cbp"
                     else BASELINES[name](inst, seed=int(rng.integers(100))))
            st = _State(inst, start.task_of)
            used_j, used_k = np.nonzero(st.z >= 0)
            for i1 in rng.choice(inst.t, size=min(inst.t, 3), replace=False).tolist():
                free = rng.random(inst.a) < 0.8
                got = _removal_moves(st, i1, used_j, used_k, free)
                assert got == _removal_moves_one_by_one(st, i1, used_j, used_k, free)
                checked += len(got)
    assert checked > 100


def test_local_search_reaches_optimum_on_tiny():
    rng = np.random.default_rng(32)
    hits = 0
    for _ in range(10):
        t, a = int(rng.integers(2, 5)), int(rng.integers(1, 4))
        inst = P.make_instance(rng.uniform(0.5, 0.95, (a, t)), t, int(rng.integers(t, a * t + 1)))
        opt = brute_force(inst)[0]
        val = P.evaluate(inst, local_search(inst, cbp(inst), time_limit=float("inf"),
                                            max_steps=200)).objective  # ~0.3 s, any load
        assert val <= opt + 1e-9
        hits += val >= opt - 1e-9
    assert hits >= 6


@pytest.mark.slow
def test_spec_certify_and_compare():
    cert = certify(P.example())
    assert cert["certified"] and cert["ratio"] == 1.0 and cert["lower"] == pytest.approx(0.569373,
                                                                                         abs=1e-6)
    big = P.generate(0, t=100, a=10, budget_factor=3)
    cert = certify(big, time_limit=1)
    assert cert["certified"] and 0 < cert["ratio"] <= 1
    assert cert["upper"] <= SPEC.method("lp-closed-form").run(big, None).bound + 1e-12
    rows = compare(P.example2(), algorithms=["cbp", "cbp+ls", "milp-compact"])
    assert [r.status for r in rows] == ["feasible", "feasible", "optimal"]
    assert all(r.gap == 0.0 for r in rows)


def test_cli_generate_solve_certify(tmp_path, capsys):
    path = tmp_path / "i.json"
    path.write_text(dump_instance(SPEC, P.example2()))
    assert main(["certify", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ratio"] == 1.0 and doc["problem"] == "cltap"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"problem": "cltap", "t": 2, "b": 1, "p": [[0.5, 2]]}))
    assert main(["solve", str(bad)]) == 2


def test_reproduce_task_functions():
    from crowdopt.experiments import cltap_repro as R

    recs = [{"fn": "x:small_instance", "params": {"t": 3, "trend": "inc"},
             "result": R.small_instance(3, 3, "inc", 0.1, 10.0, seed=0)},
            {"fn": "x:large_instance", "params": {"t": 100, "trend": "dec", "horizon": 0.0},
             "result": R.large_instance(100, 10, "dec", 0.1, 2.0, seed=0)},
            {"fn": "x:figure_errors", "params": {"fig": "fig7", "x": 3, "trend": "inc"},
             "result": R.figure_errors("fig7", 3, "inc", seed=0)},
            {"fn": "x:baseline_errors", "params": {"trend": "dec", "budget_factor": 2.0},
             "result": R.baseline_errors(30, 5, "dec", 2.0, seed=0)},
            {"fn": "x:shape_instance", "params": {"t": 30, "trend": "inc"},
             "result": R.shape_instance(6, 2, "inc", 0.1, 30.0, seed=0)}]
    small = recs[0]["result"]
    assert small["status"] == "optimal" and small["cbp"] <= small["opt"] + 1e-9
    large = recs[1]["result"]
    assert 0 <= large["cbp_ratio"] <= large["best_ratio"] + 1e-12 <= 1 + 1e-9
    assert large["ub"] <= large["ub_lp"] + 1e-12 and large["certified"]
    # the new bound beside the older ones: the tightest is the least of them
    assert large["ub"] <= large["ub_old"] + 1e-12
    assert large["ub_new"] is None or large["ub"] <= large["ub_new"] + 1e-12
    s = R.summarize(recs)
    assert len(s["small"]) == len(s["large"]) == len(s["baselines"]) == len(s["figs"]) == 1
    assert s["large"][0]["reading"].startswith("per-t")
    assert s["figs"][0]["nearest"] in R.POLICIES[1:]
    assert s["small"][0]["paper_cbp_%"] == 99.25
    shape = recs[4]["result"]
    assert shape["status"] == "optimal" and shape["best"] <= shape["opt"] + 1e-9
    assert shape["opt"] <= shape["ub"] * (1 + 1e-9) and len(s["shape"]) == 1
    assert shape["opt"] <= shape["ub_new"] * (1 + 1e-9)


def test_shape_verdict_compares_the_proven_optimum_with_the_paper():
    from crowdopt.experiments.cltap_repro import shape_verdict

    row = {"trend": "inc", "t": 30, "a": 3, "n": 5, "proven": 5, "opt/ub_lp_%": "75.84",
           "opt/ub_%": "88.43"}
    text = shape_verdict([row])
    assert "75.8 % of UB_LP" in text and "1000 (86.53 %): out of reach" in text
    assert "88.4 % of the tightest cheap bound on average, at or above" in text
    assert shape_verdict([{**row, "proven": 4}]) == ""  # an unproven seed: no claim
    assert shape_verdict([{**row, "trend": "dec"}]) == ""
