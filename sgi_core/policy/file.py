"""The policy file ``gate`` reads: a flagging rule, its calibrator and its held-out numbers.

A :class:`Policy` is written by :func:`~sgi_core.policy.making.make_policy` and stored
as strict JSON, read by the rules of :mod:`sgi_core.policy.saved_json` (the same as
calibration sessions): unknown, missing, repeated or mistyped fields are refused, the
calibrator must apply, nothing is evaluated or unpickled. Numbers must agree with one
another, so that a hand-edited policy cannot claim what it did not measure: the held-out
AUROC lies inside its interval, the interval's bounds are in order, and (from version 6)
the held-out precision, recall and flag rate are those of the recorded counts, the references
hold the score's quantiles and were taken on as many held-out rows of each class as the counts.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from pathlib import Path

from sgi_core.columns import CONTEXT_STRATEGIES
from sgi_core.errors import SGIInputError
from sgi_core.policy.references import MAX_ANSWERING_SYSTEMS, references_problem
from sgi_core.policy.saved_json import check_fields, check_schema, is_number, read_calibrator, read_json_object
from sgi_core.results import JsonResult
from sgi_core.stats.thresholds import CHOICE_METHODS

POLICY_SCHEMA = "sgi-workbench/policy"
POLICY_VERSION = 7
#: Columns that are never a score: the label (and its input copy) and the row number.
NOT_SCORE_COLUMNS = ("label", "input_label", "input_row")
#: Precisions an embedding model runs at (``sgi_core.models.device.PRECISIONS``).
MODEL_PRECISIONS = ("fp32", "fp16", "bf16")
#: Backends that run it (``sgi_core.embedding.BACKENDS``).
MODEL_BACKENDS = ("torch", "onnx", "onnx-int8")
_HINT = "Write policies with `python -m sgi_core gate FILE --write-policy OUT`"
#: The held-out confusion counts a policy records (hallucinated positive).
COUNT_NAMES = ("tp", "fp", "fn", "tn")
#: How far a recorded rate may sit from the one its counts give (JSON round trip of a float).
_RATE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Policy(JsonResult):
    """A flagging rule to apply to new data, with what it achieved on held-out rows.

    Attributes
    ----------
    model : str
        Embedding model the scores come from (``"minilm"``, ...).
    model_precision : str or None
        Precision the model ran at (``"fp32"``, ``"fp16"``, ``"bf16"``) when it scored
        the file; None when the file did not record it. Another precision moves SGI
        slightly, so the gate refuses to mix them.
    model_backend : str or None
        What ran the model (``"torch"``, ``"onnx"``, ``"onnx-int8"``); None when unrecorded.
        int8 weights move SGI, so the gate refuses to mix backends too.
    context_strategy : str
        How each context became one embedding (``"joined"``, ``"mean"``, ``"nearest"``;
        :func:`~sgi_core.scoring.score_table`); ``"joined"`` in policies of versions before 5,
        when it was the only one. The gate refuses scores made with another.
    score_column : str
        ``"sgi"`` or another column of the file, higher = grounded; never the label
        or a row number (:data:`NOT_SCORE_COLUMNS`).
    calibrator : dict
        :meth:`Calibrator.to_dict` of a calibrator fitted on the development half.
    threshold : float
        Flag ``score < threshold`` as hallucinated.
    threshold_method : str
    precision, recall, flag_rate : float
        Held-out values at the threshold (hallucinated positive); NaN if undefined.
    min_auroc : float or None
        Lowest acceptable lower 95% bound of the AUROC, if any.
    heldout_auroc, heldout_auroc_ci : float, (float, float)
        The score's AUROC (grounded positive) on the held-out half with its 95% interval:
        the record that validates the score for ``model``
        (:func:`~sgi_core.evaluation.validation.validate_from_policy`); NaN in policies of
        versions before 4.
    created : str
        ISO 8601 UTC time.
    heldout_counts : dict or None
        ``tp``, ``fp``, ``fn``, ``tn`` on the held-out half at the threshold (hallucinated
        positive), behind ``precision``, ``recall`` and ``flag_rate``: what the monitor's
        corrected rate needs (:func:`~sgi_core.monitoring.prevalence.corrected_rate`). None
        in policies of versions before 6.
    references : dict or None
        Per-class quantiles of the monitored features on the held-out rows
        (:func:`~sgi_core.policy.references.class_references`), which the monitor's shift
        check tests a run against; the score's are required from version 6. None in policies of versions before 6.
    answering_systems : tuple of str or None
        The models or systems that wrote the answers of the policy's rows, where its file named them
        (:func:`~sgi_core.policy.references.answering_systems`); the monitor says when a run's differ. None
        when unrecorded (always before version 7).
    schema, version : str, int
    """

    model: str
    model_precision: str | None
    model_backend: str | None
    context_strategy: str
    score_column: str
    calibrator: dict
    threshold: float
    threshold_method: str
    precision: float
    recall: float
    flag_rate: float
    min_auroc: float | None
    heldout_auroc: float
    heldout_auroc_ci: tuple[float, float]
    created: str
    heldout_counts: dict | None = None
    references: dict | None = None
    answering_systems: tuple[str, ...] | None = None
    schema: str = POLICY_SCHEMA
    version: int = POLICY_VERSION

    @classmethod
    def from_dict(cls, data: dict, *, source: str = "<policy>") -> Policy:
        """Strict reading (:mod:`sgi_core.policy.saved_json`): every field present with the right type."""
        if not isinstance(data, dict):
            raise SGIInputError("a policy must be a JSON object", source=source, hint=_HINT)
        version = check_schema(data, POLICY_SCHEMA, tuple(range(1, POLICY_VERSION + 1)), source=source, what="a policy")
        # Version 1 recorded neither the model's precision nor its backend; version 2 no backend; before version 4
        # no held-out AUROC.
        unrecorded = {1: {"model_precision", "model_backend"}, 2: {"model_backend"}}.get(version, set())
        if version < 4:
            unrecorded |= {"heldout_auroc", "heldout_auroc_ci"}
        if version < 5:
            unrecorded |= {"context_strategy"}
        if version < 6:
            unrecorded |= {"heldout_counts", "references"}
        if version < 7:
            unrecorded |= {"answering_systems"}
        expected = {f.name for f in fields(cls)} - unrecorded
        check_fields(data, expected, source=source, what="the policy", hint=_HINT)
        for name in ("model", "score_column", "threshold_method", "created"):
            _check(isinstance(data[name], str) and data[name], name, "a non-empty string", source)
        _check(data["score_column"] not in NOT_SCORE_COLUMNS, "score_column",
               f"a score, not the label or a row number ({', '.join(NOT_SCORE_COLUMNS)})", source)
        precision = data.get("model_precision")
        _check(precision is None or precision in MODEL_PRECISIONS, "model_precision",
               f"null or one of {', '.join(MODEL_PRECISIONS)}", source)
        backend = data.get("model_backend")
        _check(backend is None or backend in MODEL_BACKENDS, "model_backend",
               f"null or one of {', '.join(MODEL_BACKENDS)}", source)
        strategy = data.get("context_strategy", "joined")
        _check(strategy in CONTEXT_STRATEGIES, "context_strategy", f"one of {', '.join(CONTEXT_STRATEGIES)}", source)
        _check(data["threshold_method"] in CHOICE_METHODS, "threshold_method", f"one of {CHOICE_METHODS}", source)
        _check(is_number(data["threshold"]), "threshold", "a number", source)
        for name in ("precision", "recall", "flag_rate", "min_auroc"):
            value = data[name]
            _check(value is None or (is_number(value) and 0.0 <= value <= 1.0), name, "null or in [0, 1]", source)
        auroc = data.get("heldout_auroc")
        _check(auroc is None or (is_number(auroc) and 0.0 <= auroc <= 1.0), "heldout_auroc", "null or in [0, 1]",
               source)
        auroc_ci = data.get("heldout_auroc_ci", [None, None])
        _check(isinstance(auroc_ci, list) and len(auroc_ci) == 2
               and all(v is None or (is_number(v) and 0.0 <= v <= 1.0) for v in auroc_ci), "heldout_auroc_ci",
               "a list of two bounds, each null or in [0, 1]", source)
        _check(auroc_ci[0] is None or auroc_ci[1] is None or auroc_ci[0] <= auroc_ci[1], "heldout_auroc_ci",
               f"a lower bound no higher than its upper bound; got {auroc_ci}", source)
        _check((auroc_ci[0] is None) == (auroc_ci[1] is None), "heldout_auroc_ci",
               f"two numbers or two nulls; got {auroc_ci}", source)
        _check(auroc is None or auroc_ci[0] is None or auroc_ci[0] <= auroc <= auroc_ci[1], "heldout_auroc",
               f"inside its own interval heldout_auroc_ci {auroc_ci}; got {auroc}", source)
        _check(auroc is not None or auroc_ci[0] is None, "heldout_auroc",
               f"a number where heldout_auroc_ci gives an interval ({auroc_ci}); got null", source)
        counts = data.get("heldout_counts")
        if version >= 6:
            _check_counts(data, source)
            references = data["references"]
            problem = references_problem(references) if isinstance(references, dict) and "score" in references else \
                "they must hold the score's"
            _check(problem is None, "references", f"per-class quantiles of the monitored features, the score's among "
                   f"them ({problem})", source)
            _check_reference_rows(counts, references, source)
        systems = data.get("answering_systems")
        _check(systems is None or (isinstance(systems, list) and 0 < len(systems) <= MAX_ANSWERING_SYSTEMS
                                   and all(isinstance(v, str) and v for v in systems)), "answering_systems",
               f"null or a list of 1 to {MAX_ANSWERING_SYSTEMS} non-empty strings", source)
        calibrator = read_calibrator(data["calibrator"], source=source, hint=_HINT)
        nan = math.nan
        return cls(
            model=data["model"], model_precision=precision, model_backend=backend, context_strategy=strategy,
            score_column=data["score_column"],
            calibrator=calibrator.to_dict(), threshold=float(data["threshold"]),
            threshold_method=data["threshold_method"],
            precision=nan if data["precision"] is None else float(data["precision"]),
            recall=nan if data["recall"] is None else float(data["recall"]),
            flag_rate=nan if data["flag_rate"] is None else float(data["flag_rate"]),
            min_auroc=None if data["min_auroc"] is None else float(data["min_auroc"]),
            heldout_auroc=nan if auroc is None else float(auroc),
            heldout_auroc_ci=tuple(nan if v is None else float(v) for v in auroc_ci),
            created=data["created"], heldout_counts=None if counts is None else dict(counts),
            references=data.get("references"),
            answering_systems=None if systems is None else tuple(systems),
        )


def _check_counts(data: dict, source: str) -> None:
    """The held-out counts are whole numbers, and the recorded rates are theirs."""
    counts = data["heldout_counts"]
    if counts is None:
        return
    _check(isinstance(counts, dict) and set(counts) == set(COUNT_NAMES)
           and all(type(v) is int and v >= 0 for v in counts.values()), "heldout_counts",
           f"null or an object of whole numbers >= 0 named exactly {', '.join(COUNT_NAMES)}", source)
    tp, fp, fn, tn = (counts[name] for name in COUNT_NAMES)
    implied = {"precision": (tp, tp + fp), "recall": (tp, tp + fn), "flag_rate": (tp + fp, tp + fp + fn + tn)}
    for name, (num, den) in implied.items():
        value, rate = data[name], num / den if den else None
        agree = (value is None and rate is None) or (value is not None and rate is not None
                                                     and abs(value - rate) <= _RATE_TOLERANCE)
        _check(agree, name, f"the rate its held-out counts give ({num} / {den}); got {value}", source)


def _check_reference_rows(counts: dict | None, references: dict, source: str) -> None:
    """The references were taken on the held-out rows the counts describe: the score's per class on all of them,
    another feature's on no more (a row may lack it)."""
    if counts is None:
        return
    totals = {"grounded": counts["tn"] + counts["fp"], "hallucinated": counts["tp"] + counts["fn"]}
    for feature, classes in references.items():
        for cls, total in totals.items():
            n = classes[cls]["n"]
            _check(n == total if feature == "score" else n <= total, "references",
                   f"taken on the held-out rows heldout_counts describes ({total} {cls}); {feature} has {n} {cls}",
                   source)


def _check(ok: bool, name: str, what: str, source: str) -> None:
    if not ok:
        raise SGIInputError(f"policy field '{name}' must be {what}", source=source, hint=_HINT)


def policy_to_json(policy: Policy) -> str:
    """The policy as indented JSON (NaN written as null)."""
    return json.dumps(policy.to_dict(), indent=2, allow_nan=False)


def policy_from_json(text: str | bytes, *, source: str = "<policy>") -> Policy:
    """Read a policy written by :func:`policy_to_json`; refuses anything else with :class:`SGIInputError`."""
    return Policy.from_dict(read_json_object(text, source=source, what="the policy", hint=_HINT), source=source)


def load_policy(path) -> Policy:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise SGIInputError(f"cannot read the policy: {err}", source=str(path)) from None
    return policy_from_json(raw, source=str(path))
