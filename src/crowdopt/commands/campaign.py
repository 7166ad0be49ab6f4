"""`crowdopt campaign init|next|record|status|export|token|release|webhook|events|serve`: a
live campaign.

The campaign (DB) is one SQLite file, or `postgresql://host/db?campaign=NAME`: a campaign of a
PostgreSQL database that several servers share (extra `postgres`). `init` fixes the items,
workers, budget, policy, parameters, seed and the caps on /next per role; `next` hands out
leased queries; `record` stores answers (an outcome per row); `status` reports; `export`
writes answers or labels (CSV, JSONL, Label Studio); `token` makes and rotates bearer tokens;
`release` frees a worker's open hand-outs; `webhook add|remove` registers webhook endpoints;
`events` lists the webhook outbox; `serve` is the HTTP service and its status page (optional
extra `serve`). Token files go beside a campaign file (DB.token), in the current folder for a
PostgreSQL campaign (NAME.token). Exit codes: 0 ok, 2 bad input (one line; `record`: some rows
were rejected, the others stored), 6 the campaign's store failed (locked longer than --wait,
read-only, damaged, unreachable), 7 the server could not bind its address.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import sys
import time
from pathlib import Path

from ..errors import InputError

BATCHING_HELP = ("exact (default): decisions equal the one-at-a-time policy and `replay`, label "
                 "for label; `next --n N` then hands out only queries that no pending answer "
                 "can change (fewer than N while the policy needs answers). fill: `next --n N` "
                 "hands out N queries decided on the answers in so far (an item with an open "
                 "query is held out)")


DB_HELP = "the campaign file (SQLite) or postgresql://host/db?campaign=NAME"
CAP_HELP = ("the most a token of ROLE (admin, worker) may ask of POST /next: FIELD n (queries "
            "per request), lease or late_window (seconds); a request asking for more gets the "
            "cap and its reply says so (defaults: worker.n=10, worker.lease=3600, "
            "worker.late_window=3600; admin: 1000 and 1e9 s); repeatable")

WAIT = 5.0  # seconds a CLI write waits for another process's write lock (then exit 6)
_STARTED = time.monotonic()  # the command line is being parsed: the clock of --wait


def _open(db: str, readonly: bool | None = None, wait: float | None = None):
    """The campaign; a write waits for another process's lock until `wait` seconds after
    the command started (its own start-up counts: `--wait 5` gives up within 5 s)."""
    from ..campaign import Campaign

    if wait is None:
        return Campaign.open(db, readonly=readonly)
    left = wait - (time.monotonic() - _STARTED)
    return Campaign.open(db, readonly=readonly, busy_timeout=max(0.05, left))


def write_secret(path: Path, text: str, *, replace: bool = False) -> None:
    """A token file, 0600, through the one safe writer (`files.write_file`): a new file, or
    (`replace`) a regular file replaced by a rename (a symlink is replaced, never followed; a
    FIFO, device or directory refused)."""
    from ..files import write_file

    write_file(path, text + "\n", force=replace, mode=0o600, field="token file")


def _iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t).isoformat(timespec="seconds")


# ----------------------------------------------------------------------------- init
def cmd_init(args: argparse.Namespace) -> int:
    """`crowdopt campaign init`: create a campaign file."""
    from ..campaign import Campaign
    from ..cli import emit_json

    keys = {"optkg": ("rule", "prior", "alpha"),
            "optkg-het": ("rule", "prior", "worker_prior"),
            "lsol": ("rule", "prior", "estimator", "G1", "price", "filter", "delta_rank"),
            "cltap": ("p_max",)}.get(args.policy, ())
    given = {k: getattr(args, k) for k in ("rule", "prior", "alpha", "worker_prior",
                                           "estimator", "G1", "price", "delta_rank", "p_max")
             if getattr(args, k) is not None}
    if args.filter:
        given["filter"] = True
    wrong = sorted(set(given) - set(keys))
    if wrong:
        raise InputError("--" + wrong[0].replace("_", "-"),
                         f"an option of policy {args.policy} ({', '.join(keys) or 'none'})",
                         given[wrong[0]])
    from ..campaign import caps as ccaps
    from ..campaign.stores import describe, sidecar

    token_file = sidecar(args.db, ".token")
    read_file = sidecar(args.db, ".read-token")
    for f in (token_file, read_file):
        if os.path.lexists(f):
            raise InputError("token file", "a path that does not exist yet", str(f),
                             note="init writes DB.token and DB.read-token; remove the old ones")
    camp = Campaign.create(args.db, policy=args.policy, items=args.items, budget=args.budget,
                           workers=args.workers, seed=args.seed, batching=args.batching,
                           labels=args.labels, pairs=args.pairs, params=given,
                           name=args.name, caps=ccaps.parse(args.cap))
    write_secret(token_file, camp.new_tokens["admin"])
    write_secret(read_file, camp.new_tokens["read"])
    doc = {"campaign": describe(args.db), "name": camp.name, "policy": camp.policy,
           "params": camp.params,
           "items": len(camp.item_ids), "workers": len(camp.worker_ids),
           "budget": camp.budget, "seed": camp.seed, "batching": camp.batching,
           "classes": camp.classes, "caps": camp.next_caps(), "token_file": str(token_file),
           "read_token_file": str(read_file)}
    camp.close()
    if args.json:
        emit_json(doc)
    else:
        who = f", {doc['workers']} workers" if doc["workers"] else ""
        print(f"campaign {doc['campaign']}: {camp.policy} on {doc['items']} items{who}, budget "
              f"{camp.budget}, seed {camp.seed}, batching {camp.batching}")
        print(f"HTTP bearer tokens written to {token_file} (admin) and {read_file} (read-only:"
              " status, export, the status page)")
    return 0


# ----------------------------------------------------------------------------- next
def cmd_next(args: argparse.Namespace) -> int:
    """`crowdopt campaign next`: hand out the next queries, leased."""
    from ..cli import emit_json, format_table

    with _open(args.db, wait=args.wait) as camp:
        qs = camp.next(args.n, worker=args.worker, lease=args.lease,
                       late_window=args.late_window)
        note = None
        if not qs:
            st = camp.status()
            if st["done"]:
                note = f"campaign done: {st['answers']} answers, budget {st['budget']}"
            elif st["left"] <= 0:
                note = (f"budget spent or reserved ({st['spent']} spent, {st['reserved']} "
                        "reserved): waiting for answers to open queries or for late windows "
                        "to close")
            else:
                o = st["open"]
                note = (f"no query now: {o['leased'] + o['expired'] + o['not_handed_out']} open "
                        f"queries ({o['leased']} leased, {o['not_handed_out']} for other workers)"
                        " must be answered before the policy decides more")
    if args.json:
        doc = {"queries": [q.to_dict() for q in qs], "count": len(qs)}
        if note:
            doc["note"] = note
        emit_json(doc)
        return 0
    if qs:
        rows = [{"query": q.id, "item": q.item, "worker": q.worker or "any", "round": q.round,
                 "lease_until": _iso(q.lease_until)} for q in qs]
        print(format_table(rows, ["query", "item", "worker", "round", "lease_until"]))
    else:
        print(note)
    return 0


# ----------------------------------------------------------------------------- record
def cmd_record(args: argparse.Namespace) -> int:
    """`crowdopt campaign record`: record answers, an outcome per row."""
    from ..campaign import io as cio
    from ..cli import emit_json

    rows = cio.read_answers(args.answers)
    with _open(args.db, wait=args.wait) as camp:
        res = camp.record(rows)
    if args.json:
        emit_json(res)
    else:
        print(f"{res['rows']} rows: {res['stored']} stored, {res['late']} late (paid), "
              f"{res['duplicates']} already recorded, {res['rejected']} rejected; budget: "
              f"{res['spent']} spent, {res['reserved']} reserved, {res['left']} left")
        for r in res["results"]:
            if r["status"] == "late":
                print(f"late: item {r['item']}, worker {r['worker']} (a further hand-out of "
                      "an answered query, inside its late window: paid and kept)")
    if res["rejected"]:
        bad = [r for r in res["results"] if r["status"] == "rejected"]
        print(f"crowdopt: error: {len(bad)} of {res['rows']} rows rejected, the others were "
              f"recorded; first: {bad[0]['reason']}", file=sys.stderr)
        return 2
    return 0


# ----------------------------------------------------------------------------- status
def cmd_status(args: argparse.Namespace) -> int:
    """`crowdopt campaign status`: budget, labels with confidence, reliabilities."""
    from ..cli import emit_json, format_table

    for name, v in (("--offset", args.offset), ("--limit", args.limit)):
        if v is not None and not args.json:  # the text report pages nothing: never ignored
            raise InputError(name, "only with --json (the text shows --top rows)", v)
    with _open(args.db, readonly=True) as camp:  # a reader never waits for a writer
        if args.json:  # the whole lists unless paged (as GET /status?offset=&limit=)
            emit_json(camp.status(gold=args.gold, offset=args.offset or 0, limit=args.limit))
            return 0
        # the text shows the first `top` rows of each list: no need to build the whole lists
        st = camp.status(gold=args.gold, limit=args.top, top=args.top)
    o = st["open"]
    print(f"campaign {st['campaign']}: {st['policy']} (batching {st['batching']}, seed "
          f"{st['seed']}){'  DONE' if st['done'] else ''}")
    late = f" ({st['late']} late)" if st["late"] else ""
    print(f"budget {st['budget']}: {st['spent']} spent{late}, {st['reserved']} reserved, "
          f"{st['left']} left; {st['issued']} queries decided; {st['labelled']} of "
          f"{st['items']} items labelled")
    if st["answers_per_minute"]:
        eta = st["eta_seconds"]
        print(f"rate {st['answers_per_minute']:.1f} answers/min"
              + ("" if eta is None else f", about {eta / 60:.0f} min to go"))
    print(f"open queries: {o['leased']} leased, {o['expired']} expired leases, "
          f"{o['not_handed_out']} not handed out yet")
    if st.get("answers_waiting"):
        print(f"{st['answers_waiting']} answers wait for earlier ones (applied in decision "
              "order)")
    if "accuracy" in st:
        acc = st["accuracy"]
        print(f"accuracy against gold: {'-' if acc is None else f'{acc:.4f}'} "
              f"({st['gold_items']} items)")
    least = st["least_confident"]
    print(f"\nleast confident labels ({st['labelled']} items labeled; all with --json):")
    if least:
        print(format_table(least, ["item", "label", "confidence", "answers"]))
    ws = st["busiest_workers"]
    if ws:
        print(f"\nworkers; reliability: {st['reliability_source']}")
        cols = ["worker", "answers", "agreement"] + (["reliability"] if "reliability" in ws[0]
                                                    else [])
        print(format_table(ws, cols))
    if st["expired_leases"]:
        print("\nexpired leases (handed out again by `next`):")
        print(format_table([{**e, "lease_until": _iso(e["lease_until"])}
                            for e in st["expired_leases"]],
                           ["query", "item", "worker", "leased_to", "lease_until"]))
    return 0


# ----------------------------------------------------------------------------- export
def cmd_export(args: argparse.Namespace) -> int:
    """`crowdopt campaign export`: write the answers or the labels."""
    from ..campaign.export import export_rows, write_export

    with _open(args.db, readonly=True) as camp:
        header, rows = export_rows(camp, args.what)
        meta = {"policy": camp.policy, "classes": camp.classes}
    n = write_export(args.output, args.format, header, rows, what=args.what, meta=meta,
                     force=args.force)
    if args.output:
        print(f"wrote {n} rows to {args.output}", file=sys.stderr)
    return 0


# ----------------------------------------------------------------------------- token
def cmd_token(args: argparse.Namespace) -> int:
    """`crowdopt campaign token`: make or rotate a bearer token."""
    from ..campaign.stores import sidecar
    from ..cli import emit_json
    from ..files import check_target

    out, replace = args.output, args.force
    if out is None and args.role != "worker":  # the campaign's own token file: rotated
        out = str(sidecar(args.db, ".token" if args.role == "admin" else ".read-token"))
        replace = True
    if out is not None and out != "-" and (replace or os.path.lexists(out)):
        check_target(out, force=replace, field="--output")  # refused before a token is made
    with _open(args.db, wait=args.wait) as camp:
        tok = camp.new_token(args.role, worker=args.worker, revoke_old=not args.keep_old)
    if out is not None and out != "-":
        write_secret(Path(out), tok, replace=replace)
    doc = {"role": args.role, "worker": args.worker, "revoked_old": not args.keep_old,
           "token_file": out if out not in (None, "-") else None}
    if out in (None, "-"):
        doc["token"] = tok
    if args.json:
        emit_json(doc)
    elif doc.get("token"):
        print(tok)
    else:
        print(f"new {args.role} token written to {out}"
              + ("; the earlier ones no longer work" if not args.keep_old else ""))
    return 0


# ----------------------------------------------------------------------------- release
def cmd_release(args: argparse.Namespace) -> int:
    """`crowdopt campaign release`: free a worker's open hand-outs."""
    from ..cli import emit_json

    with _open(args.db, wait=args.wait) as camp:
        doc = camp.release(args.worker)
    if args.json:
        emit_json(doc)
    else:
        print(f"released {doc['handouts']} hand-outs of worker {doc['worker']} ({doc['queries']} "
              "queries back in line for `next`); answers to them are no longer paid")
    return 0


