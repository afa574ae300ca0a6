"""The ``grounding`` detector family: every grounding model the user gave, scored per row.

Declared in :mod:`sgi_core.detectors.registry`; its resource is the models
(``inputs.resources["grounding_models"]``, :attr:`~sgi_core.detectors.registry.DetectorInputs.resources`), so its judged
scores are two per model, ``grounding_<name>_min`` and ``grounding_<name>_mean``
(:func:`sgi_core.scores.grounding_spec`), both higher = grounded.
"""

from __future__ import annotations

import json

import pandas as pd

from sgi_core.columns import GROUNDING_SCORE_SUFFIXES, grounding_columns
from sgi_core.errors import SGIInputError
from sgi_core.scores import grounding_spec

#: Where a grounding model's pair probabilities are cached: a folder inside the cache folder ($SGI_CACHE_DIR).
CACHE_FOLDER = "grounding"


def model_cache(model):
    """The pair cache of ``model``: one file per model folder in the cache folder's ``grounding/``."""
    from sgi_core.embedding.cache import EmbeddingCache
    from sgi_core.models.cache_folder import default_cache_dir

    return EmbeddingCache(f"grounding-{model.name}-{model.folder.fingerprint.removeprefix('folder:')[:16]}",
                          default_cache_dir() / CACHE_FOLDER)


def grounding_family_scores(inputs) -> tuple[pd.DataFrame, tuple]:
    """The columns and the judged score specs of every model in ``inputs.resources["grounding_models"]``.

    The cache is used when ``inputs.cache`` is (a run without the embedding cache
    caches nothing); progress lines count pairs per model when ``inputs.progress`` is set.

    Returns
    -------
    columns : DataFrame
        :func:`~sgi_core.columns.grounding_columns` of each model, indexed like the table.
    specs : tuple of ScoreSpec
        The judged ones (:func:`sgi_core.scores.grounding_spec`).

    Raises
    ------
    SGIInputError
        When no model was given, or two share a name.
    """
    from sgi_core.grounding.scoring import grounding_scores
    from sgi_core.progress import EmbeddingProgress

    models = tuple(inputs.resources.get("grounding_models", ()))
    if not models:
        raise SGIInputError("the grounding family needs a grounding model folder",
                            hint="Give one with --grounding-model NAME=DIR")
    names = [model.name for model in models]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise SGIInputError(f"two grounding models are named '{twice[0]}'",
                            hint="Name each as NAME=DIR, e.g. --grounding-model nli=DIR1 --grounding-model hhem=DIR2")
    frames, specs = [], []
    for model in models:
        progress = EmbeddingProgress(model.name, what="pairs scored") if inputs.progress is not None else None
        frames.append(grounding_scores(inputs.table.frame, model, passages=inputs.table.passages,
                                       cache=model_cache(model) if inputs.cache is not None else None,
                                       batch_size=inputs.batch_size, progress=progress))
        specs.extend(grounding_spec(column) for column in grounding_columns(model.name)[:len(GROUNDING_SCORE_SUFFIXES)])
    return pd.concat(frames, axis=1), tuple(specs)


def provenance(models) -> str:
    """What a scored file records of its grounding models, as JSON text.

    Each model's folder, fingerprint, adapter, input length, backend (what computed its
    logits) and self-test.
    """
    return json.dumps([{"name": model.name, "folder": str(model.folder.source), "fingerprint": model.folder.fingerprint,
                        "adapter": model.adapter.to_dict(), "max_length": model.max_length, "backend": model.backend,
                        "self_test": model.self_test.to_dict()} for model in models])
