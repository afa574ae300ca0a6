"""Command-line option types and options shared by the subcommands of ``python -m sgi_core``."""

from __future__ import annotations

import argparse


def whole_number(minimum: int):
    """An argparse ``type`` accepting integers >= ``minimum``, refusing others with one clear line.

    Examples
    --------
    >>> whole_number(1)("64")
    64
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {minimum}; got {text!r}")
        return value

    return parse


#: argparse types for counts: ``positive_int`` for sizes (>= 1), ``non_negative_int`` where 0 is meaningful.
positive_int = whole_number(1)
non_negative_int = whole_number(0)


def add_model_options(p: argparse.ArgumentParser) -> None:
    """Add ``--device``, ``--precision``, ``--backend`` and ``--trust-model-code``, the options of every command
    that loads an embedding model."""
    from sgi_core.embedding import BACKENDS, DEVICES, PRECISIONS

    p.add_argument("--device", choices=DEVICES, default=None,
                   help="where the model runs (default $SGI_DEVICE, else auto: the GPU when torch sees one)")
    p.add_argument("--precision", choices=PRECISIONS, default="fp32",
                   help="float type of the model's weights and activations (default fp32); fp16 and bf16 halve a "
                        "GPU's work, change SGI slightly (benchmarks/bench_scoring.py --precision reports by how "
                        "much) and run slower than fp32 on most CPUs; vectors are cached per precision")
    p.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="what runs the model: auto (default: onnx on the CPU in fp32, else torch), torch, or ONNX "
                        "Runtime on the CPU: onnx (torch's vectors, faster) or onnx-int8 (int8 weights, faster still; "
                        "SGI moves by up to about 0.6 on a row, Cohen's d by about 0.01); exported once into the "
                        "cache folder, vectors cached per backend. Grounding models run on the same choice, except "
                        "that onnx-int8 runs them on onnx (they are not quantised)")
    p.add_argument("--trust-model-code", action="store_true",
                   help="load a model folder even if it names Python modules of its own (runs that code)")


def add_embedding_run_options(p: argparse.ArgumentParser) -> None:
    """Add ``--batch-size``, ``--no-cache`` and ``--context-strategy``, the options of every command that embeds a
    file's texts."""
    from sgi_core.columns import CONTEXT_STRATEGIES, DEFAULT_CONTEXT_STRATEGY

    p.add_argument("--batch-size", type=positive_int, default=64, help="texts per encoder batch (default 64)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")
    p.add_argument("--context-strategy", choices=CONTEXT_STRATEGIES, default=DEFAULT_CONTEXT_STRATEGY,
                   help="how a context becomes one embedding: joined (default: its passages joined by a blank "
                        "line, cut at the model's input length), mean (the mean of its passages' unit vectors, "
                        "each passage cut into windows the model reads whole) or nearest (the passage or window "
                        "nearest the response); recorded in a scored Parquet file and in a policy")


def model_load_options(args: argparse.Namespace) -> dict:
    """The keyword arguments of :func:`sgi_core.embedding.load_encoder` that :func:`add_model_options` parsed.

    Examples
    --------
    >>> model_load_options(argparse.Namespace(device="cpu", precision="fp32", backend="onnx", trust_model_code=False))
    {'device': 'cpu', 'precision': 'fp32', 'backend': 'onnx', 'trust_model_code': False}
    """
    return {"device": args.device, "precision": args.precision, "backend": args.backend,
            "trust_model_code": args.trust_model_code}


def add_label_map_option(p: argparse.ArgumentParser) -> None:
    """Add ``--label-map``: which label values mean grounded, hallucinated or unlabelled."""
    p.add_argument("--label-map", default=None, metavar="'VALUE=grounded,VALUE=hallucinated,...'",
                   help="what each value of the label column means: grounded, hallucinated or unlabelled (e.g. "
                        "'Entailment=grounded,Partial Hallucination=hallucinated,Generic=unlabelled'); rows whose "
                        "value the map and the usual words (1/0, yes/no, ...) do not name are kept, unlabelled, "
                        "with a warning counting them")


def label_map_option(args) -> dict | None:
    """The parsed ``--label-map``, or None (:func:`sgi_core.io.labels.parse_label_map`)."""
    from sgi_core.io.labels import parse_label_map

    return parse_label_map(args.label_map) if args.label_map else None