# ----------------------------------------------------------------------------- webhook
def cmd_webhook(args: argparse.Namespace) -> int:
    """`crowdopt campaign webhook add|remove`: register or remove webhook endpoints."""
    from ..campaign.webhooks import register, unregister
    from ..cli import emit_json

    if args.change == "add":
        register(args.db, [args.url])
        changed = [args.url]
    else:
        changed = unregister(args.db, [args.url])
    doc = {"action": args.change, "urls": changed}
    if args.json:
        emit_json(doc)
    elif args.change == "add":
        print(f"registered {args.url}: every event from now on is delivered to it by the "
              "servers started with --webhook")
    elif changed:
        print(f"removed {args.url} (no event is written for it any more)")
    else:
        print(f"{args.url} was not registered: nothing to remove")
    return 0


# ----------------------------------------------------------------------------- events
def cmd_events(args: argparse.Namespace) -> int:
    """`crowdopt campaign events`: the webhook outbox: pending, delivered, failed."""
    from ..campaign.events import listing
    from ..cli import emit_json, format_table

    with _open(args.db, readonly=True) as camp:
        if not camp.has_summary:  # schema 3 brought the outbox
            raise InputError("DB", "a campaign file of schema 3 (open it once with a writing "
                             "command)", str(args.db))
        try:
            doc = listing(camp.store, args.state, args.limit)
        except Exception as exc:  # a damaged file, a store gone
            err = camp.store.failure(exc)
            if err is None:
                raise
            raise err from None
    t = doc["totals"]
    if args.json:
        emit_json(doc)
        return 0
    print(f"webhook deliveries: {t['pending']} pending, {t['delivered']} delivered, "
          f"{t['failed']} failed")
    if doc["endpoints"]:
        print(format_table(doc["endpoints"], ["url", "active", "pending", "delivered",
                                              "failed"]))
    if doc["deliveries"]:
        print(f"\nlast {len(doc['deliveries'])} deliveries"
              + (f" ({args.state})" if args.state else "") + ":")
        rows = [{**d, "created_at": _iso(d["created_at"]),
                 "next_at": _iso(d["next_at"]) if d["state"] == "pending" else ""}
                for d in doc["deliveries"]]
        print(format_table(rows, ["event", "kind", "endpoint", "state", "attempts",
                                  "created_at", "next_at", "last_error"]))
    return 0


