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
from sgi_core.detectors.registry import COMBINED, FAMILIES, score_specs
from sgi_core.detectors.report import DetectorReport, compare_with_combined, detector_report
from sgi_core.detectors.resources import ResourceOption, resource_option
from sgi_core.evaluation.events_per_feature import WITHHELD
from sgi_core.io.triples import TripleTable
from sgi_core.render.names import display_name
from sgi_core.scores.registry import column_spec
from sgi_core.scores.selection import judged_scores
from sgi_core.stats.paired import delong_test, disagreements, mcnemar_test
from sgi_core.stats.thresholds import choose_threshold

#: Bootstrap resamples behind the intervals of the detectors computed from the embeddings.
DETECTOR_N_BOOT = 1000
#: Rows listed where two compared scores disagree most.
DISAGREEMENT_ROWS = 20
#: SGI's display name, the default first score of a paired comparison.
SGI_LABEL = display_name("sgi")
#: The response-length baseline's display name, the default second score of a paired comparison.
LENGTH_LABEL = display_name("neg_response_length")
#: Display name of each computed score by its registry (oriented) name, as the reports key it, from the registry.
DETECTOR_NAMES = {spec.oriented_name: spec.label for spec in score_specs().values()}
#: Display name of the combined detector, the one score fitted on the labels it is compared on.
COMBINED_LABEL = DETECTOR_NAMES[COMBINED.name]

__all__ = ["COMBINED", "COMBINED_LABEL", "DETECTOR_NAMES", "DISAGREEMENT_ROWS", "FAMILIES", "LENGTH_LABEL", "SGI_LABEL",
           "WITHHELD", "comparable_scores", "embedding_detector_curves", "embedding_detectors", "loaded_resources",
           "paired_comparison", "resource_choice", "resource_objects"]


def resource_choice(option: ResourceOption, text: str, switches: dict[str, bool], *, backend: str = "auto") -> tuple:
    """The page's lines of the declared resource ``option`` and its switches' values as a hashable choice.

    ``()`` if no line is given. Each typed folder must lie under the local-files root
    (:func:`dashboard.local_files.local_folder`); ``backend`` is the sidebar's embedding backend.

    Raises
    ------
    SGIInputError
        A path that is not a folder under the local-files root, or a line the resource refuses.
    """
    from dashboard import local_files

    return option.choose(text.splitlines(), switches, folder=local_files.local_folder, backend=backend)


@st.cache_resource(show_spinner="Loading the models given...", max_entries=8)
def resource_objects(field: str, choice: tuple) -> tuple:
    """The objects of the declared resource ``field`` that ``choice`` (:func:`resource_choice`) names, loaded.

    Raises
    ------
    SGIInputError
        From the resource's loader (a folder that is not such a model, a failed self-test, ...).
    """
    return resource_option(field).load_choice(choice)


def loaded_resources(resources: tuple) -> dict[str, tuple]:
    """Field -> loaded objects of each ``(field, choice)`` of ``resources`` (:func:`resource_objects`)."""
    return {field: resource_objects(field, choice) for field, choice in resources}


@st.cache_resource(show_spinner="Computing the detectors from the embeddings...", max_entries=16)
def embedding_detectors(key: state.DataKey, model_name: str, kinds: tuple, _table: TripleTable,
                        _frame: pd.DataFrame, resources: tuple = ()) -> tuple[DetectorReport, pd.DataFrame]:
    """:func:`sgi_core.detectors.report.detector_report` of the families ``kinds``: the report and per-row scores.

    ``resources`` names the resources given on the page, ((field, choice), ...) (:func:`loaded_resources`).

    Raises
    ------
    SGIInputError
        When the families cannot be computed on this table.
    """
    return detector_report(_table, _frame, model_encoder(model_name), model=model_name, kinds=kinds,
                           cache=disk_cache(model_name), n_boot=app_resamples(DETECTOR_N_BOOT), seed=0,
                           resources=loaded_resources(resources))


@st.cache_resource(show_spinner=False, max_entries=16)
def embedding_detector_curves(key: state.DataKey, model_name: str, kinds: tuple, _table: TripleTable,
                              _frame: pd.DataFrame, resources: tuple = ()) -> dict:
    """ROC curves of each computed detector by name: their judgements' analyses in the report, never made again."""
    report, _ = embedding_detectors(key, model_name, kinds, _table, _frame, resources)
    return {name: judged.roc for name, judged in report.detectors.items()}


@st.cache_resource(show_spinner=False, max_entries=16)
def comparable_scores(key: state.DataKey, model_name: str, specs: tuple, kinds: tuple, _table: TripleTable,
                      _frame: pd.DataFrame, resources: tuple = ()) -> dict[str, np.ndarray]:
    """Every score the Detectors page can compare, by display name, each oriented higher = grounded.

    The chooser's (:func:`sgi_core.scores.selection.judged_scores`): SGI, the trivial
    scores, the file's detector columns ``specs`` ((column, higher_is), ...), the
    registered, judge and grounding-model columns the file carries and the detectors of
    the computed families ``kinds`` (none when empty). A withheld detector (the
    combination below the events-per-feature floor) has no per-row score, so it is never
    offered.
    """
    computed = (embedding_detectors(key, model_name, kinds, _table, _frame, resources)[1] if kinds
                else pd.DataFrame(index=_frame.index))
    declared = [column_spec(column, higher_is=higher_is) for column, higher_is in specs]
    trivial = baselines(key, model_name, _frame)
    scores = {}
    for spec in judged_scores(_frame.columns, computed=computed.columns, declared=declared):
        if trivial is not None and spec.oriented_name in trivial.columns:
            values = trivial[spec.oriented_name].to_numpy(dtype=np.float64)
        else:
            holder = next((frame for frame in (computed, _frame) if spec.name in frame.columns), _table.frame)
            values = spec.oriented(spec.raw_values(holder), source=_table.source)
        scores[display_name(spec.oriented_name)] = values
    return scores


@st.cache_data(show_spinner="Comparing the two scores...", max_entries=64)
def paired_comparison(key: state.DataKey, model_name: str, specs: tuple, kinds: tuple, name_a: str, name_b: str,
                      _table: TripleTable, _frame: pd.DataFrame, resources: tuple = ()) -> tuple:
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
    scores = comparable_scores(key, model_name, specs, kinds, _table, _frame, resources)
    labels = _frame["label"].to_numpy()
    a, b = scores[name_a], scores[name_b]
    youden = (choose_threshold(labels, a, method="youden"),
              choose_threshold(labels, b, method="youden"))
    if COMBINED_LABEL in (name_a, name_b):
        report, computed = embedding_detectors(key, model_name, kinds, _table, _frame, resources)
        refitted = "a" if name_a == COMBINED_LABEL else "b"
        test = compare_with_combined(_table, _frame, computed, b if refitted == "a" else a, refitted=refitted,
                                     n_folds=report.n_folds, seed=0)
        mcnemar = None
    else:
        test = delong_test(labels, a, b)
        defined = all(np.isfinite(choice.threshold) for choice in youden)
        mcnemar = mcnemar_test(labels, a, b, youden[0].threshold, youden[1].threshold) if defined else None
    return test, youden, mcnemar, disagreements(None, a, b, n=DISAGREEMENT_ROWS)
