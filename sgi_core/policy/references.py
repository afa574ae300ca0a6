"""Per-class reference distributions a policy keeps of its held-out rows, and their mixture.

A policy records, for each monitored feature (:data:`FEATURES`: the policy's score, the
response's and the context's length in characters, theta(q,c)), the quantiles of its
held-out rows **per class** (grounded, hallucinated) at :data:`N_QUANTILES` evenly spaced
probabilities ``p_k = k / (K - 1)``, with the rows behind each. From them:

* the class CDF ``F_c(x)`` is the piecewise-linear interpolation of ``p_k`` against the
  quantiles, 0 below the smallest and 1 above the largest; a value repeated over several
  ``p_k`` (an atom of a discrete feature) is a jump from the smallest of them to the largest,
  so ``F_c`` is right-continuous there (:func:`class_cdf`);
* under prior shift alone (only the hallucination rate ``r`` moves) a new run's feature
  follows the mixture ``F(x) = (1 - r) F_grounded(x) + r F_hallucinated(x)``
  (Saerens, Latinne and Decaestecker 2002, "Adjusting the outputs of a classifier to new a
  priori probabilities", Neural Computation 14(1)).

The stored form is plain JSON (``{"score": {"grounded": {"n": 37, "quantiles": [...]},
"hallucinated": {...}}, ...}``); :func:`references_problem` says why a hand-edited one cannot
be used, so that nothing in a policy file is trusted unchecked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sgi_core.columns import ANGLE_COLUMNS
from sgi_core.errors import SGIInputError
from sgi_core.evaluation.events_per_feature import MIN_EVENTS_PER_FEATURE

#: Quantiles kept per class and feature (probabilities 0, 0.01, ..., 1).
N_QUANTILES = 101
#: Longest quantile list a policy file may carry.
MAX_QUANTILES = 1001
CLASSES = ("grounded", "hallucinated")
#: Fewest held-out rows of each class a policy's record or a class reference needs to vouch for anything: a
#: policy is a rule on one feature, and ten events per variable is the floor below which what is fitted and
#: measured on the rows is unstable (Peduzzi et al. 1996, :mod:`sgi_core.evaluation.events_per_feature`).
MIN_EVENTS_PER_CLASS = MIN_EVENTS_PER_FEATURE


@dataclass(frozen=True)
class MonitoredFeature:
    """One feature whose distribution is checked for shift.

    Attributes
    ----------
    name : str
        Key in the policy's ``references``.
    label : str
        How every face names it.
    column : str or None
        The column it is read from; None for the policy's own score column.
    length : bool
        The length of the column's text in characters, not its value.
    """

    name: str
    label: str
    column: str | None
    length: bool = False


#: The monitored features, in the order every face lists them.
FEATURES = (
    MonitoredFeature("score", "the policy's score", None),
    MonitoredFeature("response_length", "response length (characters)", "response", length=True),
    MonitoredFeature("theta_qc", "theta(q,c)", ANGLE_COLUMNS[0]),
    MonitoredFeature("context_length", "context length (characters)", "context", length=True),
)
FEATURE_NAMES = tuple(f.name for f in FEATURES)
#: Columns a run may name the model or system that wrote its answers in, first found wins.
ANSWERING_COLUMNS = ("system", "model", "generator")
#: Most distinct answering systems a policy records.
MAX_ANSWERING_SYSTEMS = 100


def feature_label(name: str) -> str:
    """The label of a monitored feature (:data:`FEATURES`)."""
    return next(f.label for f in FEATURES if f.name == name)


def feature_values(frame, scores) -> dict[str, np.ndarray]:
    """The monitored features of every row of ``frame`` (NaN where a row has none).

    Parameters
    ----------
    frame : pandas.DataFrame
        A table of triples (``question``, ``context``, ``response``), scored or not; a
        column the reader kept under an ``input_`` name (a scored file read again) is
        read there; a feature whose column is absent (theta(q,c) of a file scored by
        another detector) is left out.
    scores : array_like of shape (n,)
        The policy's score of each row.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"question": ["q"], "context": ["abc"], "response": ["hello"], "theta_qc": [0.5]})
    >>> {k: v.tolist() for k, v in feature_values(f, [1.2]).items()}
    {'score': [1.2], 'response_length': [5.0], 'theta_qc': [0.5], 'context_length': [3.0]}
    """
    import pandas as pd

    values = {}
    for feature in FEATURES:
        if feature.column is None:
            values[feature.name] = np.asarray(scores, dtype=np.float64).ravel()
            continue
        present = next((c for c in (feature.column, f"input_{feature.column}") if c in frame.columns), None)
        if present is None:
            continue
        column = frame[present]
        values[feature.name] = (column.fillna("").astype(str).str.len() if feature.length
                                else pd.to_numeric(column, errors="coerce")).to_numpy(dtype=np.float64)
    return values


def answering_systems(frame) -> tuple[str, ...] | None:
    """The distinct answering systems a run names (:data:`ANSWERING_COLUMNS`, read under an ``input_`` name too),
    sorted; None when it names none, or more than :data:`MAX_ANSWERING_SYSTEMS` (then the column is something else).

    Examples
    --------
    >>> import pandas as pd
    >>> answering_systems(pd.DataFrame({"response": ["a", "b", "c"], "model": ["gpt-x", None, "llama-y"]}))
    ('gpt-x', 'llama-y')
    >>> answering_systems(pd.DataFrame({"response": ["a"]})) is None
    True
    """
    names = (name for column in ANSWERING_COLUMNS for name in (column, f"input_{column}"))
    present = next((name for name in names if name in frame.columns), None)
    if present is None:
        return None
    systems = tuple(sorted({str(v).strip() for v in frame[present].dropna()} - {""}))
    return systems if 0 < len(systems) <= MAX_ANSWERING_SYSTEMS else None


def class_references(y_true, features: dict) -> dict:
    """Per-class quantiles of each feature, as a policy stores them.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated; NaN rows are left out.
    features : dict of str to array_like of shape (n,)
        Feature name (:data:`FEATURE_NAMES`) to its values; NaN values are left out of that feature.

    Returns
    -------
    dict
        ``{feature: {"grounded": {"n": int, "quantiles": list}, "hallucinated": {...}}}`` for each feature
        with at least one finite value in both classes.

    Examples
    --------
    >>> ref = class_references([1, 1, 0, 0], {"score": [2.0, 4.0, 0.0, 1.0]})
    >>> grounded, hallucinated = ref["score"]["grounded"], ref["score"]["hallucinated"]
    >>> grounded["n"], grounded["quantiles"][50], hallucinated["quantiles"][-1]
    (2, 3.0, 1.0)
    """
    labels = np.asarray(y_true, dtype=np.float64).ravel()
    probabilities = np.linspace(0.0, 1.0, N_QUANTILES)
    references = {}
    for name, values in features.items():
        if name not in FEATURE_NAMES:
            raise SGIInputError(f"'{name}' is not a monitored feature; use one of {', '.join(FEATURE_NAMES)}")
        values = np.asarray(values, dtype=np.float64).ravel()
        if len(values) != len(labels):
            raise SGIInputError(f"feature '{name}' has {len(values)} values but the labels have {len(labels)}")
        per_class = {}
        for cls, code in zip(CLASSES, (1.0, 0.0)):
            kept = values[(labels == code) & np.isfinite(values)]
            if kept.size:
                per_class[cls] = {"n": int(kept.size), "quantiles": np.quantile(kept, probabilities).tolist()}
        if len(per_class) == 2:
            references[name] = per_class
    return references


def _class_problem(entry) -> str | None:
    if not isinstance(entry, dict) or set(entry) != {"n", "quantiles"}:
        return "must be an object with exactly the fields n, quantiles"
    n, quantiles = entry["n"], entry["quantiles"]
    if type(n) is not int or n < 1:
        return "n must be a whole number of rows, at least 1"
    if not (isinstance(quantiles, list) and 2 <= len(quantiles) <= MAX_QUANTILES):
        return f"quantiles must be a list of 2 to {MAX_QUANTILES} numbers"
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in quantiles):
        return "quantiles must be finite numbers"
    if np.any(np.diff(quantiles) < 0):
        return "quantiles must never decrease"
    return None


def references_problem(data) -> str | None:
    """Why ``data`` is not a usable ``references`` field of a policy, or None.

    Examples
    --------
    >>> references_problem({"score": {"grounded": {"n": 3, "quantiles": [2, 1]},
    ...                               "hallucinated": {"n": 3, "quantiles": [0, 1]}}})
    'score, grounded: quantiles must never decrease'
    """
    if not isinstance(data, dict):
        return "it must be an object of features"
    for name, classes in data.items():
        if name not in FEATURE_NAMES:
            return f"unknown feature {name!r} (the features are {', '.join(FEATURE_NAMES)})"
        if not isinstance(classes, dict) or set(classes) != set(CLASSES):
            return f"{name} must have exactly the classes {', '.join(CLASSES)}"
        for cls in CLASSES:
            problem = _class_problem(classes[cls])
            if problem:
                return f"{name}, {cls}: {problem}"
    return None


def class_cdf(quantiles, x, *, left: bool = False) -> np.ndarray:
    """The CDF at ``x`` interpolated from quantiles at evenly spaced probabilities (see the module).

    A value repeated over several probabilities (an atom: lengths are whole numbers) is a
    jump: the CDF rises to the largest of them at the value and is the smallest just below,
    and is linear between distinct values. ``left=True`` gives the limit from the left
    ``F(x-)``, which the Kolmogorov-Smirnov statistic needs at a jump.

    Examples
    --------
    >>> class_cdf([0.0, 1.0, 2.0], [-1.0, 0.5, 1.0, 3.0]).tolist()
    [0.0, 0.25, 0.5, 1.0]
    >>> class_cdf([1.0, 1.0, 1.0, 2.0], [1.0]).tolist(), class_cdf([1.0, 1.0, 1.0, 2.0], [1.0], left=True).tolist()
    ([0.6666666666666666], [0.0])
    """
    quantiles = np.asarray(quantiles, dtype=np.float64)
    probabilities = np.linspace(0.0, 1.0, len(quantiles))
    distinct, first = np.unique(quantiles, return_index=True)
    last = len(quantiles) - 1 - np.unique(quantiles[::-1], return_index=True)[1]
    low, high = probabilities[first], probabilities[last]
    x = np.asarray(x, dtype=np.float64)
    at = np.searchsorted(distinct, x, side="right") - 1  # the largest distinct value <= x
    inside = (at >= 0) & (at < len(distinct) - 1)
    here, after = np.clip(at, 0, len(distinct) - 1), np.clip(at + 1, 0, len(distinct) - 1)
    span = np.where(inside, distinct[after] - distinct[here], 1.0)
    fraction = np.where(inside, (x - distinct[here]) / span, 0.0)
    cdf = np.where(at < 0, 0.0, np.where(inside, high[here] + (low[after] - high[here]) * fraction, 1.0))
    if left:
        cdf = np.where((at >= 0) & (x == distinct[here]), low[here], cdf)
    return cdf


def mixture_cdf(reference: dict, rate: float, x, *, left: bool = False) -> np.ndarray:
    """``(1 - rate) F_grounded(x) + rate F_hallucinated(x)`` of one feature's stored reference (``F(x-)`` with
    ``left``).

    Examples
    --------
    >>> ref = {"grounded": {"n": 5, "quantiles": [2.0, 3.0]}, "hallucinated": {"n": 5, "quantiles": [0.0, 1.0]}}
    >>> mixture_cdf(ref, 0.25, [1.0, 2.5]).tolist()
    [0.25, 0.625]
    """
    return ((1.0 - rate) * class_cdf(reference["grounded"]["quantiles"], x, left=left)
            + rate * class_cdf(reference["hallucinated"]["quantiles"], x, left=left))
