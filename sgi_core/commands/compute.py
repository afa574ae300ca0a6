"""``python -m sgi_core compute --q ... --c ... --r ...``: angles and SGI of one triple."""

from __future__ import annotations

import json

from sgi_core.commands.options import add_model_options, model_load_options
from sgi_core.embedding import DEFAULT_MODEL


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("compute", help="score one (question, context, response) triple")
    p.add_argument("--q", required=True, help="question")
    p.add_argument("--c", required=True, help="context")
    p.add_argument("--r", required=True, help="response")
    p.add_argument("--model", default=DEFAULT_MODEL, help=f"model name (default {DEFAULT_MODEL})")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_model_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from sgi_core.embedding import load_encoder
    from sgi_core.scoring import score_triple

    encoder = load_encoder(args.model, **model_load_options(args))
    result = score_triple(args.q, args.c, args.r, encoder)
    if args.json:
        print(json.dumps({name: getattr(result, name) for name in ("theta_rq", "theta_rc", "theta_qc", "sgi")}))
    else:
        print(f"SGI={result.sgi:.6f}  theta_rq={result.theta_rq:.6f}  theta_rc={result.theta_rc:.6f}")
    return 0
