"""``python -m sgi_core monitor RUN --policy P``: does a saved policy still hold on this run, and at what rate?

Holds a run to a policy (:func:`sgi_core.monitoring.summary.monitor_run`). Without labels it
says what it can (the flag share, the shift tests, the corrected rate "if only the rate
changed") and asks for the seeded random sample to label, sized for ``--rate-half-width``;
with that sample's labels (``--labels``), or those of a sample drawn by ``sample`` (uniform or
active, its design verified), the re-validated rate is the headline. Appends the run
to the history database (``--db``, default ``<data folder>/monitoring.sqlite``) and prints the
verdict, or one JSON object (``--json``).

Exit status (:data:`~sgi_core.render.monitor.EXIT_CODES`): 0 the policy holds on the labelled
sample; 1 the verified rate or the flag share is over a limit beyond its sampling error; 3 shift
detected, or the policy or the labelled sample does not validate the score; 4 unverified: no
labelled sample of the run (or labels that are not it), so its rate is not known; 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from sgi_core.commands.label_option import add_labels_option, labelled_table
from sgi_core.commands.options import (
    add_embedding_run_options,
    add_label_map_option,
    add_model_options,
    label_map_option,
    model_load_options,
)
from sgi_core.errors import SGIInputError


def _half_width(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 < value < 0.5:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 0.5), such as 0.05; got {text!r}")
    return value


def add_parser(subparsers) -> None:
    """Register ``monitor`` on the CLI's subparsers."""
    from sgi_core.commands.gate import _fraction

    p = subparsers.add_parser(
        "monitor", help="hold a new run to a saved policy: its rate on a labelled random sample, shift check, run "
                        "history (exit 0 holds, 1 over a limit, 3 shift or not validated, 4 unverified)",
        description="Exit status: 0 the policy holds on the labelled sample the run asks for; 1 the verified rate or "
                    "the flag share is over a limit beyond its interval; 2 usage error; 3 shift detected, or the "
                    "policy or the labelled sample does not validate the score; 4 unverified: no labelled sample "
                    "of this run (or labels that are not it), so its rate is not known; the corrected rate without "
                    "labels is shown 'if only the rate changed' and never decides 0 or 1.")
    p.add_argument("input", type=Path, metavar="RUN",
                   help="the run's file, scored (with the policy's score column) or not; or a folder or glob of "
                        "scored Parquet shards (as score --engine ray writes them), read a batch of rows at a time")
    p.add_argument("--policy", type=Path, required=True, help="policy JSON (gate --write-policy, Calibration page)")
    p.add_argument("--db", type=Path, default=None,
                   help="the run history (SQLite; default <data folder>/monitoring.sqlite, $SGI_DATA_DIR)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    p.add_argument("--max-rate", type=_fraction, default=None, metavar="R",
                   help="exit 1 when the re-validated hallucination rate is above R beyond its interval (checked on "
                        "the labelled sample only)")
    # The default lives in sgi_core.monitoring.sample (which a --help must not import); a test holds the two equal.
    p.add_argument("--rate-half-width", type=_half_width, default=None, metavar="H",
                   help="half-width of the rate's 95%% interval the sample to label is sized for (default 0.05: "
                        "at most 385 rows, the worst case p = 1/2)")
    p.add_argument("--max-flag-rate", type=_fraction, default=None, metavar="F",
                   help="exit 1 when the share of rows flagged is above F beyond its interval")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample to label and of the re-validation")
    p.add_argument("--trust-policy-model", action="store_true",
                   help="load a policy's model even when it is not a registered one")
    p.add_argument("--label-positive", choices=["grounded", "hallucinated"], default=None)
    add_label_map_option(p)
    add_labels_option(p)
    add_model_options(p)
    add_embedding_run_options(p)
    p.set_defaults(func=run)


