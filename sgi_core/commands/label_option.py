"""``--labels FILE`` (repeatable): the commands that judge labelled files (report, gate, compare) take the labels
from other files.

Each FILE is the dashboard's annotations file or any table (CSV, TSV, Parquet, JSON
Lines) with question, context, response and label columns; its labels are joined to
the input's rows by row key (:func:`sgi_core.review.annotations.row_key`), in any row
order, and replace the input's own label column. Several files are joined together
(:func:`sgi_core.review.label_sources.join_label_sets`): one file may hold the labels
of both runs of ``compare``, or each run may have its own.
"""

from __future__ import annotations

import sys
from pathlib import Path


def add_labels_option(parser) -> None:
    parser.add_argument("--labels", type=Path, action="append", default=[], metavar="FILE",
                        help="take the labels from FILE instead of the input's label column (repeatable): the "
                             "dashboard's annotations file, or a table with question, context, response and label "
                             "columns; rows are matched on their texts, in any order")


def _print_join(joined, n_rows: int, what: str = "the file") -> None:
    from pathlib import Path

    names = ", ".join(Path(source).name for source in joined.source.split(", "))
    print(f"labels from {names}: {joined.n_matched:,} of {joined.n_labels:,} matched rows of {what}; "
          f"{joined.n_unmatched:,} matched none, {joined.n_conflicting:,} conflicting left out, "
          f"{joined.n_unsure:,} unsure; {n_rows - joined.n_rows_labelled:,} rows of {what} have no label",
          file=sys.stderr)


def read_label_sets(args) -> list:
    """The label sources of ``args.labels``, each read once."""
    from sgi_core.review.label_sources import read_label_source

    return [read_label_source(path, label_positive=args.label_positive) for path in args.labels]


def labelled_run(run, label_sets):
    """A run of ``compare`` (:class:`sgi_core.runs.reading.Run`) with the labels of ``label_sets``, and the join.

    Without label sets the run is returned as it is, with None; the join's counts go to stderr.
    """
    if not label_sets:
        return run, None
    from dataclasses import replace

    from sgi_core.review.label_sources import join_label_sets
    from sgi_core.runs.reading import run_row_keys

    joined = join_label_sets(run_row_keys(run.frame), label_sets)
    _print_join(joined, len(run.frame), what=run.source)
    return replace(run, frame=run.frame.assign(label=joined.label)), joined


def check_every_source_matched(label_sets, runs) -> None:
    """Refuse a labels file none of whose labels is in any of ``runs``: it comes from other data.

    Raises
    ------
    SGIInputError
    """
    from sgi_core.errors import SGIInputError
    from sgi_core.runs.reading import run_row_keys

    keys = set().union(*(run_row_keys(run.frame) for run in runs))
    for labels in label_sets:
        if len(labels.labels) and not labels.labels["key"].isin(keys).any():
            raise SGIInputError(f"none of the {len(labels.labels):,} labelled rows is in either run: the labels come "
                                "from other data", source=labels.source,
                                hint="Use the labels made for these runs; rows match on their question, context and "
                                     "response texts")


def labelled_table(args, table):
    """``table`` with the labels of ``args.labels`` (unchanged without the option); the join's counts go to stderr.

    Raises
    ------
    SGIInputError
        When the labels cannot be read, or none of their rows is in the input.
    """
    if not args.labels:
        return table
    from dataclasses import replace

    from sgi_core.review.annotations import row_keys
    from sgi_core.review.label_sources import join_label_sets

    label_sets = read_label_sets(args)
    joined = join_label_sets(row_keys(table.frame), label_sets)
    if not joined.n_matched and joined.n_labels:
        from sgi_core.errors import SGIInputError

        raise SGIInputError(f"none of the {joined.n_labels:,} labelled rows is in this table: the labels come from "
                            "other data", source=joined.source,
                            hint="Use the labels made for this file; rows match on their question, context and "
                                 "response texts")
    _print_join(joined, table.n_rows)
    return replace(table, frame=table.frame.assign(label=joined.label))
