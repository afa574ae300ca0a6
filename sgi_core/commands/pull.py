"""``python -m sgi_core pull phoenix URL --project NAME [--since T] [--until T] -o FILE``: a window of live traces.

One row per trace whose root span started in the window (:func:`sgi_core.tracing.phoenix_pull.pull_phoenix`),
written as ``convert`` writes a trace export: ``score``, ``monitor`` and ``compare`` read it as
any file, and ``annotate`` writes the scores back on each row's root span.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: The servers ``pull`` reads from.
SOURCES = ("phoenix",)


def add_parser(subparsers) -> None:
    """Register ``pull`` on the CLI's subparsers."""
    p = subparsers.add_parser("pull", help="pull a window of traces from a running Phoenix server as triples "
                                           "(trace_id, span_id, question, context, response)")
    p.add_argument("source", choices=SOURCES, help="the kind of server")
    p.add_argument("url", metavar="URL", help="the server's base URL, e.g. http://127.0.0.1:6006 "
                                              "(key from $PHOENIX_API_KEY, sent as a bearer header)")
    p.add_argument("--project", required=True, help="the project's name")
    p.add_argument("--since", default=None, metavar="T",
                   help="ISO 8601 time: traces whose root span started at or after it (default: the first)")
    p.add_argument("--until", default=None, metavar="T",
                   help="ISO 8601 time: traces whose root span started before it (default: no end); a time without "
                        "an offset is UTC")
    p.add_argument("-o", "--output", type=Path, required=True, help="output .csv or .parquet")
    p.set_defaults(func=run)


def run(args) -> int:
    from sgi_core.io.export import check_output_path, write_table
    from sgi_core.progress import EmbeddingProgress
    from sgi_core.render.tracing import count_line
    from sgi_core.tracing.connection import Connection
    from sgi_core.tracing.phoenix_pull import pull_phoenix, window_time

    check_output_path(args.output, inputs=[])
    since, until = window_time(args.since, "--since"), window_time(args.until, "--until")
    with Connection(args.url) as connection:
        window = pull_phoenix(connection, args.project, since=since, until=until,
                              progress=EmbeddingProgress(f"{args.project}", what="traces pulled"))
    for warning in window.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    write_table(window.frame, args.output)
    print(f"{count_line(window)}; {window.n_spans:,} spans read in {window.seconds:.1f} s; wrote {args.output}",
          file=sys.stderr)
    return 0