def _run_frame(args, policy):
    """The run's rows with their scores (the file's column, a baseline computed from the texts, else SGI scored with
    the policy's model) and labels."""
    import numpy as np

    from sgi_core.embedding import backend_used
    from sgi_core.io.scored import file_scores, scored_with
    from sgi_core.io.triples import load_triples

    table = labelled_table(args, load_triples(args.input, label_positive=args.label_positive,
                                              label_map=label_map_option(args)))
    for warning in table.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    frame, column = table.frame, policy.score_column
    recorded = scored_with(args.input)
    scores = file_scores(table, column, recorded=recorded)
    if scores is not None:
        return table, frame, scores, recorded if column == "sgi" else None
    if column != "sgi":
        raise SGIInputError(f"score column '{column}' of the policy is not in the file", source=table.source)
    from sgi_core.embedding import EmbeddingCache, load_encoder
    from sgi_core.progress import EmbeddingProgress
    from sgi_core.scoring import score_table

    encoder = load_encoder(policy.model, **model_load_options(args))
    cache = None if args.no_cache else EmbeddingCache(encoder.model_id)
    scored = score_table(table, encoder, context_strategy=policy.context_strategy, cache=cache,
                         batch_size=args.batch_size, progress=EmbeddingProgress(policy.model))
    made_by = {"model": policy.model, "precision": args.precision, "backend": backend_used(encoder),
               "context_strategy": policy.context_strategy}
    return table, scored, scored["sgi"].to_numpy(dtype=np.float64), made_by


def _drawn_sample(args, frame, policy) -> dict:
    """``{"drawn_design": D}`` when the labels are a sample drawn by ``sample`` whose design is verified, else ``{}``.

    A uniform sample of the run is a random sample whatever its seed, so it re-validates as the
    monitor's own does; an active one (keys drawn more often where a predictor is unsure) is weighed
    back by the probability each key was drawn with.
    """
    if not args.labels:
        return {}
    from sgi_core.runs.design_labels import recorded_design, verified_run_design

    recorded = recorded_design(args.labels)
    if recorded is None:
        return {}
    # A sample drawn with the policy's calibrated score as predictor is re-computed with the policy; any other
    # predictor is a probability column of the run, read as it is.
    calibrating = policy if recorded.predictor == policy.score_column else None
    return {"drawn_design": verified_run_design(args.labels, frame, policy=calibrating, source=str(args.input))}


def _sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _sharded(path: Path) -> bool:
    """Whether the run is a folder or a glob of Parquet shards (``score --engine ray`` writes a folder)."""
    return path.is_dir() or any(ch in str(path) for ch in "*?[")


def _run_digest(args, policy):
    """A sharded scored run's per-row numbers, read a batch of rows at a time, and a SHA-256 over its files' digests."""
    import hashlib

    from sgi_core.io.shards import parquet_shards
    from sgi_core.pipelines.sharded_runs import run_digest

    if args.labels or args.label_map:
        raise SGIInputError("--labels and --label-map read a run given as one file, not shards",
                            source=str(args.input), hint="Give the shards' labels in their label column (1 or 0)")
    digest = run_digest(args.input, policy.score_column)
    files = "".join(_sha256(path) for path in parquet_shards(args.input))
    return digest, hashlib.sha256(files.encode()).hexdigest()


def run(args) -> int:
    from sgi_core.monitoring.store import append_run, default_db_path
    from sgi_core.monitoring.summary import monitor_run
    from sgi_core.policy.file import load_policy
    from sgi_core.policy.rules import check_made_by, check_policy_model
    from sgi_core.render.monitor import EXIT_CODES, monitor_json, monitor_lines

    policy = load_policy(args.policy)
    check_policy_model(policy, str(args.policy), trust=args.trust_policy_model)
    db = args.db or default_db_path()
    if _sharded(args.input):
        digest, file_sha256 = _run_digest(args, policy)
        frame, scores, labels, made_by = None, digest.scores, digest.labels, digest.made_by
        computed = {"features": digest.features, "keys": digest.keys, "systems": digest.systems}
    else:
        table, frame, scores, made_by = _run_frame(args, policy)
        labels = frame["label"].to_numpy(dtype=float) if table.has_labels else None
        file_sha256, computed = _sha256(args.input), _drawn_sample(args, frame, policy)
    if policy.score_column == "sgi":
        check_made_by(policy, made_by, str(args.input))
    summary = monitor_run(policy, frame, scores, y_true=labels, max_rate=args.max_rate,
                          max_flag_rate=args.max_flag_rate, seed=args.seed, **computed,
                          **({} if args.rate_half_width is None else {"rate_half_width": args.rate_half_width}))
    record_id = append_run(db, summary, file=str(args.input), file_sha256=file_sha256,
                           model=(made_by or {}).get("model", policy.model),
                           context_strategy=(made_by or {}).get("context_strategy", policy.context_strategy))
    if args.json:
        print(json.dumps(monitor_json(summary, record_id=record_id, db=db), allow_nan=False))
    else:
        print("\n".join(monitor_lines(summary, record_id=record_id, db=db)))
    return EXIT_CODES[summary.status]
