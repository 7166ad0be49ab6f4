"""CL-TAP soundness: every exact method, every bound and `certify` against exhaustive enumeration.

A proof is a claim about every instance, so the instances are drawn to hit the shapes where a
reduction can be wrong: t 1-8, a 1-5, K <= t, b from 0 to a K; every trend and crowd of the
generator, flat curves, ties, duplicate rows, zero rows (p = 1/2), budgets that leave annotators
or iterations unused in the optimum (rising curves beside strong ones, budgets a little above
t), and weights scaled down to 1e-4, 1e-8 and 1e-10. The optimum comes from `cltap_oracle` (an
enumeration written apart from the package). Checked on each instance:

- exact methods: a feasible solution, bound >= OPT, a proof only at OPT (relative 1e-7);
  head-cover and brute-force prove every instance (status optimal at OPT);
- bound methods: bound >= OPT (relative 1e-7);
- fast methods: a feasible solution, objective <= OPT;
- `certify`: lower <= OPT <= upper, and "proven optimal" only at OPT.

`make test` runs a sample (SAMPLE instances); `make soak` runs SOAK. Each deliberate mutation
of a method (the presolve re-check of a refutation off, a row of the head-cover model dropped,
the reach of a head cut short, the brute force rounding absolutely) makes the check fail.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import crowdopt
from crowdopt.problems import cltap as P
from crowdopt.problems.cltap import SPEC

sys.path.insert(0, str(Path(__file__).parent))
from cltap_oracle import OracleTimeout, optimum  # noqa: E402

REL = 1e-7  # the certificates' relative tolerance
SAMPLE, SAMPLE_CELLS = 150, 48  # the drawn set of make test: a t K <= 48 (t up to 8 with small a, K)
CHECKED = 3  # make test checks every claim on every CHECKED-th instance of it (make soak: 5,000)
SOAK, SOAK_CELLS = 5000, 160
ORACLE_CPU_S = 20.0  # an instance the enumeration cannot finish in this is drawn again
KINDS = ("generated", "flat", "ties", "duplicates", "zero-rows", "unused", "scaled")
# per-method limits: generous for exact methods on these sizes (a proof is expected), short
# searches for the local-search heuristics (only their feasibility is checked)
EXACT_LIMIT = 60.0
# the exact methods that must prove every instance of the set; milp-compact may stop short
# (weights spanning 1e-15 to 1 in one row are below HiGHS's absolute tolerances: an optimum of
# 0 beside a dual bound of 1e-14 is honestly "not proven"), but never claim a wrong proof
MUST_PROVE = ("head-cover", "brute-force")
SEARCH_LIMIT = 0.01


def inverse_weight(w: np.ndarray) -> np.ndarray:
    """p >= 1/2 with weight(p) = w (bisection to the last bit): instances with scaled weights."""
    w = np.asarray(w, dtype=float)
    lo, hi = np.full(w.shape, 0.5), np.full(w.shape, 1.0 - 1e-15)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        big = P.weight(mid) > w
        hi, lo = np.where(big, mid, hi), np.where(big, lo, mid)
    return np.where(w > 0, hi, 0.5)


def draw(seed: int, cells: int = SOAK_CELLS) -> tuple[str, P.CltapInstance]:
    """Instance number `seed` of the soundness set: (its kind, the instance); a t K <= cells
    (the compact MILP's size: every exact method must prove every instance)."""
    rng = np.random.default_rng([seed, 43])
    kind = KINDS[seed % len(KINDS)]
    t = int(rng.integers(1, 9))
    a = int(rng.integers(1, 6))
    K = int(rng.integers(1, t + 1))
    while a * t * K > cells:
        if a > 1:
            a -= 1
        if a * t * K > cells and K > 1:
            K -= 1
    b = int(rng.integers(0, a * K + 1))
    trend = str(rng.choice(["dec", "inc", "nonmono"]))
    crowd = str(rng.choice(["naive", "expert"]))
    tau = str(rng.choice(["0.25", "1", "10", "mixed"]))
    tau_v = tau if tau == "mixed" else float(tau)
    if kind in ("generated", "scaled"):
        inst = P.generate(int(rng.integers(1 << 30)), t=t, a=a, K=K, b=b, trend=trend,
                          crowd=crowd, tau=tau_v, p_max=float(rng.choice([0.99, 0.999])))
        if kind == "scaled":
            f = float(rng.choice([1e-4, 1e-8, 1e-10]))
            inst = P.make_instance(inverse_weight(f * inst.phi), t, b)
        return kind, inst
    if kind == "flat":
        p1 = rng.uniform(0.5, 0.95, size=a)
        return kind, P.make_instance(np.repeat(p1[:, None], K, axis=1), t, b)
    levels = np.array([0.5, 0.55, 0.6, 0.7, 0.8, 0.9, 0.99])
    p = rng.choice(levels, size=(a, K))
    if kind == "ties":
        return kind, P.make_instance(p, t, b)
    if kind == "duplicates":
        for j in range(1, a):
            if rng.random() < 0.6:
                p[j] = p[int(rng.integers(0, j))]
        return kind, P.make_instance(p, t, b)
    if kind == "zero-rows":
        p[rng.random(a) < 0.4] = 0.5
        if rng.random() < 0.3:
            p[:, int(rng.integers(0, K)):] = 0.5  # zero columns: late iterations worth nothing
        return kind, P.make_instance(p, t, b)
    # unused: strong rising annotators (some duplicated) beside weak ones whose first labels
    # cost budget, with a budget a little above t, so the optimum leaves some of them out
    rise = np.sort(rng.choice(levels[1:], size=(a, K)), axis=1)
    weak = rng.random(a) < 0.4
    rise[weak] = np.sort(rng.choice(levels[:4], size=(int(weak.sum()), K)), axis=1)
    if a > 1 and rng.random() < 0.5:
        rise[1] = rise[0]
    b = int(min(a * K, t + rng.integers(0, a + 2)))
    return "unused", P.make_instance(rise, t, b)


def _limit(m) -> float:
    return EXACT_LIMIT if m.kind in ("exact", "bound") else SEARCH_LIMIT


def check(seed: int, methods: tuple[str, ...] | None = None, with_certify: bool = True,
          cells: int = SOAK_CELLS) -> list[str]:
    """Every claim about instance `seed` that the enumeration refutes (empty: all sound)."""
    kind, inst = draw(seed, cells)
    cbp = crowdopt.solve(inst, "cbp")
    opt = optimum(inst.phi, inst.t, inst.b, lb=cbp.objective, cpu_s=ORACLE_CPU_S)
    tol = REL * max(opt, 1e-300)
    where = f"seed {seed} ({kind}, t={inst.t} a={inst.a} K={inst.K} b={inst.b}, OPT {opt!r})"
    bad: list[str] = []
    for m in SPEC.methods:
        if methods is not None and m.algorithm not in methods:
            continue
        if m.refuses(inst, force=True):
            continue
        r = crowdopt.solve(inst, m.algorithm, time_limit=_limit(m), force=True,
                           search_time=SEARCH_LIMIT)
        tag = f"{where} {m.algorithm}"
        if r.status.value in ("skipped",):
            continue
        if r.solution is not None:
            ev = P.evaluate(inst, r.solution)
            if not ev.feasible:
                bad.append(f"{tag}: infeasible solution")
            elif ev.objective > opt + tol:
                bad.append(f"{tag}: objective {ev.objective!r} above OPT")
        if r.bound is not None and r.bound < opt - tol:
            bad.append(f"{tag}: bound {r.bound!r} below OPT")
        if m.algorithm in MUST_PROVE:
            if r.status.value != "optimal" or not r.proven_optimal:
                bad.append(f"{tag}: not proven ({r.status}, {r.message})")
            elif r.objective < opt - tol:
                bad.append(f"{tag}: proven optimal at {r.objective!r} below OPT")
        elif r.proven_optimal and r.objective is not None and r.objective < opt - tol:
            bad.append(f"{tag}: proven optimal at {r.objective!r} below OPT")
    if with_certify:
        c = crowdopt.certify(inst, time_limit=EXACT_LIMIT, max_steps=50)
        if c.lower is not None and c.lower > opt + tol:
            bad.append(f"{where} certify: lower {c.lower!r} above OPT")
        if c.upper is not None and c.upper < opt - tol:
            bad.append(f"{where} certify: upper {c.upper!r} below OPT")
        if c.proven_optimal and (c.objective is None or c.objective < opt - tol):
            bad.append(f"{where} certify: proven optimal at {c.objective!r}")
        if not c.certified:
            bad.append(f"{where} certify: not certified ({'; '.join(c.failures)})")
    return bad


# the two instances on which a presolve "infeasible" became a wrong proof (both optimal plans
# leave annotators unused)
REGRESSIONS = {
    "rising-pair": (P.make_instance([[0.6, 0.6, 0.9, 0.9, 0.99], [0.6, 0.6, 0.9, 0.9, 0.99],
                                     [0.55, 0.7, 0.7, 0.7, 0.8]], 5, 6), 0.101160),
    "generated-nonmono": (P.generate(22780, t=5, a=4, K=4, b=7, trend="nonmono", crowd="naive",
                                     tau=0.25, p_max=0.99), 0.221047),
}


# weights x 1e-8 on which a brute force keyed on values rounded to 12 decimals merged states
# and missed the optimum by 3.8e-6 (relative)
SCALED_BRUTE = P.make_instance(inverse_weight(1e-8 * P.generate(13, t=4, a=3, K=4, b=11,
                                                                  trend="inc").phi), 4, 11)


def test_brute_force_is_exact_at_weights_of_1e_8():
    opt = optimum(SCALED_BRUTE.phi, 4, 11)
    r = crowdopt.solve(SCALED_BRUTE, "brute-force")
    assert r.proven_optimal and r.objective == pytest.approx(opt, rel=1e-12)
    assert crowdopt.certify(SCALED_BRUTE, r).certified


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_refuted_values_are_confirmed_without_presolve(name):
    inst, opt = REGRESSIONS[name]
    assert optimum(inst.phi, inst.t, inst.b) == pytest.approx(opt, abs=1e-6)
    r = crowdopt.solve(inst, "exact")
    assert r.proven_optimal and r.objective == pytest.approx(opt, abs=1e-6)
    c = crowdopt.certify(inst, max_steps=50)
    assert c.proven_optimal and c.objective == pytest.approx(opt, abs=1e-6)


def test_the_set_covers_the_shapes_where_a_reduction_can_be_wrong():
    """The drawn set holds every kind, t 1-8, a 1-5, zero budgets, and optima that leave an
    annotator unused (measured by the oracle on each annotator's removal)."""
    seen = {"kinds": set(), "t": set(), "a": set(), "b0": 0, "unused": 0}
    for seed in range(SAMPLE):
        kind, inst = draw(seed, SAMPLE_CELLS)
        seen["kinds"].add(kind)
        seen["t"].add(inst.t)
        seen["a"].add(inst.a)
        seen["b0"] += inst.b == 0
        if inst.a > 1 and inst.b >= inst.t:
            opt = optimum(inst.phi, inst.t, inst.b)
            if opt > 0 and any(optimum(np.delete(inst.phi, j, axis=0), inst.t, inst.b) >= opt
                               for j in range(inst.a)):
                seen["unused"] += 1
    assert seen["kinds"] == set(KINDS)
    assert seen["t"] == set(range(1, 9)) and seen["a"] == set(range(1, 6))
    assert seen["b0"] >= 3
    assert seen["unused"] >= SAMPLE // 10, seen["unused"]


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(4))
def test_every_claim_holds_on_the_sample(chunk):
    bad = [msg for seed in range(chunk, SAMPLE, 4 * CHECKED)
           for msg in check(seed, cells=SAMPLE_CELLS)]
    assert not bad, "\n".join(bad[:10])


