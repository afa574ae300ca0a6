"""``--grounding-model NAME=DIR`` (repeatable) and ``--no-self-test``: the options of the grounding family's resource.

The option's flag, placeholder and help come from the family's declared resource
(:data:`sgi_core.detectors.registry.RESOURCE_OPTIONS`). The models run on the command's
``--backend`` (:func:`sgi_core.grounding.onnx_network.grounding_backend`: ``onnx`` when
the embeddings run on ``onnx-int8``).
"""

from __future__ import annotations

import argparse

from sgi_core.detectors.registry import RESOURCE_OPTIONS

GROUNDING = RESOURCE_OPTIONS["a grounding model"]


def add_grounding_options(p: argparse.ArgumentParser) -> None:
    """Add the grounding-model option and ``--no-self-test``."""
    p.add_argument(GROUNDING.flag, action="append", default=[], metavar=GROUNDING.metavar, help=GROUNDING.help)
    p.add_argument("--no-self-test", action="store_true",
                   help="load grounding models without the check that plain entailments score above plain "
                        "contradictions (for models trained on another task); recorded in the scored file")


def grounding_models(args) -> tuple:
    """Each ``--grounding-model`` folder, checked, loaded (``--device``, ``--backend``) and self-tested, in order."""
    if not args.grounding_model:
        return ()
    from sgi_core.grounding.folder import parse_model_option
    from sgi_core.grounding.onnx_network import grounding_backend
    from sgi_core.grounding.runtime import load_grounding_model

    backend = grounding_backend(getattr(args, "backend", "auto"))
    return tuple(load_grounding_model(folder, name=name, trust_model_code=args.trust_model_code,
                                      device=getattr(args, "device", None), backend=backend,
                                      self_test=not args.no_self_test)
                 for name, folder in map(parse_model_option, args.grounding_model))
