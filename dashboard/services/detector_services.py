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
from dashboard.services.resamples import app_resamples
from sgi_core import evaluation
from sgi_core.detectors.registry import COMBINED, FAMILIES, score_specs
from sgi_core.detectors.report import DetectorReport, compare_with_combined, detector_report
from sgi_core.evaluation.events_per_feature import WITHHELD
from sgi_core.io.triples import TripleTable
from sgi_core.render.names import display_name
from sgi_core.scores import BASELINES, NEGATED_PREFIX

#: Bootstrap resamples behind the intervals of the detectors computed from the embeddings.
DETECTOR_N_BOOT = 1000
#: Rows listed where two compared scores disagree most.
DISAGREEMENT_ROWS = 20
#: SGI's display name, the default first score of a paired comparison.
SGI_LABEL = display_name("sgi")
#: The response-length baseline's display name, the default second score of a paired comparison.
LENGTH_LABEL = display_name("neg_response_length")
#: Display name of each computed score (every one oriented higher = grounded), from the registry.
DETECTOR_NAMES = {name: spec.label for name, spec in score_specs().items()}
#: Display name of the combined detector, the one score fitted on the labels it is compared on.
COMBINED_LABEL = DETECTOR_NAMES[COMBINED.name]

__all__ = ["COMBINED", "COMBINED_LABEL", "DETECTOR_NAMES", "DISAGREEMENT_ROWS", "FAMILIES", "LENGTH_LABEL", "SGI_LABEL",
           "WITHHELD", "comparable_scores", "embedding_detector_curves", "embedding_detectors", "grounding_choice",
           "grounding_models", "paired_comparison"]


def grounding_choice(text: str, *, self_test: bool, backend: str = "auto") -> tuple:
    """The page's folders (one ``NAME=DIR`` or ``DIR`` per line) as ``(((name, folder), ...), self_test, backend)``.

    ``()`` if none. ``backend`` is the sidebar's embedding backend; grounding models run
    on :func:`sgi_core.grounding.onnx_network.grounding_backend` of it (``onnx`` for ``onnx-int8``).

    Raises
    ------
    SGIInputError
        A path that is not a folder under the local-files root (:func:`dashboard.local_files.local_folder`).
    """
    from dashboard import local_files
    from sgi_core.grounding.folder import default_name, parse_model_option
    from sgi_core.grounding.onnx_network import grounding_backend

    folders = []
    for line in filter(None, (line.strip() for line in text.splitlines())):
        name, where = parse_model_option(line)
        path = local_files.local_folder(where)
        folders.append((name or default_name(path), str(path)))
    return (tuple(folders), bool(self_test), grounding_backend(backend)) if folders else ()


@st.cache_resource(show_spinner="Loading the grounding models...", max_entries=8)
def grounding_models(grounding: tuple) -> tuple:
    """The grounding models of ``grounding`` (``(((name, folder), ...), self_test, backend)``), loaded and checked.

    Raises
    ------
    SGIInputError
        From :func:`sgi_core.grounding.runtime.load_grounding_model`.
    """
    from sgi_core.grounding.runtime import load_grounding_model

    if not grounding:
        return ()
    folders, self_test, backend = grounding
    return tuple(load_grounding_model(path, name=name, backend=backend, self_test=self_test) for name, path in folders)


@st.cache_resource(show_spinner="Computing the detectors from the embeddings...", max_entries=16)
def embedding_detectors(key: state.DataKey, model_name: str, kinds: tuple, _table: TripleTable,
                        _frame: pd.DataFrame, grounding: tuple = ()) -> tuple[DetectorReport, pd.DataFrame]:
    """:func:`sgi_core.detectors.report.detector_report` of the families ``kinds``: the report and per-row scores.

    ``grounding`` names the grounding models (:func:`grounding_models`) of the ``grounding`` family.

    Raises
    ------
    SGIInputError
        When the families cannot be computed on this table.
    """
    return detector_report(_table, _frame, model_encoder(model_name), model=model_name, kinds=kinds,
                           cache=disk_cache(model_name), n_boot=app_resamples(DETECTOR_N_BOOT), seed=0,
                           grounding_models=grounding_models(grounding))


