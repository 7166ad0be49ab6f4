"""crowdopt: optimization for crowd labeling, exact (Pyomo + HiGHS) and fast, with certificates.

Quick use::

    import crowdopt
    from crowdopt import OlasSelectInstance

    inst = OlasSelectInstance.from_arrays([0.9, 0.7], [2, 3], [0.6, 0.5, 0.4, 0.2], beta=0.2,
                                          labeler_ids=["ann", "bob"])
    r = crowdopt.solve(inst, "exact")      # a frozen Result; print(r) is one line
    cert = crowdopt.certify(inst, r.solution)
    print(cert.to_json())                  # = `crowdopt certify --json`

`solve`, `compare`, `certify`, `generate`, `load`, `build_model`, `solve_model`, `decode`, the
result and instance classes and `__version__` load on first use, so `import crowdopt` stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import CrowdoptError, InputError, InstanceError, SolverError

# public name -> module that defines it (imported on first access, PEP 562)
_LAZY = {
    "__version__": "crowdopt.version",
    "solve": "crowdopt.api",
    "compare": "crowdopt.api",
    "certify": "crowdopt.api",
    "generate": "crowdopt.api",
    "load": "crowdopt.api",
    "build_model": "crowdopt.api",
    "solve_model": "crowdopt.api",
    "decode": "crowdopt.api",
    "read_solution": "crowdopt.api",
    "Result": "crowdopt.results",
    "Certificate": "crowdopt.results",
    "Comparison": "crowdopt.results",
    "Status": "crowdopt.status",
    "MILP_DEFAULT_TIME": "crowdopt.problems.catalogue",
    "OlasAssignInstance": "crowdopt.problems.olas_assign",
    "OlasSelectInstance": "crowdopt.problems.olas_select",
    "LabelerSetInstance": "crowdopt.problems.labeler_set",
    "WorkerSelectInstance": "crowdopt.problems.worker_select",
    "CltapInstance": "crowdopt.problems.cltap",
    "problem_names": "crowdopt.registry",
    "get_problem": "crowdopt.registry",
    "Instance": "crowdopt.registry",
    "Solution": "crowdopt.registry",
}

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .api import (
        build_model,
        certify,
        compare,
        decode,
        generate,
        load,
        read_solution,
        solve,
        solve_model,
    )
    from .problems.cltap import CltapInstance
    from .problems.labeler_set import LabelerSetInstance
    from .problems.olas_assign import OlasAssignInstance
    from .problems.olas_select import OlasSelectInstance
    from .problems.worker_select import WorkerSelectInstance
    from .registry import MILP_DEFAULT_TIME, Instance, Solution, get_problem, problem_names
    from .results import Certificate, Comparison, Result
    from .status import Status
    from .version import __version__


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'crowdopt' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "MILP_DEFAULT_TIME", "Certificate", "CltapInstance", "Comparison", "CrowdoptError",
    "InputError", "Instance", "InstanceError", "LabelerSetInstance", "OlasAssignInstance",
    "OlasSelectInstance", "Result", "Solution", "SolverError", "Status", "WorkerSelectInstance",
    "__version__", "build_model", "certify", "compare", "decode", "generate", "get_problem",
    "load", "problem_names", "read_solution", "solve", "solve_model",
]
