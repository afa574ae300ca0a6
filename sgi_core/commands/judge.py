"""``python -m sgi_core judge IN -o OUT --endpoint URL --judge-model NAME --metrics ...``."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from sgi_core.commands.options import positive_int
from sgi_core.judge.metrics import METRICS

if TYPE_CHECKING:
    from sgi_core.judge.runner import JudgeProgress

#: Exit status of a run that judged no row fully (the output is still written).
NOTHING_JUDGED = 1
#: Exit status after Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED = 130

DEFAULT_METRICS = "answer_consistency"


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``judge`` subcommand on an ``add_subparsers()`` object."""
    p = subparsers.add_parser("judge", help="add LLM-judged RAG metrics (judge_<metric> columns) to every row")
    p.add_argument("input", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True, help="output .csv or .parquet")
    p.add_argument("--endpoint", required=True,
                   help="OpenAI-compatible base URL, e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1")
    p.add_argument("--judge-model", required=True, help="the judge model's name at that endpoint")
    p.add_argument("--metrics", default=DEFAULT_METRICS,
                   help=f"comma-separated, from {', '.join(METRICS)} (default {DEFAULT_METRICS})")
    p.add_argument("--contexts-column", default=None,
                   help="column of retrieved passages per row (JSON array or |-separated), required by "
                        f"{', '.join(m.name for m in METRICS.values() if m.needs == 'contexts')}; the other metrics "
                        "read the context column as the one passage when it is not given")
    p.add_argument("--reference-column", default=None, help="column of reference answers (answer_similarity)")
    p.add_argument("--k", type=positive_int, default=3, help="top-k of retrieval_k_recall (default 3)")
    p.add_argument("--max-rows", type=positive_int, default=None,
                   help="judge the first N rows; the rest are kept unjudged")
    p.add_argument("--concurrency", type=positive_int, default=4, help="requests in flight at once (default 4)")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds from sending a request to the last byte of its reply (default 60)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY",
                   help="environment variable holding the key (default OPENAI_API_KEY; '' sends no key)")
    p.add_argument("--label-positive", choices=["grounded", "hallucinated"], default=None,
                   help="what 1/true/yes means in the label column (default: from its name)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the judge answer cache")
    p.add_argument("--dry-run", action="store_true",
                   help="print the number of requests and an estimate of input tokens, send nothing")
    p.set_defaults(func=run)
    return p


def _tqdm_progress(bar) -> JudgeProgress:
    def report(done: int, total: int, tokens: int) -> None:
        bar.total = total
        bar.update(done - bar.n)
        bar.set_postfix_str(f"{tokens:,} tokens", refresh=False)

    return report


def _read(args):
    """The table to judge and the frame to add the judge columns to (a scored file keeps its scores as they are)."""
    from sgi_core.io.limits import is_scored
    from sgi_core.io.reading import read_table, source_name
    from sgi_core.io.scored import scored_table
    from sgi_core.io.triples import validate_triples

    name = source_name(args.input)
    frame = read_table(args.input, name=name)
    if is_scored(frame.columns):
        return scored_table(frame, source=name)
    table = validate_triples(frame, label_positive=args.label_positive, source=name)
    return table, table.frame


def run(args) -> int:
    from tqdm import tqdm

    from sgi_core.io.export import check_output_path, write_table
    from sgi_core.judge.cache import AnswerCache
    from sgi_core.judge.client import JudgeClient
    from sgi_core.judge.output import renamed_input_columns, with_judge_columns
    from sgi_core.judge.runner import estimate, plan_judging, run_judge
    from sgi_core.judge.yes_no import JudgeProbabilityWarning
    from sgi_core.render.lines import judge_estimate_line

    check_output_path(args.output)  # before any request is paid for
    # The reader's warnings are about SGI scoring (short responses, labels); `report` prints them.
    table, base = _read(args)
    api_key = os.environ.get(args.api_key_env) if args.api_key_env else None
    judge = JudgeClient(args.endpoint, args.judge_model, api_key=api_key, timeout=args.timeout)
    cache = None
    try:
        plan = plan_judging(table.frame, judge, args.metrics, contexts_column=args.contexts_column,
                            passages=table.passages, reference_column=args.reference_column, k=args.k,
                            max_rows=args.max_rows, source=table.source)
        cache = None if args.no_cache else AnswerCache()
        guess = estimate(plan, cache=cache)
        if args.dry_run:
            print(judge_estimate_line(guess))
            return 0
        print(judge_estimate_line(guess), file=sys.stderr)
        with tqdm(total=guess.n_judged_rows, unit="row", desc="judge", file=sys.stderr) as bar, \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", JudgeProbabilityWarning)
            columns, summary = run_judge(plan, judge, cache=cache, concurrency=args.concurrency,
                                         progress=_tqdm_progress(bar))
    except KeyboardInterrupt:
        kept = (f"{len(cache):,} answers are in the cache; a new run resumes from there" if cache
                else "nothing was cached")
        print(f"interrupted: {kept}; nothing was written to {args.output}", file=sys.stderr)
        return INTERRUPTED
    finally:
        judge.close()
    for caught_warning in caught:  # the Yes/No metrics' fallback as a warning line; any other as Python shows it
        if issubclass(caught_warning.category, JudgeProbabilityWarning):
            print(f"warning: {caught_warning.message}", file=sys.stderr)
        else:
            warnings.showwarning(caught_warning.message, caught_warning.category, caught_warning.filename,
                                 caught_warning.lineno)
    renamed = renamed_input_columns(base, columns)
    if renamed:
        print(f"warning: input columns {', '.join(renamed)} were renamed to {', '.join(renamed.values())}",
              file=sys.stderr)
    write_table(with_judge_columns(base, columns), args.output)
    print(f"{summary.n_sent} requests sent, {summary.n_cached} answers from the cache, {summary.tokens:,} tokens",
          file=sys.stderr)
    print(f"wrote {summary.n_rows} rows ({summary.n_ok} of {summary.n_to_judge} judged ok) to {args.output}",
          file=sys.stderr)
    if summary.n_ok == 0:
        print("error: no row was judged fully; see the judge_status column for why", file=sys.stderr)
        return NOTHING_JUDGED
    return 0
