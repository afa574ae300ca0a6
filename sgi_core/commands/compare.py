"""``python -m sgi_core compare BASE NEW``: which run hallucinates less, by the labels, and how each score moved.

Prints :func:`sgi_core.render.runs.comparison_text` of
:func:`sgi_core.runs.comparison.compare_runs`: the labels' verdict first, then
each score's difference, worded only where the score is validated; ``--json OUT``
writes the result. Files without SGI are scored first with ``--model``; ``--labels``
(repeatable) joins labels of either run or both by their texts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sgi_core.commands.label_option import add_labels_option
from sgi_core.commands.options import add_embedding_run_options, add_model_options, model_load_options, non_negative_int
from sgi_core.commands.resource_options import add_resource_options, given_resources
from sgi_core.embedding import DEFAULT_MODEL


def add_parser(subparsers) -> None:
    """Register ``compare`` on the CLI's subparsers."""
    p = subparsers.add_parser("compare", help="compare two runs (scored, judged or plain files) score by score")
    p.add_argument("base", type=Path, help="the baseline run")
    p.add_argument("new", type=Path, help="the run to compare with it")
    p.add_argument("--key", default=None,
                   help="column matching the rows of the two runs (default: trace_id when both runs carry it with "
                        "values in common, as converted trace exports of the same traces do; else the question text)")
    p.add_argument("--json", type=Path, default=None, metavar="OUT", help="also write the comparison as JSON here")
    p.add_argument("--html", type=Path, default=None, metavar="OUT",
                   help="also write a self-contained HTML report of the comparison here")
    p.add_argument("--policy", type=Path, default=None,
                   help="policy JSON (from `gate --write-policy`): compare the keys flagged at its threshold")
    p.add_argument("--hallucinated-high", action="append", default=[], metavar="COLUMN",
                   help="a numeric column of the files where high values mean hallucinated (repeatable)")
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"model scoring a file that carries no SGI (default {DEFAULT_MODEL})")
    p.add_argument("--n-boot", type=non_negative_int, default=2000,
                   help="bootstrap resamples of keys for the 95%% intervals (default 2000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sequential", action="store_true",
                   help="let the labels' verdict come from a confidence sequence of the paired difference, valid "
                        "whenever you stop labelling, instead of the fixed-sample interval (which assumes the number "
                        "of labelled keys was fixed in advance)")
    p.add_argument("--label-positive", choices=["grounded", "hallucinated"], default=None,
                   help="what 1/true/yes means in the label column of an unscored file (default: from its name)")
    add_labels_option(p)
    add_resource_options(p)
    add_model_options(p)
    add_embedding_run_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    import warnings

    from sgi_core.commands.run_files import read_runs
    from sgi_core.io.export import atomic_output
    from sgi_core.policy.file import load_policy
    from sgi_core.progress import EmbeddingProgress
    from sgi_core.render.runs import comparison_text
    from sgi_core.results import UndefinedStatisticWarning
    from sgi_core.runs.comparison import compare_runs
    from sgi_core.runs.reading import model_scorer

    if args.key is None:
        from sgi_core.runs.trace_ids import default_run_key

        args.key, note = default_run_key(args.base, args.new)
        if note:
            print(f"note: {note}", file=sys.stderr)
    policy = load_policy(args.policy) if args.policy is not None else None
    resources = given_resources(args)
    scorer = model_scorer(args.model, load_options=model_load_options(args), batch_size=args.batch_size,
                          use_cache=not args.no_cache, progress=EmbeddingProgress(args.model),
                          context_strategy=args.context_strategy, resources=resources)
    threshold = None if policy is None else (policy.score_column, policy.threshold)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedStatisticWarning)
        pair = read_runs(args, (args.base, args.new), scorer, args.model, resources=resources)
        if policy is not None and policy.model != (pair.model or args.model):
            print(f"note: the policy's threshold is in {policy.model}'s units; these runs were scored with "
                  f"{pair.model or args.model} (pass --model {policy.model})", file=sys.stderr)
        validated = _validating(policy, pair, (args.base, args.new))
        comparison = compare_runs(pair.matched, threshold=threshold, policy=validated, model=pair.model,
                                  n_boot=args.n_boot, seed=args.seed, prediction_powered=not pair.targeted_labels,
                                  label_order=pair.label_order)
        if args.labels:
            from sgi_core.runs.active_labels import design_comparison

            comparison = design_comparison(comparison, pair, args.labels, policy=policy)
    if comparison.labels is not None:
        from sgi_core.runs.label_sample import check_labelled_sample

        check_labelled_sample(comparison.labels.sample)
    print(comparison_text(comparison, sequential=args.sequential))
    for note in dict.fromkeys(str(w.message) for w in caught):
        print(f"note: {note}", file=sys.stderr)
    if args.json:
        with atomic_output(args.json) as handle:
            handle.write((json.dumps(comparison.to_dict(), indent=2, allow_nan=False) + "\n").encode("utf-8"))
        print(f"wrote {args.json}", file=sys.stderr)
    if args.html:
        with atomic_output(args.html) as handle:
            handle.write(_html(args, pair, comparison).encode("utf-8"))
        print(f"wrote {args.html}", file=sys.stderr)
    return 0


