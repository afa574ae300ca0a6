"""A run of a RAG system read for comparison: its rows, its labels and its scores oriented higher = grounded.

A run file may be *scored* (the output of ``score``: ``theta_*``, ``sgi``,
``sgi_status``), *judged* (``judge_*`` columns) or *plain* (question, context,
response[, label]); a file without SGI is scored with the caller's scorer, the
same :func:`sgi_core.scoring.score_table` path as ``score`` and ``report``.

The scores compared, each a column oriented **higher = grounded** by its
:class:`~sgi_core.scores.ScoreSpec`: the registered scores the file carries (SGI; the
three angles, ``theta_rq`` as it is and ``theta_rc``, ``theta_qc`` negated; the
detectors' per-row scores); the baselines ``neg_response_length`` and
``lexical_groundedness`` (word overlap with the context); LLM judge columns (``judge_*``,
all higher = better); and any other numeric column of the file, taken as higher =
grounded unless named in ``hallucinated_high`` (then negated as ``neg_<name>``).
Labels, ids, row numbers, counts and flags are never compared as scores.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.columns import (
    ADDED_COLUMNS,
    CONTEXT_PIECES_COLUMN,
    DEFAULT_CONTEXT_STRATEGY,
    GROUNDING_PREFIX,
    INPUT_ROW,
    ROLES,
    SCORE_COLUMNS,
    STATUS_COLUMN,
    TEXT_COLUMNS,
)
from sgi_core.detectors.registry import FAMILIES
from sgi_core.errors import SGIInputError
from sgi_core.evaluation.detectors import numeric_score_columns
from sgi_core.io.labels import label_warnings
from sgi_core.io.limits import is_scored
from sgi_core.io.mapping import COLUMN_ALIASES
from sgi_core.io.scored import scored_table
from sgi_core.io.triples import TripleTable, validate_triples
from sgi_core.judge.metrics import METRICS
from sgi_core.scores import grounding_spec
from sgi_core.scores.oriented import oriented_scores
from sgi_core.scores.registry import BASELINES, SCORES, column_spec
from sgi_core.scores.selection import carried_names

#: Every column the LLM judge writes a score in (higher = better).
JUDGE_COLUMNS = tuple(column for metric in METRICS.values() for column in metric.columns)

#: Columns that are never scores: statuses, flags and row numbers the library writes, and the detector
#: families' other per-row columns (sentence counts, per-sentence SGI summaries).
NOT_SCORES = frozenset({STATUS_COLUMN, INPUT_ROW, CONTEXT_PIECES_COLUMN, "flagged_hallucinated", "label",
                        *(c for family in FAMILIES.values() for c in family.columns if c not in carried_names())})

# Ids, row numbers and indexes by name: a column called pair_id repeats within a file, so the
# "integers, one per row" test of numeric_score_columns does not catch it.
_ID_NAME = re.compile(r"(^|_)(id|ids|row|rows|index|idx|key)$", re.IGNORECASE)

Scorer = Callable[[TripleTable], pd.DataFrame]

#: A run read from shards (:func:`read_sharded_run`) keeps no texts: each row's
#: :func:`~sgi_core.review.annotations.row_key` is kept in this column instead.
ROW_KEY = "row_key"


@dataclass(frozen=True)
class Run:
    """One run, ready for :func:`sgi_core.runs.matching.match_runs`.

    Attributes
    ----------
    frame : DataFrame
        The file's rows in order: its columns (``label`` as 1.0 / 0.0 / NaN) plus every
        oriented score column.
    source : str
    scores : tuple of str
        The oriented score columns, library scores first, then judge and imported columns.
    scored_here : bool
        True when SGI and the angles were computed by the scorer, False when the file carried them.
    warnings : tuple of str
    """

    frame: pd.DataFrame
    source: str
    scores: tuple[str, ...]
    scored_here: bool
    warnings: tuple[str, ...]


def _is_excluded(column: str, table: TripleTable) -> bool:
    mapped = {c for c in table.mapping.to_dict().values() if c}
    # input_label, input_sgi, ...: an input column set aside because the library writes one of that name.
    set_aside = column.startswith("input_") and column.removeprefix("input_") in ADDED_COLUMNS
    # A grounding model's chunk count and cut flag describe its scores; they are not scores.
    grounding_count = column.startswith(GROUNDING_PREFIX) and grounding_spec(column) is None
    return (column in NOT_SCORES or grounding_count or column in TEXT_COLUMNS or column in mapped
            or column in table.renamed.values() or set_aside or column.lower() in COLUMN_ALIASES["label"]
            or bool(_ID_NAME.search(column)))


def read_run(raw: pd.DataFrame, *, source: str, scorer: Scorer | None, label_positive: str | None = None,
             key: str | None = None, hallucinated_high=(), resources: Mapping[str, tuple] | None = None) -> Run:
    """Validate a run's raw frame, score it when it carries no SGI, and orient its scores.

    Parameters
    ----------
    raw : DataFrame
        The file as read (:func:`sgi_core.io.reading.read_table`).
    source : str
        Its name, for messages.
    scorer : callable or None
        ``scorer(table) -> scored frame`` (e.g. :func:`~sgi_core.scoring.score_table`
        with an encoder); None refuses a file without SGI.
    label_positive : {"grounded", "hallucinated"}, optional
        What 1/true/yes means in the label column of an unscored file.
    key : str, optional
        The matching column, never compared as a score.
    hallucinated_high : iterable of str
        Imported columns where a high value means hallucinated (negated as ``neg_<name>``).
    resources : mapping of str -> tuple, optional
        Resources given by name (the grounding models): a scored file gets their families'
        columns computed here (:func:`resource_columns`), as ``scorer`` adds them to an unscored one.

    Raises
    ------
    SGIInputError
        An unscored file with no scorer, a named column missing, a score column with text in it.
    """
    if is_scored(raw.columns):
        table, frame = scored_table(raw, source=source)
        scored_here = False
        if resources:
            added = resource_columns(table, resources)
            frame = frame.drop(columns=added.columns.intersection(frame.columns)).join(added)
    else:
        table = validate_triples(raw, label_positive=label_positive, source=source)
        if scorer is None:
            raise SGIInputError("this run carries no SGI scores", source=source,
                                hint="Score it first with `python -m sgi_core score`, or give a model to score it")
        frame, scored_here = scorer(table), True
    frame = frame.copy()
    baselines = oriented_scores(frame, BASELINES, source=source)
    not_scores = {column for column in frame.columns if _is_excluded(str(column), table)}
    return _oriented_run(frame, baselines, not_scores, source=source, key=key, hallucinated_high=hallucinated_high,
                         scored_here=scored_here, warnings=table.warnings)


def _oriented_run(frame: pd.DataFrame, baselines: pd.DataFrame, not_scores: set, *, source: str, key: str | None,
                  hallucinated_high, scored_here: bool, warnings) -> Run:
    """The :class:`Run` of a read frame: its score columns chosen and oriented, the baselines' values given."""
    for name in hallucinated_high:
        if name not in frame.columns:
            raise SGIInputError(f"column '{name}' named as hallucinated-high is not in the run", source=source,
                                column=name, hint=f"Columns present: {', '.join(map(str, frame.columns))}")
    # The registered score columns the file carries (the chooser's, read from the registry now): each oriented by
    # its spec and renamed neg_<column> when negated, so that every compared score reads higher = grounded.
    registered = [column for column in carried_names() if column in frame.columns]
    exclude = {*carried_names(), *BASELINES, *(SCORES[column].oriented_name for column in registered),
               *([key] if key else [])}
    imported = [c for c in numeric_score_columns(frame, exclude=exclude) if c not in not_scores]
    # A judge metric column is a score whatever it holds: text in it is an error (with its rows), not a reason
    # to leave the column out.
    imported += [c for c in JUDGE_COLUMNS if c in frame.columns and c not in imported and c != key]
    files = [column_spec(str(column), higher_is="hallucinated" if column in hallucinated_high else "grounded")
             for column in sorted(imported, key=lambda c: (not str(c).startswith("judge_"), str(c)))]
    oriented = pd.concat([oriented_scores(frame, registered, source=source), baselines,
                          oriented_scores(frame, files, source=source)], axis=1)
    for name in oriented.columns:
        frame[name] = oriented[name].to_numpy(dtype=np.float64)
    return Run(frame, source, tuple(oriented.columns), scored_here, tuple(dict.fromkeys(warnings)))


