"""Cached calls behind the confound views: length-matched AUROC, groups, and a threshold that holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import services, state
from dashboard.services import baselines, detector_services, numeric_columns, report
from dashboard.services.resamples import REPORT_N_BOOT, app_resamples
from sgi_core import evaluation
from sgi_core.columns import DEFAULT_CONTEXT_STRATEGY
from sgi_core.embedding import backend_used
from sgi_core.evaluation.verdict import standing_of
from sgi_core.io.labels import distinct_label_values
from sgi_core.io.scored import scored_with as scored_with_record
from sgi_core.io.triples import TripleTable
from sgi_core.policy.file import Policy, policy_to_json
from sgi_core.policy.making import HeldOutThreshold, make_policy
from sgi_core.policy.references import feature_values
from sgi_core.policy.rules import write_refusal
from sgi_core.scores.baselines import response_length
from sgi_core.stats.length_matched import length_matched_auroc

#: Baselines whose length-matched AUROC is shown beside SGI's (response length itself is what is matched).
LENGTH_MATCHED_BASELINES = ("theta_rq", "lexical_groundedness")
#: Most distinct values a column may have to be offered as a grouping (more reads as an id).
MAX_GROUPS = 50
#: Most distinct label values offered in the Data page's value mapping.
MAX_LABEL_VALUES = 50


@st.cache_data(show_spinner="Matching response lengths...", max_entries=32)
def length_matched(key: state.DataKey, model_name: str, _frame: pd.DataFrame) -> dict:
    """Length-matched AUROC of SGI (key ``"sgi"``, from the report) and of :data:`LENGTH_MATCHED_BASELINES` present.

    Each result says how its intervals were made (``ci_method``, ``n_boot``).
    """
    labels = _frame["label"].to_numpy()
    lengths = response_length(_frame["response"])
    per_row = baselines(key, model_name, _frame)
    scores = {name: per_row[name].to_numpy(dtype=np.float64) for name in LENGTH_MATCHED_BASELINES
              if per_row is not None and name in per_row.columns}
    return {"sgi": report(key, model_name, _frame).length_matched,
            **{name: length_matched_auroc(labels, values, lengths,
                                                     n_boot=app_resamples(REPORT_N_BOOT))
               for name, values in scores.items()}}


def group_columns(table: TripleTable) -> list[str]:
    """Input columns, other than the mapped ones, that can group rows (generator, domain, ...).

    A column qualifies with 2 to :data:`MAX_GROUPS` distinct values and at most one
    per two rows, so ids (one per row or per question pair) are left out, and when
    it does not determine the label (:func:`sgi_core.evaluation.label_leaks.label_leaks`):
    grouped by the label, every group is one class.
    """
    frame = table.frame
    limit = min(MAX_GROUPS, len(frame) // 2)
    candidates = [column for column in table.unmapped_columns
                  if 2 <= frame[column].dropna().astype(str).nunique() <= limit]
    leaks = {leak.column for leak in evaluation.label_leaks(frame, frame["label"].to_numpy(), candidates)}
    return [column for column in candidates if column not in leaks]


def keep_together_choices(table: TripleTable) -> list[str]:
    """What a development / held-out split can keep on one side: the default first (pair_id, else the question).

    The default is :func:`sgi_core.evaluation.default_keep_together`, the one ``gate --write-policy`` uses.
    """
    together = [column for column in evaluation.KEEP_TOGETHER if column in table.frame.columns]
    return [*together, *(column for column in group_columns(table) if column not in together)]


@st.cache_data(show_spinner="Looking for columns that copy the label...", max_entries=32)
def column_screen(key: state.DataKey, _table: TripleTable) -> evaluation.ColumnScreen:
    """The input columns that determine the label, and the id columns (neither is a group nor a score)."""
    return evaluation.screen_columns(_table.frame, _table.frame["label"].to_numpy(), list(_table.unmapped_columns))


def score_columns(key: state.DataKey, table: TripleTable) -> list[str]:
    """Numeric input columns that can be detector scores: not the label in disguise, not an id."""
    screen = column_screen(key, table)
    return [column for column in numeric_columns(table) if screen.refused_as_score(column) is None]


@st.cache_data(show_spinner="Computing statistics per group...", max_entries=32)
def group_analysis(key: state.DataKey, model_name: str, column: str,
                   _frame: pd.DataFrame) -> evaluation.GroupAnalysis:
    """SGI's AUROC and d within each group of ``column``, and whether the group alone predicts the label."""
    return evaluation.group_analysis(_frame["label"].to_numpy(), _frame["sgi"].to_numpy(), _frame[column],
                                     column=column, degenerate=_frame["sgi_status"].str.startswith("degenerate"),
                                     n_boot=app_resamples(REPORT_N_BOOT))


