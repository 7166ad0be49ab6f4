"""The OLAS active-learning loop with simulated imperfect labelers (paper 000, Sec. 2, 4.1).

One replication (digest 000, A6): a stratified train/test split, a clean stratified initial
labeled set L_0 (16% of the training pool, both classes present, digest 7.10), M labelers with
accuracies a_i ~ U(0.5, 0.95) and capacity c each. Each of T cycles fits the classifier on the
labels received so far, computes the entropy (eq. 1) of every pool point, picks the query set and
its labelers by a strategy, and buys one simulated label per point:

- OLAS: Model 10 / corrected Algorithm 1 (`solvers.olas_select.select_greedy`) with noise bound
  beta and the per-cycle budget B as a cap (digest F3, 7.9);
- ES / RS: the B highest-entropy points (Model 9) / B random points, each assigned by
  OLA (Model 2, Theorem 1, `assign_sorted`) or RLA (shuffled capacity slots, digest 7.11).

Labels (digest A5): the paper's `threshold` simulator makes a label wrong iff eps(a_i, e_j) >=
alpha (deterministic); `bernoulli` makes it wrong with probability eps. A wrong binary label is
flipped; with more classes it is drawn uniformly from the other classes (digest 7.12). The noise
uses the same entropies as the selection (digest 7.14). All five strategies of a replication share
the split, L_0, the labelers and the classifier seed, so they are compared pairwise.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from ..errors import InputError
from ..problems.olas_noise import NoiseFunction, entropy, noise_from_spec
from ..validate import choice, integer, probability, real
from .uci import Dataset

STRATEGIES = ("RS+RLA", "RS+OLA", "ES+RLA", "ES+OLA", "OLAS")  # the paper's column order
CLASSIFIERS = ("rf", "logreg")
NOISE_MODES = ("threshold", "bernoulli")


@dataclass(frozen=True)
class LoopConfig:
    """Settings of one AL run (defaults: paper Sec. 4.1 and digest 000 section 7)."""

    noise: Any = "linear"  # name, logistic spec or NoiseFunction
    alpha: float = 0.2  # threshold of the paper's label simulator
    beta: float = 0.2  # OLAS noise bound (unreported in the paper; digest 7.8: beta = alpha)
    cycles: int = 10  # T
    budget: int | None = None  # B per cycle; None = total capacity M * c
    labelers: int = 5  # M
    capacity: int = 3  # c, the same for every labeler
    acc_min: float = 0.5
    acc_max: float = 0.95
    init_frac: float = 0.16  # share of the training pool labeled (clean) before cycle 1
    test_frac: float = 0.2
    classifier: str = "rf"  # scikit-learn RandomForest defaults, or logistic regression
    noise_mode: str = "threshold"
    entropy_normalize: str = "lnC"  # digest 7.7; the UCI presets use "none" (literal eq. 1)

    @property
    def total_capacity(self) -> int:
        """Labels per cycle when every labeler is used: labelers x capacity."""
        return self.labelers * self.capacity

    @property
    def per_cycle(self) -> int:
        """Points labeled per cycle (the budget, else the total capacity)."""
        return self.total_capacity if self.budget is None else self.budget

    def noise_function(self) -> NoiseFunction:
        """The noise model of the configuration."""
        return noise_from_spec(self.noise)

    def to_dict(self) -> dict:
        """The configuration as JSON."""
        d = asdict(self)
        d["noise"] = self.noise_function().to_spec() if not isinstance(self.noise, str) else self.noise
        return d


def make_config(**kw: Any) -> LoopConfig:
    """A validated LoopConfig; every bad field raises a one-line InputError."""
    known = set(LoopConfig.__dataclass_fields__)
    extra = sorted(set(kw) - known)
    if extra:
        raise InputError(extra[0], "a loop setting (" + ", ".join(sorted(known)) + ")", "unknown")
    cfg = LoopConfig(**kw)
    noise_from_spec(cfg.noise)
    amin = probability(cfg.acc_min, "acc_min")
    amax = probability(cfg.acc_max, "acc_max")
    if amax < amin:
        raise InputError("acc_max", f"a number >= acc_min = {amin}", amax)
    labelers = integer(cfg.labelers, "labelers", lo=1)
    capacity = integer(cfg.capacity, "capacity", lo=1)
    budget = (None if cfg.budget is None
              else integer(cfg.budget, "budget", lo=1, hi=labelers * capacity))
    return replace(
        cfg, alpha=probability(cfg.alpha, "alpha"), beta=real(cfg.beta, "beta", lo=0.0),
        cycles=integer(cfg.cycles, "cycles", lo=1), budget=budget, labelers=labelers,
        capacity=capacity, acc_min=amin, acc_max=amax,
        init_frac=real(cfg.init_frac, "init_frac", lo=0.0, hi=1.0, lo_open=True, hi_open=True),
        test_frac=real(cfg.test_frac, "test_frac", lo=0.0, hi=1.0, lo_open=True, hi_open=True),
        classifier=choice(cfg.classifier, "classifier", list(CLASSIFIERS)),
        noise_mode=choice(cfg.noise_mode, "noise_mode", list(NOISE_MODES)),
        entropy_normalize=choice(cfg.entropy_normalize, "entropy_normalize", ["none", "lnC"]))


def check_strategies(strategies: Any) -> list[str]:
    """The strategy names asked for (a list or comma-separated), validated."""
    if isinstance(strategies, str):
        strategies = [s.strip() for s in strategies.split(",") if s.strip()]
    out = list(dict.fromkeys(
        choice(s.upper() if isinstance(s, str) else s, "strategies", list(STRATEGIES))
        for s in strategies))
    if not out:
        raise InputError("strategies", "at least one of " + ", ".join(STRATEGIES), "none")
    return out


# ----------------------------------------------------------------------------- classifier
def _sklearn():
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise InputError("classifier", "scikit-learn installed (pip install 'crowdopt[al]')",
                         "not installed") from None


def make_classifier(kind: str, seed: int):
    """RandomForest with scikit-learn defaults (paper, digest 7.21) or scaled logistic regression."""
    _sklearn()
    if kind == "rf":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(random_state=seed)
    if kind == "logreg":
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    raise InputError("classifier", "one of " + ", ".join(CLASSIFIERS), kind)


def class_probabilities(clf: Any, X: np.ndarray, n_classes: int) -> np.ndarray:
    """predict_proba with one column per class 0..C-1 (classes never seen get probability 0)."""
    P = clf.predict_proba(X)
    out = np.zeros((len(X), n_classes))
    out[:, np.asarray(clf.classes_, dtype=np.int64)] = P
    return out


def f1_score_of(y_true: np.ndarray, y_pred: np.ndarray, pos_label: int | None) -> float:
    """Binary F1 of `pos_label` (digest 7.13), or macro F1 when pos_label is None."""
    from sklearn.metrics import f1_score

    if pos_label is None:
        return float(f1_score(y_true, y_pred, average="macro", zero_division=0))
    return float(f1_score(y_true, y_pred, pos_label=pos_label, average="binary", zero_division=0))


# ----------------------------------------------------------------------------- setup
@dataclass(frozen=True, eq=False)
class Setup:
    """What the strategies of one replication share."""

    train: np.ndarray  # row indices of the training pool (random order)
    test: np.ndarray
    initial: np.ndarray  # positions in `train` of L_0
    accuracies: np.ndarray
    capacities: np.ndarray


def stratified_take(y: np.ndarray, frac: float, rng: np.random.Generator,
                     min_per_class: int = 0, ceil: bool = False) -> np.ndarray:
    """Positions of a stratified random sample of round(frac * n) rows (ceil on request, as
    scikit-learn's test split), split over the classes by largest remainder."""
    classes, counts = np.unique(y, return_counts=True)
    if len(classes) == 0:
        return np.zeros(0, np.int64)
    total = math.ceil(frac * len(y) - 1e-9) if ceil else int(round(frac * len(y)))
    share = counts * total / len(y)
    k = np.floor(share).astype(np.int64)
    for j in np.argsort(-(share - k), kind="stable")[: total - int(k.sum())]:
        k[j] += 1
    k = np.minimum(counts, np.maximum(k, min_per_class))
    take = [rng.permutation(np.flatnonzero(y == c))[:kc] for c, kc in zip(classes, k)]
    return np.sort(np.concatenate(take))


def make_setup(data: Dataset, cfg: LoopConfig, seed: int) -> Setup:
    """Seeded stratified split, clean initial set with every class, and the labelers."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0]))
    n = len(data.y)
    test_mask = np.zeros(n, bool)
    test_mask[stratified_take(data.y, cfg.test_frac, rng, ceil=True)] = True
    train = rng.permutation(np.flatnonzero(~test_mask))  # random pool order breaks entropy ties
    test = np.flatnonzero(test_mask)
    if len(test) == 0 or len(train) == 0:
        raise InputError("test_frac", "a split leaving rows in both train and test", cfg.test_frac)
    initial = stratified_take(data.y[train], cfg.init_frac, rng, min_per_class=1)
    acc = rng.uniform(cfg.acc_min, cfg.acc_max, cfg.labelers)
    cap = np.full(cfg.labelers, cfg.capacity, dtype=np.int64)
    return Setup(train, test, initial, acc, cap)


# ----------------------------------------------------------------------------- strategies
def choose_queries(strategy: str, e: np.ndarray, accuracies: np.ndarray, capacities: np.ndarray,
                   noise: NoiseFunction, beta: float, budget: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Query set (pool positions) and the labeler of each query, for one cycle."""
    u = len(e)
    if strategy == "OLAS":
        from ..problems.olas_select import make_instance as select_instance
        from ..solvers.olas_select import select_greedy

        sol = select_greedy(select_instance(accuracies, capacities, e, noise, beta, budget))
        return (np.asarray(sol.selected, dtype=np.int64),
                np.asarray(sol.assignment, dtype=np.int64))
    sampler, assigner = strategy.split("+")
    n = min(budget, u, int(capacities.sum()))
    if sampler == "RS":
        idx = rng.choice(u, size=n, replace=False)
    else:  # ES, Model 9: the n highest entropies, ties by pool order (digest 7.17)
        idx = np.argsort(-e, kind="stable")[:n]
    if assigner == "OLA":
        from ..problems.olas_assign import assign_sorted
        from ..problems.olas_assign import make_instance as assign_instance

        z = assign_sorted(assign_instance(accuracies, capacities, e[idx], noise)).assignment
    else:  # RLA: a uniformly random feasible assignment (shuffled capacity slots)
        slots = np.repeat(np.arange(len(capacities)), capacities)
        z = rng.permutation(slots)[:n]
    return np.asarray(idx, dtype=np.int64), np.asarray(z, dtype=np.int64)


def simulate_labels(y_true: np.ndarray, eps: np.ndarray, alpha: float, mode: str,
                    n_classes: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Labels returned by the labelers (digest A5) and the mask of wrong ones."""
    if mode == "threshold":
        wrong = eps >= alpha
    else:
        wrong = rng.random(len(eps)) < eps
    labels = np.array(y_true, dtype=np.int64, copy=True)
    if n_classes == 2:
        labels[wrong] = 1 - labels[wrong]
    elif wrong.any():
        shift = rng.integers(1, n_classes, size=int(wrong.sum()))
        labels[wrong] = (labels[wrong] + shift) % n_classes
    return labels, wrong


# ----------------------------------------------------------------------------- the loop
def run_strategy(data: Dataset, setup: Setup, strategy: str, cfg: LoopConfig, seed: int,
                 stream: int = 1) -> dict:
    """T cycles of one strategy; F1 on the test set after each fit (f1[0] = trained on L_0)."""
    noise = cfg.noise_function()
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), int(stream)]))
    X_tr, y_tr = data.X[setup.train], data.y[setup.train]
    X_te, y_te = data.X[setup.test], data.y[setup.test]
    C = data.n_classes
    labeled_X = [X_tr[setup.initial]]
    labeled_y = [y_tr[setup.initial]]
    # positions in the (randomly ordered) training pool, so ties keep a random order
    pool = np.setdiff1d(np.arange(len(setup.train)), setup.initial)
    f1, accuracy, wrong, selected, max_noise = [], [], [], [], []
    for t in range(cfg.cycles + 1):
        clf = make_classifier(cfg.classifier, seed)
        clf.fit(np.vstack(labeled_X), np.concatenate(labeled_y))
        pred = clf.predict(X_te)
        f1.append(f1_score_of(y_te, pred, data.pos_label))
        accuracy.append(float(np.mean(pred == y_te)))
        if t == cfg.cycles:
            break
        if len(pool) == 0:  # pool exhausted: nothing left to buy (digest A6 extra stop)
            wrong.append(0)
            selected.append(0)
            max_noise.append(None)
            continue
        e = entropy(class_probabilities(clf, X_tr[pool], C), cfg.entropy_normalize)
        q, z = choose_queries(strategy, e, setup.accuracies, setup.capacities, noise, cfg.beta,
                              cfg.per_cycle, rng)
        eps = noise.eps(setup.accuracies[z], e[q]) if len(q) else np.zeros(0)
        labels, bad = simulate_labels(y_tr[pool[q]], eps, cfg.alpha, cfg.noise_mode, C, rng)
        labeled_X.append(X_tr[pool[q]])
        labeled_y.append(labels)
        keep = np.ones(len(pool), bool)
        keep[q] = False
        pool = pool[keep]
        wrong.append(int(bad.sum()))
        selected.append(int(len(q)))
        max_noise.append(float(eps.max()) if len(eps) else None)
    return {"f1": f1, "accuracy": accuracy, "wrong": wrong, "selected": selected,
            "max_noise": max_noise, "final_f1": f1[-1], "final_accuracy": accuracy[-1],
            "total_wrong": int(sum(wrong)), "total_selected": int(sum(selected))}


def run_replication(data: Dataset, strategies: Any, cfg: LoopConfig, seed: int) -> dict:
    """All strategies on one shared setup (split, L_0, labelers, classifier seed)."""
    strategies = check_strategies(strategies)
    _sklearn()
    check_entropy_range(cfg, data.n_classes)
    setup = make_setup(data, cfg, seed)
    need = cfg.per_cycle
    methods = {}
    for s in strategies:
        methods[s] = run_strategy(data, setup, s, cfg, seed, stream=1 + STRATEGIES.index(s))
    return {"seed": int(seed), "n_train": int(len(setup.train)), "n_test": int(len(setup.test)),
            "n_initial": int(len(setup.initial)), "budget": int(need),
            "accuracies": [float(a) for a in setup.accuracies], "methods": methods}


def check_entropy_range(cfg: LoopConfig, n_classes: int) -> None:
    """NM1/NM2 need e <= 1: with entropy_normalize='none' that fails for C >= 3 (ln C > 1)."""
    nf = cfg.noise_function()
    if (cfg.entropy_normalize == "none" and nf.max_entropy is not None
            and math.log(n_classes) > nf.max_entropy):
        raise InputError("entropy_normalize", f"'lnC' for {n_classes} classes with noise "
                         f"{nf.name!r} (entropies must stay <= {nf.max_entropy})", "none")


def replication_task(dataset: Any, strategies: list[str], config: dict, seed: int) -> dict:
    """Executor task (experiments.executor): one replication of every strategy on `dataset`
    (a preset name or a CSV spec, see `sim.uci.load_dataset`)."""
    from .uci import load_dataset

    return run_replication(load_dataset(dataset), strategies, make_config(**config), seed)


def _sd(x: np.ndarray) -> float:
    return float(x.std(ddof=1)) if len(x) > 1 else 0.0


def summarize_replications(results: list[dict]) -> list[dict]:
    """Per strategy over replications: final F1 and accuracy (mean, sd), initial F1, labels
    bought, wrong labels, and mean F1 per cycle."""
    rows = []
    names = [s for s in STRATEGIES if any(s in r["methods"] for r in results)]
    for s in names:
        runs = [r["methods"][s] for r in results if s in r["methods"]]
        f1 = np.array([r["final_f1"] for r in runs])
        acc = np.array([r["final_accuracy"] for r in runs])
        rows.append({"strategy": s, "reps": len(runs), "f1_mean": float(f1.mean()),
                     "f1_sd": _sd(f1), "accuracy": float(acc.mean()), "accuracy_sd": _sd(acc),
                     "f1_initial": float(np.mean([r["f1"][0] for r in runs])),
                     "selected_mean": float(np.mean([r["total_selected"] for r in runs])),
                     "wrong_mean": float(np.mean([r["total_wrong"] for r in runs])),
                     "f1_per_cycle": [float(v) for v in
                                      np.mean([r["f1"] for r in runs], axis=0)]})
    return rows