def _validating(policy, pair, paths):
    """The policy, or None where its validation does not carry over to a run (the monitor's rule: shift, a run too
    small to check, a forced or thinly held-out policy)."""
    if policy is None or policy.references is None:
        return policy
    import numpy as np

    from sgi_core.io.shards import is_sharded
    from sgi_core.monitoring.summary import monitor_run
    from sgi_core.pipelines.sharded_runs import run_digest
    from sgi_core.render.monitor import shift_sentence

    for run, path in zip((pair.base, pair.new), paths):
        if policy.score_column not in run.frame.columns:
            continue
        if is_sharded(path):  # the monitored features of a run read from shards, computed a batch at a time
            digest = run_digest(path, policy.score_column)
            summary = monitor_run(policy, None, digest.scores, features=digest.features, keys=digest.keys,
                                  systems=digest.systems, n_boot=0)
        else:
            summary = monitor_run(policy, run.frame, run.frame[policy.score_column].to_numpy(dtype=np.float64),
                                  n_boot=0)
        if summary.shift.detected:
            print(f"note: {run.source}: {shift_sentence(summary)}; the policy does not validate its score here",
                  file=sys.stderr)
            return None
        if not summary.validation.validated:  # a run too small to check, a forced or thinly held-out policy
            print(f"note: {run.source}: the policy does not validate its score here: {summary.validation.reason}",
                  file=sys.stderr)
            return None
    return policy


def _html(args, pair, comparison) -> str:
    """The comparison as one HTML file, drawn as the Compare runs page draws it."""
    # The dashboard's drawing layer (figures, no Streamlit state): the one place figures are made.
    from sgi_core.render.html_report import comparison_report
    from sgi_core.render.provenance import provenance

    made = [m or {} for m in pair.made_by]
    facts = provenance(base=pair.base.source, base_fingerprint=_fingerprint(args.base), new=pair.new.source,
                       new_fingerprint=_fingerprint(args.new), matched_keys=comparison.match.n_matched,
                       key=comparison.match.key, model=made[0].get("model") or args.model,
                       backend=made[0].get("backend") or made[1].get("backend"),
                       precision=made[0].get("precision") or args.precision,
                       labels=(", ".join(path.name for path in args.labels) if args.labels
                               else "the files' label columns"))
    return comparison_report(comparison, pair.matched, facts)


def _fingerprint(path) -> str:
    """``sha256:<16 hex digits>`` of a run file's bytes, or of its shards' digests
    (:func:`~sgi_core.io.shards.shards_sha256`)."""
    from sgi_core.io.shards import is_sharded, shards_sha256
    from sgi_core.render.provenance import file_fingerprint

    return "sha256:" + shards_sha256(path)[:16] if is_sharded(path) else file_fingerprint(path)