def model_scorer(model: str, *, load_options: dict | None = None, batch_size: int = 64, use_cache: bool = True,
                 progress=None, context_strategy: str = DEFAULT_CONTEXT_STRATEGY,
                 resources: Mapping[str, tuple] | None = None) -> Scorer:
    """A :data:`Scorer` embedding with ``model``, loaded on first use (a scored run never loads it).

    ``load_options`` go to :func:`sgi_core.embedding.load_encoder` (device, precision,
    backend, ...). Scores with :func:`sgi_core.scoring.score_table` (``context_strategy``)
    and the on-disk embedding cache, as ``score`` and ``report`` do, and adds the columns
    of each per-row family whose resource is in ``resources`` (by field, e.g. the
    ``grounding`` family's models; :attr:`~sgi_core.detectors.registry.DetectorInputs.resources`).
    """
    loaded = {}

    def score(table: TripleTable) -> pd.DataFrame:
        # Imported here: reading two scored files must not import torch.
        from sgi_core.embedding import EmbeddingCache, load_encoder
        from sgi_core.scoring import score_table

        if "encoder" not in loaded:
            loaded["encoder"] = load_encoder(model, **(load_options or {}))
        encoder = loaded["encoder"]
        cache = EmbeddingCache(encoder.model_id) if use_cache else None
        frame = score_table(table, encoder, context_strategy=context_strategy, cache=cache, batch_size=batch_size,
                            progress=progress)
        if not resources:
            return frame
        return frame.join(resource_columns(table, resources, encoder=encoder, cache=cache, batch_size=batch_size,
                                           progress=progress))

    return score


