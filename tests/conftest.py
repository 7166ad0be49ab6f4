"""Shared fixtures: the real-data folder (skips when absent), small seeds."""

from __future__ import annotations

import pytest

from crowdopt.datapath import data_root


@pytest.fixture(scope="session")
def data_dir():
    root = data_root(required=False)
    if root is None:
        pytest.skip("real data sets not found: set CROWDOPT_DATA (default ../shared/data)")
    return root
