"""``python -m sgi_core score IN -o OUT``: every row of a file with angles, SGI and status."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sgi_core.commands.options import (
    add_embedding_run_options,
    add_label_map_option,
    add_model_options,
    label_map_option,
    model_load_options,
    positive_int,
)
from sgi_core.commands.resource_options import add_resource_options, given_resources
from sgi_core.detectors.registry import per_row_families
from sgi_core.embedding import DEFAULT_MODEL
from sgi_core.errors import SGIInputError
from sgi_core.io.table_formats import DEFAULT_CHUNK_ROWS


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("score", help="add theta_qc, theta_rq, theta_rc, sgi to every row of a file")
    p.add_argument("input", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True, help="output .csv or .parquet")
    p.add_argument("--model", default=DEFAULT_MODEL)
    add_label_map_option(p)
    p.add_argument("--label-positive", choices=["grounded", "hallucinated"], default=None,
                   help="what 1/true/yes means in the label column (default: from its name)")
    for family in per_row_families():
        if family.resource is None:  # a family that needs a resource is chosen by giving it
            p.add_argument(f"--{family.name}", action="store_true",
                           help=f"also add {', '.join(family.columns)}: {family.explanation} (no labels)")
    add_resource_options(p)
    p.add_argument("--chunk-rows", type=positive_int, default=DEFAULT_CHUNK_ROWS,
                   help=f"rows read, scored and written at a time; memory stays flat (default {DEFAULT_CHUNK_ROWS})")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="local: this process (default); ray: Ray Data actors reading a file, folder or glob of "
                        "CSV/Parquet shards and writing a Parquet folder (pip install -r requirements-ray.txt)")
    p.add_argument("--address", default=None,
                   help="Ray cluster for --engine ray: 'auto' (the running one), ray://HOST:10001 "
                        "(default: a local Ray)")
    p.add_argument("--num-actors", type=positive_int, default=None,
                   help="actors for --engine ray, each loading the models once (default: one per GPU of the cluster, "
                        "else as many as its CPUs hold at --cpus-per-actor each)")
    p.add_argument("--cpus-per-actor", type=positive_int, default=None,
                   help="CPUs each actor of --engine ray asks for, and the threads its models run (default 1)")
    add_model_options(p)
    add_embedding_run_options(p)
    p.set_defaults(func=run)


def run(args) -> int:
    if args.engine == "ray":
        return _run_ray(args)
    from sgi_core.embedding import EmbeddingCache, load_encoder
    from sgi_core.io.export import check_output_path
    from sgi_core.pipelines.local_engine import read_chunks, score_to_file, scored_record
    from sgi_core.progress import EmbeddingProgress
    from sgi_core.render.lines import score_summary_lines

    # The output path, then the file's header and first chunk, are checked before the model loads.
    check_output_path(args.output, inputs=[args.input])
    chunks = read_chunks(args.input, chunk_rows=args.chunk_rows, label_positive=args.label_positive,
                         label_map=label_map_option(args))
    encoder = load_encoder(args.model, **model_load_options(args))
    resources = given_resources(args)
    cache = None if args.no_cache else EmbeddingCache(encoder.model_id)
    scored_by = scored_record(args.model, encoder, precision=args.precision, context_strategy=args.context_strategy,
                              resources=resources)
    summary = score_to_file(
        chunks, args.output, encoder, cache=cache, batch_size=args.batch_size,
        progress=EmbeddingProgress(args.model), warn=lambda text: print(f"warning: {text}", file=sys.stderr),
        families=_families(args), context_strategy=args.context_strategy, scored_by=scored_by,
        resources=resources,
    )
    for line in score_summary_lines(summary, args.output):
        print(line, file=sys.stderr)
    return 0


def _families(args) -> tuple[str, ...]:
    """The per-row detector families whose flags are set, or whose resource was given."""
    return tuple(family.name for family in per_row_families()
                 if getattr(args, family.resource.dest if family.resource else family.name))


def _run_ray(args) -> int:
    if args.label_map:
        raise SGIInputError("a label map (--label-map) is read by the local engine only",
                            hint="Leave out --engine ray, or write the labels as 1/0 first")
    from sgi_core.pipelines.ray_engine import score_with_ray
    from sgi_core.render.lines import score_summary_lines

    # The resources are checked here, on the CPU, once; each actor loads them on its own device.
    summary = score_with_ray(
        args.input, args.output, model=args.model, address=args.address, device=args.device,
        precision=args.precision, batch_rows=args.chunk_rows, batch_size=args.batch_size,
        use_cache=not args.no_cache, label_positive=args.label_positive, trust_model_code=args.trust_model_code,
        backend=args.backend, context_strategy=args.context_strategy, concurrency=args.num_actors,
        cpus_per_actor=args.cpus_per_actor, families=_families(args),
        resources=given_resources(argparse.Namespace(**{**vars(args), "device": "cpu"})),
    )
    for line in score_summary_lines(summary, args.output):
        print(line, file=sys.stderr)
    return 0
