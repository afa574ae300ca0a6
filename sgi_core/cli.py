"""Command line: ``python -m sgi_core COMMAND ...``.

- ``compute``: angles and SGI of one (question, context, response) triple.
- ``score``: every row of a file with angles, SGI and status (``--claims``: claim-level columns too).
- ``report``: the paper's tables, baselines, confounds and detectors on a labelled file.
- ``models``: the registered embedding models and whether each loads offline here.
- ``convert``: raw HaluEval or TruthfulQA files into (question, context, response, label) triples.
- ``gate``: exit 1 when a labelled file falls short of a policy (CI), or write that policy from labels.
- ``judge``: LLM-judged RAG metrics (``judge_<metric>`` columns) for every row, via an OpenAI-compatible API.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sgi_core.cli_options import add_model_options, non_negative_int, positive_int
from sgi_core.errors import SGIInputError


def cmd_compute(args) -> int:
    from sgi_core.embedding import load_encoder
    from sgi_core.scoring import score_triple

    encoder = load_encoder(args.model, device=args.device, precision=args.precision,
                           trust_model_code=args.trust_model_code)
    result = score_triple(args.q, args.c, args.r, encoder)
    if args.json:
        print(json.dumps({name: getattr(result, name) for name in ("theta_rq", "theta_rc", "theta_qc", "sgi")}))
    else:
        print(f"SGI={result.sgi:.6f}  theta_rq={result.theta_rq:.6f}  theta_rc={result.theta_rc:.6f}")
    return 0


def cmd_score(args) -> int:
    if args.engine == "ray":
        if args.claims:
            raise SGIInputError("claim-level columns (--claims) are computed by the local engine only",
                                hint="Leave out --engine ray, or score without --claims")
        from sgi_core.ray_engine import score_with_ray

        summary = score_with_ray(
            args.input, args.output, model=args.model, address=args.address, device=args.device,
            precision=args.precision, batch_rows=args.chunk_rows, batch_size=args.batch_size,
            use_cache=not args.no_cache, label_positive=args.label_positive, trust_model_code=args.trust_model_code,
        )
        print(f"{summary.to_text()}; Parquet dataset in {args.output}", file=sys.stderr)
        return 0
    from sgi_core.embedding import EmbeddingCache, load_encoder
    from sgi_core.io.export import check_output_path
    from sgi_core.io.streaming import read_chunks, score_to_file
    from sgi_core.progress import EmbeddingProgress

    # The output path, then the file's header and first chunk, are checked before the model loads.
    check_output_path(args.output)
    chunks = read_chunks(args.input, chunk_rows=args.chunk_rows, label_positive=args.label_positive)
    encoder = load_encoder(args.model, device=args.device, precision=args.precision,
                           trust_model_code=args.trust_model_code)
    cache = None if args.no_cache else EmbeddingCache(encoder.model_id)
    summary = score_to_file(
        chunks, args.output, encoder, cache=cache, batch_size=args.batch_size,
        progress=EmbeddingProgress(args.model), warn=lambda text: print(f"warning: {text}", file=sys.stderr),
        claims=args.claims,
    )
    print(f"{summary.new_texts} new texts embedded, the rest from the cache", file=sys.stderr)
    print(f"wrote {summary.rows} rows ({summary.scored} scored) to {args.output}", file=sys.stderr)
    return 0


def cmd_models(args) -> int:
    from sgi_core.embedding import model_availability

    rows = model_availability()
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=2))
        return 0
    for r in rows:
        where = f"available ({r.source})" if r.available else f"not available: {r.how_to_get}"
        print(f"{r.name:<8} {r.model_id:<42} {where}")
    return 0


def cmd_convert(args) -> int:
    from sgi_core.converters import convert_halueval, convert_truthfulqa
    from sgi_core.io.export import write_table

    if args.kind == "truthfulqa":
        frame = convert_truthfulqa(args.input, context=args.truthfulqa_context)
    else:
        frame = convert_halueval(args.input, task=args.kind.split("-", 1)[1])
    write_table(frame, args.output)
    print(f"wrote {len(frame)} rows to {args.output}", file=sys.stderr)
    return 0


def cmd_report(args) -> int:
    import warnings

    from sgi_core.data import load_triples
    from sgi_core.evaluation import UndefinedStatisticWarning
    from sgi_core.comparison import compare_models
    from sgi_core.detector_report import KINDS as DETECTOR_KINDS
    from sgi_core.progress import EmbeddingProgress

    table = load_triples(args.input, label_positive=args.label_positive)
    for warning in table.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    kinds = tuple(k.strip() for k in (args.detectors or "").split(",") if k.strip())
    unknown = [kind for kind in kinds if kind not in DETECTOR_KINDS]
    if unknown:  # before any model loads
        raise SGIInputError(f"unknown detector family {', '.join(map(repr, unknown))}",
                            hint=f"Choose among {', '.join(DETECTOR_KINDS)}")
    with warnings.catch_warnings():
        # Each report keeps its caveats as notes, printed at the end of the text.
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        comparison, scored = compare_models(
            table, models, n_boot=args.n_boot, seed=args.seed, batch_size=args.batch_size,
            use_cache=not args.no_cache, progress_for=EmbeddingProgress, detector_kinds=kinds,
            load_options={"device": args.device, "precision": args.precision,
                          "trust_model_code": args.trust_model_code},
        )
    print(comparison.to_text())
    report_json = comparison.to_report_json()
    frame = scored[models[0]]
    extras = _retrieval_and_detectors(args, table, frame, models[0])
    for key, result in extras.items():
        print(f"\n{result.to_text()}")
        report_json[key] = result.to_dict()
    if args.json:
        args.json.write_text(json.dumps(report_json, indent=2))
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


def _parse_detector(spec: str) -> tuple[str, str]:
    """``COLUMN`` or ``COLUMN:hallucinated`` / ``COLUMN:grounded`` -> (column, what high values mean)."""
    column, _, direction = spec.rpartition(":") if spec.endswith((":grounded", ":hallucinated")) else (spec, "", "")
    return column, direction or "grounded"


def _retrieval_and_detectors(args, table, frame, model_name: str) -> dict:
    """The optional parts of ``report``: retrieval metrics when the file has id lists, declared detectors."""
    from sgi_core.evaluation.baselines import response_length
    from sgi_core.evaluation.detectors import compare_detectors, orient_detector_score
    from sgi_core.evaluation.retrieval_report import retrieval_report

    extras = {}
    rag = retrieval_report(frame, grounded_threshold=args.grounded_threshold, source=table.source)
    if rag is not None:
        extras["retrieval"] = rag
    if args.detector:
        scores = {f"sgi ({model_name})": frame["sgi"].to_numpy()}
        for spec in args.detector:
            column, higher_is = _parse_detector(spec)
            if column not in frame.columns:
                raise SGIInputError(f"detector column '{column}' is not in the file", source=table.source,
                                    hint=f"Columns present: {', '.join(map(str, table.frame.columns))}")
            scores[column] = orient_detector_score(frame[column], higher_is=higher_is, source=table.source,
                                                   column=column)
        extras["detectors"] = compare_detectors(scores, frame["label"].to_numpy(), n_boot=args.n_boot,
                                                seed=args.seed, lengths=response_length(frame["response"]))
    return extras


def build_parser() -> argparse.ArgumentParser:
    from sgi_core.embedding import DEFAULT_MODEL
    from sgi_core.gate import add_parser as add_gate_parser
    from sgi_core.judge.command import add_parser as add_judge_parser
    from sgi_core.io.streaming import DEFAULT_CHUNK_ROWS

    parser = argparse.ArgumentParser(prog="python -m sgi_core", description="Semantic Grounding Index tools.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("compute", help="score one (question, context, response) triple")
    p.add_argument("--q", required=True, help="question")
    p.add_argument("--c", required=True, help="context")
    p.add_argument("--r", required=True, help="response")
    p.add_argument("--model", default=DEFAULT_MODEL, help=f"model name (default {DEFAULT_MODEL})")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_model_options(p)
    p.set_defaults(func=cmd_compute)

    p = sub.add_parser("score", help="add theta_qc, theta_rq, theta_rc, sgi to every row of a file")
    p.add_argument("input", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True, help="output .csv or .parquet")
    p.add_argument("--model", default=DEFAULT_MODEL)
    p.add_argument("--batch-size", type=positive_int, default=64, help="texts per encoder batch (default 64)")
    p.add_argument("--label-positive", choices=["grounded", "hallucinated"], default=None,
                   help="what 1/true/yes means in the label column (default: from its name)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    p.add_argument("--claims", action="store_true",
                   help="also add claim_min_support, claim_mean_support, claim_min_sgi, claim_mean_sgi and "
                        "claim_n_sentences: each response sentence against the context's sentences (no labels)")
    p.add_argument("--chunk-rows", type=positive_int, default=DEFAULT_CHUNK_ROWS,
                   help=f"rows read, scored and written at a time; memory stays flat (default {DEFAULT_CHUNK_ROWS})")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="local: this process (default); ray: Ray Data actors reading a file, folder or glob of "
                        "CSV/Parquet shards and writing a Parquet folder (pip install -r requirements-ray.txt)")
    p.add_argument("--address", default=None,
                   help="Ray cluster for --engine ray: 'auto' (the running one), ray://HOST:10001 (default: a local Ray)")
    add_model_options(p)
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("report", help="paper tables, baselines and confounds of SGI on a labelled file")
    p.add_argument("input", type=Path)
    p.add_argument("--models", default=DEFAULT_MODEL, help=f"comma-separated model names (default {DEFAULT_MODEL})")
    p.add_argument("--json", type=Path, default=None, help="also write the full report as JSON here")
    p.add_argument("--n-boot", type=non_negative_int, default=1000,
                   help="bootstrap resamples for the 95%% intervals (0: no intervals)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch-size", type=positive_int, default=64, help="texts per encoder batch (default 64)")
    p.add_argument("--label-positive", choices=["grounded", "hallucinated"], default=None,
                   help="what 1/true/yes means in the label column (default: from its name)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    p.add_argument("--detector", action="append", default=[], metavar="COLUMN[:hallucinated]",
                   help="a numeric column to compare with SGI (repeatable); add ':hallucinated' when high values "
                        "mean hallucinated")
    p.add_argument("--detectors", default="", metavar="reference,claims",
                   help="also compute and judge these detector families per model: 'reference' (displacement "
                        "detectors and LSGI, cross-fitted by question, with the leaky protocol beside them) and "
                        "'claims' (sentence-level support in the context); adds a combined detector")
    p.add_argument("--grounded-threshold", type=float, default=1.0,
                   help="SGI from which a response counts as grounded in the retrieval diagnosis (default 1.0)")
    add_model_options(p)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("models", help="list registered models and whether they load offline")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("convert", help="turn raw HaluEval / TruthfulQA files into triples")
    p.add_argument("kind", choices=["halueval-qa", "halueval-dialogue", "halueval-summarization", "truthfulqa"])
    p.add_argument("input", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True)
    p.add_argument("--truthfulqa-context", choices=["references", "question"], default="references",
                   help="TruthfulQA context: all reference answers (default) or the question itself (the paper's setup)")
    p.set_defaults(func=cmd_convert)

    add_gate_parser(sub)
    add_judge_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except SGIInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
