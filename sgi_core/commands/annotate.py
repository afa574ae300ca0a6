"""``python -m sgi_core annotate SCORED --phoenix URL --project NAME --run-id ID``: scores back on the traces.

Writes one span annotation per scored row on its root span, and with ``--monitor`` the
monitor's verdict on every trace (:mod:`sgi_core.tracing.annotation_plan`), then reads them back
(:mod:`sgi_core.tracing.phoenix_push`). ``--dry-run`` prints the payload and sends nothing.

Exit status: 0 every row annotated and read back equal; 1 some spans or traces are unknown to
the server, some rows have no span id, or the read-back differs; 2 usage error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    """Register ``annotate`` on the CLI's subparsers."""
    p = subparsers.add_parser("annotate", help="write a scored window's scores (and a monitor verdict) back to "
                                               "Phoenix as span and trace annotations")
    p.add_argument("input", type=Path, metavar="SCORED", help="a file `pull` wrote and `score` scored")
    p.add_argument("--phoenix", required=True, metavar="URL", help="the server's base URL (key from "
                                                                    "$PHOENIX_API_KEY)")
    p.add_argument("--project", required=True, help="the project the traces are in")
    p.add_argument("--run-id", required=True, metavar="ID",
                   help="the annotations' identifier: annotating again with the same id updates them")
    p.add_argument("--score", default="sgi", metavar="COLUMN", help="the score column to write (default: sgi)")
    p.add_argument("--policy", type=Path, default=None, help="policy JSON: its threshold labels each span")
    p.add_argument("--monitor", type=Path, default=None, metavar="MONITOR.json",
                   help="a `monitor --json` result: its verdict, corrected rate and interval on every trace")
    p.add_argument("--dry-run", action="store_true", help="print the payload as JSON and send nothing")
    p.set_defaults(func=run)


def _plan(args):
    from sgi_core.errors import SGIInputError
    from sgi_core.io.reading import read_table
    from sgi_core.io.scored import scored_with
    from sgi_core.jsonio import read_json_file
    from sgi_core.tracing.annotation_plan import plan_annotations

    policy = None
    if args.policy is not None:
        from sgi_core.policy.file import load_policy

        policy = load_policy(args.policy)
    monitor = None
    if args.monitor is not None:
        hint = "Give the JSON that `python -m sgi_core monitor ... --json` prints"
        monitor = read_json_file(args.monitor, hint=hint)
        if not isinstance(monitor, dict):
            raise SGIInputError("the monitor result is not a JSON object", source=str(args.monitor), hint=hint)
    made_by = scored_with(args.input) or {}
    return plan_annotations(read_table(args.input), run_id=args.run_id, score=args.score, policy=policy,
                            model=made_by.get("model"), monitor=monitor, source=str(args.input))


def _named(ids) -> str:
    from sgi_core.io.convert.traces import IDS_SHOWN

    return ", ".join(map(str, ids[:IDS_SHOWN])) + (f" and {len(ids) - IDS_SHOWN:,} more" if len(ids) > IDS_SHOWN
                                                   else "")


def run(args) -> int:
    from sgi_core.tracing.connection import Connection, check_server_url
    from sgi_core.tracing.phoenix_push import push_annotations

    check_server_url(args.phoenix)
    plan = _plan(args)
    for rows, why in ((plan.no_span, "no span_id"), (plan.not_scored, "no score")):
        if rows:
            print(f"warning: {len(rows):,} row{'s' if len(rows) > 1 else ''} with {why}, not annotated "
                  f"(rows {_named(rows)})", file=sys.stderr)
    if args.dry_run:
        print(json.dumps({"span_annotations": list(plan.span_annotations),
                          "trace_annotations": list(plan.trace_annotations),
                          "annotation_configs": list(plan.configs)}, indent=2, allow_nan=False))
        print(f"dry run: {len(plan.span_annotations):,} span and {len(plan.trace_annotations):,} trace annotations "
              "not sent", file=sys.stderr)
        return 0
    with Connection(args.phoenix) as connection:
        result = push_annotations(connection, args.project, plan)
    for ids, what in ((result.unknown_spans, "spans"), (result.unknown_traces, "traces")):
        if ids:
            print(f"error: {len(ids):,} {what} are not in project {args.project}: {_named(ids)}; the others were "
                  "annotated", file=sys.stderr)
    print(f"{result.n_spans_sent:,} span annotations and {result.n_traces_sent:,} trace annotations stored under run "
          f"id {args.run_id}; {result.n_read_back:,} read back, {result.n_equal:,} with the score sent",
          file=sys.stderr)
    whole = result.n_equal == result.n_spans_sent == len(plan.span_annotations)
    return 0 if whole and not (plan.no_span or result.unknown_spans or result.unknown_traces) else 1
