"""``python -m sgi_core models``: the registered embedding models and whether each loads offline here."""

from __future__ import annotations

import json


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("models", help="list registered models and whether they load offline")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    from sgi_core.embedding import model_availability

    rows = model_availability()
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=2))
        return 0
    for r in rows:
        where = f"available ({r.source})" if r.available else f"not available: {r.how_to_get}"
        print(f"{r.name:<8} {r.model_id:<42} {where}")
    return 0
