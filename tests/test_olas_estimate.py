"""Noise estimation and beta tuning (sim/olas_estimate.py) and `crowdopt olas ...`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crowdopt.cli import main
from crowdopt.errors import InputError
from crowdopt.problems.olas_noise import LogisticNoise, check_monotone
from crowdopt.sim.olas_estimate import (
    estimate_noise,
    fit_logistic_noise,
    golden_from_rows,
    parse_grid,
    read_features,
    read_golden,
    tune_beta,
)

pytest.importorskip("sklearn")

TRUE = LogisticNoise(w0=1.0, we=-4.0, wa=4.0)  # eps = 1 - sigmoid(1 - 4e + 4a)


def golden_rows(n=150, accs=(0.55, 0.7, 0.85, 0.95), seed=0, with_entropy=True):
    """Synthetic golden set: make_classification samples, every labeler labels every sample,
    wrong with probability TRUE.eps(a, e) where e is an out-of-fold entropy (lnC)."""
    from sklearn.datasets import make_classification

    from crowdopt.sim.olas_estimate import GoldenData, out_of_fold_entropy

    X, y = make_classification(n_samples=n, n_features=5, n_informative=3, n_redundant=0,
                               flip_y=0.05, random_state=seed)
    ids = [f"s{k}" for k in range(n)]
    data = GoldenData(ids, X, y.astype(np.int64), ["0", "1"], 1)
    ent = out_of_fold_entropy(data, classifier="logreg", folds=5, seed=seed)
    rng = np.random.default_rng(seed)
    rows = []
    for k, s in enumerate(ids):
        for i, a in enumerate(accs):
            wrong = rng.random() < float(TRUE.eps(a, ent[s]))
            row = {"sample": s, "labeler": f"L{i}", "labeler_accuracy": a,
                   "given_label": str(int(y[k]) ^ int(wrong)), "true_label": str(int(y[k]))}
            if with_entropy:
                row["entropy"] = ent[s]
            rows.append(row)
    return rows, ids, X


def write_csv(path, rows, columns):
    path.write_text(",".join(columns) + "\n" + "\n".join(
        ",".join(str(r[c]) for c in columns) for r in rows) + "\n")


# ----------------------------------------------------------------------------- logistic fit
def test_fit_recovers_a_known_monotone_logistic():
    rng = np.random.default_rng(0)
    e, a = rng.uniform(0, 1, 20000), rng.uniform(0.5, 0.95, 20000)
    correct = rng.random(20000) >= TRUE.eps(a, e)
    fit = fit_logistic_noise(e, a, correct)
    assert fit.converged and fit.monotone and not fit.warnings
    assert fit.noise.we < 0 < fit.noise.wa
    assert np.allclose([fit.noise.w0, fit.noise.we, fit.noise.wa], [1, -4, 4], atol=0.5)
    check_monotone(fit.noise, e_max=1.0)  # a valid noise model


def test_non_monotone_fit_warn_clip_error():
    rng = np.random.default_rng(1)
    e, a = rng.uniform(0, 1, 4000), rng.uniform(0.5, 0.95, 4000)
    correct = rng.random(4000) < 1 / (1 + np.exp(-(-1 + 3 * e)))  # more entropy, MORE correct
    warn = fit_logistic_noise(e, a, correct, monotone="warn")
    assert not warn.monotone and warn.noise.we > 0
    assert any("monotonicity" in w for w in warn.warnings)
    clip = fit_logistic_noise(e, a, correct, monotone="clip")
    assert clip.monotone and clip.noise.we == 0.0 and "we" in clip.clipped
    assert clip.log_loss >= warn.log_loss - 1e-12  # constrained fit cannot fit better
    with pytest.raises(InputError, match="monotone"):
        fit_logistic_noise(e, a, correct, monotone="error")


# ----------------------------------------------------------------------------- tables
def test_golden_table_validation():
    rows, _, _ = golden_rows(n=20)
    g = golden_from_rows(rows)
    assert len(g.samples()) == 20 and g.labelers()[0] == ["L0", "L1", "L2", "L3"]
    bad = [dict(rows[0]), dict(rows[0])]
    with pytest.raises(InputError, match="one row per"):
        golden_from_rows(bad)
    r2 = dict(rows[4], labeler_accuracy=0.3)  # L0 again, another accuracy
    with pytest.raises(InputError, match="same accuracy"):
        golden_from_rows([rows[0], r2])
    with pytest.raises(InputError, match="labeler_accuracy"):
        golden_from_rows([dict(rows[0], labeler_accuracy=1.5)])
    with pytest.raises(InputError, match="true_label"):
        golden_from_rows([{k: v for k, v in rows[0].items() if k != "true_label"}])
    with pytest.raises(InputError, match="every row or on none"):
        golden_from_rows([rows[0], dict(rows[1], entropy="")])
    r3 = dict(rows[1], true_label="1" if rows[0]["true_label"] == "0" else "0")
    with pytest.raises(InputError, match="one true label"):
        golden_from_rows([rows[0], r3])


def test_read_golden_with_aliases_and_tsv(tmp_path):
    rows, _, _ = golden_rows(n=10)
    p = tmp_path / "g.tsv"
    cols = ["sample_id", "labeler_id", "labeler_accuracy", "given_label", "true_label"]
    ren = [{"sample_id": r["sample"], "labeler_id": r["labeler"], **r} for r in rows]
    p.write_text("\t".join(cols) + "\n" + "\n".join("\t".join(str(r[c]) for c in cols)
                                                   for r in ren) + "\n")
    g = read_golden(p)
    assert g.entropy is None and len(g.sample) == 40
    with pytest.raises(InputError, match="--golden"):
        read_golden(tmp_path / "missing.csv")


def test_estimate_noise_from_table_and_out_of_fold(tmp_path):
    rows, ids, X = golden_rows(n=200)
    fit, source = estimate_noise(golden_from_rows(rows))
    assert source == "table" and fit.monotone and fit.noise.we < 0 < fit.noise.wa
    no_e = golden_from_rows([{k: v for k, v in r.items() if k != "entropy"} for r in rows])
    with pytest.raises(InputError, match="--features"):
        estimate_noise(no_e)
    fit2, source2 = estimate_noise(no_e, features=(ids, X), classifier="logreg")
    assert source2 == "out-of-fold" and fit2.noise.we < 0 < fit2.noise.wa


# ----------------------------------------------------------------------------- beta tuning
def test_parse_grid():
    assert parse_grid("0.1:0.3:0.1") == [0.1, 0.2, 0.3]
    assert parse_grid("0.05,0.2") == [0.05, 0.2]
    for bad in ("a:b:c", "0.3:0.1:0.1", "0.1:0.2:0", "-0.1", ""):
        with pytest.raises(InputError):
            parse_grid(bad)


def test_tune_beta_replays_recorded_labels():
    rows, ids, X = golden_rows(n=160)
    g = golden_from_rows(rows)
    betas = [0.0, 0.1, 0.3, 1.0]
    res = tune_beta(g, (ids, X), TRUE, betas, splits=3, classifier="logreg", seed=2)
    assert [r["beta"] for r in res.rows] == betas and res.best_beta in betas
    sel = [r["selected_mean"] for r in res.rows]
    assert sel[0] == 0  # logistic eps > 0 everywhere: beta = 0 admits no pair
    assert all(x <= y for x, y in zip(sel, sel[1:]))  # digest F4: monotone in beta
    assert all(r["missing_mean"] == 0 for r in res.rows)
    best = max(r["f1_mean"] for r in res.rows)
    assert next(r for r in res.rows if r["beta"] == res.best_beta)["f1_mean"] == best
    # every replayed wrong label is a recorded one: at beta = 1 all pool points are bought
    by_beta = {r["beta"]: r for r in res.splits if r["split"] == 0}
    assert by_beta[1.0]["wrong"] >= by_beta[0.1]["wrong"]


# ----------------------------------------------------------------------------- CLI
def test_cli_estimate_noise_and_tune_beta(tmp_path, capsys):
    rows, ids, X = golden_rows(n=120)
    gp, fp = tmp_path / "golden.csv", tmp_path / "features.csv"
    write_csv(gp, rows, ["sample", "labeler", "labeler_accuracy", "given_label", "true_label",
                         "entropy"])
    fp.write_text("sample,f1,f2,f3,f4,f5\n" + "\n".join(
        s + "," + ",".join(f"{v:.6f}" for v in x) for s, x in zip(ids, X)) + "\n")
    assert main(["olas", "estimate-noise", "--golden", str(gp), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["monotone"] and out["we"] < 0 < out["wa"] and out["entropy_source"] == "table"
    assert main(["olas", "tune-beta", "--golden", str(gp), "--features", str(fp), "--grid",
                 "0.05,0.2,1", "--splits", "2", "--classifier", "logreg", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["best_beta"] in (0.05, 0.2, 1.0) and "accuracy" in out and len(out["grid"]) == 3
    assert main(["olas", "tune-beta", "--golden", str(gp), "--features", str(fp), "--grid",
                 "x"]) == 2
    assert "--grid" in capsys.readouterr().err


def test_read_features_errors(tmp_path):
    p = tmp_path / "f.csv"
    p.write_text("id,x\n1,2\n")
    with pytest.raises(InputError, match="sample"):
        read_features(p)
    p.write_text("sample,x\na,2\na,3\n")
    with pytest.raises(InputError, match="one row per sample"):
        read_features(p)
