"""HiGHS settings of CL-TAP's LP masters, re-solved warm as columns are added: column
generation on (18)-(24) (its Pyomo models: `models.cltap.build_extended`, faithful, and
`build_aggregated_master`, digest 2.5) and the configuration LP of solvers/cltap_bounds.py.
Simplex without presolve, so the basis survives `add_columns`; column generation prices from a
primal simplex (strategy 4). No Pyomo import: the array masters run without it.
"""

from __future__ import annotations

from .formulation import Settings

COLGEN_MASTER_SETTINGS = Settings(presolve=False, lp_solver="simplex", known_feasible=True,
                                  extra=(("simplex_strategy", 4),))
CONFIG_MASTER_SETTINGS = Settings(presolve=False, lp_solver="simplex", known_feasible=True)
