"""CL-TAP commands (paper 003).

- `crowdopt reproduce cltap [--scale smoke|table3|table3-seed0|paper] [-o DIR] [--jobs N]
  [--resume]`: Table 3 (small t: CBP vs optimum; large t: CBP and the best primal against UB_LP and the tightest bound
  through `certify`, under the per-t and fixed-horizon generator readings) and the
  classification error vs the baselines (Figs. 4, 5, 7, 8 and a real-data case).
Solving, comparing and certifying instances use the generic `crowdopt solve|compare|certify`.
"""

from __future__ import annotations

import argparse

from ..cli import emit_json, format_table
from ..cliargs import add_batch_flags


def cmd_reproduce(args: argparse.Namespace) -> int:
    """`crowdopt reproduce cltap`: paper 003's Table 3 and error curves."""
    from ..experiments.cltap_repro import reproduce

    out_dir = args.output or f"cltap-{args.scale}"
    res = reproduce(out_dir, scale=args.scale, jobs=args.jobs, seed=args.seed,
                    resume=args.resume, fresh=args.fresh, scheduler=args.scheduler,
                    show_progress=not (args.json or args.quiet))
    if args.json:
        emit_json(res)
        return 0
    if res["small"]:
        print(format_table(res["small"], ["trend", "t", "n", "opt", "cbp", "cbp_%",
                                          "paper_cbp_%", "err_cbp", "paper_err_cbp"]))
        print()
    print(format_table(res["large"], ["trend", "t", "a", "reading", "n", "cbp", "paper_cbp",
                                      "best", "ub_lp", "paper_ub", "ub", "ub_source",
                                      "cbp/ub_lp_%", "cbp/ub_%", "best/ub_%", "paper_cbp_%",
                                      "meets_paper", "proven", "reproducible"]))
    if res["baselines"]:
        print()
        print(format_table(res["baselines"], ["trend", "b/t", "cbp", "ta", "pa", "rgl", "rnd",
                                              "reduction_%"]))
    for fig in res.get("figures", []):
        print()
        print(format_table(fig["rows"], fig["columns"]))
    print(f"\nreport: {res['report']}")
    if res["failed"]:
        print(f"warning: {res['failed']} task(s) failed; see {out_dir}/results.jsonl")
    return 0


def register(cli) -> None:
    """Add `crowdopt reproduce cltap` to the CLI."""
    p = cli.reproduce.add_parser(
        "cltap", help="paper 003: Table 3 and classification error vs baselines",
        description="Reproduce paper 003 (CL-TAP): Table 3 small instances (CBP vs the proven "
                    "optimum), large instances (certified ratio LB/UB) and the classification "
                    "error of CBP vs the baselines. Writes DIR/report.md, PNGs, results.jsonl.")
    p.add_argument("--scale", choices=["check", "smoke", "table3", "table3-seed0", "paper"],
                   default="smoke",
                   help="check: the small exact cells, one seed (seconds; a pipeline check); "
                        "smoke: 1-3 seeds, short time limits (minutes); table3: only the large "
                        "Table 3 cells through certify, 5 seeds (2 at t = 1000), both generator "
                        "readings, fixed work budgets per method (local-search steps, "
                        "column-generation rounds: the same figures on a loaded or a quiet "
                        "machine; a 50 s wall-clock cap per method, and a cell it cuts is "
                        "marked not reproducible; about 12 min); table3-seed0: the same for "
                        "seed 0, per-t reading only (a few minutes); paper: 10 seeds, figures")
    p.add_argument("-o", "--output", default=None, metavar="DIR",
                   help="output DIRECTORY (default cltap-SCALE)")
    p.add_argument("--jobs", type=int, default=1, help="parallel worker processes")
    p.add_argument("--seed", type=int, default=0, help="base seed (replication r uses seed+r)")
    add_batch_flags(p)
    p.add_argument("--json", action="store_true", help="print JSON on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_reproduce)
