"""Command line: ``python -m sgi_core COMMAND ...``.

Each subcommand is a module of :mod:`sgi_core.commands` that builds its own parser and says what it
does in ``--help``; this module only assembles the parser from :data:`COMMANDS` and runs the chosen
one, so a subcommand is described in one place.
"""

from __future__ import annotations

import argparse
import sys

from sgi_core.commands import (
    annotate,
    compare,
    compute,
    convert,
    gate,
    judge,
    models,
    monitor,
    pull,
    report,
    sample,
    score,
)
from sgi_core.errors import SGIInputError

#: The subcommands, in the order ``--help`` lists them.
COMMANDS = (compute, score, report, models, convert, gate, judge, compare, monitor, sample, pull, annotate)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m sgi_core", description="Semantic Grounding Index tools.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except SGIInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
