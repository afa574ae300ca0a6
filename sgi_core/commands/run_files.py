"""The two run files of ``compare`` and ``gate --baseline``: read, scored where they carry no SGI, labelled and
paired."""

from __future__ import annotations

import sys


def made_by(path, run_, model: str, precision: str, context_strategy: str) -> dict | None:
    """What scored a run's SGI: the record of a scored Parquet file, the model used here, or None."""
    from sgi_core.io.scored import scored_with
    from sgi_core.io.shards import is_sharded, shards_scored_with

    if run_.scored_here:
        return {"model": model, "precision": precision, "backend": None, "context_strategy": context_strategy}
    return shards_scored_with(path) if is_sharded(path) else scored_with(path)


def read_runs(args, paths, scorer, model: str, *, resources=None):
    """Both runs (``paths``: base, new) read, labelled by ``--labels`` and paired; notes go to stderr.

    Files without SGI are scored with ``scorer`` (``model``); runs scored with another
    model, precision or backend are refused (:func:`sgi_core.runs.pairing.pair_runs`).
    ``resources`` (the grounding models given) add their columns to scored files too.
    """
    from sgi_core.commands.label_option import check_every_source_matched, labelled_run, read_label_sets
    from sgi_core.runs.pairing import pair_runs
    from sgi_core.runs.reading import load_run

    label_sets = read_label_sets(args)
    runs, recorded = [], []
    for path in paths:
        run_ = load_run(path, scorer=scorer, label_positive=args.label_positive, key=args.key,
                        hallucinated_high=getattr(args, "hallucinated_high", ()), resources=resources)
        for warning in run_.warnings:
            print(f"warning: {run_.source}: {warning}", file=sys.stderr)
        run_, _ = labelled_run(run_, label_sets)
        run_ = _with_label_order(run_, label_sets)
        if run_.scored_here:
            print(f"note: {run_.source} carries no SGI; scored here with {model}", file=sys.stderr)
        runs.append(run_)
        recorded.append(made_by(path, run_, model, args.precision, args.context_strategy))
    check_every_source_matched(label_sets, runs)
    if runs[0].scored_here != runs[1].scored_here and None in recorded:
        print(f"note: only one run was scored here: its SGI compares with the other's only if that one was "
              f"scored with {model} too", file=sys.stderr)
    from sgi_core.runs.reading import run_row_keys

    targeted = frozenset().union(*(labels.targeted_keys for labels in label_sets))
    n_targeted = sum(sum(key in targeted for key in run_row_keys(run_.frame)) for run_ in runs) if targeted else 0
    if n_targeted:
        print(f"note: {n_targeted} labelled rows come from a Review queue that is not a random order (most "
              "uncertain, disagreement, ...): the labels are compared as they are, with no prediction-powered "
              "estimate, which needs a random sample", file=sys.stderr)
    from sgi_core.runs.label_order import FIXED_ORDER, LABELLING_ORDER

    return pair_runs(runs[0], runs[1], key=args.key, made_by=recorded, targeted_labels=n_targeted,
                     label_order=LABELLING_ORDER if label_sets else FIXED_ORDER)


def _with_label_order(run_, label_sets):
    """The run with each row's label order: the order the label sets give, else a fixed one (no order is known)."""
    from dataclasses import replace

    from sgi_core.runs.label_order import LABEL_ORDER, fixed_order, label_order
    from sgi_core.runs.reading import run_row_keys

    if "label" not in run_.frame:
        return run_
    keys = run_row_keys(run_.frame)
    order = label_order(keys, label_sets) if label_sets else fixed_order(keys, run_.frame["label"])
    return replace(run_, frame=run_.frame.assign(**{LABEL_ORDER: order}))
