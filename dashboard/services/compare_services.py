"""Cached calls behind the Compare runs page: the second run read and scored, the two runs compared.

The base run is the current file (Data page) as scored with the model shown; the new
run is a second file, scored with the same model when it carries no SGI. Like
:mod:`dashboard.services`, results are cached on the data keys and the model *name*;
arguments starting with ``_`` are not hashed because those keys decide them.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import state
from dashboard.services import SCORE_CHUNK_ROWS, disk_cache, input_limits, model_encoder
from dashboard.services.resamples import app_resamples
from sgi_core.io.reading import read_table
from sgi_core.io.triples import TripleTable
from sgi_core.render.runs import auroc_frame, deltas_frame, labels_headline, reconciliation
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.review.annotations import AnnotationStore, annotations_path, row_keys
from sgi_core.review.label_sources import combine_labels, join_labels, labels_from_decisions
from sgi_core.runs.comparison import RunComparison, compare_runs
from sgi_core.runs.headline_rates import headline_rates
from sgi_core.runs.matching import KeyChanges, MatchedRuns, largest_changes, match_runs
from sgi_core.runs.reading import Run, read_run
from sgi_core.scoring import score_table

#: Bootstrap resamples of keys behind the page's intervals.
COMPARE_N_BOOT = 2000
#: Keys listed among those that changed most.
CHANGED_KEYS = 20
#: Keys drawn at most per chart (a seeded sample above it; every statistic uses every key).
CHART_KEYS = 20_000

__all__ = ["CHANGED_KEYS", "CHART_KEYS", "COMPARE_N_BOOT", "auroc_frame", "changed_keys", "comparison",
           "deltas_frame", "headline_rates", "labels_headline", "matched_runs", "new_run", "new_run_labelled",
           "paired_points", "reconciliation", "run_of_current_file"]


def _scorer(model_name: str, context_strategy: str):
    def score(table: TripleTable) -> pd.DataFrame:
        model, cache = model_encoder(model_name), disk_cache(model_name)
        parts = [score_table(part, model, context_strategy=context_strategy, cache=cache)
                 for part in table.chunks(SCORE_CHUNK_ROWS)]
        return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)

    return score


@st.cache_resource(show_spinner="Reading the runs...", max_entries=4)
def run_of_current_file(key: state.DataKey, model_name: str, _frame: pd.DataFrame) -> tuple[Run, tuple[str, ...]]:
    """The current file's scored frame as a run, and the warnings raised reading it (shared, not copied)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedStatisticWarning)
        run = read_run(_frame, source=key.name, scorer=None)
    return run, tuple(dict.fromkeys(str(w.message) for w in caught))


@st.cache_resource(show_spinner="Reading and scoring the second run...", max_entries=4)
def new_run(name: str, digest: str, model_name: str, device: str, backend: str, context_strategy: str,
            _raw) -> tuple[Run, tuple[str, ...]]:
    """The second file as a run, scored with ``model_name`` when it carries no SGI, and its warnings.

    ``device``, ``backend`` and ``context_strategy`` (the sidebar's) are part of the cache key: the scores
    follow them.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedStatisticWarning)
        run = read_run(read_table(_raw, name=name, limits=input_limits()), source=name,
                       scorer=_scorer(model_name, context_strategy))
    return run, tuple(dict.fromkeys([*run.warnings, *(str(w.message) for w in caught)]))


@st.cache_resource(show_spinner="Reading the new run's annotations...", max_entries=4)
def _new_run_with_annotations(name: str, digest: str, version: str, _run: Run) -> tuple[Run, tuple[int, int, int, int]]:
    store = AnnotationStore(annotations_path(name))
    annotated = labels_from_decisions(store.current(), source=str(store.path))
    file_label = pd.to_numeric(_run.frame["label"], errors="coerce").to_numpy(dtype=float) \
        if "label" in _run.frame else np.full(len(_run.frame), np.nan)
    if not len(annotated.labels):
        return _run, (int(np.count_nonzero(~np.isnan(file_label))), 0, 0, 0)
    keys = row_keys(_run.frame)
    joined = join_labels(keys, annotated, require_match=False)
    combined = combine_labels(file_label, joined.label, source="both")
    targeted = int(pd.Index(keys).isin(list(annotated.targeted_keys)).sum())
    return replace(_run, frame=_run.frame.assign(label=combined.label)), (combined.n_file, combined.n_annotations,
                                                                         combined.n_disagree, targeted)


def new_run_labelled(name: str, digest: str, run: Run) -> tuple[Run, tuple[int, int, int, int]]:
    """The new run with the Review page's annotations of a file of that name joined to its own labels.

    Returns the run and ``(labelled in the file, annotated, disagreeing and left unlabelled,
    annotated from a queue that is not a random order)``.
    """
    store = AnnotationStore(annotations_path(name))
    version = f"{store.path.stat().st_size}-{store.path.stat().st_mtime_ns}" if store.path.exists() else "empty"
    return _new_run_with_annotations(name, digest, version, run)


@st.cache_data(show_spinner="Comparing the runs...", max_entries=8)
def comparison(base_key: state.DataKey, new_id: tuple, model_name: str, key_column: str, prediction_powered: bool,
               _base: Run, _new: Run) -> tuple[RunComparison, MatchedRuns, tuple[str, ...]]:
    """The two runs matched on ``key_column`` and compared, with the warnings the statistics raised.

    ``new_id`` (the new file's digest, device, backend) and the other keys decide ``_base`` and ``_new``.
    ``prediction_powered`` is False when some labels come from a Review queue that is not a random order.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        matched = match_runs(_base.frame, _new.frame, key=key_column, scores=_base.scores)
        result = compare_runs(matched, n_boot=app_resamples(COMPARE_N_BOOT), seed=0,
                              prediction_powered=prediction_powered)
    return result, matched, tuple(dict.fromkeys(str(w.message) for w in caught))


def matched_runs(base: Run, new: Run, key_column: str) -> MatchedRuns:
    """The two runs matched on ``key_column`` (the empty-key warning is the comparison's to show)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return match_runs(base.frame, new.frame, key=key_column, scores=base.scores)


def paired_points(matched: MatchedRuns, score: str) -> pd.DataFrame:
    """One row per matched key, at most :data:`CHART_KEYS` of them (a seeded sample): the key and each run's score."""
    rows = np.arange(len(matched.keys))
    if len(rows) > CHART_KEYS:
        rows = np.sort(np.random.default_rng(0).choice(rows, CHART_KEYS, replace=False))
    return pd.DataFrame({"key": matched.keys[rows], "base": matched.base[score].to_numpy()[rows],
                         "new": matched.new[score].to_numpy()[rows]})


@st.cache_data(show_spinner=False, max_entries=32)
def changed_keys(base_key: state.DataKey, new_id: tuple, model_name: str, key_column: str, score: str,
                 _matched: MatchedRuns) -> KeyChanges:
    return largest_changes(_matched, score, n=CHANGED_KEYS)
