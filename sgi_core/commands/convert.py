"""``python -m sgi_core convert KIND IN -o OUT``: raw HaluEval or TruthfulQA files as triples."""

from __future__ import annotations

import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("convert", help="turn raw HaluEval / TruthfulQA files into triples")
    p.add_argument("kind", choices=["halueval-qa", "halueval-dialogue", "halueval-summarization", "truthfulqa"])
    p.add_argument("input", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True)
    p.add_argument("--truthfulqa-context", choices=["references", "question"], default="references",
                   help="TruthfulQA context: all reference answers (default) or the question itself (the paper's setup)")
    p.set_defaults(func=run)


def run(args) -> int:
    from sgi_core.io.converters import convert_halueval, convert_truthfulqa
    from sgi_core.io.export import check_output_path, write_table

    check_output_path(args.output, inputs=[args.input])
    if args.kind == "truthfulqa":
        frame = convert_truthfulqa(args.input, context=args.truthfulqa_context)
    else:
        frame = convert_halueval(args.input, task=args.kind.split("-", 1)[1])
    write_table(frame, args.output)
    print(f"wrote {len(frame)} rows to {args.output}", file=sys.stderr)
    return 0
