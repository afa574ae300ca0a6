"""Input checks shared by the public functions of the evaluation package.

Conventions used by every function in :mod:`sgi_core.evaluation`:

* ``y_true``: 1 = grounded / valid, 0 = hallucinated, NaN = unlabelled (excluded
  from label metrics and counted);
* ``score``: higher = more grounded (SGI as it is);
* a row whose score is NaN (not scored) is excluded from every metric and counted.

Inputs are validated once, at the public entry (as scikit-learn skips nested
validation): a public function is marked with :func:`validates_inputs`, and when it
calls another public function the inner :func:`as_labels` and :func:`as_scores`
only convert, because the outer call has already checked the same arrays.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools

import numpy as np

from sgi_core.errors import SGIInputError

_DEPTH = contextvars.ContextVar("sgi_evaluation_depth", default=0)


def validates_inputs(func):
    """Mark a public function: its checks run when a user calls it, not when another public function does."""

    @functools.wraps(func)
    def entry(*args, **kwargs):
        with inputs_checked():
            return func(*args, **kwargs)

    return entry


@contextlib.contextmanager
def inputs_checked():
    """Within this block the caller has checked its inputs: calls below it only convert them."""
    token = _DEPTH.set(_DEPTH.get() + 1)
    try:
        yield
    finally:
        _DEPTH.reset(token)


def _nested() -> bool:
    """True inside a public function called by another one (its inputs were checked outside)."""
    return _DEPTH.get() > 1


def as_labels(y_true, *, name: str = "y_true") -> np.ndarray:
    """Labels as float64 with values 1.0, 0.0 or NaN; anything else is an input error."""
    if _nested():
        return np.asarray(y_true, dtype=np.float64).ravel()
    return _checked_labels(y_true, name)


def as_scores(score, *, name: str = "score", n: int | None = None) -> np.ndarray:
    """Scores as float64; NaN means 'not scored'; infinite values are an input error."""
    if _nested():
        return np.asarray(score, dtype=np.float64).ravel()
    return _checked_scores(score, name, n)


def _checked_labels(y_true, name: str) -> np.ndarray:
    try:
        labels = np.asarray(y_true, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise SGIInputError(
            f"'{name}' must hold numbers 1 (grounded), 0 (hallucinated) or NaN (unlabelled)",
            column=name,
            hint="Read the file with sgi_core.io.triples.load_triples, which maps label words to 1/0",
        ) from None
    bad = ~(np.isnan(labels) | (labels == 0.0) | (labels == 1.0))
    if bad.any():
        raise SGIInputError(
            f"'{name}' holds values other than 1 (grounded), 0 (hallucinated) or NaN (unlabelled)",
            column=name,
            rows=(np.flatnonzero(bad) + 1).tolist(),
            hint="Map the label column to 1/0 first (sgi_core.io.triples.parse_labels does this)",
        )
    return labels


def _checked_scores(score, name: str, n: int | None) -> np.ndarray:
    try:
        values = np.asarray(score, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise SGIInputError(f"'{name}' must hold numbers", column=name) from None
    if np.isinf(values).any():
        raise SGIInputError(
            f"'{name}' holds infinite values",
            column=name,
            rows=(np.flatnonzero(np.isinf(values)) + 1).tolist(),
            hint="Replace them with NaN to leave those rows out, or with a large finite number",
        )
    if n is not None and len(values) != n:
        raise SGIInputError(f"'{name}' has {len(values)} values but the labels have {n}", column=name)
    return values


def as_probabilities(y_true, y_prob, *, func: str) -> tuple[np.ndarray, np.ndarray]:
    """Complete labels and probabilities in [0, 1] for reliability and ECE; anything else is an input error."""
    labels = as_labels(y_true)
    prob = as_scores(y_prob, name="y_prob", n=len(labels))
    if _nested():
        return labels, prob
    unlabelled = np.isnan(labels)
    if unlabelled.any():
        raise SGIInputError(f"{func} needs a label on every row", column="y_true",
                            rows=(np.flatnonzero(unlabelled) + 1).tolist(), hint="Leave unlabelled rows out first")
    outside = np.isnan(prob) | (prob < 0.0) | (prob > 1.0)
    if outside.any():
        raise SGIInputError(f"{func} needs probabilities in [0, 1]", column="y_prob",
                            rows=(np.flatnonzero(outside) + 1).tolist(),
                            hint="Map scores to probabilities with a calibrator (fit_calibrator) first")
    return labels, prob


def labelled_groups(y_true, score, *, score_name: str = "score") -> tuple[np.ndarray, np.ndarray, int]:
    """Split finite scores by label.

    Returns
    -------
    valid, halluc : ndarray
        Scores of grounded (label 1) and hallucinated (label 0) rows.
    n_excluded : int
        Rows left out because their label or their score is NaN.
    """
    labels = as_labels(y_true)
    scores = as_scores(score, name=score_name, n=len(labels))
    keep = ~np.isnan(labels) & ~np.isnan(scores)
    return scores[keep & (labels == 1.0)], scores[keep & (labels == 0.0)], int((~keep).sum())


def check_int(value, name: str, func: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise SGIInputError(f"The '{name}' parameter of {func} must be an int >= {minimum}. Got {value!r} instead.")
    return int(value)


def check_fraction(value, name: str, func: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not 0.0 < value < 1.0:
        raise SGIInputError(f"The '{name}' parameter of {func} must be a float in (0, 1). Got {value!r} instead.")
    return float(value)


def check_choice(value, name: str, func: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise SGIInputError(
            f"The '{name}' parameter of {func} must be one of {', '.join(map(repr, choices))}. Got {value!r} instead."
        )
    return value
