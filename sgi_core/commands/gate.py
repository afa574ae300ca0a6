"""``python -m sgi_core gate``: fail a CI job when a labelled file falls short of a policy.

One line per check of :func:`sgi_core.policy.policy_gate.run_gate`, exit 1 when any fails (2 on bad
input); ``--write-policy OUT`` makes the policy instead (:func:`sgi_core.policy.making.make_policy`) and
refuses a score whose AUROC interval holds 0.5 unless ``--force``. A policy is tied to the model and
precision that made its scores.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from sgi_core.commands import gate_baseline
from sgi_core.commands.label_option import add_labels_option, labelled_table
from sgi_core.commands.options import (
    add_embedding_run_options,
    add_label_map_option,
    add_model_options,
    label_map_option,
    model_load_options,
    non_negative_int,
)
from sgi_core.embedding import DEFAULT_MODEL
from sgi_core.errors import SGIInputError

if TYPE_CHECKING:
    import numpy as np


def add_parser(subparsers) -> None:
    """Register ``gate`` on the CLI's subparsers."""
    p = subparsers.add_parser("gate", help="exit 1 when a labelled file falls short of a policy (for CI pipelines)")
    p.add_argument("input", type=Path, help="labelled file, scored (with an sgi column) or not")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--policy", type=Path, help="policy JSON to hold the file to")
    mode.add_argument("--write-policy", type=Path, metavar="OUT", help="make a policy from this file and write it")
    mode.add_argument("--baseline", type=Path, metavar="BASE", help="fail when a score's mean dropped from this run")
    gate_baseline.add_options(p)
    p.add_argument("--min-auroc", type=_fraction, default=None,
                   help="fail when the AUROC's lower 95%% bound is below this, in [0, 1] (default: the policy's "
                        "min_auroc); alone, without a policy, the only check")
    p.add_argument("--max-flag-rate", type=_fraction, default=None, metavar="X",
                   help="with --policy on a file without labels: fail when the share of rows flagged is above X beyond "
                        "its sampling error (the lower 95%% bound above X); without it the share is only reported")
    p.add_argument("--force", action="store_true",
                   help="with --write-policy: write it even when the AUROC's interval holds 0.5 (a coin flip)")
    p.add_argument("--trust-policy-model", action="store_true",
                   help="load a policy's model even when it is not a registered one (an API model sends the file "
                        "to that API)")
    p.add_argument("--model", default=None,
                   help="score the file with this model (default: use the file's sgi column if it has one, else "
                        "score with the policy's model; with --write-policy, the model recorded in the policy)")
    p.add_argument("--score-column", default="sgi",
                   help="with --write-policy: the score, a registered one (oriented as its entry says) or a column "
                        "of the file taken as higher = grounded")
    p.add_argument("--calibration", default="platt", help="with --write-policy: minmax, platt or isotonic")
    p.add_argument("--threshold-method", default="youden",
                   help="with --write-policy: youden, target_recall, target_precision or cost")
    p.add_argument("--target", type=float, default=None, help="recall or precision target of the target methods")
    p.add_argument("--cost-ratio", type=float, default=None, help="cost of a missed hallucination, for 'cost'")
    p.add_argument("--group-column", default=None,
                   help="with --write-policy: rows to keep on one side of the development / held-out split (default: "
                        "pair_id when the file has it, else rows with the same question; 'none' keeps nothing "
                        "together)")
    p.add_argument("--n-boot", type=non_negative_int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--label-positive", choices=["grounded", "hallucinated"], default=None)
    add_label_map_option(p)
    add_labels_option(p)
    add_model_options(p)
    add_embedding_run_options(p)
    p.set_defaults(func=run)


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1]; got {text!r}")
    return value


