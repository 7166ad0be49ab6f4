"""Row-wise max and sum of a task x class matrix, fast for few classes.

numpy reduces `a.max(1)` over a short inner axis element by element (~25x slower than one
vectorized `np.maximum` per class column on 20k x 4); with at most `COLUMN_LOOP` classes the
reduction runs column by column instead. Same results as `a.max(1)` and `a.sum(1)`
(a count for booleans; a NaN in a row gives NaN, as numpy's does; sums in column order).
"""

from __future__ import annotations

import numpy as np

COLUMN_LOOP = 32


def row_max(a: np.ndarray) -> np.ndarray:
    """Maximum of every row of a 2-d array (one value per row)."""
    if a.shape[1] > COLUMN_LOOP or a.shape[1] == 0:
        return a.max(1)
    m = a[:, 0].copy()
    for k in range(1, a.shape[1]):
        np.maximum(m, a[:, k], out=m)
    return m


def row_sum(a: np.ndarray) -> np.ndarray:
    """Sum of every row of a 2-d array (the count of True for booleans)."""
    if a.shape[1] > COLUMN_LOOP or a.shape[1] == 0:
        return a.sum(1)
    v = a.view(np.uint8) if a.dtype == bool else a
    s = v[:, 0].astype(np.int64 if a.dtype == bool else np.result_type(a.dtype, np.int64))
    for k in range(1, a.shape[1]):
        s += v[:, k]
    return s

