"""The actors of the Ray engine (:mod:`sgi_core.pipelines.ray_engine`) and the size of their pool.

Each :class:`Scorer` actor loads the encoder once, and each grounding model the driver
checked (:mod:`sgi_core.pipelines.ray_models`) once; it validates the rows it is given,
scores them with :func:`sgi_core.pipelines.local_engine.score_chunk` as the local engine
does, and returns them as an Arrow table carrying the record of what scored them
(:func:`sgi_core.io.scored.scored_with` reads it from every file of the output).
"""

from __future__ import annotations

import json

import pandas as pd

from sgi_core.columns import DEFAULT_CONTEXT_STRATEGY, PASSAGES_COLUMN
from sgi_core.embedding import EmbeddingCache, load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.io.scored import SCORED_WITH_KEY
from sgi_core.io.triples import validate_triples
from sgi_core.pipelines.local_engine import score_chunk, scored_record
from sgi_core.pipelines.ray_models import GROUNDING_FIELD
from sgi_core.pipelines.ray_rows import PRIVATE_FILE, PRIVATE_KEY, PRIVATE_ROW, PRIVATE_SHARD, keep_clashing_columns


class Scorer:
    """Actor: loads the encoder and the grounding models once, then validates and scores the batches it is given.

    ``options`` are :func:`~sgi_core.embedding.load_encoder`'s ``device``, ``precision``,
    ``trust_model_code`` and ``backend``; ``families`` the per-row detector families
    (:func:`~sgi_core.detectors.registry.per_row_families`) and ``checked`` the
    :class:`~sgi_core.pipelines.ray_models.CheckedModel` of each grounding model.
    """

    def __init__(self, model: str, options: dict, *, use_cache: bool, label_positive: str | None, batch_size: int,
                 context_strategy: str = DEFAULT_CONTEXT_STRATEGY, families: tuple[str, ...] = (),
                 checked: tuple = ()):
        self._encoder = load_encoder(model, **options)
        self._cache = EmbeddingCache(self._encoder.model_id) if use_cache else None
        self._label_positive = label_positive
        self._batch_size = batch_size
        self._context_strategy = context_strategy
        self._families = families
        self._resources = {GROUNDING_FIELD: tuple(spec.load(options.get("device")) for spec in checked)} if checked \
            else {}
        record = scored_record(model, self._encoder, precision=options.get("precision", "fp32"),
                               context_strategy=context_strategy, resources=self._resources)
        self._metadata = {SCORED_WITH_KEY: json.dumps(record).encode()}

    def __call__(self, batch: pd.DataFrame):
        import pyarrow as pa

        keys = batch[PRIVATE_KEY].reset_index(drop=True)
        raw = keep_clashing_columns(batch.drop(columns=PRIVATE_KEY).reset_index(drop=True))
        scored = []
        # A batch may end one shard and start the next: each shard's rows are validated with its own name.
        for _, rows in keys.groupby(PRIVATE_SHARD, sort=False):
            table = validate_triples(
                raw.loc[rows.index].reset_index(drop=True), label_positive=self._label_positive,
                source=rows[PRIVATE_FILE].iat[0], first_row=int(rows[PRIVATE_ROW].iat[0]), whole_file=False,
            )
            # Batches differ in whether their contexts are lists; the passages stay joined in "context".
            frame = score_chunk(table, self._encoder, families=self._families, resources=self._resources,
                                cache=self._cache, batch_size=self._batch_size,
                                context_strategy=self._context_strategy)[0].drop(columns=PASSAGES_COLUMN,
                                                                                 errors="ignore")
            frame["input_row"] = rows[PRIVATE_ROW].to_numpy()
            frame["input_shard"] = rows[PRIVATE_SHARD].to_numpy()
            frame["input_file"] = rows[PRIVATE_FILE].to_numpy(dtype=object)
            scored.append(frame)
        table = pa.Table.from_pandas(pd.concat(scored, ignore_index=True), preserve_index=False)
        return table.replace_schema_metadata({**(table.schema.metadata or {}), **self._metadata})


def _count(value, name: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise SGIInputError(f"The '{name}' parameter of score_with_ray must be an int >= 1. Got {value!r} instead.")


def actor_pool(concurrency: int | None, cpus_per_actor: int | None, device: str | None) -> tuple[int, dict]:
    """Actor count and each actor's resources.

    On a cluster with GPUs (unless ``device`` is ``cpu``): one actor per GPU, each asking
    for one GPU and ``cpus_per_actor`` CPUs (default 1). Else CPU actors of
    ``cpus_per_actor`` CPUs each (default 1), as many as the cluster's CPUs hold; Ray sets
    each actor's ``OMP_NUM_THREADS`` to its CPUs, and torch and ONNX Runtime run that many threads.
    ``concurrency`` sets the count.

    Raises
    ------
    SGIInputError
        A count that is not an int >= 1.
    """
    import ray

    _count(concurrency, "concurrency")
    _count(cpus_per_actor, "cpus_per_actor")
    resources = ray.cluster_resources()
    gpus = 0 if device == "cpu" else int(resources.get("GPU", 0))
    cpus = cpus_per_actor or 1
    if gpus:
        return concurrency or gpus, {"num_gpus": 1, "num_cpus": cpus}
    return concurrency or max(1, int(resources.get("CPU", 1)) // cpus), {"num_cpus": cpus}
