"""Pyomo without the scipy extras: Pyomo's dependency hook on scipy imports scipy.stats,
scipy.integrate and scipy.spatial the moment scipy is imported (0.5-1.5 s of every process
that builds a Pyomo model, for modules crowdopt never uses). `without_scipy_extras()`, called
before the first Pyomo import of a run, leaves that hook out; Pyomo still imports scipy itself
where it needs it."""

from __future__ import annotations

import sys


def without_scipy_extras() -> None:
    """Import pyomo.common.dependencies with its scipy hook switched off (once per process;
    a process that imported Pyomo before is left as it is)."""
    if "pyomo.common.dependencies" in sys.modules:
        return
    # with scipy imported already, Pyomo would resolve its hook during its own import: it
    # looks scipy up in sys.modules, so the entry is away for that moment (Pyomo's import
    # does not import scipy; the same module object is back before anything else runs)
    scipy = sys.modules.pop("scipy", None)
    try:
        from pyomo.common import dependencies as deps
    finally:
        if scipy is not None:
            sys.modules["scipy"] = scipy
    hook = getattr(deps, "scipy_available", None)
    if isinstance(hook, deps.DeferredImportIndicator) and hook._module is None:
        hook._callback = None
