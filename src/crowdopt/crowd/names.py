"""The aggregation methods' names and the defaults the command line shows, without importing
the methods (the CLI's parser is built on every command; the methods pull in scipy).
`crowd.methods` checks at import that its registry has exactly these names."""

from __future__ import annotations

METHOD_NAMES = ("mv", "wmv", "wawa", "zbs", "one-coin", "dawid-skene", "glad", "mace", "kos",
                "mmsr", "ebcc")
DEFAULT_METHOD = "dawid-skene"  # what `aggregate` runs without --method, and auto's baseline
# the unsupervised methods `--method auto` chooses among and the benchmarks compare
UNSUPERVISED = tuple(m for m in METHOD_NAMES if m != "wmv")
AUTO = "auto"  # the method name that chooses one
AUTO_Z = 2.0  # standard errors by which a method must beat the default to replace it
