"""The annotations a scored window becomes: one per root span, and the monitor's verdict on each trace.

A span annotation is named after its score column (``sgi``), holds the row's score, a label
where a policy is given (its threshold: ``score < threshold`` is flagged), an explanation naming
the score, the threshold and whether the policy validates the score
(:func:`sgi_core.evaluation.validation.validate_from_policy`), annotator kind ``CODE`` and the
run id as identifier, so that a rerun of the same run updates instead of adding. A monitor
result (``monitor --json``) becomes one trace annotation per trace: its status, corrected
hallucination rate and interval. Nothing here sends: :mod:`sgi_core.tracing.phoenix_push` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sgi_core.errors import SGIInputError
from sgi_core.io.convert.traces import SPAN_ID_COLUMN, TRACE_ID_COLUMN
from sgi_core.results import JsonResult

if TYPE_CHECKING:
    import pandas as pd

ANNOTATOR_KIND = "CODE"
#: The trace annotation carrying a monitor's verdict.
MONITOR_ANNOTATION = "sgi_monitor"


@dataclass(frozen=True)
class AnnotationPlan(JsonResult):
    """What ``annotate`` sends.

    Attributes
    ----------
    span_annotations, trace_annotations : tuple of dict
        Items of ``POST /v1/span_annotations`` and ``/v1/trace_annotations``.
    configs : tuple of dict
        The annotation configs to register (``POST /v1/annotation_configs``).
    not_scored : tuple of int
        1-based rows with no score (not annotated).
    no_span : tuple of int
        1-based rows without a root span id (not annotated).
    """

    span_annotations: tuple
    trace_annotations: tuple
    configs: tuple
    not_scored: tuple
    no_span: tuple


def _threshold_label(score: float, threshold: float, validated: bool) -> str:
    if validated:
        return "flagged" if score < threshold else "not flagged"
    return "below threshold" if score < threshold else "at or above threshold"


def _span_annotation(span_id: str, trace_id: str, score: float, column: str, run_id: str, policy, validation) -> dict:
    result = {"score": score}
    explanation = f"{column} = {score:.4g}"
    metadata = {"run_id": run_id, "score_column": column, "trace_id": trace_id}
    if policy is None:
        explanation += " (higher = grounded); no policy given, so no threshold"
    else:
        result["label"] = _threshold_label(score, policy.threshold, validation.validated)
        side = "below" if score < policy.threshold else "at or above"
        state = "validated" if validation.validated else "not validated"
        explanation += (f", {side} the policy's threshold {policy.threshold:.4g}; the policy's score is {state}: "
                        f"{validation.reason}")
        metadata.update(threshold=policy.threshold, validated=validation.validated)
    result["explanation"] = explanation
    return {"span_id": span_id, "name": column, "annotator_kind": ANNOTATOR_KIND, "result": result,
            "metadata": metadata, "identifier": run_id}


def monitor_annotation(trace_id: str, monitor: dict, run_id: str) -> dict:
    """The trace annotation of a ``monitor --json`` result: status, corrected rate and its interval.

    Raises
    ------
    SGIInputError
        A result without ``status`` or ``corrected_rate`` (not ``monitor --json``'s).

    Examples
    --------
    >>> m = {"status": "holds", "corrected_rate": {"estimate": 0.1, "ci": [0.05, 0.2]}}
    >>> monitor_annotation("t1", m, "run-1")["result"]["explanation"]
    'monitor: holds; corrected hallucination rate 0.100, 95% interval [0.050, 0.200]'
    """
    try:
        status, rate, (low, high) = monitor["status"], monitor["corrected_rate"]["estimate"], \
            monitor["corrected_rate"]["ci"]
    except (KeyError, TypeError, ValueError):
        raise SGIInputError("the monitor result has no status or corrected_rate with its ci",
                            hint="Give the JSON that `python -m sgi_core monitor ... --json` prints") from None
    numbers = [x if isinstance(x, (int, float)) and math.isfinite(x) else None for x in (rate, low, high)]
    shown = ["n/a" if x is None else f"{x:.3f}" for x in numbers]
    result = {"label": str(status), "explanation": f"monitor: {status}; corrected hallucination rate {shown[0]}, "
                                                   f"95% interval [{shown[1]}, {shown[2]}]"}
    if numbers[0] is not None:
        result["score"] = numbers[0]
    return {"trace_id": trace_id, "name": MONITOR_ANNOTATION, "annotator_kind": ANNOTATOR_KIND, "result": result,
            "metadata": {"run_id": run_id, "corrected_rate_ci": numbers[1:], "status": str(status)},
            "identifier": run_id}


def plan_annotations(frame: pd.DataFrame, *, run_id: str, score: str = "sgi", policy=None, model: str | None = None,
                     monitor: dict | None = None, source: str = "<input>") -> AnnotationPlan:
    """The annotations of a scored window (a file ``pull`` wrote and ``score`` scored).

    Parameters
    ----------
    frame : DataFrame
        With ``span_id``, ``trace_id`` and the ``score`` column (higher = grounded).
    run_id : str
        The annotations' identifier: the same run id updates them.
    score : str
    policy : Policy, optional
        Its threshold labels each row; it must hold ``score``.
    model : str, optional
        The model that scored the file, when recorded: a policy of another model does not validate it.
    monitor : dict, optional
        A ``monitor --json`` result, written on every trace of the frame.
    source : str
        The file's name, in messages.

    Raises
    ------
    SGIInputError
        An empty run id, a missing column, a score cell that is not a number, or a policy of another score.
    """
    from sgi_core.io.scored import numbers_in

    if not str(run_id).strip():
        raise SGIInputError("the run id is empty", hint="Give --run-id, e.g. the date and the model: 2026-05-14-minilm")
    missing = [c for c in (SPAN_ID_COLUMN, TRACE_ID_COLUMN, score) if c not in frame.columns]
    if missing:
        raise SGIInputError(f"the file has no {', '.join(missing)} column", source=source,
                            hint="Annotate a file that `pull` wrote and `score` scored (it keeps trace_id and span_id)")
    if policy is not None and policy.score_column != score:
        raise SGIInputError(f"the policy holds the score '{policy.score_column}', not '{score}'", source=source,
                            hint=f"Give --score {policy.score_column}, or a policy of {score}")
    numbers, bad = numbers_in(frame[score])
    if len(bad):
        raise SGIInputError(f"{len(bad):,} cells of the score are not numbers", source=source, column=score,
                            rows=(bad + 1).tolist())
    validation = None
    if policy is not None:
        from sgi_core.evaluation.validation import validate_from_policy

        validation = validate_from_policy(score, policy, model=model)
    spans, not_scored, no_span = [], [], []
    span_ids = frame[SPAN_ID_COLUMN].astype("string").fillna("").str.strip()
    for row, (span_id, trace_id, value) in enumerate(zip(span_ids, frame[TRACE_ID_COLUMN], numbers), start=1):
        if not span_id:
            no_span.append(row)
        elif not math.isfinite(value):
            not_scored.append(row)
        else:
            spans.append(_span_annotation(span_id, str(trace_id), float(value), score, run_id, policy, validation))
    traces = () if monitor is None else tuple(monitor_annotation(str(t), monitor, run_id)
                                              for t in dict.fromkeys(frame[TRACE_ID_COLUMN]))
    configs = ({"name": score, "type": "CONTINUOUS", "optimization_direction": "MAXIMIZE",
                "description": f"{score} from the SGI workbench (higher = grounded)"},)
    if monitor is not None:
        configs += ({"name": MONITOR_ANNOTATION, "type": "CONTINUOUS", "optimization_direction": "MINIMIZE",
                     "description": "The SGI workbench monitor's corrected hallucination rate of the run"},)
    return AnnotationPlan(tuple(spans), traces, configs, tuple(not_scored), tuple(no_span))
