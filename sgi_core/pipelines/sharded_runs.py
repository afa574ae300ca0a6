"""A scored run in Parquet shards reduced, one bounded batch at a time, to the per-row numbers ``monitor`` reads.

Holding a run to a policy needs only numbers and a key per row (score, label, monitored
features, row key, answering system): :func:`run_digest` reads them a batch of texts at a time
and scores nothing, since the shards carry the score.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sgi_core.columns import TEXT_COLUMNS
from sgi_core.errors import SGIInputError
from sgi_core.io.shards import STREAM_BATCH_ROWS, map_shards, shards_scored_with

_FEATURE_PREFIX = "feature:"


@dataclass(frozen=True)
class RunDigest:
    """What ``monitor`` reads of every row of a sharded run, in the order the shards are read.

    Attributes
    ----------
    scores : ndarray of float
        The policy's score column; NaN = not scored.
    labels : ndarray of float or None
        1 grounded, 0 hallucinated, NaN unlabelled; None when the shards have no ``label`` column.
    features : dict of str -> ndarray
        :func:`~sgi_core.policy.references.feature_values` of every row.
    keys : ndarray of str
        :func:`~sgi_core.review.annotations.row_keys` of every row.
    systems : tuple of str or None
        :func:`~sgi_core.policy.references.answering_systems` of the run.
    made_by : dict or None
        What scored the shards (:func:`~sgi_core.io.shards.shards_scored_with`).
    """

    scores: np.ndarray = field(repr=False)
    labels: np.ndarray | None = field(repr=False)
    features: dict = field(repr=False)
    keys: np.ndarray = field(repr=False)
    systems: tuple[str, ...] | None
    made_by: dict | None

    @property
    def rows(self) -> int:
        return len(self.scores)


def run_digest(input_path, score_column: str, *, batch_rows: int = STREAM_BATCH_ROWS) -> RunDigest:
    """The :class:`RunDigest` of a scored run's Parquet shards (a folder or a glob), ``batch_rows`` rows at a time.

    Raises
    ------
    SGIInputError
        What :func:`~sgi_core.io.shards.stream_shards` raises (a shard without ``score_column``
        or a text column), shards recording different scorings, or a label other than 1, 0 or
        missing (named with its shard's batch).
    """
    from sgi_core.policy.references import ANSWERING_COLUMNS, answering_systems, feature_values
    from sgi_core.review.annotations import row_keys

    system_columns = [name for column in ANSWERING_COLUMNS for name in (column, f"input_{column}")]

    def per_row(frame: pd.DataFrame) -> dict[str, np.ndarray]:
        scores = pd.to_numeric(frame[score_column], errors="coerce").to_numpy(dtype=np.float64)
        values = {"score": scores, "key": row_keys(frame)}
        values.update({_FEATURE_PREFIX + name: array for name, array in feature_values(frame, scores).items()})
        if "label" in frame.columns:
            labels = pd.to_numeric(frame["label"], errors="coerce").to_numpy(dtype=np.float64)
            if not np.isin(labels[~np.isnan(labels)], (0.0, 1.0)).all():
                raise SGIInputError("a scored shard holds a label other than 1, 0 or missing", column="label",
                                    hint="Give the shards score wrote: it writes labels as 1 and 0")
            values["label"] = labels
        present = next((c for c in system_columns if c in frame.columns), None)
        if present is not None:
            values["system"] = frame[present].to_numpy(dtype=object)
        return values

    columns = list(dict.fromkeys([score_column, *TEXT_COLUMNS]))
    optional = ["label", "theta_qc", *system_columns]
    values = map_shards(input_path, per_row, columns, optional=optional, batch_rows=batch_rows)
    if not values:
        raise SGIInputError("the shards hold no row", source=str(input_path), hint="Give the shards of a scored run")
    systems = answering_systems(pd.DataFrame({"system": values["system"]})) if "system" in values else None
    features = {name.removeprefix(_FEATURE_PREFIX): array for name, array in values.items()
                if name.startswith(_FEATURE_PREFIX)}
    return RunDigest(values["score"], values.get("label"), features, values["key"], systems,
                     shards_scored_with(input_path))