def scored_with(key: state.DataKey, model_name: str) -> tuple[str, str | None, str | None, str]:
    """``(model, precision, backend, context_strategy)`` that made the file's SGI.

    A scored file's record when its scores were read (unrecorded: the model shown, the
    rest None, and ``joined``, the only strategy before strategies were recorded); else
    the app's model and the sidebar's backend and context strategy.
    """
    raw = state.raw_file()[1]
    if services.file_scores(key, raw, services.input_limits()) is not None:
        recorded = scored_with_record(raw) if isinstance(raw, Path) else None
        if recorded is None:
            return model_name, None, None, DEFAULT_CONTEXT_STRATEGY
        return recorded["model"], recorded["precision"], recorded["backend"], recorded["context_strategy"]
    return model_name, "fp32", backend_used(services.model_encoder(model_name)), key.context_strategy


def policy_refusal(key: state.DataKey, model_name: str, _frame: pd.DataFrame) -> str | None:
    """Why no policy should be offered for SGI on this file (its AUROC near chance or inverted), read from SGI's
    judgement in the file's report: the interval the Overview shows.

    ``gate --write-policy`` refuses such a score the same way.
    """
    return write_refusal(standing_of(report(key, model_name, _frame).judgements["sgi"].auroc_ci), "sgi")


@st.cache_data(show_spinner="Choosing the threshold on the development half...", max_entries=32)
def holdout_policy(key: state.DataKey, model_name: str, made_by: tuple, group_column: str, calibration: str,
                   method: str, target: float | None, cost_ratio: float | None,
                   _frame: pd.DataFrame) -> tuple[Policy, HeldOutThreshold]:
    """Threshold and calibrator fitted on a development half (whole ``group_column`` groups on one side).

    ``made_by`` is ``(model, precision, backend, context_strategy)`` of the scores (:func:`scored_with`), recorded
    in the policy.

    Raises
    ------
    SGIInputError
        When the halves cannot be formed or no threshold meets the rule.
    """
    groups = _frame[group_column].fillna(evaluation.MISSING_GROUP).astype(str).to_numpy()
    model, precision, backend, context_strategy = made_by
    # What the monitor needs besides the counts: per-class references of the response and context lengths, theta(q,c).
    features = {name: values for name, values in feature_values(_frame, _frame["sgi"].to_numpy()).items()
                if name != "score"}
    return make_policy(_frame["label"].to_numpy(), _frame["sgi"].to_numpy(), model=model,
                                  model_precision=precision, model_backend=backend,
                                  context_strategy=context_strategy, calibration=calibration,
                                  method=method, target=target, cost_ratio=cost_ratio, groups=groups,
                                  features=features)


def policy_json(policy: Policy) -> str:
    return policy_to_json(policy)


@st.cache_resource(show_spinner=False, max_entries=16)
def judged_report(key: state.DataKey, model_name: str, specs: tuple, _table: TripleTable, _frame: pd.DataFrame,
                  kinds: tuple = (), resources: tuple = ()) -> evaluation.EvaluationReport:
    """The file's one judged report: :func:`dashboard.services.report` with the declared columns ``specs``
    ((column, higher_is), ...) and the judgements of the detector families ``kinds`` computed on the Detectors page
    (with its ``resources``), added by :func:`sgi_core.evaluation.report.with_families`; nothing is judged again."""
    judged = report(key, model_name, _frame, specs)
    if not kinds:
        return judged
    families, _ = detector_services.embedding_detectors(key, model_name, kinds, _table, _frame, resources)
    return evaluation.with_families(judged, families.detectors)


@st.cache_data(show_spinner="Judging the detectors against this file's trivial scores...", max_entries=32)
def file_verdict(key: state.DataKey, model_name: str, specs: tuple, _table: TripleTable,
                 _frame: pd.DataFrame, kinds: tuple = (), resources: tuple = ()) -> evaluation.Verdict:
    """The verdict of :func:`judged_report`: SGI, the declared detector columns ``specs`` and the scores of the
    detector families ``kinds`` against this file's trivial scores, each keyed by its registry name
    (``neg_<column>`` when given as hallucinated-high), as ``report --detector`` keys it."""
    family_scores = (detector_services.embedding_detectors(key, model_name, kinds, _table, _frame, resources)[1]
                     if kinds else None)
    return evaluation.report_verdict(judged_report(key, model_name, specs, _table, _frame, kinds, resources), _frame,
                                     family_scores=family_scores, baselines=baselines(key, model_name, _frame),
                                     n_boot=app_resamples(REPORT_N_BOOT))


@st.cache_data(show_spinner=False, max_entries=8)
def label_values(name: str, digest: str, column: str, _frame: pd.DataFrame) -> list[str]:
    """The distinct values of the chosen label column, for the Data page's value mapping."""
    return distinct_label_values(_frame[column], limit=MAX_LABEL_VALUES)
