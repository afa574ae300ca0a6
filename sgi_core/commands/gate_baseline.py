"""``gate NEW --baseline BASE``: fail a CI job when the new run is worse than its baseline, by the labels or a
validated score.

Parses the options, reads both runs (:func:`sgi_core.commands.run_files.read_runs`),
compares them (:func:`sgi_core.runs.comparison.compare_runs`) and applies the
rules of :mod:`sgi_core.policy.baseline_gate`, one printed line per check. Exit 1
when a check fails, 0 otherwise, 2 on bad input or a refused check.
"""

from __future__ import annotations

import argparse
import sys


def add_options(p: argparse.ArgumentParser) -> None:
    """The options of the baseline mode of ``gate`` (``--baseline`` itself sits in gate's mode group)."""
    from sgi_core.commands.resource_options import add_resource_options

    add_resource_options(p)
    p.add_argument("--max-rate-increase", type=float, default=None, metavar="X",
                   help="with --baseline: fail when the upper 95%% bound of the hallucination-rate increase (from "
                        "the labels of both runs, --labels) exceeds X; refused when X is below the change the labels "
                        "can detect (`compare` prints it: about 0.13 with 40 keys labelled in both runs)")
    p.add_argument("--score", action="append", default=None, metavar="NAME",
                   help="with --baseline and --max-drop: a score to hold (repeatable), named as `compare` prints it; "
                        "refused unless validated on the labels of both runs")
    p.add_argument("--max-drop", type=float, default=None,
                   help="with --baseline: the largest allowed drop of each --score's mean (in its own units)")
    p.add_argument("--allow-unvalidated", action="store_true",
                   help="with --max-drop: gate on a score even when the labels do not show it tracks grounding")
    p.add_argument("--allow-missing-keys", action="store_true",
                   help="with --baseline: pass even when keys of the baseline are missing or unscored in the new run")
    p.add_argument("--sequential", action="store_true",
                   help="with --max-rate-increase: read a confidence sequence of the paired difference, valid however "
                        "many keys were labelled and whenever you stopped (decided when it excludes X; undecided "
                        "fails), instead of the fixed-sample interval, which assumes the number was fixed in advance")
    p.add_argument("--key", default=None,
                   help="with --baseline: the column matching rows (default: as `compare` chooses it, trace_id when "
                        "both runs share its values, else the question)")


def _checked_options(args) -> list[str]:
    from sgi_core.errors import SGIInputError

    if args.max_rate_increase is None and args.max_drop is None and args.min_auroc is None:
        raise SGIInputError("gate --baseline needs --max-rate-increase X (labels), --max-drop X (a validated "
                            "--score) or --min-auroc X",
                            hint="For the labels' verdict: gate NEW --baseline BASE --labels FILE --max-rate-increase "
                                 "X, with X at least the change the labels can detect (`compare` prints it)")
    if args.score and args.max_drop is None and args.min_auroc is None:
        raise SGIInputError("--score needs --max-drop X (or --min-auroc X) to hold it to")
    if args.sequential and args.max_rate_increase is None:
        raise SGIInputError("--sequential reads the hallucination-rate check: it needs --max-rate-increase X")
    if args.max_drop is not None and not args.score:
        raise SGIInputError("--max-drop needs the score to hold: --score NAME (validated on the labels)")
    return list(dict.fromkeys(args.score or []))


def run(args) -> int:
    """``gate NEW --baseline BASE ...``: one line per check, exit 1 on a failed one."""
    import warnings

    from sgi_core.commands.options import model_load_options
    from sgi_core.commands.resource_options import given_resources
    from sgi_core.commands.run_files import read_runs
    from sgi_core.embedding import DEFAULT_MODEL
    from sgi_core.policy import baseline_gate
    from sgi_core.progress import EmbeddingProgress
    from sgi_core.render.runs import gate_baseline_lines
    from sgi_core.results import UndefinedStatisticWarning
    from sgi_core.runs.comparison import compare_runs
    from sgi_core.runs.reading import model_scorer

    scores = _checked_options(args)
    if args.key is None:
        from sgi_core.runs.trace_ids import default_run_key

        args.key, note = default_run_key(args.baseline, args.input)
        if note:
            print(f"note: {note}", file=sys.stderr)
    model = args.model or DEFAULT_MODEL
    resources = given_resources(args)
    scorer = model_scorer(model, load_options=model_load_options(args), batch_size=args.batch_size,
                          use_cache=not args.no_cache, progress=EmbeddingProgress(model),
                          context_strategy=args.context_strategy, resources=resources)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedStatisticWarning)
        pair = read_runs(args, (args.baseline, args.input), scorer, model, resources=resources)
        missing = [s for s in scores if s not in pair.matched.scores]
        if missing:
            from sgi_core.errors import SGIInputError

            raise SGIInputError(f"score {', '.join(map(repr, missing))} is not in both runs",
                                hint=f"Scores of both runs: {', '.join(pair.matched.scores)}")
        comparison = compare_runs(pair.matched, n_boot=args.n_boot, seed=args.seed,
                                  prediction_powered=not pair.targeted_labels,
                                  label_order=pair.label_order)
        if args.labels:
            from sgi_core.runs.active_labels import design_comparison

            comparison = design_comparison(comparison, pair, args.labels)
    for note in dict.fromkeys(str(w.message) for w in caught):
        print(f"note: {note}", file=sys.stderr)
    if comparison.labels is not None and comparison.match.mixed_label_keys:
        from sgi_core.runs.label_sample import mixed_label_note

        print(f"note: labels: {mixed_label_note(comparison.match.mixed_label_keys)}", file=sys.stderr)
    baseline_gate.check_enough_keys(comparison)
    coverage = baseline_gate.key_coverage(comparison, pair.matched, scores or [s for s in ("sgi",)
                                                                              if s in pair.matched.scores],
                                         allow_missing=args.allow_missing_keys)
    rate = (None if args.max_rate_increase is None else
            baseline_gate.rate_check(comparison, args.max_rate_increase, sequential=args.sequential))
    drops = (baseline_gate.drop_checks(comparison, scores, args.max_drop, allow_unvalidated=args.allow_unvalidated)
             if args.max_drop is not None else ())
    floors = (baseline_gate.auroc_floor_checks(comparison, scores or ["sgi"], args.min_auroc)
              if args.min_auroc is not None else ())
    for line in gate_baseline_lines(coverage, rate, drops, floors, comparison.confidence):
        print(line)
    checks = [coverage, *([rate] if rate else []), *drops, *floors]
    return 0 if all(c.passed for c in checks) else 1
