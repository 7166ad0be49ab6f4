"""Noise-function estimation and beta tuning from a golden set (paper 000, Sec. 3.4; digest A7, A8).

A golden table has one row per (sample, labeler) with columns
`sample, labeler, labeler_accuracy, given_label, true_label[, entropy]` (aliases `sample_id`,
`labeler_id`). The noise fit is a two-feature logistic regression of "the label is correct" on
(entropy e, accuracy a): eps_hat(a, e) = 1 - sigmoid(w0 + we*e + wa*a), solved by Newton's
method with a tiny ridge (digest 7.15: no real penalty). It is a valid noise model iff
we <= 0 <= wa; otherwise `monotone='warn'` keeps it and says so, `'clip'` refits with the
offending coefficient fixed at 0, `'error'` raises. Missing entropies come from out-of-fold
predictions of a classifier trained on the golden true labels and a features table.

Beta tuning (A8) is an offline replay: split the golden samples into a pool part and an
evaluation part, train on a clean initial subset of the pool, run Model 10 (Algorithm 1) with
eps_hat and each beta, take the RECORDED label of each chosen (sample, labeler) pair, retrain and
score F1 on the evaluation part; the best mean F1 over the splits wins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..files import read_input
from ..problems.olas_noise import LogisticNoise, NoiseFunction, entropy
from ..validate import choice, clean_text, csv_rows, integer, real, real_text, utf8_text
from .olas_loop import class_probabilities, f1_score_of, make_classifier, stratified_take

ALIASES = {"sample_id": "sample", "labeler_id": "labeler", "accuracy": "labeler_accuracy"}
REQUIRED = ("sample", "labeler", "labeler_accuracy", "given_label", "true_label")


# ----------------------------------------------------------------------------- tables
@dataclass(frozen=True, eq=False)
class GoldenTable:
    """Long golden table: one row per (sample, labeler) pair."""

    sample: list[str]
    labeler: list[str]
    accuracy: np.ndarray  # labeler accuracy per row
    given: list[str]
    true: list[str]
    entropy: np.ndarray | None  # per row (constant per sample), or None

    @property
    def correct(self) -> np.ndarray:
        """Whether each given label equals the true one."""
        return np.array([g == t for g, t in zip(self.given, self.true)], dtype=bool)

    def samples(self) -> list[str]:
        """The sample ids, in first-seen order."""
        return list(dict.fromkeys(self.sample))

    def labelers(self) -> tuple[list[str], np.ndarray]:
        """Labeler ids (first-seen order) and their accuracies."""
        acc: dict[str, float] = {}
        for lab, a in zip(self.labeler, self.accuracy):
            acc.setdefault(lab, float(a))
        return list(acc), np.array(list(acc.values()))

    def true_labels(self) -> dict[str, str]:
        """sample -> true label."""
        return dict(zip(self.sample, self.true))

    def given_labels(self) -> dict[tuple[str, str], str]:
        """(sample, labeler) -> given label."""
        return {(s, lab): g for s, lab, g in zip(self.sample, self.labeler, self.given)}


def _read_csv(path: str | Path, what: str) -> tuple[list[str], list[list[str]]]:
    p = Path(path)
    # a BOM is not part of the header; missing, a folder, unreadable: one line naming it
    text = utf8_text(read_input(p, what), what, p.name)
    delim = "\t" if p.suffix.lower() in (".tsv", ".tab") or ("\t" in text.split("\n", 1)[0]) else ","
    rows = [r for r in csv_rows(text.splitlines(), f"{what} {p.name}", delimiter=delim)
            if any(c.strip() for c in r)]
    if not rows:
        raise InputError(what, "a header row", "an empty file")
    header = [ALIASES.get(h.strip().lower(), h.strip().lower()) for h in rows[0]]
    body = rows[1:]
    for r, row in enumerate(body):
        if len(row) != len(header):
            raise InputError(f"{p.name} row {r + 2}", f"{len(header)} columns", f"{len(row)}")
    return header, [[c.strip() for c in row] for row in body]


def golden_from_rows(rows: list[dict]) -> GoldenTable:
    """Validated golden table from dicts with the REQUIRED keys (and optional `entropy`)."""
    if not rows:
        raise InputError("golden", "at least one (sample, labeler) row", "none")
    for key in REQUIRED:
        if key not in rows[0]:
            raise InputError("golden", f"a column {key!r}", sorted(rows[0]))
    filled = [str(r.get("entropy", "")).strip() != "" for r in rows]
    has_e = all(filled)
    if any(filled) and not has_e:
        raise InputError(f"golden row {filled.index(False) + 1}: entropy",
                         "an entropy on every row or on none", "an empty cell")
    sample, labeler, given, true = [], [], [], []
    acc = np.empty(len(rows))
    ent = np.empty(len(rows)) if has_e else None
    seen_acc: dict[str, float] = {}
    seen_true: dict[str, str] = {}
    seen_e: dict[str, float] = {}
    pairs: set[tuple[str, str]] = set()
    for k, r in enumerate(rows):
        where = f"golden row {k + 1}"
        s, lab = str(r["sample"]).strip(), str(r["labeler"]).strip()
        if not s or not lab:
            raise InputError(f"{where}: sample/labeler", "non-empty ids", (s, lab))
        clean_text(s, f"{where}: sample", "an id")  # the text rule of every id and label
        clean_text(lab, f"{where}: labeler", "an id")
        if (s, lab) in pairs:
            raise InputError(f"{where}", "one row per (sample, labeler)", f"a repeat of {(s, lab)}")
        pairs.add((s, lab))
        a = _number(r["labeler_accuracy"], f"{where}: labeler_accuracy", 0.0, 1.0)
        if seen_acc.setdefault(lab, a) != a:
            raise InputError(f"{where}: labeler_accuracy", f"the same accuracy for labeler {lab!r}"
                             f" ({seen_acc[lab]})", a)
        t, g = str(r["true_label"]).strip(), str(r["given_label"]).strip()
        if t == "" or g == "":
            raise InputError(f"{where}: labels", "non-empty given_label and true_label", (g, t))
        clean_text(t, f"{where}: true_label", "a label")
        clean_text(g, f"{where}: given_label", "a label")
        if seen_true.setdefault(s, t) != t:
            raise InputError(f"{where}: true_label", f"one true label for sample {s!r}", t)
        if ent is not None:
            e = _number(r["entropy"], f"{where}: entropy", 0.0, None)
            if not math.isclose(seen_e.setdefault(s, e), e, rel_tol=1e-9, abs_tol=1e-12):
                raise InputError(f"{where}: entropy", f"one entropy for sample {s!r}", e)
            ent[k] = e
        sample.append(s)
        labeler.append(lab)
        given.append(g)
        true.append(t)
        acc[k] = a
    classes = set(true)
    stray = next((k for k, g in enumerate(given) if g not in classes), None)
    if stray is not None:  # a typo or another coding, never silently "wrong"
        raise InputError(f"golden row {stray + 1}: given_label",
                         f"one of the classes {sorted(classes)} (the true labels)", given[stray])
    return GoldenTable(sample, labeler, acc, given, true, ent)


def _number(v: Any, field: str, lo: float | None, hi: float | None) -> float:
    """A number cell by the number grammar (`validate.real_text`), in [lo, hi]."""
    return real_text(v, field, lo=lo, hi=hi)


def read_golden(path: str | Path) -> GoldenTable:
    """The golden table of a CSV file."""
    header, body = _read_csv(path, "--golden")
    return golden_from_rows([dict(zip(header, row)) for row in body])


def read_features(path: str | Path) -> tuple[list[str], np.ndarray]:
    """Features table: a `sample` (or `sample_id`) column and numeric feature columns."""
    header, body = _read_csv(path, "--features")
    if "sample" not in header:
        raise InputError("--features", "a 'sample' column", header)
    k = header.index("sample")
    ids = [clean_text(row[k], f"--features row {r + 2}: sample", "an id")
           for r, row in enumerate(body)]
    if len(set(ids)) != len(ids):
        raise InputError("--features", "one row per sample", "repeated sample ids")
    X = np.empty((len(body), len(header) - 1))
    for r, row in enumerate(body):
        vals = [c for j, c in enumerate(row) if j != k]
        for j, v in enumerate(vals):
            X[r, j] = _number(v, f"--features row {r + 2}", None, None)
    return ids, X


# ----------------------------------------------------------------------------- logistic fit
@dataclass(frozen=True)
class NoiseFit:
    """The fitted eps_hat, its coefficients (P(correct) parameterization) and diagnostics."""

    noise: LogisticNoise
    monotone: bool
    clipped: list[str]
    warnings: list[str]
    n: int
    n_correct: int
    log_loss: float
    iterations: int
    converged: bool

    def to_dict(self) -> dict:
        """The fit as JSON (noise model, weights, fit statistics)."""
        return {"noise": self.noise.to_spec(), "w0": self.noise.w0, "we": self.noise.we,
                "wa": self.noise.wa, "monotone": self.monotone, "clipped": self.clipped,
                "warnings": self.warnings, "n": self.n, "n_correct": self.n_correct,
                "log_loss": self.log_loss, "iterations": self.iterations,
                "converged": self.converged,
                "spec": f"logistic:{self.noise.w0!r},{self.noise.we!r},{self.noise.wa!r}"}


def _newton_logistic(F: np.ndarray, z: np.ndarray, l2: float, max_iter: int = 100,
                     tol: float = 1e-10) -> tuple[np.ndarray, int, bool]:
    """Maximum likelihood of z ~ sigmoid(F w), ridge l2 on all but the intercept column."""
    w = np.zeros(F.shape[1])
    pen = np.full(F.shape[1], l2)
    pen[0] = 0.0 if F.shape[1] > 1 else l2
    for it in range(1, max_iter + 1):
        eta = F @ w
        p = np.exp(-np.logaddexp(0.0, -eta))
        grad = F.T @ (z - p) - pen * w
        W = p * (1 - p)
        H = (F * W[:, None]).T @ F + np.diag(pen) + 1e-12 * np.eye(F.shape[1])
        step = np.linalg.solve(H, grad)
        w = w + step
        if np.max(np.abs(step)) < tol * (1 + np.max(np.abs(w))):
            return w, it, True
    return w, max_iter, False


def fit_logistic_noise(entropies: Any, accuracies: Any, correct: Any, *, monotone: str = "warn",
                       l2: float = 1e-6) -> NoiseFit:
    """Fit eps_hat(a, e) = 1 - sigmoid(w0 + we*e + wa*a) to correct/incorrect outcomes (A7)."""
    choice(monotone, "monotone", ["warn", "clip", "error"])
    e = np.asarray(entropies, float)
    a = np.asarray(accuracies, float)
    z = np.asarray(correct, float)
    if not (len(e) == len(a) == len(z)) or len(z) == 0:
        raise InputError("golden", "equal-length non-empty entropy, accuracy, outcome columns",
                         (len(e), len(a), len(z)))
    full = np.column_stack([np.ones_like(e), e, a])
    names = ["w0", "we", "wa"]
    active = [0, 1, 2]
    warnings: list[str] = []
    clipped: list[str] = []
    while True:
        w_act, iters, ok = _newton_logistic(full[:, active], z, l2)
        w = np.zeros(3)
        w[active] = w_act
        bad = [k for k in (1, 2) if k in active and ((k == 1 and w[k] > 0) or (k == 2 and w[k] < 0))]
        if not bad or monotone != "clip":
            break
        for k in bad:
            active.remove(k)
            clipped.append(names[k])
    if not ok:
        warnings.append("Newton iterations did not converge (the outcomes may be separable)")
    mono = w[1] <= 0 <= w[2]
    if not mono:
        msg = (f"fitted coefficients we={w[1]:.4g}, wa={w[2]:.4g} break monotonicity "
               "(need we <= 0 <= wa)")
        if monotone == "error":
            raise InputError("golden", "outcomes giving a monotone noise model (we <= 0 <= wa)",
                             f"we={w[1]:.4g}, wa={w[2]:.4g}", note="use --monotone clip")
        warnings.append(msg)
    if clipped:
        warnings.append("clipped to 0 and refitted: " + ", ".join(clipped))
    eta = full @ w
    ll = float(np.mean(np.logaddexp(0.0, -eta) * z + np.logaddexp(0.0, eta) * (1 - z)))
    noise = LogisticNoise(float(w[0]), float(w[1]), float(w[2]))
    return NoiseFit(noise, bool(mono), clipped, warnings, int(len(z)), int(z.sum()), ll, iters,
                    bool(ok))


# ----------------------------------------------------------------------------- entropies
@dataclass(frozen=True, eq=False)
class GoldenData:
    """Golden samples joined with features: ids, X, integer true labels, class names."""

    ids: list[str]
    X: np.ndarray
    y: np.ndarray
    classes: list[str]
    pos_label: int | None

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return len(self.classes)


def join_features(golden: GoldenTable, feature_ids: list[str], X: np.ndarray,
                  pos_label: str | None = None) -> GoldenData:
    """Golden samples in first-seen order with their features and true labels."""
    index = {s: k for k, s in enumerate(feature_ids)}
    ids = golden.samples()
    missing = [s for s in ids if s not in index]
    if missing:
        raise InputError("--features", "a row for every golden sample", f"missing {missing[0]!r}")
    truth = golden.true_labels()
    classes = sorted(set(truth.values()) | set(golden.given))
    cidx = {c: k for k, c in enumerate(classes)}
    y = np.array([cidx[truth[s]] for s in ids], dtype=np.int64)
    pos: int | None = None
    if len(classes) == 2:
        if pos_label is None:
            pos = int(np.argmin(np.bincount(y, minlength=2)))
        else:
            pos = cidx[choice(str(pos_label), "--pos-label", classes)]
    return GoldenData(ids, X[[index[s] for s in ids]], y, classes, pos)


def out_of_fold_entropy(data: GoldenData, *, classifier: str = "rf", folds: int = 5,
                        normalize: str = "lnC", seed: int = 0) -> dict[str, float]:
    """Entropy of each golden sample from a classifier that did not see it (K-fold)."""
    folds = integer(folds, "folds", lo=2)
    n = len(data.y)
    if n < folds:
        raise InputError("folds", f"at most the number of golden samples ({n})", folds)
    rng = np.random.default_rng(seed)
    fold = np.empty(n, dtype=np.int64)
    fold[rng.permutation(n)] = np.arange(n) % folds
    P = np.zeros((n, data.n_classes))
    for k in range(folds):
        tr, te = fold != k, fold == k
        clf = make_classifier(classifier, seed)
        clf.fit(data.X[tr], data.y[tr])
        P[te] = class_probabilities(clf, data.X[te], data.n_classes)
    e = entropy(P, normalize)
    return {s: float(v) for s, v in zip(data.ids, e)}


def estimate_noise(golden: GoldenTable, *, features: tuple[list[str], np.ndarray] | None = None,
                   classifier: str = "rf", folds: int = 5, normalize: str = "lnC",
                   monotone: str = "warn", seed: int = 0) -> tuple[NoiseFit, str]:
    """A7: the logistic noise fit; entropies from the table, else out-of-fold from features.

    Returns the fit and where the entropies came from ('table' or 'out-of-fold').
    """
    if golden.entropy is not None:
        e, source = golden.entropy, "table"
    else:
        if features is None:
            raise InputError("--features", "a features table (the golden table has no entropy "
                             "column)", "none")
        data = join_features(golden, *features)
        by_sample = out_of_fold_entropy(data, classifier=classifier, folds=folds,
                                        normalize=normalize, seed=seed)
        e, source = np.array([by_sample[s] for s in golden.sample]), "out-of-fold"
    return fit_logistic_noise(e, golden.accuracy, golden.correct, monotone=monotone), source


# ----------------------------------------------------------------------------- beta tuning
MAX_GRID = 10_000  # beta values of one --grid


def parse_grid(text: str) -> list[float]:
    """'lo:hi:step' (inclusive) or a comma list '0.05,0.1,0.2'."""
    try:
        if ":" in text:
            lo, hi, step = (real_text(v, "--grid") for v in text.split(":"))
            if step <= 0 or hi < lo:
                raise ValueError
            n = int(math.floor((hi - lo) / step + 1e-9)) + 1
            if n > MAX_GRID:
                raise InputError("--grid", f"at most {MAX_GRID} beta values", text)
            vals = [round(lo + k * step, 12) for k in range(n)]
        else:
            vals = [real_text(v, "--grid") for v in text.split(",") if v.strip()]
    except ValueError as exc:
        if isinstance(exc, InputError) and "at most" in exc.expected:
            raise
        raise InputError("--grid", "'lo:hi:step' or a comma list of finite numbers",
                         text) from None
    if not vals or any(v < 0 or not math.isfinite(v) for v in vals):
        raise InputError("--grid", "non-negative beta values", text)
    return vals


@dataclass(frozen=True)
class TuneResult:
    rows: list[dict]  # per beta: mean/sd F1, selected, wrong
    best_beta: float
    splits: list[dict] = field(default_factory=list)  # per (split, beta) detail


def tune_beta(golden: GoldenTable, features: tuple[list[str], np.ndarray], noise: NoiseFunction,
              betas: list[float], *, splits: int = 5, eval_frac: float = 0.3,
              init_frac: float = 0.2, capacity: int | None = None, budget: int | None = None,
              classifier: str = "rf", normalize: str = "lnC", pos_label: str | None = None,
              seed: int = 0, show_progress: bool = False) -> TuneResult:
    """A8: offline replay of Model 10 on the golden set for each beta; best mean F1 wins."""
    from ..problems.olas_select import make_instance as select_instance
    from ..progress import progress
    from ..solvers.olas_select import select_greedy

    splits = integer(splits, "splits", lo=1)
    real(eval_frac, "eval_frac", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    real(init_frac, "init_frac", lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    if not betas:
        raise InputError("--grid", "at least one beta", betas)
    if capacity is not None:
        capacity = integer(capacity, "capacity", lo=1)
    if budget is not None:
        budget = integer(budget, "budget", lo=1)
    data = join_features(golden, *features, pos_label=pos_label)
    lab_ids, acc = golden.labelers()
    given = golden.given_labels()
    cidx = {c: k for k, c in enumerate(data.classes)}
    detail: list[dict] = []
    jobs = [(k, b) for k in range(splits) for b in betas]
    cache: dict[int, tuple] = {}
    for k, beta in progress(jobs, total=len(jobs), desc="tune-beta", enabled=show_progress):
        if k not in cache:
            rng = np.random.default_rng(np.random.SeedSequence([int(seed), k]))
            ev = stratified_take(data.y, eval_frac, rng, min_per_class=1)
            rest = np.setdiff1d(rng.permutation(len(data.y)), ev, assume_unique=True)
            rest = rest[rng.permutation(len(rest))]
            init = rest[stratified_take(data.y[rest], init_frac, rng, min_per_class=1)]
            pool = np.setdiff1d(rest, init)
            pool = pool[rng.permutation(len(pool))]
            if len(pool) == 0 or len(np.unique(data.y[init])) < 2:
                raise InputError("golden", "enough samples for a pool, an initial set with "
                                 "two classes and an evaluation part", len(data.y))
            clf = make_classifier(classifier, seed)
            clf.fit(data.X[init], data.y[init])
            e = entropy(class_probabilities(clf, data.X[pool], data.n_classes), normalize)
            cap = capacity if capacity is not None else math.ceil(len(pool) / len(lab_ids))
            cache[k] = (ev, init, pool, e, np.full(len(lab_ids), int(cap)))
        ev, init, pool, e, caps = cache[k]
        sol = select_greedy(select_instance(acc, caps, e, noise, beta, budget))
        Xs, ys, wrong, missing = [], [], 0, 0
        for q, i in zip(np.asarray(sol.selected), np.asarray(sol.assignment)):
            s = data.ids[pool[q]]
            lab = given.get((s, lab_ids[i]))
            if lab is None:  # this labeler never labeled this golden sample
                missing += 1
                continue
            Xs.append(data.X[pool[q]])
            ys.append(cidx[lab])
            wrong += int(cidx[lab] != data.y[pool[q]])
        X_fit = np.vstack([data.X[init]] + ([np.array(Xs)] if Xs else []))
        y_fit = np.concatenate([data.y[init], np.array(ys, dtype=np.int64)])
        clf = make_classifier(classifier, seed)
        clf.fit(X_fit, y_fit)
        pred = clf.predict(data.X[ev])
        f1 = f1_score_of(data.y[ev], pred, data.pos_label)
        detail.append({"split": k, "beta": beta, "f1": f1,
                       "accuracy": float(np.mean(pred == data.y[ev])), "selected": len(ys), "wrong": wrong,
                       "missing": missing})
    rows = []
    for b in betas:
        d = [r for r in detail if r["beta"] == b]
        f1 = np.array([r["f1"] for r in d])
        rows.append({"beta": b, "f1_mean": float(f1.mean()),
                     "f1_sd": float(f1.std(ddof=1)) if len(f1) > 1 else 0.0,
                     "accuracy": float(np.mean([r["accuracy"] for r in d])),
                     "selected_mean": float(np.mean([r["selected"] for r in d])),
                     "wrong_mean": float(np.mean([r["wrong"] for r in d])),
                     "missing_mean": float(np.mean([r["missing"] for r in d]))})
    best = max(rows, key=lambda r: (r["f1_mean"], -r["beta"]))  # ties -> the smaller beta
    return TuneResult(rows, float(best["beta"]), detail)