def _file_scores(args, score_column: str, model: str, *, rescore: bool, unlabelled_ok: bool = False):
    """Labels and scores of the file, and what made the scores.

    A file's ``sgi`` column is used unless ``rescore`` (``--model`` was given); its maker
    is what a scored Parquet file records (:func:`~sgi_core.io.scored.scored_with`),
    None when unrecorded. SGI computed here is made by ``model`` at ``--precision``. Another
    score is the file's column, or a baseline computed from the texts
    (:func:`~sgi_core.io.scored.file_scores`).
    """
    import numpy as np

    from sgi_core.io.scored import file_scores, scored_with
    from sgi_core.io.triples import load_triples
    from sgi_core.policy.file import NOT_SCORE_COLUMNS

    if score_column in NOT_SCORE_COLUMNS:
        raise SGIInputError(f"'{score_column}' is the label or a row number, not a score", column=score_column,
                            hint="Give the column of a detector's score (higher = grounded), e.g. sgi")
    table = labelled_table(args, load_triples(args.input, label_positive=args.label_positive,
                                              label_map=label_map_option(args)))
    for warning in table.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not (table.has_labels or unlabelled_ok):
        raise SGIInputError("gate needs a labelled file", source=table.source,
                            hint="Add a label column (1 = grounded, 0 = hallucinated), or pass --labels FILE; with "
                                 "--policy an unlabelled file is held to the policy's flag rate")
    frame = table.frame
    recorded = scored_with(args.input)
    # The file's own column (the one its scoring record describes), or a baseline computed from the texts.
    scores = None if rescore and score_column == "sgi" else file_scores(table, score_column, recorded=recorded)
    if scores is None and score_column != "sgi":
        raise SGIInputError(f"score column '{score_column}' is not in the file", source=table.source,
                            hint="Score the file with `python -m sgi_core score` (and the options that add the column)")
    if scores is not None:
        if score_column == "sgi":
            print("note: using the file's sgi column; pass --model to score the file again", file=sys.stderr)
        made_by = recorded if score_column == "sgi" else None
    else:
        from sgi_core.embedding import EmbeddingCache, backend_used, load_encoder
        from sgi_core.progress import EmbeddingProgress
        from sgi_core.scoring import score_table

        encoder = load_encoder(model, **model_load_options(args))
        cache = None if args.no_cache else EmbeddingCache(encoder.model_id)
        scored = score_table(table, encoder, context_strategy=args.context_strategy, cache=cache,
                             batch_size=args.batch_size, progress=EmbeddingProgress(model))
        scores = scored["sgi"].to_numpy(dtype=np.float64)
        made_by = {"model": model, "precision": args.precision, "backend": backend_used(encoder),
                   "context_strategy": args.context_strategy}
        # The angles go with the rows: a policy's references and the shift check read theta(q,c).
        table = replace(table, frame=scored)
    if not np.isfinite(scores).any():
        raise SGIInputError(f"no row of the file has a '{score_column}' score", source=table.source)
    labels = frame["label"].to_numpy(dtype=np.float64)
    if table.has_labels:
        _check_both_classes(labels, scores, table.source, score_column)
    return table, labels, scores, made_by


def _check_both_classes(labels: np.ndarray, scores: np.ndarray, source: str, score_column: str) -> None:
    """Refuse a file with fewer than 2 scored rows of a label class: no interval, no rate, no gate."""
    import numpy as np

    scored = np.isfinite(scores)
    n_grounded, n_halluc = int((scored & (labels == 1.0)).sum()), int((scored & (labels == 0.0)).sum())
    if min(n_grounded, n_halluc) < 2:
        raise SGIInputError(
            f"the gate needs at least 2 scored rows of each label class; the file has {n_grounded} grounded and "
            f"{n_halluc} hallucinated rows with a '{score_column}' score, so the AUROC's interval and the rates "
            "are undefined", source=source, hint="Gate a file with rows of both classes")


