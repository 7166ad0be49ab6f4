"""crowdopt: optimization for crowd labeling, exact (Pyomo + HiGHS) and fast, with certificates.

Quick use::

    import crowdopt
    inst = crowdopt.generate("olas-assign", seed=1)
    fast = crowdopt.solve(inst, "fast")       # Theorem 1 sorted assignment
    exact = crowdopt.solve(inst, "exact")     # epigraph MILP solved by HiGHS, gap 0
    assert abs(fast.objective - exact.objective) < 1e-7
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import CrowdoptError, InputError, InstanceError, SolverError  # noqa: E402


def generate(problem: str, seed: int = 0, **params):
    """A random instance of a registered problem (see `crowdopt generate --help`)."""
    from .registry import get_problem

    spec = get_problem(problem)
    return spec, spec.generate(seed, **params)


def load(source):
    """Load and validate an instance file (path, '-', or dict): returns (spec, instance)."""
    from .instances import load_instance

    return load_instance(source)


def solve(instance, method: str = "fast", **kw):
    from .api import solve as _solve

    return _solve(instance, method, **kw)


def compare(instance, **kw):
    from .api import compare as _compare

    return _compare(instance, **kw)


def certify(instance, solution=None, **kw):
    from .api import certify as _certify

    return _certify(instance, solution, **kw)


__all__ = ["CrowdoptError", "InputError", "InstanceError", "SolverError", "__version__",
           "certify", "compare", "generate", "load", "solve"]