@st.cache_resource(show_spinner=False, max_entries=16)
def embedding_detector_curves(key: state.DataKey, model_name: str, kinds: tuple, _table: TripleTable,
                              _frame: pd.DataFrame, grounding: tuple = ()) -> dict:
    """ROC curves of each computed detector by name: their judgements' analyses in the report, never made again."""
    report, _ = embedding_detectors(key, model_name, kinds, _table, _frame, grounding)
    return {name: judged.roc for name, judged in report.detectors.items()}


@st.cache_resource(show_spinner=False, max_entries=16)
def comparable_scores(key: state.DataKey, model_name: str, specs: tuple, kinds: tuple, _table: TripleTable,
                      _frame: pd.DataFrame, grounding: tuple = ()) -> dict[str, np.ndarray]:
    """Every score the Detectors page can compare, by display name, each oriented higher = grounded.

    SGI, θ(r,q), θ(r,c) negated, response length negated, word overlap with the
    context, the detectors of the computed families ``kinds`` (none when empty) and
    the file's detector columns ``specs`` ((column, higher_is), ...). A withheld
    detector (the combination below the events-per-feature floor) has no per-row
    score, so it is never offered.
    """
    tables = [evaluation.oriented_scores(_frame, ("sgi", "theta_rq", "theta_rc")),
              baselines(key, model_name, _frame)[list(BASELINES)]]
    if kinds:
        _, computed = embedding_detectors(key, model_name, kinds, _table, _frame, grounding)
        tables.append(evaluation.oriented_scores(computed, computed.columns))
    columns = [column if higher_is == "grounded" else f"{NEGATED_PREFIX}{column}" for column, higher_is in specs]
    tables.append(evaluation.oriented_scores(_table.frame, columns, source=_table.source))
    return {display_name(name): table[name].to_numpy(dtype=np.float64) for table in tables for name in table.columns}


@st.cache_data(show_spinner="Comparing the two scores...", max_entries=64)
def paired_comparison(key: state.DataKey, model_name: str, specs: tuple, kinds: tuple, name_a: str, name_b: str,
                      _table: TripleTable, _frame: pd.DataFrame, grounding: tuple = ()) -> tuple:
    """Two scores of :func:`comparable_scores` on the same rows.

    Returns the test of the AUROC difference, each score's Youden threshold (two
    ``ThresholdChoice``), McNemar's test at those thresholds and the
    :data:`DISAGREEMENT_ROWS` rows whose percentile ranks differ most. Between two
    fixed scores the test is DeLong's (``DeLongResult``). The combined detector was
    fitted on these labels, so against it the test is the refit bootstrap of
    :func:`sgi_core.detectors.report.compare_with_combined` (``RefitComparison``) and
    McNemar's test, whose thresholds would be fitted on the same labels too, is not
    run (None, as when a threshold is undefined).
    """
    scores = comparable_scores(key, model_name, specs, kinds, _table, _frame, grounding)
    labels = _frame["label"].to_numpy()
    a, b = scores[name_a], scores[name_b]
    youden = (evaluation.choose_threshold(labels, a, method="youden"),
              evaluation.choose_threshold(labels, b, method="youden"))
    if COMBINED_LABEL in (name_a, name_b):
        report, computed = embedding_detectors(key, model_name, kinds, _table, _frame, grounding)
        refitted = "a" if name_a == COMBINED_LABEL else "b"
        test = compare_with_combined(_table, _frame, computed, b if refitted == "a" else a, refitted=refitted,
                                     n_folds=report.n_folds, seed=0)
        mcnemar = None
    else:
        test = evaluation.delong_test(labels, a, b)
        defined = all(np.isfinite(choice.threshold) for choice in youden)
        mcnemar = evaluation.mcnemar_test(labels, a, b, youden[0].threshold, youden[1].threshold) if defined else None
    return test, youden, mcnemar, evaluation.disagreements(None, a, b, n=DISAGREEMENT_ROWS)