def resource_columns(table: TripleTable, resources: Mapping[str, tuple], *, encoder=None, cache=None,
                     batch_size: int = 64, progress=None) -> pd.DataFrame:
    """The per-row columns of each family whose resource is in ``resources`` (the grounding models'), indexed like
    ``table.frame``; without ``encoder`` and ``cache`` (a scored file) nothing is embedded and nothing cached."""
    from sgi_core.detectors.registry import DetectorInputs, per_row_families

    inputs = DetectorInputs(table, encoder, cache=cache, batch_size=batch_size, progress=progress,
                            resources=resources)
    frames = [family.compute(inputs).columns for family in per_row_families()
              if family.resource is not None and family.resource.field in resources]
    return pd.concat(frames, axis=1) if frames else pd.DataFrame(index=table.frame.index)


def run_row_keys(frame: pd.DataFrame) -> np.ndarray:
    """The :func:`~sgi_core.review.annotations.row_key` of each row of a run's frame: from its texts, or from its
    :data:`ROW_KEY` column where its texts were dropped (:func:`read_sharded_run`)."""
    from sgi_core.review.annotations import row_keys

    if ROW_KEY in frame.columns and not all(column in frame.columns for column in TEXT_COLUMNS):
        return frame[ROW_KEY].to_numpy(dtype=object)
    return row_keys(frame)


def load_run(path, *, scorer: Scorer | None, label_positive: str | None = None, key: str | None = None,
             hallucinated_high=(), resources: Mapping[str, tuple] | None = None) -> Run:
    """Read a run file (CSV, TSV, JSON Lines, JSON or Parquet) and :func:`read_run` it; a folder or a glob of
    scored Parquet shards is read by :func:`read_sharded_run`."""
    from sgi_core.io.reading import read_table, source_name
    from sgi_core.io.shards import is_sharded

    if is_sharded(path):
        if resources:
            raise SGIInputError("grounding models are not run on a run given as shards", source=str(path),
                                hint="Score the shards with them first (python -m sgi_core score --grounding-model "
                                     "...), then compare the scored shards")
        return read_sharded_run(path, key=key, hallucinated_high=hallucinated_high)
    name = source_name(path)
    return read_run(read_table(path, name=name), source=name, scorer=scorer, label_positive=label_positive, key=key,
                    hallucinated_high=hallucinated_high, resources=resources)