def checked(seeds, quota: int, **kw) -> tuple[list[str], int, list[int]]:
    """`check` on `seeds` until `quota` instances are checked: (refuted claims, instances
    checked, seeds the enumeration could not finish within ORACLE_CPU_S, left out)."""
    bad: list[str] = []
    done, slow = 0, []
    for seed in seeds:
        if done == quota:
            break
        try:
            bad += check(seed, **kw)
        except OracleTimeout:
            slow.append(seed)
            continue
        done += 1
    return bad, done, slow


@pytest.mark.soak
@pytest.mark.parametrize("chunk", range(50))
def test_every_claim_holds_on_the_soak_set(chunk):
    """5,000 instances in all (100 per chunk; an instance the enumeration cannot finish is
    replaced by the next seed of the chunk, and the count of those is reported)."""
    bad, done, slow = checked(range(chunk, 10 * SOAK, 50), SOAK // 50)
    print(f"chunk {chunk}: {done} instances checked, {len(slow)} left to the oracle's "
          f"budget {slow[:5]}")
    assert done == SOAK // 50 and not bad, "\n".join(bad[:10])


# ------------------------------------------------------------------ mutations make it fail
def _first_failure(seeds, methods, with_certify=False, cells=SAMPLE_CELLS) -> str | None:
    """The first claim refuted on `seeds` (an exception counts: the suite would fail too)."""
    for seed in seeds:
        try:
            bad = check(seed, methods, with_certify, cells=cells)
        except Exception as exc:  # noqa: BLE001 - a crash of the mutated method is a failure
            return f"seed {seed}: {type(exc).__name__}: {exc}"
        if bad:
            return bad[0]
    return None


@pytest.fixture
def pinned_search(monkeypatch):
    """head-cover's incumbent search bounded by steps, not by its 0.2 s clock: the thresholds
    the search probes, and so which false refutation a mutation turns into a bound, are then
    the same under any load (on a busy machine the clock cut the search shorter and the
    seeds below probed other thresholds)."""
    from crowdopt.solvers import cltap_construct, cltap_exact

    real = cltap_exact.local_search

    def by_steps(inst, start, *, time_limit, **kw):
        return real(inst, start, time_limit=float("inf"), max_steps=30, **kw)

    monkeypatch.setattr(cltap_exact, "local_search", by_steps)
    # the best-of start too: its clock (t a K x 0.1 ms) cut its constructions and search
    # at other points under load, and the search then started from another plan
    real_fast = cltap_construct.fast

    def fast_by_steps(inst, *, time_limit, **kw):
        return real_fast(inst, time_limit=float("inf"), max_steps=30, **kw)

    monkeypatch.setattr(cltap_construct, "fast", fast_by_steps)


@pytest.fixture
def no_net(monkeypatch):
    """The verification step's net of fast methods off (`solvers.verify.fast_net`): it refutes
    most wrong bounds too, and a mutation here must be caught by the check it disables."""
    from crowdopt.solvers import verify

    monkeypatch.setattr(verify, "fast_net", lambda *a, **k: ([], []))


def test_mutation_refutations_not_rechecked_is_caught(monkeypatch, pinned_search, no_net):
    """With the presolve re-check of a refutation turned off, HiGHS presolve's false
    "infeasible" becomes a bound below OPT on instances of the soak set (three of its first 240
    seeds: ties and zero rows where optima leave annotators unused). The search starts from the
    constructions without the layered plan: from that plan (optimal on many of these seeds) it
    probes no threshold where presolve errs in the first 800 seeds, and the mutation must meet
    one to be caught."""
    from crowdopt.solvers import cltap_construct, cltap_exact

    monkeypatch.setattr(cltap_exact, "CONFIRM_REFUTATIONS", False)
    monkeypatch.setattr(cltap_construct, "layered", lambda *args, **kw: None)
    # the search's own refutations, not the configuration-LP start's bound (which meets the
    # optimum on these seeds and would leave the search nothing to refute)
    monkeypatch.setattr(cltap_exact, "BRANCH_NODES", 0)
    found = _first_failure([198, 228, 233], ("head-cover",), cells=SOAK_CELLS)
    assert found is not None and "below OPT" in found


def test_mutation_dropped_row_is_caught(monkeypatch, pinned_search):
    """A row of the head-cover model dropped (one label per later annotator and head, eq. 14)
    makes head-cover's answers disagree with the enumeration on the sample."""
    from crowdopt.models import cltap as M

    emit = M.emit_heads

    def mutated(*args, **kw):  # the emitted matrix (what the registered route solves)
        e = emit(*args, **kw)
        drop = np.array([name == "one_per_annotator" for name, _ in e.rows()])
        e.row_lo, e.row_hi = np.where(drop, -np.inf, e.row_lo), np.where(drop, np.inf, e.row_hi)
        return e

    monkeypatch.setattr(M, "emit_heads", mutated)
    assert _first_failure(range(SAMPLE), ("head-cover",)) is not None


def test_mutation_short_reach_is_caught(monkeypatch, pinned_search):
    """Heads fixed to 0 by their own weight alone (the later annotators' labels left out of
    their reach) refute values the optimum reaches: the sample catches it."""
    from crowdopt.solvers import cltap_exact

    monkeypatch.setattr(cltap_exact, "_reach", lambda inst: inst.phi.copy())
    assert _first_failure(range(SAMPLE), ("head-cover",)) is not None


def test_mutation_absolute_rounding_in_brute_force_is_caught(monkeypatch, no_net):
    """The brute force keyed on values rounded to 12 decimals merges distinct states when the
    weights are scaled to 1e-8: its regression instance catches it."""
    from crowdopt.solvers import cltap as S

    monkeypatch.setattr(S, "_state_key", lambda used, c: (used, tuple(np.round(np.sort(c), 12))))
    r = crowdopt.solve(SCALED_BRUTE, "brute-force")
    assert r.objective < optimum(SCALED_BRUTE.phi, 4, 11) * (1 - 1e-6)


def test_the_oracle_agrees_with_the_brute_force_and_the_compact_milp():
    """The oracle itself, against the package's two other exact routes on a few instances, and
    on one annotator labelling 8 tasks (its pruning once compared two sums of equal numbers
    taken in another order and called OPT 0)."""
    one = P.make_instance([[0.6, 0.6, 0.7, 0.8, 0.8, 0.9, 0.9, 0.99]], 8, 8)
    assert optimum(one.phi, 8, 8) == pytest.approx(float(one.phi.min()), rel=1e-12)
    for seed in range(0, 40, 3):
        _, inst = draw(seed, SAMPLE_CELLS)
        opt = optimum(inst.phi, inst.t, inst.b)
        for method in ("milp-compact", "brute-force"):
            if method == "brute-force" and (inst.t > 4 or inst.a > 3):
                continue
            r = crowdopt.solve(inst, method, time_limit=EXACT_LIMIT)
            assert r.objective == pytest.approx(opt, rel=REL, abs=1e-300), (seed, method)


if __name__ == "__main__":  # python tests/test_cltap_soundness.py [N]: count over N instances
    n = int(sys.argv[1]) if len(sys.argv) > 1 else SOAK
    bad = [msg for s in range(n) for msg in check(s)]
    print("\n".join(bad) or f"{n} instances: every claim holds")
