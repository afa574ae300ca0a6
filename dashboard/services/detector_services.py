"""Cached calls behind the Detectors page: detector families computed from the embeddings, paired comparisons.

Like :mod:`dashboard.services`, frames are cached on the data key and the model name;
arguments starting with ``_`` are not hashed because those keys decide them. What holds a
value per row or per threshold is cached as a shared object (``st.cache_resource``) that no
page changes, never as a pickled copy per rerun.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import state
from dashboard.services import baselines, disk_cache, model_encoder
from sgi_core import evaluation
from sgi_core.io.triples import TripleTable
from sgi_core.detectors.report import DetectorReport, detector_report
from sgi_core.detectors.registry import FAMILIES, score_specs
from sgi_core.evaluation import detectors
from sgi_core.scores import SCORES, column_spec

#: Bootstrap resamples behind the intervals of the detectors computed from the embeddings.
DETECTOR_N_BOOT = 1000
#: Rows listed where two compared scores disagree most.
DISAGREEMENT_ROWS = 20
#: The response-length baseline's display name, the default second score of a paired comparison.
LENGTH_LABEL = SCORES["neg_response_length"].label
#: Display name of each computed score (every one oriented higher = grounded), from the registry.
DETECTOR_NAMES = {name: spec.label for name, spec in score_specs().items()}

__all__ = ["DETECTOR_NAMES", "DISAGREEMENT_ROWS", "FAMILIES", "LENGTH_LABEL", "comparable_scores", "embedding_detector_curves",
           "embedding_detectors", "paired_comparison"]


@st.cache_resource(show_spinner="Computing the detectors from the embeddings...", max_entries=16)
def embedding_detectors(key: state.DataKey, model_name: str, kinds: tuple, _table: TripleTable,
                        _frame: pd.DataFrame) -> tuple[DetectorReport, pd.DataFrame]:
    """:func:`sgi_core.detectors.report.detector_report` of the families ``kinds``: the report and per-row scores.

    Raises
    ------
    SGIInputError
        When the families cannot be computed on this table.
    """
    return detector_report(_table, _frame, model_encoder(model_name), model=model_name, kinds=kinds,
                           cache=disk_cache(model_name), n_boot=DETECTOR_N_BOOT, seed=0)


@st.cache_resource(show_spinner=False, max_entries=16)
def embedding_detector_curves(key: state.DataKey, model_name: str, kinds: tuple, _table: TripleTable,
                              _frame: pd.DataFrame) -> dict:
    """ROC curves of each computed detector by display name (their AUROCs and intervals are in the report)."""
    _, scores = embedding_detectors(key, model_name, kinds, _table, _frame)
    labels = _frame["label"].to_numpy()
    specs = score_specs()
    return {specs[name].label: evaluation.roc_analysis(labels, specs[name].oriented(scores[name]), n_boot=0)
            for name in scores.columns}


@st.cache_resource(show_spinner=False, max_entries=16)
def comparable_scores(key: state.DataKey, model_name: str, specs: tuple, kinds: tuple, _table: TripleTable,
                      _frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """Every score the Detectors page can compare, by display name, each oriented higher = grounded.

    SGI, θ(r,q), θ(r,c) negated, response length negated, word overlap with the
    context, the detectors of the computed families ``kinds`` (none when empty) and
    the file's detector columns ``specs`` ((column, higher_is), ...).
    """
    base = baselines(key, model_name, _frame)
    scores = {SCORES[name].label: SCORES[name].oriented(_frame[name]) for name in ("sgi", "theta_rq", "theta_rc")}
    scores.update({SCORES[name].label: base[name].to_numpy(dtype=np.float64)
                   for name in ("neg_response_length", "lexical_groundedness")})
    if kinds:
        _, computed = embedding_detectors(key, model_name, kinds, _table, _frame)
        registered = score_specs()
        scores.update({registered[name].label: registered[name].oriented(computed[name]) for name in computed.columns})
    scores.update({column_spec(column, higher_is=higher_is).label: detectors.orient_detector_score(
        _table.frame[column], higher_is=higher_is, source=_table.source, column=column) for column, higher_is in specs})
    return scores


@st.cache_data(show_spinner="Comparing the two scores...", max_entries=64)
def paired_comparison(scores_key: tuple, name_a: str, name_b: str, _labels: np.ndarray, _scores: dict) -> tuple:
    """Two scores of :func:`comparable_scores` on the same rows.

    ``scores_key`` is what decides ``_scores`` (the arguments of :func:`comparable_scores`).
    Returns DeLong's test of the AUROC difference, each score's Youden threshold (two
    ``ThresholdChoice``), McNemar's test at those thresholds (None when a threshold is
    undefined) and the :data:`DISAGREEMENT_ROWS` rows whose percentile ranks differ most.
    """
    a, b = _scores[name_a], _scores[name_b]
    delong = evaluation.delong_test(_labels, a, b)
    youden = (evaluation.choose_threshold(_labels, a, method="youden"),
              evaluation.choose_threshold(_labels, b, method="youden"))
    defined = all(np.isfinite(choice.threshold) for choice in youden)
    mcnemar = evaluation.mcnemar_test(_labels, a, b, youden[0].threshold, youden[1].threshold) if defined else None
    return delong, youden, mcnemar, evaluation.disagreements(None, a, b, n=DISAGREEMENT_ROWS)
