"""Simulation of LS_OL (paper 001, Sec. 6.1): regret R(T), cost regret R_C(T), average reward.

Environment (digest 6.1): true labels iid Bernoulli(1/2); every (re)labeling by labeler i is an
independent correctness draw with probability p_i. Regret is the pseudo-regret of Sec. 3.2:
R(T) = T U(S*) - sum_t U(S_t) with U = pi(S_t) in exploitation (true p; for WMV with the
learner's estimated weights), pi(M) when a new tester is labeled, and 1/2 for an arrival
displaced by a re-assignment (digest 7.12); R_C(T) = sum_t C(S_t) - T C(S*). The realized share
of correct outputs is reported beside it (digest 7.27).

Exploitation runs between two exploration steps are simulated as one numpy block (the learner's
state cannot change inside them); exploration draws and exploitation draws use separate seeded
streams, so `block=False` (one `select`/`observe` per step) gives the same trajectory.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InputError
from ..policies import lsol_em
from ..policies.lsol import DEFAULT_ESTIMATOR, LSOL, DisagreementFilter, Schedule
from ..problems.labeler_set import LabelerSetInstance
from ..problems.vote_accuracy import TIE_TOL, WMV_MAX, log_odds, pi_mv, pi_wmv
from ..solvers.labeler_set import select_top_k
from ..validate import choice, integer, probability_array, real

POPULATIONS = ("uniform", "uniform_good", "table1", "spammers")
TABLE1_P = (0.763, 0.781, 0.625, 0.783, 0.727)  # Table 1 (L1..L5), p_low = 0.6
TABLE2_PAPER = {  # Table 2 of the paper (500 runs, quality distribution not stated)
    "full crowd (MV)": {5: 0.5154, 10: 0.5686, 15: 0.7000, 20: 0.7997},
    "MV with LS_OL": {5: 0.8320, 10: 0.9186, 15: 0.9434, 20: 0.9820},
    "WMV with LS_OL": {5: 0.8726, 10: 0.9393, 15: 0.9641, 20: 0.9890},
}


def qualities(population: str, M: int, rng: np.random.Generator, p_low: float = 0.0,
              p_high: float = 1.0) -> np.ndarray:
    """Labeler qualities: 'uniform' U(p_low, p_high) (Sec. 6.1; digest 7.4); 'uniform_good' the
    same conditioned on the paper's assumption (A1) mean p > 1/2 (redrawn until it holds);
    'table1'; 'spammers' (M - M//3 good in U(0.6, 0.95), M//3 spammers in U(0.2, 0.4))."""
    choice(population, "population", POPULATIONS)
    if population == "table1":
        return np.array(TABLE1_P)
    if population == "spammers":
        bad = M // 3
        return np.concatenate([rng.uniform(0.6, 0.95, M - bad), rng.uniform(0.2, 0.4, bad)])
    if population == "uniform_good":
        if (p_low + p_high) / 2 <= 0.5 and p_high <= 0.5:
            raise InputError("p_high", "> 0.5 for population uniform_good", p_high)
        while True:
            p = rng.uniform(p_low, p_high, M)
            if p.mean() > 0.5:
                return p
    return rng.uniform(p_low, p_high, M)


def optimal_set(p: np.ndarray, rule: str = "mv", wmv_eps: float = 0.0) -> tuple[np.ndarray, float]:
    """S* = argmax pi(S) for known p (top-k, exact without costs) and U(S*)."""
    inst = LabelerSetInstance(np.asarray(p, float), rule=rule, wmv_eps=wmv_eps)
    s = select_top_k(inst).selected
    if rule == "mv":
        return s, pi_mv(p[s])
    return s, pi_wmv(p[s], log_odds(p[s]), wmv_eps)


def checkpoint_grid(T: int, n: int = 40) -> np.ndarray:
    """n log-spaced steps plus 1, 2, 3, 5 x 10^k and T."""
    nice = [m * 10 ** k for k in range(0, 19) for m in (1, 2, 3, 5) if m * 10 ** k <= T]
    return np.unique(np.concatenate([np.geomspace(1, T, n).astype(np.int64), nice, [T]]))


def _votes_correct(right: np.ndarray, w: np.ndarray | None, rng: np.random.Generator,
                   eps: float) -> int:
    """Correct outputs of MV (w None) or WMV over steps whose labels are right[step, voter];
    exact ties are broken by rng."""
    s = right.shape[1]
    if w is None:
        r = right.sum(axis=1)
        win, tie = 2 * r > s, 2 * r == s
    else:
        e = max(eps, TIE_TOL)
        margin = np.where(right, w, -w).sum(axis=1)
        win, tie = margin >= e, np.abs(margin) < e
    return int(win.sum()) + int((rng.random(len(right)) < 0.5)[tie].sum())


def _chunks(L: int, s: int) -> list[int]:
    """Block lengths of at most ~4M draws each."""
    chunk = max(1, (1 << 22) // max(s, 1))
    return [min(chunk, L - start) for start in range(0, L, chunk)]


def _block_correct(rng: np.random.Generator, p: np.ndarray, w: np.ndarray | None, L: int,
                   eps: float) -> int:
    """Realized number of correct outputs in L exploitation steps with set p (MV or WMV)."""
    return sum(_votes_correct(rng.random((n, len(p))) < p, w, rng, eps)
               for n in _chunks(L, len(p)))


def _exploit_labels(rng: np.random.Generator, p: np.ndarray, n: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n exploitation steps' labels from labelers with qualities p: (truth, right, labels);
    one row of len(p) + 1 uniforms per step (truth first), so a block draws what its steps
    drawn one at a time would."""
    u = rng.random((n, len(p) + 1))
    y = (u[:, 0] < 0.5).astype(np.int64)
    right = u[:, 1:] < p
    return y, right, np.where(right, y[:, None], 1 - y[:, None])


def make_learner(M: int, rule: str, estimator: str, G1: float, G2: float, schedule: str,
                 costs: np.ndarray, use_filter: bool, seed: int, **kw: Any) -> LSOL:
    """An LS_OL learner with its schedule and optional disagreement filter."""
    flt = DisagreementFilter() if use_filter else None
    return LSOL(M, rule=rule, estimator=estimator, schedule=Schedule(G1, G2, schedule),
                costs=costs, filter=flt, seed=seed, **kw)


def simulate_run(p: Any, T: int, *, rule: str = "mv", estimator: str = DEFAULT_ESTIMATOR,
                 G1: float = 2.0, G2: float = 2.0, schedule: str = "log", cost: Any = 0.02,
                 use_filter: bool = False, block: bool = True, n_checkpoints: int = 40,
                 em_labels: str = "testers", seed: int = 0) -> dict:
    """One run of LS_OL on labelers with qualities p for T steps; JSON-ready summary.
    em_labels='all': the em estimator also fits the exploitation steps' labels (drawn from
    their own stream; the realized outputs are their votes)."""
    p = probability_array(p, "p", min_len=1)
    T = integer(T, "T", lo=1)
    M = len(p)
    rule = choice(rule, "rule", ("mv", "wmv"))
    if rule == "wmv" and M > WMV_MAX:
        raise InputError("M", f"at most {WMV_MAX} labelers for rule wmv", M)
    costs = np.broadcast_to(np.asarray(cost, dtype=float), (M,)).copy()
    learner = make_learner(M, rule, estimator, G1, G2, schedule, costs, use_filter, seed,
                           em_labels=em_labels)
    explore_rng = np.random.default_rng([seed, 2])
    exploit_rng = np.random.default_rng([seed, 3])
    label_rng = np.random.default_rng([seed, 4])  # exploitation labels the learner takes
    takes = learner.takes_exploit_labels
    exploit_n = np.zeros(M)  # labels bought from each labeler on exploitation steps
    s_star, u_star = optimal_set(p, rule)
    c_star = float(costs[s_star].sum())
    util = np.empty(T)
    spent = np.empty(T)
    explored = np.zeros(T, dtype=bool)
    truth: list[int] = []
    realized = 0
    wrong_exploit = 0
    cache: dict[int, tuple[float, float, np.ndarray, np.ndarray]] = {}
    t = 1
    while t <= T:
        a = learner.select(t)
        if a.kind == "exploit":
            key = learner.version
            if key not in cache:
                S, w = learner.selection()
                u = _true_pi(p, learner, S, w)
                cache.clear()
                cache[key] = (u, float(costs[S].sum()), S, w)
            u, c, S, w = cache[key]
            end = T if not block else int(min(T, learner.exploit_until(t)))
            if not block:
                end = t
            L = end - t + 1
            util[t - 1:end] = u
            spent[t - 1:end] = c
            if not np.array_equal(S, s_star):
                wrong_exploit += L
            exploit_n[S] += L
            wv = w if rule == "wmv" else None
            if block and takes:
                learner.steps["exploit"] += L
                for n in _chunks(L, len(S) + 1):
                    _, right, labels = _exploit_labels(label_rng, p[S], n)
                    learner.observe_exploit(S, labels)
                    realized += _votes_correct(right, wv, exploit_rng, learner.wmv_eps)
            elif block:
                learner.steps["exploit"] += L
                realized += _block_correct(exploit_rng, p[S], wv, L, learner.wmv_eps)
            elif takes:
                y, _, labels = _exploit_labels(label_rng, p[S], 1)
                realized += int(learner.observe(a, labels[0]) == y[0])
            else:
                y = int(exploit_rng.integers(2))
                right = exploit_rng.random(len(S)) < p[S]
                out = learner.observe(a, np.where(right, y, 1 - y))
                realized += int(out == y)
            t = end + 1
            continue
        act = a.labelers
        if a.kind == "explore_new":
            truth.append(int(explore_rng.integers(2)))
        y = truth[a.tester]
        right = explore_rng.random(len(act)) < p[act]
        out = learner.observe(a, np.where(right, y, 1 - y))
        if a.kind == "explore_new":
            util[t - 1] = pi_mv(p[act])
            realized += int(out == y)
        else:
            util[t - 1] = 0.5
            realized += int(explore_rng.random() < 0.5)
        spent[t - 1] = float(costs[act].sum())
        explored[t - 1] = True
        t += 1
    grid = checkpoint_grid(T, n_checkpoints)
    regret = np.arange(1, T + 1) * u_star - np.cumsum(util)
    cost_regret = np.cumsum(spent) - np.arange(1, T + 1) * c_star
    st = learner.state()
    diag = run_diagnostics(p, learner, util, explored, u_star, s_star)
    diag.update(orientation_diagnostics(p, learner, np.array(truth, dtype=np.int64), u_star,
                                        exploit_n))
    return {
        "T": T, "M": M, "rule": rule, "estimator": estimator, "em_labels": em_labels,
        "p": p.tolist(),
        "checkpoints": grid.tolist(), "regret": regret[grid - 1].tolist(),
        "cost_regret": cost_regret[grid - 1].tolist(),
        "final_regret": float(regret[-1]), "final_cost_regret": float(cost_regret[-1]),
        "avg_reward": float(util.mean()), "avg_reward_realized": realized / T,
        "u_star": u_star, "s_star": s_star.tolist(), "pi_full_mv": pi_mv(p),
        "explore_steps": st["steps"]["explore_new"] + st["steps"]["explore_reassign"],
        "testers": st["testers"], "wrong_exploit_steps": wrong_exploit,
        "p_hat": st["p_hat"], "selected": st["selected"], "removed": st.get("removed", []),
        **diag,
    }


def kendall_tau(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b of two orderings (ties count as neither concordant nor discordant);
    0 when either is constant. O(M^2)."""
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    den = np.sqrt(float((sx * sx).sum()) * float((sy * sy).sum()))
    return float((sx * sy).sum() / den) if den > 0 else 0.0


def run_diagnostics(p: np.ndarray, learner: LSOL, util: np.ndarray, explored: np.ndarray,
                    u_star: float, s_star: np.ndarray) -> dict:
    """Per-run diagnostics: Kendall tau of p_hat vs p (the learned order), the true accuracy
    pi(S_T) of the set exploited at the end, the reward on exploitation steps alone, whether
    S_T = S*, and the regret per step split into exploration (u* - U on exploration steps) and
    exploitation (u* - U on exploitation steps; nonzero only when a wrong set is exploited)."""
    S, w = learner.selection()
    final = _true_pi(p, learner, S, w)
    ph = learner.p_hat()
    tau = kendall_tau(ph, p)
    T = len(util)
    ex = ~explored
    return {"kendall_tau": tau, "final_pi": float(final),
            "final_is_opt": bool(np.array_equal(np.sort(S), np.sort(s_star))),
            "exploit_reward": float(util[ex].mean()) if ex.any() else None,
            "explore_loss": float((u_star - util[explored]).sum() / T),
            "exploit_loss": float((u_star - util[ex]).sum() / T)}


def _true_pi(p: np.ndarray, learner: LSOL, S: np.ndarray, w: np.ndarray) -> float:
    """True accuracy of set S under the learner's rule (WMV with the learner's weights)."""
    if learner.rule == "mv":
        return float(pi_mv(p[S]))
    return float(pi_wmv(p[S], w, learner.wmv_eps))


def _least_wrong(p: np.ndarray, n_i: np.ndarray) -> tuple[float, float]:
    """(sd, P(wrong side)): the sd of the mean accuracy's estimate from n_i labels per labeler
    were the truth of every labeled task known, sqrt(sum_i p_i (1 - p_i) / n_i) / M (latent
    truth only adds to it), and Phi(-(mean p - 1/2) / sd), the chance that the estimated mean
    falls on the wrong side of 1/2."""
    seen = n_i > 0
    sd = math.sqrt(float(np.sum(p[seen] * (1.0 - p[seen]) / n_i[seen]))) / len(p) \
        if seen.any() else math.inf
    margin = float(p.mean()) - 0.5
    wrong = 0.5 * math.erfc(margin / (sd * math.sqrt(2.0))) if sd > 0 else float(margin <= 0)
    return sd, wrong


def orientation_diagnostics(p: np.ndarray, learner: LSOL, tester_truth: np.ndarray,
                            u_star: float, exploit_labels: np.ndarray | None = None) -> dict:
    """How much of the final set's shortfall the labels bought allow any estimator to avoid.

    A binary crowd's labels are as likely under (p, truth) as under (1 - p, 1 - truth), so
    only the constraint mean p > 1/2 orients a fit; the Bayes rule keeps the orientation whose
    estimated mean accuracy exceeds 1/2 (lsol_em.orient). Counted labels: the testers' alone
    (keys without suffix) or every label the learner bought, the testers' and the
    exploitation steps' (exploit_labels[i] from labeler i; keys `_all`):
    - final_pi_truth_labels: the set chosen on p_hat_i = (agreements with the testers' true
      labels + 1) / (labels + 2), an estimator that sees the testers' truth;
    - final_pi_truth_oriented: the set chosen on the learner's p_hat or 1 - p_hat, whichever
      orders p better (the orientation told by an oracle, the estimate itself unchanged);
    - orientation_sd[_all]: sd of the mean accuracy's estimate were the truth of those tasks
      known, sqrt(sum_i p_i (1 - p_i) / n_i) / M (latent truth only adds to it);
    - wrong_orientation_least[_all]: Phi(-(mean p - 1/2) / orientation_sd), the chance that the
      estimated mean falls on the wrong side of 1/2: a lower bound on the chance that any
      estimator orients this draw wrongly with those labels;
    - final_pi_ceiling[_all]: u* - wrong_orientation_least (u* - pi(set chosen on 1 - p)), an
      upper bound on the expected final accuracy of any estimator on this draw with those
      labels (final_pi_reversed: pi of the set chosen on 1 - p);
    - orientation_confidence: the learner's own posterior probability that its orientation is
      right (lsol_em.orientation_confidence on its estimate and the labels it fits)."""
    counts = learner.label_counts()
    M = len(p)
    n_i = counts.sum(axis=(0, 2)).astype(float)
    if len(tester_truth):
        right = counts[np.arange(len(tester_truth)), :, tester_truth].sum(axis=0)
    else:
        right = np.zeros(M)
    known = (right + 1.0) / (n_i + 2.0)
    ph = learner.p_hat()
    flip = kendall_tau(1.0 - ph, p) > kendall_tau(ph, p)
    oriented = 1.0 - ph if flip else ph
    sd, wrong = _least_wrong(p, n_i)
    extra = np.zeros(M) if exploit_labels is None else np.asarray(exploit_labels, float)
    sd_all, wrong_all = _least_wrong(p, n_i + extra)
    u_rev = _true_pi(p, learner, *learner.choose(1.0 - p))
    fit, mult = learner.fit_counts()
    return {"final_pi_truth_labels": _true_pi(p, learner, *learner.choose(known)),
            "final_pi_truth_oriented": _true_pi(p, learner, *learner.choose(oriented)),
            "mean_p_margin": float(p.mean()) - 0.5, "orientation_sd": sd,
            "wrong_orientation_least": wrong,
            "final_pi_ceiling": u_star - wrong * (u_star - u_rev), "final_pi_reversed": u_rev,
            "orientation_sd_all": sd_all, "wrong_orientation_least_all": wrong_all,
            "final_pi_ceiling_all": u_star - wrong_all * (u_star - u_rev),
            "orientation_confidence": lsol_em.orientation_confidence(
                ph, fit, learner.em_smoothing, mult)}


def run_task(M: int, T: int, population: str = "uniform", p_low: float = 0.0,
             p_high: float = 1.0, rules: tuple = ("mv",), estimator: str = DEFAULT_ESTIMATOR,
             G1: float = 2.0, G2: float = 2.0, schedule: str = "log", cost: float = 0.02,
             use_filter: bool = False, n_checkpoints: int = 40, p: Any = None,
             em_labels: str = "testers", seed: int = 0) -> dict:
    """Executor task: draw a population (seeded; or take the given p) and run LS_OL with each
    rule on it."""
    rng = np.random.default_rng([seed, 0])
    if p is not None:
        p = probability_array(p, "p", min_len=1)
    else:
        p = qualities(population, integer(M, "M", lo=1), rng,
                      real(p_low, "p_low", lo=0, hi=1), real(p_high, "p_high", lo=0, hi=1))
    if "wmv" in rules:
        p = np.clip(p, 1e-3, 1 - 1e-3)
    out: dict[str, Any] = {"p": p.tolist(), "pi_full_mv": pi_mv(p)}
    for r in rules:
        res = simulate_run(p, T, rule=r, estimator=estimator, G1=G1, G2=G2, schedule=schedule,
                           cost=cost, use_filter=use_filter, n_checkpoints=n_checkpoints,
                           em_labels=em_labels, seed=seed)
        res.pop("p")
        out[r] = res
    return out


def context_qualities(kind: str, M: int, n_types: int, rng: np.random.Generator):
    """Type-dependent qualities: finite table (n_types x M, U(0.2, 1)) or a Lipschitz
    p_i(w) = clip(a_i + b_i (w - 1/2), 0.02, 0.98), a ~ U(0.4, 0.9), b ~ U(-0.8, 0.8)."""
    if kind == "finite":
        table = rng.uniform(0.2, 1.0, (n_types, M))
        return lambda w: table[int(w)]
    a, b = rng.uniform(0.4, 0.9, M), rng.uniform(-0.8, 0.8, M)
    return lambda w: np.clip(a + b * (float(w) - 0.5), 0.02, 0.98)


def simulate_context_run(kind: str, M: int, T: int, *, n_types: int = 3, G1: float = 2.0,
                         G2: float = 2.0, z: float = 0.0, estimator: str = "pooled",
                         n_checkpoints: int = 30, seed: int = 0) -> dict:
    """LS_OL with task types (Sec. 5): regret against the per-type optimal set (MV)."""
    kind = choice(kind, "contexts", ("finite", "continuous"))
    rng = np.random.default_rng([seed, 0])
    p_of = context_qualities(kind, M, n_types, rng)
    learner = LSOL(M, estimator=estimator, schedule=Schedule(G1, G2, "log", z=z),
                   contexts=kind, seed=seed)
    env = np.random.default_rng([seed, 2])
    util = np.empty(T)
    best = np.empty(T)
    testers: list[tuple[int, Any]] = []
    for t in range(1, T + 1):
        w = int(env.integers(n_types)) if kind == "finite" else float(env.random())
        pw = p_of(w)
        best[t - 1] = optimal_set(pw)[1]
        a = learner.select(t, w)
        if a.kind == "exploit":
            util[t - 1] = pi_mv(pw[a.labelers])
            continue
        if a.kind == "explore_new":
            testers.append((int(env.integers(2)), w))
            util[t - 1] = pi_mv(pw)
        else:
            util[t - 1] = 0.5
        y, wk = testers[a.tester]
        right = env.random(M) < p_of(wk)
        learner.observe(a, np.where(right, y, 1 - y))
    grid = checkpoint_grid(T, n_checkpoints)
    regret = np.cumsum(best - util)
    return {"T": T, "M": M, "contexts": kind, "checkpoints": grid.tolist(),
            "regret": regret[grid - 1].tolist(), "final_regret": float(regret[-1]),
            "avg_reward": float(util.mean()), "avg_optimal": float(best.mean()),
            "testers": int(learner.n),
            "explore_steps": learner.steps["explore_new"] + learner.steps["explore_reassign"]}


def context_task(kind: str, M: int, T: int, n_types: int = 3, G1: float = 2.0, G2: float = 2.0,
                 z: float = 0.0, estimator: str = "pooled", seed: int = 0) -> dict:
    """Executor task wrapper of `simulate_context_run`."""
    return simulate_context_run(kind, M, T, n_types=n_types, G1=G1, G2=G2, z=z,
                                estimator=estimator, seed=seed)


def theory_schedule_constants(p: Any, alpha_frac: float = 0.5, eps: float | None = None) -> dict:
    """The Sec. 3.1 constants G1, G2 (digest A3): mu = max_{m odd} m 2^(m-1), alpha < 1/mu,
    eps < min(Delta_min, delta_min)/2 over odd top-m sets; informational (astronomical)."""
    p = np.sort(np.asarray(p, float))[::-1]
    M = len(p)
    mo = M if M % 2 else M - 1
    mu = mo * 2 ** (mo - 1)
    alpha = alpha_frac / mu
    u = [pi_mv(p[:m]) for m in range(1, M + 1, 2)]
    u_star = max(u)
    gaps = [u_star - x for x in u if u_star - x > 0]
    d_min = min(gaps) if gaps else math.nan
    q_min = float(np.min(np.diff(p[::-1]))) if M > 1 else math.nan
    eps = eps if eps is not None else 0.99 * min(d_min, q_min) / 2
    a_min = pi_mv(p)
    return {"mu": mu, "alpha": alpha, "Delta_min": d_min, "delta_min": q_min, "eps": eps,
            "a_min": a_min, "G1": 1.0 / ((1.0 / mu - alpha) ** 2 * eps ** 2),
            "G2": 1.0 / (a_min - 0.5) ** 2 if a_min > 0.5 else math.inf}
