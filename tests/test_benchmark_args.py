"""The benchmarks' shared argument parser: --quick, --repeat, --seed and a benchmark's own
options on one parser (bench_campaign.py's --only)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_campaign  # noqa: E402
import common  # noqa: E402


def test_campaign_benchmark_options_on_the_shared_parser():
    args = common.parse_args("d", extend=bench_campaign.add_parts,
                             argv=["--quick", "--repeat", "2", "--only", "http", "record"])
    assert (args.quick, args.repeat, args.seed, args.only) == (True, 2, 0, ["http", "record"])
    assert common.parse_args("d", extend=bench_campaign.add_parts, argv=[]).only == list(
        bench_campaign.PARTS)
    with pytest.raises(SystemExit) as err:
        common.parse_args("d", extend=bench_campaign.add_parts, argv=["--only", "bogus"])
    assert err.value.code == 2
