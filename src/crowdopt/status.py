"""The one status vocabulary of crowdopt (solver outcomes, method results, certificates).

A `StrEnum`, so a status compares equal to its word ("optimal") and serializes as it. No solver
is imported here: fast paths use it without loading HiGHS.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """What a solve or a method run ended with.

    optimal: proven by a bound that closes the gap; feasible: a solution without a proof;
    infeasible / unbounded: the model has no (finite) optimum; time_limit: stopped early, may
    carry an incumbent and a bound; error: the solver failed; skipped: the method does not
    apply (e.g. past its size guard); no_solution: nothing feasible was found.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    TIME_LIMIT = "time_limit"
    ERROR = "error"
    SKIPPED = "skipped"
    NO_SOLUTION = "no_solution"
