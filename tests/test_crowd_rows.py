"""The column-loop row reductions equal numpy's on random matrices with ties."""

import numpy as np
import pytest

from crowdopt.crowd.rows import COLUMN_LOOP, row_max, row_sum


@pytest.mark.parametrize("n_cols", [1, 2, 4, 10, COLUMN_LOOP, COLUMN_LOOP + 1])
@pytest.mark.parametrize("seed", range(3))
def test_row_max_and_sum_equal_numpy(n_cols, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, size=(57, n_cols)).astype(float)  # many ties
    assert np.array_equal(row_max(a), a.max(1))
    assert np.allclose(row_sum(a), a.sum(1))
    b = a > 0
    assert np.array_equal(row_sum(b), b.sum(1))
    assert row_sum(b).dtype.kind == "i"
    i = rng.integers(-5, 5, size=(9, n_cols))
    assert np.array_equal(row_sum(i), i.sum(1)) and np.array_equal(row_max(i), i.max(1))
    f = np.asfortranarray(a)  # a transposed layout gives the same answers
    assert np.array_equal(row_max(f), a.max(1))
    a[0, -1] = np.nan  # NaN propagates as in numpy
    assert np.isnan(row_max(a)[0]) and np.isnan(row_sum(a)[0])
