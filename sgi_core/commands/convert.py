"""``python -m sgi_core convert [--from FORMAT] IN -o OUT``: trace exports and benchmark files as triples.

The formats, their help and their detection come from the registry
(:data:`sgi_core.io.convert.registry.FORMATS`). ``convert KIND IN -o OUT`` (the format first, as
before) still works.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

from sgi_core.io.convert.registry import FORMATS, KIND_NAMES


def _formats_help() -> str:
    lines = ["formats (recognised from the file's columns or first record's keys unless --from names one):"]
    for f in FORMATS.values():
        kinds = " or ".join(KIND_NAMES[kind] for kind in f.kinds)
        lines += textwrap.wrap(f"{f.name}: {f.title}, {kinds}. Reads {f.reads}.", width=100,
                               initial_indent="  ", subsequent_indent="      ")
    return "\n".join(lines)


def add_parser(subparsers) -> None:
    """Register ``convert`` on the CLI's subparsers."""
    p = subparsers.add_parser(
        "convert", help="turn trace exports (Phoenix, Langfuse, OpenTelemetry) and benchmark files into triples",
        description=_formats_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", nargs="?", default=None, metavar="FORMAT",
                   help="the format, as --from (kept for `convert halueval-qa IN -o OUT`)")
    p.add_argument("input", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True)
    p.add_argument("--from", dest="source_format", choices=list(FORMATS), default=None,
                   help="the input's format (default: recognised from its columns or keys)")
    p.add_argument("--truthfulqa-context", choices=["references", "question"], default="references",
                   help="TruthfulQA context: all reference answers (default) or the question itself "
                        "(the paper's setup)")
    p.set_defaults(func=run)


def run(args) -> int:
    from sgi_core.errors import SGIInputError
    from sgi_core.io.convert.detection import convert_file
    from sgi_core.io.export import check_output_path, write_table

    if args.kind is not None and args.kind not in FORMATS:
        raise SGIInputError(f"unknown format '{args.kind}'", hint=f"Use one of {', '.join(FORMATS)}")
    if args.kind and args.source_format and args.kind != args.source_format:
        raise SGIInputError(f"two formats given, '{args.kind}' and --from {args.source_format}",
                            hint="Give the format once, with --from")
    check_output_path(args.output, inputs=[args.input])
    conversion = convert_file(args.input, args.source_format or args.kind,
                              options={"context": args.truthfulqa_context})
    for warning in conversion.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    write_table(conversion.frame, args.output)
    print(f"read {args.input} as {FORMATS[conversion.format].title}; wrote {len(conversion.frame)} rows to "
          f"{args.output}", file=sys.stderr)
    return 0
