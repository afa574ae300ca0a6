"""Command line: ``python -m sgi_core COMMAND ...``.

- ``compute``: angles and SGI of one (question, context, response) triple.
- ``score``: every row of a file with angles, SGI and status (a flag per per-row detector family, e.g. ``--claims``).
- ``report``: the paper's tables, baselines, confounds and detectors on a labelled file.
- ``models``: the registered embedding models and whether each loads offline.
- ``convert``: raw HaluEval or TruthfulQA files into (question, context, response, label) triples.
- ``gate``: exit 1 when a labelled file falls short of a policy (CI), or write that policy from labels.
- ``judge``: LLM-judged RAG metrics (``judge_<metric>`` columns) for every row, via an OpenAI-compatible API.
- ``compare``: two runs of the same inputs, score by score, with paired intervals and tests.
- ``monitor``: a new run held to a saved policy: corrected hallucination rate, shift check, run history.
- ``sample``: the keys to label, drawn uniformly or where a predictor is unsure, for valid intervals.
- ``pull``: a window of traces from a running Phoenix server, one row per trace.
- ``annotate``: a scored window's scores and a monitor's verdict written back to Phoenix as annotations.

Each subcommand is a module of :mod:`sgi_core.commands`; this module only assembles the
parser from :data:`COMMANDS` and runs the chosen one.
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
