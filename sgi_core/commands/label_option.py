"""``--labels FILE``: the commands that judge labelled files (report, gate, compare) take the labels from another file.

FILE is the dashboard's annotations file or any table (CSV, TSV, Parquet, JSON Lines)
with question, context, response and label columns; its labels are joined to the
input's rows by row key (:func:`sgi_core.review.annotations.row_key`), in any row order, and
replace the input's own label column.
"""

from __future__ import annotations

import sys
from pathlib import Path


def add_labels_option(parser) -> None:
    parser.add_argument("--labels", type=Path, default=None, metavar="FILE",
                        help="take the labels from FILE instead of the input's label column: the dashboard's "
                             "annotations file, or a table with question, context, response and label columns; "
                             "rows are matched on their texts, in any order")


def _print_join(name: str, joined, n_rows: int, what: str = "the file") -> None:
    print(f"labels from {name}: {joined.n_matched:,} of {joined.n_labels:,} matched rows of {what}; "
          f"{joined.n_unmatched:,} matched none, {joined.n_conflicting:,} conflicting left out, "
          f"{joined.n_unsure:,} unsure; {n_rows - joined.n_rows_labelled:,} rows of {what} have no label",
          file=sys.stderr)


def labelled_run(args, run):
    """A run of ``compare`` (:class:`sgi_core.pipelines.runs.Run`) with the labels of ``args.labels``; the counts go to stderr."""
    if args.labels is None:
        return run
    from dataclasses import replace

    from sgi_core.review.annotations import row_keys
    from sgi_core.review.label_sources import join_labels, read_label_source

    joined = join_labels(row_keys(run.frame), read_label_source(args.labels, label_positive=args.label_positive))
    _print_join(args.labels.name, joined, len(run.frame), what=run.source)
    return replace(run, frame=run.frame.assign(label=joined.label))


def labelled_table(args, table):
    """``table`` with the labels of ``args.labels`` (unchanged without the option); the join's counts go to stderr.

    Raises
    ------
    SGIInputError
        When the labels cannot be read, or none of their rows is in the input.
    """
    if args.labels is None:
        return table
    from sgi_core.review.label_sources import with_labels

    table, joined = with_labels(table, args.labels, label_positive=args.label_positive)
    _print_join(args.labels.name, joined, table.n_rows)
    return table