def _auroc_line(labels, scores, n_boot: int, seed: int):
    """The AUROC of the scores with its interval, as ``write_policy`` prints it, and the interval."""
    from sgi_core.evaluation.judgement import judge_score
    from sgi_core.evaluation.verdict import standing_of
    from sgi_core.render.numbers import NAN_INTERVAL, format_ci

    # The score is judged as the report judges it; the policy's refusal reads that judgement's interval.
    roc = judge_score(labels, scores, lengths=None, n_boot=max(n_boot, 200), seed=seed).roc
    standing = standing_of(roc.auroc_ci)
    line = (f"AUROC {roc.auroc:.3f} {format_ci(roc.auroc_ci, undefined=NAN_INTERVAL)} "
            f"({roc.n_pos} grounded / {roc.n_neg} hallucinated rows, {roc.ci_method} interval): {standing}")
    return line, standing


def _groups(args, table):
    """What the split keeps together: ``--group-column``, else pair_id or the question; 'none' for nothing."""
    from sgi_core.evaluation.groups import default_keep_together

    column = args.group_column or default_keep_together(table.frame.columns)
    if column in (None, "none"):
        print("kept together: nothing (rows are split one by one)")
        return None
    if column not in table.frame.columns:
        raise SGIInputError(f"group column '{column}' is not in the file", source=table.source)
    print(f"kept together: rows with the same {column} (whole groups on one side of the split)")
    return table.frame[column].astype(str).to_numpy(dtype=object)


def _scored_labels(labels: np.ndarray, scores: np.ndarray, score_column: str) -> np.ndarray:
    """The labels of the rows with a score; a row without one (a response with no content word for the word
    overlap) is said and left out of the policy, its held-out counts and its references alike."""
    import numpy as np

    from sgi_core.errors import format_rows

    unscored = ~np.isfinite(scores) & ~np.isnan(labels)
    if not unscored.any():
        return labels
    print(f"note: {int(unscored.sum())} labelled rows have no '{score_column}' score and are left out of the policy: "
          f"{format_rows((np.flatnonzero(unscored) + 1).tolist())}", file=sys.stderr)
    return np.where(unscored, np.nan, labels)


def _write_policy(args) -> int:
    from sgi_core.io.output_paths import check_output_file
    from sgi_core.policy.making import make_policy
    from sgi_core.policy.references import answering_systems, feature_values
    from sgi_core.policy.rules import save_policy, write_refusal
    from sgi_core.render.lines import policy_lines
    from sgi_core.scores.selection import named_score

    check_output_file(args.write_policy, inputs=[args.input], what="policy")  # before any work
    table, labels, scores, made_by = _file_scores(args, args.score_column, args.model or DEFAULT_MODEL,
                                                  rescore=args.model is not None)
    if made_by is None and args.score_column == "sgi":
        print(f"note: the file does not record which model made its sgi column (only a Parquet file written by "
              f"`score` does); the policy records {DEFAULT_MODEL}: pass --model to score the file again with a "
              "known model", file=sys.stderr)
    labels = _scored_labels(labels, scores, args.score_column)
    line, standing = _auroc_line(labels, scores, args.n_boot, args.seed)
    print(line)
    refusal = write_refusal(standing, args.score_column)
    if refusal and not args.force:
        raise SGIInputError(refusal, source=table.source,
                            hint="Use a score that separates the labels here, "
                                 "or pass --force to write the policy anyway")
    groups = _groups(args, table)
    # The monitor's shift check tests new runs against these features' per-class references.
    features = {name: values for name, values in feature_values(table.frame, scores).items() if name != "score"}
    policy, holdout = make_policy(
        labels, scores, model=made_by["model"] if made_by else args.model or DEFAULT_MODEL,
        model_precision=made_by["precision"] if made_by else None,
        model_backend=made_by["backend"] if made_by else None,
        context_strategy=made_by["context_strategy"] if made_by else args.context_strategy,
        score_column=named_score(args.score_column).oriented_name,
        calibration=args.calibration, method=args.threshold_method, target=args.target,
        cost_ratio=args.cost_ratio, groups=groups, min_auroc=args.min_auroc, seed=args.seed, features=features,
        answering_systems=answering_systems(table.frame),
    )
    save_policy(policy, args.write_policy)
    for line in policy_lines(policy, holdout):
        print(line)
    print(f"wrote {args.write_policy}", file=sys.stderr)
    return 0