# ----------------------------------------------------------------------------- serve
def cmd_serve(args: argparse.Namespace) -> int:
    """`crowdopt campaign serve`: the HTTP service and status page."""
    from ..campaign.http import serve

    if (args.certfile is None) != (args.keyfile is None):
        raise InputError("--certfile/--keyfile", "both (TLS) or neither",
                         args.certfile or args.keyfile)
    from ..campaign import caps as ccaps

    secret = args.webhook_secret_file
    if secret is not None and not Path(secret).parent.is_dir():
        raise InputError("--webhook-secret-file", "a file in an existing folder", secret)
    return serve(args.db, host=args.host, port=args.port, certfile=args.certfile,
                 keyfile=args.keyfile, webhooks=args.webhook or [],
                 webhook_secret_file=args.webhook_secret_file, gold=args.gold,
                 webhook_horizon=args.webhook_horizon, caps=ccaps.parse(args.cap))


def _positive_int(text: str) -> int:
    from ..cli import positive_int

    return positive_int(text)


def register(cli) -> None:
    """Add `crowdopt campaign` and its subcommands to the CLI."""
    from ..cli import _Parser
    from ..cliargs import new_file, nonneg_int, nonneg_seconds, port, seconds
    from ..policies.lsol_options import ESTIMATORS

    top = cli.top.add_parser(
        "campaign", help="run a live labeling campaign (Opt-KG, LS_OL, CL-TAP): a SQLite file "
        "or a PostgreSQL database",
        description="A live campaign: the policy decides which labels to buy while answers "
                    "arrive; all state is in DB, a SQLite file or postgresql://host/db?"
                    "campaign=NAME (extra postgres: several servers on one database); it "
                    "survives kill -9 and is safe for several processes. See the Campaigns "
                    "page of the documentation (docs/campaigns.md).")
    sub = top.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)

    def missing(args: argparse.Namespace) -> int:
        top.print_help()
        return 2
    top.set_defaults(func=missing)

    p = sub.add_parser("init", help="create a campaign file",
                       description="Create DB for one policy: optkg (homogeneous Opt-KG, paper "
                       "002), optkg-het (Opt-KG choosing the worker too), lsol (LS_OL labeler "
                       "selection, paper 001), cltap (CBP task assignment, paper 003). Files: "
                       "items.csv (column item; optional max_labels, optkg), workers.csv "
                       "(column worker; accuracy for cltap: one number or ';'-separated per "
                       "iteration), pairs.csv (item,worker). dataset:NAME works for each.")
    p.add_argument("db", metavar="DB", type=new_file,
                   help="the campaign file to create (must not exist; its folder must), or "
                   "postgresql://[user@]host[:port]/db?campaign=NAME (NAME: a-z, 0-9, _)")
    p.add_argument("--policy", required=True, choices=("optkg", "optkg-het", "lsol", "cltap"),
                   help="allocation policy: optkg, optkg-het (per-worker reliability), lsol, cltap")
    p.add_argument("--items", required=True, metavar="ITEMS",
                   help="items CSV (item[,max_labels]) or dataset:NAME (LS_OL: arrival order)")
    p.add_argument("--workers", default=None, metavar="WORKERS",
                   help="workers CSV (worker[,accuracy]) or dataset:NAME; required except for "
                   "optkg (where workers are registered by their first answer)")
    p.add_argument("--budget", required=True, type=_positive_int, help="labels to buy")
    p.add_argument("--seed", type=int, default=0, help="seed of the policy's random choices")
    p.add_argument("--batching", choices=("exact", "fill"), default="exact", help=BATCHING_HELP)
    p.add_argument("--labels", default=None, metavar="NEG,POS",
                   help="class values (binary policies: negative,positive; default 0,1)")
    p.add_argument("--pairs", default=None, metavar="PAIRS",
                   help="optkg-het: allowed (item, worker) pairs (CSV or dataset:NAME)")
    p.add_argument("--name", default=None, help="the campaign's name, shown to read-only "
                   "viewers of the status page (default: the file's name; the URL's NAME)")
    p.add_argument("--cap", action="append", default=None, metavar="ROLE.FIELD=VALUE",
                   help=CAP_HELP)
    g = p.add_argument_group("policy options")
    g.add_argument("--rule", default=None, help="optkg: optkg|kg|pessimistic|cvar|nlu|uniform|"
                   "gittins|gittins-finite (+ -det: ties to the smallest index); optkg-het: "
                   "optkg|kg|uniform; lsol: mv|wmv")
    g.add_argument("--prior", default=None, help="optkg/optkg-het: Beta prior a,b of each item "
                   "(1,1); lsol: pseudo-counts on p_hat (1)")
    g.add_argument("--alpha", type=float, default=None, help="optkg cvar level (0.5)")
    g.add_argument("--worker-prior", default=None, help="optkg-het: Beta prior c,d of worker "
                   "reliability (4,1)")
    g.add_argument("--estimator", choices=ESTIMATORS, default=None,
                   help="lsol: first (the paper's), pooled or em (one-coin EM) (first)")
    g.add_argument("--G1", type=float, default=None, help="lsol: testers D1(t) = G1 log t (2)")
    g.add_argument("--price", type=float, default=None,
                   help="lsol: cost per label in the set choice, pi(S) - price |S| (0.01)")
    g.add_argument("--filter", action="store_true", help="lsol: disagreement filter")
    g.add_argument("--delta-rank", type=float, default=None, help="lsol filter level (0.1)")
    g.add_argument("--p-max", type=float, default=None, help="cltap: accuracy clip (0.999)")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(func=cmd_init)

    p = sub.add_parser("next", help="hand out the next queries (leased)",
                       description="The next queries: item, and worker where the policy "
                       "chooses one. Expired leases are handed out again first.")
    p.add_argument("db", metavar="DB", help=DB_HELP)
    p.add_argument("--n", type=_positive_int, default=1, help="at most N queries (default 1)")
    p.add_argument("--worker", default=None, help="only queries this worker may answer "
                   "(handed out to that worker: another worker's answer to them is refused)")
    p.add_argument("--lease", type=seconds, default=600.0,
                   help="lease in seconds, up to 1e9 (default 600); expired: handed out again")
    p.add_argument("--late-window", type=nonneg_seconds, default=None, metavar="S",
                   help="seconds after the lease during which an answer is still accepted and "
                   "paid (default: the lease again); until then the hand-out reserves its label")
    p.add_argument("--wait", type=seconds, default=WAIT, metavar="S",
                   help=f"give up after S s on a file another process is writing (exit 6; "
                   f"default {WAIT:g})")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(func=cmd_next)

    p = sub.add_parser("record", help="record answers (an outcome per row, idempotent)",
                       description="ANSWERS: CSV with columns item, worker, label ('-' = "
                       "stdin). Each hand-out of a query (`next`) is paid for one answer, "
                       "from the worker it was handed to (anyone's when handed to nobody in "
                       "particular), until its late window closes. Each row is stored, a "
                       "duplicate (the same (item, worker, label) again), late (a further "
                       "hand-out of an answered query: paid and kept) or rejected with its "
                       "reason (a conflicting label, no hand-out left for it, an unknown "
                       "item/worker/label): never stored, never paid; rejected rows never "
                       "block the others. Exit 2 when some row was rejected.")
    p.add_argument("db", metavar="DB", help=DB_HELP)
    p.add_argument("answers", metavar="ANSWERS",
                   help="CSV FILE of answers: item,worker,label (- for stdin)")
    p.add_argument("--wait", type=seconds, default=WAIT, metavar="S",
                   help=f"give up after S s on a file another process is writing (exit 6, "
                   f"nothing recorded; default {WAIT:g})")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(func=cmd_record)

    p = sub.add_parser("status", help="budget, labels with confidence, worker reliabilities",
                       description="Budget spent/left, open and expired leases, current labels "
                       "with posterior confidence, worker reliabilities.")
    p.add_argument("db", metavar="DB", help=DB_HELP)
    p.add_argument("--gold", default=None, metavar="GOLD",
                   help="gold CSV (item,label) or a data set name: adds accuracy")
    p.add_argument("--top", type=_positive_int, default=10, help="rows per table (text)")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.add_argument("--offset", type=nonneg_int, default=None,
                   help="--json: the first row of the labels, workers and expired leases (0)")
    p.add_argument("--limit", type=nonneg_int, default=None,
                   help="--json: at most this many rows of each list (default: all; the "
                   "totals always cover everything)")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("export", help="write the answers (task,worker,label) or the labels",
                       description="Answers (late ones included) or the current labels (items "
                       "with at least one answer only) as CSV (cells that a spreadsheet would "
                       "run as a formula are prefixed with '), JSONL or Label Studio JSON "
                       "tasks. Works on a read-only file.")
    p.add_argument("db", metavar="DB", help=DB_HELP)
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="output FILE (default stdout): a regular file only (a FIFO, device or "
                   "directory is refused); an existing FILE needs --force")
    p.add_argument("--what", choices=("answers", "labels"), default="answers",
                   help="answers: task,worker,label rows (default); labels: task,label,"
                   "confidence,answers")
    p.add_argument("--format", choices=("csv", "jsonl", "label-studio"), default="csv",
                   help="csv (default), jsonl (one JSON object a line) or label-studio (a JSON "
                   "list of tasks: answers as annotations, labels as predictions)")
    p.add_argument("--force", action="store_true", help="replace an existing regular FILE")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("token", help="make or rotate a bearer token (admin, read, worker)",
                       description="A new bearer token for the HTTP service. admin: every "
                       "endpoint; read: status, export and the status page; worker: next and "
                       "record as --worker only. The file keeps only SHA-256 hashes. By "
                       "default the role's earlier tokens (of that worker) stop working "
                       "(rotation). admin/read tokens go to DB.token / DB.read-token (0600, "
                       "replaced by a rename, never written through a symlink); worker tokens "
                       "to stdout unless -o FILE.")
    p.add_argument("db", metavar="DB", help=DB_HELP)
    p.add_argument("--role", choices=("admin", "read", "worker"), default="admin",
                   help="what the token may do (default admin)")
    p.add_argument("--worker", default=None, help="the worker a worker token answers as")
    p.add_argument("-o", "--output", default=None, metavar="FILE",
                   help="write the token to FILE ('-': stdout): a new regular file 0600, an "
                   "existing one only with --force")
    p.add_argument("--force", action="store_true", help="replace an existing regular FILE")
    p.add_argument("--keep-old", action="store_true",
                   help="keep the role's earlier tokens working (no rotation)")
    p.add_argument("--wait", type=seconds, default=WAIT, metavar="S",
                   help=f"give up after S s on a file another process is writing (exit 6; "
                   f"default {WAIT:g})")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(func=cmd_token)

    p = sub.add_parser("events", help="the webhook outbox: pending, delivered, failed",
                       description="Webhook events are written to the campaign with the "
                       "answers that caused them, one delivery per registered endpoint "
                       "(`campaign webhook add`, `serve --webhook`); the servers started with "
                       "--webhook deliver them (in order per endpoint, retried with back-off "
                       "up to --webhook-horizon). Lists the counts per endpoint and the last "
                       "deliveries. Works on a read-only file.")
    p.add_argument("db", metavar="DB", help=DB_HELP)
    p.add_argument("--state", choices=("pending", "delivered", "failed"), default=None,
                   help="only deliveries in this state")
    p.add_argument("--limit", type=_positive_int, default=20,
                   help="deliveries listed, newest first (default 20)")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(func=cmd_events)

    p = sub.add_parser("serve", help="HTTP service and status page (extra: serve)",
                       description="JSON endpoints POST /next, POST /record, GET /status, "
                       "GET /export and a status page at / (refreshes itself). Every request "
                       "needs 'Authorization: Bearer TOKEN' (DB.token: admin; DB.read-token: "
                       "status, export, page; worker tokens from `campaign token`); the page "
                       "also takes ?token=; POST /release (admin) frees a worker's hand-outs. "
                       "Busy campaign: 503 with Retry-After. Several servers may serve one "
                       "PostgreSQL campaign. Needs pip install 'crowdopt[serve]'. Exit 7 when "
                       "the address cannot be bound.")
    p.add_argument("db", metavar="DB", help=DB_HELP)
    p.add_argument("--host", default="127.0.0.1",
                   help="interface to listen on (default 127.0.0.1, this machine only; any "
                   "other address without --certfile gets a warning: tokens travel in clear)")
    p.add_argument("--port", type=port, default=8000, help="TCP port, 0-65535 (default 8000)")
    p.add_argument("--certfile", default=None, metavar="PEM", help="TLS certificate (HTTPS)")
    p.add_argument("--keyfile", default=None, metavar="PEM", help="TLS private key (HTTPS)")
    p.add_argument("--webhook", action="append", default=None, metavar="URL",
                   help="register URL (as `campaign webhook add`) and deliver the events of "
                   "every registered endpoint (answers recorded, budget 25/50/75/100%%, "
                   "campaign done): POSTed HMAC-SHA256 signed, retried with back-off, kept in "
                   "the campaign until delivered (`campaign events`); repeatable. Without it "
                   "the server delivers nothing and changes no endpoint")
    p.add_argument("--gold", default=None, metavar="GOLD",
                   help="gold CSV (item,label) or a data set name: accuracy on /status and the "
                   "page")
    p.add_argument("--webhook-secret-file", default=None, metavar="FILE",
                   help="the HMAC key (default: DB.webhook-secret, NAME.webhook-secret for a "
                   "PostgreSQL campaign; made 0600 on first use; servers that deliver the "
                   "same campaign share it)")
    p.add_argument("--webhook-horizon", type=seconds, default=86400.0, metavar="S",
                   help="retry an event for S seconds before marking it failed (default "
                   "86400: 24 h); pending events survive a restart of the server")
    p.add_argument("--cap", action="append", default=None, metavar="ROLE.FIELD=VALUE",
                   help=CAP_HELP + "; set here, they are stored and every server applies them")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("release", help="free a worker's open hand-outs",
                       description="End every live hand-out of WORKER now: an answer to it is "
                       "no longer paid (rejected), it stops reserving the budget, and the "
                       "queries it held on a running lease go back in line for `next`. The "
                       "admin API does the same (POST /release {\"worker\": W}).")
    p.add_argument("db", metavar="DB", help=DB_HELP)
    p.add_argument("--worker", required=True, help="the worker whose hand-outs end")
    p.add_argument("--wait", type=seconds, default=WAIT, metavar="S",
                   help=f"give up after S s on a campaign another process is writing (exit 6; "
                   f"default {WAIT:g})")
    p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    p.set_defaults(func=cmd_release)

    p = sub.add_parser("webhook", help="register or remove a webhook endpoint",
                       description="Webhook endpoints are registered and removed explicitly; "
                       "a server started without --webhook changes none.")
    wsub = p.add_subparsers(dest="change", metavar="ACTION", parser_class=_Parser)

    def webhook_help(args: argparse.Namespace) -> int:
        p.print_help()
        return 2
    p.set_defaults(func=webhook_help)
    for change, what in (
            ("add", "every event written from now on (answers, budget thresholds, done) gets a "
                    "delivery to URL, made by the servers started with --webhook (one server "
                    "per endpoint at a time)"),
            ("remove", "no event is written for URL any more (its pending ones stay listed by "
                       "`campaign events`)")):
        q = wsub.add_parser(change, help=f"{change} an endpoint", description=what[0].upper()
                            + what[1:] + ".")
        q.add_argument("db", metavar="DB", help=DB_HELP)
        q.add_argument("url", metavar="URL", help="http(s)://host/path")
        q.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        q.set_defaults(func=cmd_webhook)
