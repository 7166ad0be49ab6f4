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


def summary_view(policy: str, n_items: int, rows: np.ndarray, data: dict | None
                 ) -> SummaryView:
    """The view of the summary's rows (kind, idx, x, y, z; kind 0 an item, 1 a worker; an
    infinite value stands for none) in the order they were written: the last row of an item
    or worker holds."""
    rows = rows[::-1]  # newest first: np.unique keeps the first occurrence
    rows[:, 2:][np.isinf(rows[:, 2:])] = np.nan

    def cols(kind: int, n: int | None) -> np.ndarray:
        r = rows[rows[:, 0] == kind]
        idx = r[:, 1].astype(np.int64)
        out = np.full((3, (1 + int(idx.max()) if idx.size else 0) if n is None else n),
                      np.nan)
        _, last = np.unique(idx, return_index=True)
        out[:, idx[last]] = r[last, 2:].T
        return out

    x, y, z = cols(0, n_items)
    wx, wy, _ = cols(1, None)
    return SummaryView(policy, x, y, z, wx, wy, data)