def run(args) -> int:
    # Imported when the command runs: building the parser (every --help) imports no numpy.
    from sgi_core.policy.file import load_policy
    from sgi_core.policy.policy_gate import run_gate
    from sgi_core.policy.rules import check_made_by, check_policy_model

    if args.write_policy is not None:
        return _write_policy(args)
    if args.baseline is not None:
        return gate_baseline.run(args)
    if args.policy is None:
        if args.min_auroc is None:
            raise SGIInputError("gate needs --policy FILE, --write-policy OUT or --min-auroc X",
                                hint="For a floor on the AUROC alone: gate FILE --min-auroc 0.7")
        _, labels, scores, _ = _file_scores(args, args.score_column, args.model or DEFAULT_MODEL,
                                            rescore=args.model is not None)
        return _report(run_gate(labels, scores, min_auroc=args.min_auroc, n_boot=args.n_boot, seed=args.seed))
    policy = load_policy(args.policy)
    check_policy_model(policy, str(args.policy), trust=args.trust_policy_model)
    if args.model is not None and args.model != policy.model:
        raise SGIInputError(f"the policy was made with model '{policy.model}', not '{args.model}': its threshold "
                            "is in that model's SGI units", source=str(args.policy),
                            hint=f"Drop --model, or write a new policy with --model {args.model}")
    table, labels, scores, made_by = _file_scores(args, policy.score_column, args.model or policy.model,
                                                  rescore=args.model is not None, unlabelled_ok=True)
    if policy.score_column == "sgi":
        check_made_by(policy, made_by, str(args.input))
    if not table.has_labels:
        return _report(_unlabelled_gate(args, policy, table, scores, made_by))
    if args.max_flag_rate is not None:
        raise SGIInputError("--max-flag-rate holds a file without labels; this one has labels, so precision and "
                            "recall are checked", source=str(args.input), hint="Drop --max-flag-rate")
    return _report(run_gate(labels, scores, policy, min_auroc=args.min_auroc, n_boot=args.n_boot, seed=args.seed))


def _unlabelled_gate(args, policy, table, scores, made_by):
    """An unlabelled file's flags at the policy's threshold: the share with its interval, the rows, the validation."""
    from sgi_core.evaluation.validation import validate_from_policy
    from sgi_core.monitoring.summary import monitor_run
    from sgi_core.policy.policy_gate import run_unlabelled_gate
    from sgi_core.render.lines import flagged_rows_line
    from sgi_core.render.monitor import shift_sentence, what_to_do

    if args.min_auroc is not None:
        raise SGIInputError("--min-auroc needs labels: this file has none, so no AUROC can be computed",
                            source=str(args.input), hint="Drop --min-auroc, or pass --labels FILE")
    summary = monitor_run(policy, table.frame, scores, n_boot=0)
    # The record as it carries over to this file: withdrawn under shift, for a run too small to check, for a forced
    # or thinly held-out policy (the monitor's one rule); the model check beside it.
    validation = summary.validation if not summary.validation.validated else validate_from_policy(
        policy.score_column, policy, model=(made_by or {}).get("model"))
    if summary.shift.detected:  # the held-out validation belongs to data this file no longer resembles
        print(f"note: no labels; {shift_sentence(summary)}; {what_to_do(summary)}", file=sys.stderr)
    elif validation.validated:
        print(f"note: no labels; the policy validates its score: {validation.reason}", file=sys.stderr)
    else:
        print(f"note: no labels, and the policy does not validate '{policy.score_column}' ({validation.reason}): its "
              "flags say nothing about grounding here; label a sample of the file to know", file=sys.stderr)
    print(flagged_rows_line(table.frame["input_row"].to_numpy(), scores, policy.threshold), file=sys.stderr)
    return run_unlabelled_gate(scores, policy, max_flag_rate=args.max_flag_rate)


def _report(result) -> int:
    from sgi_core.render.lines import gate_lines

    for line in gate_lines(result):
        print(line)
    return 0 if result.passed else 1