def read_sharded_run(path, *, key: str | None = None, hallucinated_high=(), batch_rows: int | None = None) -> Run:
    """A scored run given as Parquet shards (a folder or a glob, as ``score`` writes them), read a batch at a time.

    Each batch is checked as :func:`read_run` checks a scored file (a message names the
    shard and the row in it), its baselines are computed from its texts and its rows'
    keys kept in :data:`ROW_KEY`; then its texts and every column that cannot be a score
    are dropped. What is held is a few numbers per row, the ``key`` column and the row key:
    no text but the key's. The scores are then chosen and oriented on the whole run, so
    the :class:`Run` compares as the one file of the shards concatenated in path order
    would (:func:`~sgi_core.io.shards.stream_shards`); nothing is scored.

    Raises
    ------
    SGIInputError
        No Parquet shard; a shard lacking a scored file's columns or ``key`` (named
        with the shard); a value :func:`~sgi_core.io.scored.scored_table` refuses; no row.
    """
    from sgi_core.io.shards import STREAM_BATCH_ROWS, shard_batches, shard_columns

    source = str(path)
    schemas = list(shard_columns(path).values())
    if not any(is_scored(names) for names in schemas):  # a shard lacking a score column is named below
        raise SGIInputError("the shards carry no SGI scores", source=source,
                            hint="Score them first with `python -m sgi_core score SHARDS -o OUT --engine ray` (or "
                                 "without Ray), then compare the scored shards")
    present = [name for name in schemas[0] if all(name in names for names in schemas[1:])]
    keep = {*(c for c in (key, ROW_KEY, STATUS_COLUMN, "label", INPUT_ROW) if c), *BASELINES, *JUDGE_COLUMNS,
            *hallucinated_high, *carried_names()}
    parts, not_scores, texts, warnings = [], {ROW_KEY}, set(), []
    for batch in shard_batches(path, [*ROLES, *SCORE_COLUMNS, *([key] if key else [])], optional=present,
                               batch_rows=batch_rows or STREAM_BATCH_ROWS):
        table, frame, rows = _scored_batch(batch, first=sum(len(part) for part in parts))
        # The label's warnings are the whole run's, below; the others are the batch's, named so.
        warnings += [f"{batch.shard.name}, {rows}: {warning}" for warning in table.warnings
                     if warning not in _label_warnings(frame["label"])]
        not_scores |= {column for column in frame.columns if _is_excluded(str(column), table)}
        texts |= {column for column in frame.columns
                  if column not in keep and column not in not_scores and not _numbers_only(frame[column])}
        reduced = frame[[c for c in frame.columns if c in keep or (c not in not_scores and c not in texts)]]
        reduced = reduced.assign(**oriented_scores(frame, BASELINES, source=str(batch.shard)),
                                 **{ROW_KEY: run_row_keys(frame)})
        parts.append(reduced)
    if not any(len(part) for part in parts):
        raise SGIInputError("the shards hold no row", source=source, hint="Give the shards of a scored run")
    frame = pd.concat(parts, ignore_index=True)
    frame = frame.drop(columns=[column for column in texts if column in frame.columns and column not in keep])
    warnings = [*_label_warnings(frame["label"]), *warnings]
    return _oriented_run(frame, frame[list(BASELINES)], not_scores, source=source, key=key,
                         hallucinated_high=hallucinated_high, scored_here=False, warnings=warnings)


def _scored_batch(batch, *, first: int):
    """:func:`~sgi_core.io.scored.scored_table` of a batch of shard rows (``first`` rows of the run before it), its
    messages naming the shard and the rows there; and the batch's rows in words."""
    raw = batch.frame
    if INPUT_ROW not in raw.columns:  # numbered as in the one file of the shards
        raw = raw.assign(**{INPUT_ROW: np.arange(first + 1, first + len(raw) + 1)})
    try:
        table, frame = scored_table(raw, source=str(batch.shard))
    except SGIInputError as err:
        raise SGIInputError(err.message, source=err.source, column=err.column,
                            rows=[row + batch.first_row for row in err.rows], hint=err.hint) from None
    return table, frame, f"rows {batch.first_row + 1}-{batch.first_row + len(raw)}"


def _label_warnings(label: pd.Series) -> list[str]:
    """What :func:`~sgi_core.io.scored.scored_table` warns of a scored file's label column."""
    labels = label.to_numpy(dtype=np.float64)
    return label_warnings(labels, "label", 1, True) if not np.isnan(labels).all() else []


def _numbers_only(column: pd.Series) -> bool:
    """Whether every non-empty cell of a column is a number (as :func:`numeric_score_columns` asks of a score)."""
    if pd.api.types.is_numeric_dtype(column):
        return True
    text = column.astype(str).str.strip()
    filled = column[column.notna() & (text != "")]
    return not pd.to_numeric(filled, errors="coerce").isna().any()
