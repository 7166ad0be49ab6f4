"""The status summary's rows read back (`summary_view`): labels, confidences and worker
reliabilities exactly as the drivers' own `labels()` compute them (`beta_labels`,
`plan_labels` are shared by both), with numpy alone: a reader of the summary imports neither
the policies nor scipy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def beta_labels(pos: np.ndarray, pp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class index (1 = positive) and P(label right) from the decision and P(positive)."""
    return pos.astype(np.int64), np.where(pos, pp, 1.0 - pp)


def plan_labels(score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CL-TAP: the label and posterior of each task's logit-weighted score (prior 1/2)."""
    mu = 1.0 / (1.0 + np.exp(-score))  # posterior P(positive)
    pos = mu >= 0.5
    return pos.astype(np.int64), np.where(pos, mu, 1.0 - mu)


@dataclass
class SummaryView:
    """What a status reads of the policy state, rebuilt from summary rows: `labels()` as
    the driver's (class index and confidence per item), `rel` per worker (None: the model
    has no worker parameter), LS_OL's `outputs` / `p_hat` / scalars."""

    policy: str
    x: np.ndarray  # per item
    y: np.ndarray
    z: np.ndarray
    wx: np.ndarray  # per worker
    wy: np.ndarray
    data: dict | None

    def labels(self) -> tuple[np.ndarray, np.ndarray]:
        """Class index and confidence per item (the driver's `labels()`)."""
        if self.policy == "cltap":
            return plan_labels(self.x)
        return beta_labels(self.x >= self.y, self.z)

    def reliability(self) -> np.ndarray | None:
        """Per-worker reliability (optkg-het: c / (c + d); cltap: the planned accuracy)."""
        if self.policy == "optkg-het":
            return self.wx / (self.wx + self.wy)
        if self.policy == "cltap":
            return self.wx
        return None


def summary_view(policy: str, n_items: int, items: list, workers: list,
                 data: dict | None) -> SummaryView:
    """The view of summary rows (idx, x, y, z) of every item and every worker."""
    def cols(rows: list, n: int) -> np.ndarray:
        out = np.full((3, n), np.nan)
        if rows:  # NULL (None) becomes nan
            flat = np.fromiter((np.nan if v is None else v for r in rows for v in r),
                               dtype=float, count=4 * len(rows)).reshape(-1, 4)
            out[:, flat[:, 0].astype(np.int64)] = flat[:, 1:].T
        return out

    x, y, z = cols(items, n_items)
    wx, wy, _ = cols(workers, 1 + max((r[0] for r in workers), default=-1))
    return SummaryView(policy, x, y, z, wx, wy, data)
