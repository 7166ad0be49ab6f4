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


def test_shared_argument_types_parse_or_name_what_was_found():
    import argparse

    assert common.shapes_arg("30x3,20x10") == [(30, 3), (20, 10)]
    assert common.list_arg(("dec", "inc"))("inc,dec") == ["inc", "dec"]
    assert common.positive_int("7") == 7
    for parse, text in [(common.shapes_arg, "30x"), (common.shapes_arg, "0x3"),
                        (common.list_arg(("dec", "inc")), "zz"), (common.positive_int, "0"),
                        (common.positive_int, "x")]:
        with pytest.raises(argparse.ArgumentTypeError, match=f"found '{text}'"):
            parse(text)
