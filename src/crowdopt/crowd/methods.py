"""The aggregation methods by name: one catalogue for the CLI, the estimator classes, `--method
auto` and the benchmarks.

`fit_method(table, method, **options)` fits one method with the options it takes; an option a
method does not take is a one-line InputError (the CLI never silently ignores a flag).
`crowdopt.crowd.run_method` (crowd/runner.py) is the door everything else goes through.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import InputError
from .aggregate import (
    AggregationResult,
    dawid_skene,
    majority_vote,
    one_coin_em,
    require_table,
    weighted_majority_vote,
)
from .agreement import wawa, zero_based_skill
from .competence import mace
from .difficulty import glad
from .messages import kos
from .names import DEFAULT_METHOD, METHOD_NAMES, UNSUPERVISED  # noqa: F401 (re-exported)
from .rank_one import mmsr
from .subtypes import ebcc
from .tables import LabelTable


@dataclass(frozen=True)
class MethodInfo:
    """One aggregation method: CLI name, function, what it is, which options it takes."""

    name: str
    func: Callable[..., AggregationResult]
    title: str
    source: str
    options: tuple[str, ...]
    iterative: bool
    objective: bool = True     # has an objective trace that never decreases
    uses_gold: bool = False    # accepts gold (clamping / init='gold')
    unsupervised: bool = True  # needs nothing but the labels


_EM = ("smoothing", "priors", "tol", "max_iter", "init", "ties", "seed")
METHODS: dict[str, MethodInfo] = {m.name: m for m in [
    MethodInfo("mv", majority_vote, "majority vote", "-", ("ties", "seed"), False, False),
    MethodInfo("wmv", weighted_majority_vote, "weighted majority vote",
               "Li & Liu (digest 004 eq. 1)", ("weights", "ties", "seed"), False, False,
               unsupervised=False),
    MethodInfo("wawa", wawa, "worker agreement with aggregate", "crowd-kit (Toloka)",
               ("ties", "seed"), False, False),
    MethodInfo("zbs", zero_based_skill, "zero-based skill", "crowd-kit (Toloka)",
               ("tol", "max_iter", "ties", "seed"), True),
    MethodInfo("one-coin", one_coin_em, "one-coin Dawid-Skene EM", "digest 004 eq. 3", _EM,
               True, uses_gold=True),
    MethodInfo("dawid-skene", dawid_skene, "Dawid-Skene EM", "Dawid & Skene 1979", _EM, True,
               uses_gold=True),
    MethodInfo("glad", glad, "GLAD", "Whitehill et al. 2009",
               ("priors", "tol", "max_iter", "init", "ties", "seed"), True, uses_gold=True),
    MethodInfo("mace", mace, "MACE", "Hovy et al. 2013",
               ("priors", "tol", "max_iter", "init", "restarts", "ties", "seed"), True,
               uses_gold=True),
    MethodInfo("kos", kos, "KOS message passing", "Karger, Oh & Shah 2014",
               ("tol", "max_iter", "ties", "seed"), True, objective=False),
    MethodInfo("mmsr", mmsr, "M-MSR", "Ma & Olshevsky 2020", ("tol", "max_iter", "ties", "seed"),
               True, objective=False),
    MethodInfo("ebcc", ebcc, "EBCC (class subtypes for correlated workers)",
               "Li, Rubinstein & Cohn 2019", ("subtypes", "concentration", "class_prior",
                                              "confusion_prior", "tol", "max_iter", "ties",
                                              "seed"), True),
]}
if (tuple(METHODS) != METHOD_NAMES
        or tuple(m for m, i in METHODS.items() if i.unsupervised) != UNSUPERVISED):
    raise AssertionError("crowd.names does not list the methods of crowd.methods")
# option -> CLI flag, for messages
FLAGS = {"smoothing": "--smoothing", "priors": "--priors", "tol": "--tol",
         "max_iter": "--max-iter", "init": "--init", "gold": "--use-gold",
         "restarts": "--restarts", "weights": "--weights"}


def method_info(name: str) -> MethodInfo:
    """The catalogue entry of an aggregation method, or a one-line InputError."""
    if not isinstance(name, str) or name not in METHODS:
        raise InputError("method", f"one of {list(METHODS)}", name)
    return METHODS[name]


def check_options(method: str, options: dict) -> None:
    """Refuse, in one line naming the flag, an option `method` does not take (`gold` is taken
    by the methods that use gold); None values count as not given."""
    info = method_info(method)
    kw = [k for k, v in options.items() if v is not None]
    allowed = set(info.options) | ({"gold"} if info.uses_gold else set())
    # the flag the user typed first: gold also rides along with --init gold
    bad = sorted((k for k in kw if k not in allowed), key=lambda k: (k == "gold", k))
    if bad:
        users = [m for m, i in METHODS.items() if bad[0] in i.options or
                 (bad[0] == "gold" and i.uses_gold)]
        if not users:  # no method has it: say which options this one takes
            raise InputError("options", f"options of {method} ({', '.join(sorted(allowed))})",
                             bad[0])
        raise InputError(FLAGS.get(bad[0], bad[0]), f"a method that uses it ({', '.join(users)})",
                         method)


def taken_options(method: str, options: dict) -> dict:
    """The options of `options` that `method` takes (auto passes the flags on where they
    apply)."""
    info = method_info(method)
    return {k: v for k, v in options.items() if v is not None and
            (k in info.options or (k == "gold" and info.uses_gold))}


def fit_method(table: LabelTable, method: str, **options) -> AggregationResult:
    """Fit aggregation `method` on `table` with `options` (None values are left at the
    method's default; an option it does not take is refused). `gold` goes to the methods that
    use it. This is the bare function call; `crowdopt.crowd.run_method` is the door that
    also handles auto, the weighted vote's weights and the report."""
    require_table(table)
    check_options(method, options)
    info = METHODS[method]
    kw = {k: v for k, v in options.items() if v is not None}
    if info.name == "wmv" and "weights" not in kw:
        raise InputError("wmv", "worker weights", "none")
    if info.name == "wmv":
        return info.func(table, kw.pop("weights"), **kw)
    return info.func(table, **kw)
