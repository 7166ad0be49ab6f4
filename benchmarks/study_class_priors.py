"""Study: which class-prior rule should one-coin EM use? Accuracy vs gold on the 25
shared sets with gold for

  uniform    fixed uniform priors (the default)
  learn      priors learned by EM (crowd-kit's OneCoinDawidSkene)
  mv-share   fixed at the majority-vote class shares
  auto-ds    uniform or learn, picked per set by `--method auto`'s criterion (held-out label
             likelihood under confusion matrices re-fitted from the posteriors; no gold)
  auto-own   the same, scored with the method's own one-coin confusion matrices

and, for reference, Dawid-Skene at its defaults. Learned priors win on the zencrowd sets and
collapse where workers are biased (one-coin cannot model a worker's bias, so EM absorbs it
into one class: trec2010, trec2011, bluebirds, copyright); neither no-gold selector avoids that.

Usage: python benchmarks/study_class_priors.py [--sets a,b,...]   (about 1 minute)
"""

from __future__ import annotations

import statistics

import numpy as np
from common import format_table, study_sets

from crowdopt.crowd.aggregate import accuracy, dawid_skene, majority_vote, one_coin_em
from crowdopt.crowd.auto import heldout_score, holdout_mask
from crowdopt.crowd.datasets import load_table

RULES = ("uniform", "learn", "mv-share", "auto-ds", "auto-own")


def own_score(table, mask, res) -> float:
    """Mean log predictive probability of the hidden labels under the fit's own model."""
    t, w, lab = table.task[mask], table.worker[mask], table.label[mask]
    p = np.einsum("ek,ek->e", res.posteriors[t], res.confusion[w, :, lab])
    return float(np.mean(np.log(np.maximum(p, 1e-300))))


def study(name: str) -> dict:
    tb, gold = load_table(name)
    share = majority_vote(tb, ties="random").posteriors.mean(0)
    fits = {"uniform": one_coin_em(tb), "learn": one_coin_em(tb, priors="learn"),
            "mv-share": one_coin_em(tb, priors="uniform", init_priors=share)}
    mask = holdout_mask(tb, 0.1, np.random.default_rng(0))
    train = tb.subset(~mask)
    held = {p: one_coin_em(train, priors=p) for p in ("uniform", "learn")}
    pick_ds = max(held, key=lambda p: heldout_score(tb, mask, held[p]))
    pick_own = max(held, key=lambda p: own_score(tb, mask, held[p]))
    row = {"dataset": name, **{r: accuracy(fits[r], gold) for r in fits}}
    row["auto-ds"], row["auto-own"] = row[pick_ds], row[pick_own]
    row["picks (ds/own)"] = f"{pick_ds}/{pick_own}"
    row["dawid-skene"] = accuracy(dawid_skene(tb), gold)
    return row


def main() -> int:
    sets = study_sets("study_class_priors", __doc__.splitlines()[0], with_gold=True)
    if sets is None:
        return 0
    rows = [study(s) for s in sets]
    cols = ["dataset", *RULES, "picks (ds/own)", "dawid-skene"]
    rows.append({"dataset": "mean", **{c: statistics.mean(r[c] for r in rows)
                                      for c in (*RULES, "dawid-skene")}})
    print("## one-coin EM: class-prior rule vs accuracy (ties split evenly)")
    print(format_table(rows, cols))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
