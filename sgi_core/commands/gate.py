"""``python -m sgi_core gate``: fail a CI job when a labelled file falls short of a policy.

Prints one line per check of :func:`sgi_core.gate.run_gate` and exits 1 when any fails
(0 otherwise, 2 on bad input). ``--write-policy OUT`` makes the policy instead, from a
labelled file (:func:`sgi_core.evaluation.policy.make_policy`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from sgi_core import baseline_gate
from sgi_core.cli_labels import add_labels_option, labelled_table
from sgi_core.cli_options import add_model_options, model_load_options, non_negative_int, positive_int
from sgi_core.embedding import DEFAULT_MODEL
from sgi_core.errors import SGIInputError
from sgi_core.gate import run_gate


def add_parser(subparsers) -> None:
    """Register ``gate`` on the CLI's subparsers."""
    p = subparsers.add_parser("gate", help="exit 1 when a labelled file falls short of a policy (for CI pipelines)")
    p.add_argument("input", type=Path, help="labelled file, scored (with an sgi column) or not")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--policy", type=Path, help="policy JSON to hold the file to")
    mode.add_argument("--write-policy", type=Path, metavar="OUT", help="make a policy from this file and write it")
    mode.add_argument("--baseline", type=Path, metavar="BASE", help="fail when a score's mean dropped from this run")
    baseline_gate.add_options(p)
    p.add_argument("--min-auroc", type=float, default=None,
                   help="fail when the AUROC's lower 95%% bound is below this (default: the policy's min_auroc)")
    p.add_argument("--model", default=None,
                   help="score the file with this model (default: use the file's sgi column if it has one, else "
                        "score with the policy's model; with --write-policy, the model recorded in the policy)")
    p.add_argument("--score-column", default="sgi", help="with --write-policy: the score column (higher = grounded)")
    p.add_argument("--calibration", default="platt", help="with --write-policy: minmax, platt or isotonic")
    p.add_argument("--threshold-method", default="youden",
                   help="with --write-policy: youden, target_recall, target_precision or cost")
    p.add_argument("--target", type=float, default=None, help="recall or precision target of the target methods")
    p.add_argument("--cost-ratio", type=float, default=None, help="cost of a missed hallucination, for 'cost'")
    p.add_argument("--group-column", default=None,
                   help="keep the rows of one question or pair (e.g. pair_id) on one side of the split")
    p.add_argument("--n-boot", type=non_negative_int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch-size", type=positive_int, default=64)
    p.add_argument("--label-positive", choices=["grounded", "hallucinated"], default=None)
    p.add_argument("--no-cache", action="store_true")
    add_labels_option(p)
    add_model_options(p)
    p.set_defaults(func=run)


def _file_scores(args, score_column: str, model: str, *, rescore: bool):
    """Labels and scores of the file: its own score column, or SGI computed with ``model``.

    A file's ``sgi`` column is used unless ``rescore`` (``--model`` was given).
    """
    from sgi_core.data import load_triples

    table = labelled_table(args, load_triples(args.input, label_positive=args.label_positive))
    for warning in table.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not table.has_labels:
        raise SGIInputError("gate needs a labelled file", source=table.source,
                            hint="Add a label column (1 = grounded, 0 = hallucinated)")
    frame = table.frame
    # load_triples keeps input columns named like the ones it adds (sgi, ...) under an input_ prefix.
    present = next((c for c in (f"input_{score_column}", score_column) if c in frame.columns), None)
    if score_column != "sgi" or (present is not None and not rescore):
        if present is None:
            raise SGIInputError(f"score column '{score_column}' is not in the file", source=table.source)
        if score_column == "sgi":
            print("note: using the file's sgi column; pass --model to score the file again", file=sys.stderr)
        scores = _numeric(frame[present], table.source, score_column)
    else:
        from sgi_core.embedding import EmbeddingCache, load_encoder
        from sgi_core.progress import EmbeddingProgress
        from sgi_core.scoring import score_table

        encoder = load_encoder(model, **model_load_options(args))
        cache = None if args.no_cache else EmbeddingCache(encoder.model_id)
        scored = score_table(table, encoder, cache=cache, batch_size=args.batch_size,
                             progress=EmbeddingProgress(model))
        scores = scored["sgi"].to_numpy(dtype=np.float64)
    if not np.isfinite(scores).any():
        raise SGIInputError(f"no row of the file has a '{score_column}' score", source=table.source)
    labels = frame["label"].to_numpy(dtype=np.float64)
    _check_both_classes(labels, scores, table.source, score_column)
    return table, labels, scores


def _check_both_classes(labels: np.ndarray, scores: np.ndarray, source: str, score_column: str) -> None:
    """Refuse a file with fewer than 2 scored rows of a label class: no interval, no rate, no gate."""
    scored = np.isfinite(scores)
    n_grounded, n_halluc = int((scored & (labels == 1.0)).sum()), int((scored & (labels == 0.0)).sum())
    if min(n_grounded, n_halluc) < 2:
        raise SGIInputError(
            f"the gate needs at least 2 scored rows of each label class; the file has {n_grounded} grounded and "
            f"{n_halluc} hallucinated rows with a '{score_column}' score, so the AUROC's interval and the rates "
            "are undefined", source=source, hint="Gate a file with rows of both classes")


def _numeric(column, source: str, name: str) -> np.ndarray:
    import pandas as pd

    values = pd.to_numeric(column.replace("", np.nan), errors="coerce")
    bad = values.isna() & column.replace("", np.nan).notna()
    if bad.any():
        raise SGIInputError(f"score column '{name}' holds values that are not numbers", source=source,
                            column=name, rows=(np.flatnonzero(bad.to_numpy()) + 1).tolist())
    return values.to_numpy(dtype=np.float64)


def _write_policy(args) -> int:
    from sgi_core.evaluation.policy import make_policy
    from sgi_core.evaluation.policy_file import save_policy
    from sgi_core.render.lines import policy_lines

    model = args.model or DEFAULT_MODEL
    table, labels, scores = _file_scores(args, args.score_column, model, rescore=args.model is not None)
    groups = None
    if args.group_column:
        if args.group_column not in table.frame.columns:
            raise SGIInputError(f"group column '{args.group_column}' is not in the file", source=table.source)
        groups = table.frame[args.group_column].to_numpy(dtype=object)
    policy, holdout = make_policy(
        labels, scores, model=model, score_column=args.score_column, calibration=args.calibration,
        method=args.threshold_method, target=args.target, cost_ratio=args.cost_ratio, groups=groups,
        min_auroc=args.min_auroc, seed=args.seed,
    )
    save_policy(policy, args.write_policy)
    for line in policy_lines(policy, holdout):
        print(line)
    print(f"wrote {args.write_policy}", file=sys.stderr)
    return 0


def run(args) -> int:
    from sgi_core.evaluation.policy_file import load_policy
    from sgi_core.render.lines import gate_lines

    if args.write_policy is not None:
        return _write_policy(args)
    if args.baseline is not None:
        return baseline_gate.run(args)
    policy = load_policy(args.policy)
    if args.model is not None and args.model != policy.model:
        raise SGIInputError(f"the policy was made with model '{policy.model}', not '{args.model}': its threshold "
                            "is in that model's SGI units", source=str(args.policy),
                            hint=f"Drop --model, or write a new policy with --model {args.model}")
    _, labels, scores = _file_scores(args, policy.score_column, args.model or policy.model,
                                     rescore=args.model is not None)
    result = run_gate(labels, scores, policy, min_auroc=args.min_auroc, n_boot=args.n_boot, seed=args.seed)
    for line in gate_lines(result):
        print(line)
    return 0 if result.passed else 1
