"""Angles between embeddings and the Semantic Grounding Index.

All angles are in radians, in ``[0, pi]``, computed in float64 with the
numerically exact form ``theta(a, b) = 2 * atan2(|a_hat - b_hat|, |a_hat + b_hat|)``
on L2-normalised rows. It equals ``arccos(clip(a_hat . b_hat, -1, 1))`` in exact
arithmetic but stays accurate near 0 and pi, where arccos of a rounded dot product
loses half its digits (two identical float32 vectors give ~6e-4 with arccos).

Sign convention: **high SGI = grounded**. A grounded response moves away from the
question (large ``theta_rq``) toward the context (small ``theta_rc``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sgi_core.errors import SGIInputError

#: Added to ``theta_rc`` in the denominator of SGI, as in the paper.
SGI_EPSILON = 1e-8

#: Two embeddings whose angle is below this many radians are treated as identical.
IDENTICAL_ANGLE = 1e-6


def _as_2d(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise SGIInputError(f"'{name}' must be a vector or an (n, d) array; got {arr.ndim} dimensions")
    if not np.all(np.isfinite(arr)):
        rows = np.flatnonzero(~np.all(np.isfinite(arr), axis=1)) + 1
        raise SGIInputError(f"'{name}' holds NaN or infinite values", rows=rows.tolist())
    return arr


def l2_normalize(x, *, name: str = "x") -> np.ndarray:
    """Return the rows of ``x`` scaled to unit L2 norm, in float64.

    Parameters
    ----------
    x : array_like of shape (d,) or (n, d)
    name : str
        Used in the error message.

    Returns
    -------
    ndarray of shape (n, d)

    Raises
    ------
    SGIInputError
        If a row has zero norm (its direction, and so every angle, is undefined).

    Examples
    --------
    >>> l2_normalize([3.0, 4.0])
    array([[0.6, 0.8]])
    """
    arr = _as_2d(x, name)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    zero = norms[:, 0] == 0
    if zero.any():
        raise SGIInputError(
            f"'{name}' has zero vectors, whose angle to anything is undefined",
            rows=(np.flatnonzero(zero) + 1).tolist(),
            hint="Check that the encoder returned real embeddings for these texts",
        )
    return arr / norms


def pairwise_angle(a, b) -> np.ndarray:
    """Row-wise angle ``theta(a[i], b[i])`` in radians.

    ``theta(a, b) = 2 * atan2(|a_hat - b_hat|, |a_hat + b_hat|)``, which equals
    ``arccos(clip(a_hat . b_hat, -1, 1))`` and is exact at 0 and pi.

    Parameters
    ----------
    a, b : array_like of shape (d,) or (n, d)
        Embeddings; need not be normalised. One vector broadcasts against a batch.

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> float(pairwise_angle([1.0, 0.0], [0.0, 2.0])[0])  # doctest: +ELLIPSIS
    1.5707963...
    """
    return _unit_angle(l2_normalize(a, name="a"), l2_normalize(b, name="b"))


def _unit_angle(a_hat: np.ndarray, b_hat: np.ndarray) -> np.ndarray:
    """``2 * atan2(|a_hat - b_hat|, |a_hat + b_hat|)`` row by row, for unit rows."""
    if a_hat.shape[1] != b_hat.shape[1]:
        raise SGIInputError(f"embedding widths differ: {a_hat.shape[1]} and {b_hat.shape[1]}")
    if a_hat.shape[0] != b_hat.shape[0] and 1 not in (a_hat.shape[0], b_hat.shape[0]):
        raise SGIInputError(f"row counts differ: {a_hat.shape[0]} and {b_hat.shape[0]}")
    diff = np.linalg.norm(a_hat - b_hat, axis=1)
    summ = np.linalg.norm(a_hat + b_hat, axis=1)
    return 2.0 * np.arctan2(diff, summ)


def sgi_from_angles(theta_rq, theta_rc) -> np.ndarray:
    """Semantic Grounding Index from the two response angles.

    ``SGI = theta(r, q) / (theta(r, c) + 1e-8)``. High SGI = grounded.

    Examples
    --------
    >>> float(sgi_from_angles(1.0, 0.5)[0])  # doctest: +ELLIPSIS
    1.99999996...
    """
    theta_rq = np.atleast_1d(np.asarray(theta_rq, dtype=np.float64))
    theta_rc = np.atleast_1d(np.asarray(theta_rc, dtype=np.float64))
    return theta_rq / (theta_rc + SGI_EPSILON)


@dataclass(frozen=True)
class TripleAngles:
    """Angles, SGI and degeneracy flags for a batch of (q, c, r) triples.

    Attributes
    ----------
    theta_qc, theta_rq, theta_rc : ndarray of shape (n,)
        Angles in radians.
    sgi : ndarray of shape (n,)
        ``theta_rq / (theta_rc + 1e-8)``.
    response_is_context, response_is_question, context_is_question : ndarray of bool
        Pairs whose embeddings coincide (angle below ``IDENTICAL_ANGLE``). With
        ``response_is_context`` SGI is ~1e8 times ``theta_rq``; with
        ``context_is_question`` SGI is ~1 whatever the response.
    """

    theta_qc: np.ndarray
    theta_rq: np.ndarray
    theta_rc: np.ndarray
    sgi: np.ndarray
    response_is_context: np.ndarray
    response_is_question: np.ndarray
    context_is_question: np.ndarray


def triple_angles(q_emb, c_emb, r_emb) -> TripleAngles:
    """Compute ``theta_qc``, ``theta_rq``, ``theta_rc`` and SGI row by row.

    Parameters
    ----------
    q_emb, c_emb, r_emb : array_like of shape (n, d)
        Question, context and response embeddings (row ``i`` is one triple).

    Returns
    -------
    TripleAngles

    Examples
    --------
    >>> s = 2 ** -0.5
    >>> out = triple_angles([[1.0, 0.0]], [[0.0, 1.0]], [[s, s]])
    >>> round(float(out.sgi[0]), 6)
    1.0
    """
    # Each matrix is converted to float64 and normalised once, not once per angle.
    q_hat = l2_normalize(q_emb, name="q_emb")
    c_hat = l2_normalize(c_emb, name="c_emb")
    r_hat = l2_normalize(r_emb, name="r_emb")
    theta_qc = _unit_angle(q_hat, c_hat)
    theta_rq = _unit_angle(r_hat, q_hat)
    theta_rc = _unit_angle(r_hat, c_hat)
    return TripleAngles(
        theta_qc=theta_qc,
        theta_rq=theta_rq,
        theta_rc=theta_rc,
        sgi=sgi_from_angles(theta_rq, theta_rc),
        response_is_context=theta_rc < IDENTICAL_ANGLE,
        response_is_question=theta_rq < IDENTICAL_ANGLE,
        context_is_question=theta_qc < IDENTICAL_ANGLE,
    )


def sgi_bounds(theta_qc, theta_rc) -> tuple[np.ndarray, np.ndarray]:
    """Range SGI can take given ``theta_qc`` and ``theta_rc``.

    The spherical triangle inequality gives
    ``|theta_qc - theta_rc| <= theta_rq <= min(theta_qc + theta_rc, 2*pi - theta_qc - theta_rc)``
    (the last because angles live in ``[0, pi]`` on the sphere), hence
    ``lower = |theta_qc - theta_rc| / (theta_rc + 1e-8)`` and
    ``upper = min(theta_qc + theta_rc, 2*pi - theta_qc - theta_rc) / (theta_rc + 1e-8)``.
    As ``theta_qc -> 0`` both bounds tend to 1: SGI is squeezed toward 1 when the
    context is close to the question.

    Examples
    --------
    >>> lo, hi = sgi_bounds(0.5, 1.0)
    >>> round(float(lo[0]), 6), round(float(hi[0]), 6)
    (0.5, 1.5)
    """
    theta_qc = np.atleast_1d(np.asarray(theta_qc, dtype=np.float64))
    theta_rc = np.atleast_1d(np.asarray(theta_rc, dtype=np.float64))
    lower_rq = np.abs(theta_qc - theta_rc)
    upper_rq = np.minimum(theta_qc + theta_rc, 2.0 * np.pi - theta_qc - theta_rc)
    denom = theta_rc + SGI_EPSILON
    return lower_rq / denom, upper_rq / denom


#: Triangle-inequality violations up to this many radians are taken as rounding and clipped.
TRIANGLE_TOLERANCE = 1e-6


def canonical_triangle(theta_qc, theta_rq, theta_rc, *, normalize: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Draw each (q, c, r) triple exactly in the plane, with its three angles as side lengths.

    q is at the origin, c at ``(theta_qc, 0)`` and r in the upper half-plane at
    distance ``theta_rq`` from q and ``theta_rc`` from c:

    ``x_r = (theta_rq**2 - theta_rc**2 + theta_qc**2) / (2 * theta_qc)``,
    ``y_r = sqrt(theta_rq**2 - x_r**2)``.

    The triangle exists because the angle between unit vectors is a metric, so the
    three angles obey the triangle inequality. Rounding can break it by a few ulps; a
    violation up to :data:`TRIANGLE_TOLERANCE` radians is clipped (``y_r = 0``, r on the
    x-axis), a larger one is an input error. A grounded response (SGI > 1, closer to c
    than to q) lies right of the bisector ``x = theta_qc / 2``.

    Parameters
    ----------
    theta_qc, theta_rq, theta_rc : array_like of shape (n,)
        Angles in radians; NaN rows (not scored) give NaN coordinates.
    normalize : bool, default False
        Divide every coordinate by ``theta_qc`` so that c is at ``(1, 0)`` for every
        triple. SGI is a ratio of two sides, so it is unchanged and one set of
        :func:`sgi_isolines` (``theta_qc=1``) serves all triples.

    Returns
    -------
    c_xy, r_xy : ndarray of shape (n, 2)
        When ``theta_qc`` is 0 (context = question) c coincides with q and r is drawn
        at ``(0, theta_rq)``; with ``normalize`` those rows are NaN.

    Raises
    ------
    SGIInputError
        If the three angles of a row break the triangle inequality by more than
        :data:`TRIANGLE_TOLERANCE`.

    Examples
    --------
    >>> c_xy, r_xy = canonical_triangle([1.0], [1.0], [1.0])
    >>> c_xy.tolist(), r_xy.round(6).tolist()
    ([[1.0, 0.0]], [[0.5, 0.866025]])
    """
    qc, rq, rc = (np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in (theta_qc, theta_rq, theta_rc))
    if not qc.shape == rq.shape == rc.shape or qc.ndim != 1:
        raise SGIInputError(f"theta_qc, theta_rq and theta_rc must be 1-d and of one length; got shapes "
                            f"{qc.shape}, {rq.shape}, {rc.shape}")
    with np.errstate(invalid="ignore"):
        violation = np.maximum.reduce([rq - qc - rc, rc - qc - rq, qc - rq - rc])
    broken = violation > TRIANGLE_TOLERANCE
    if broken.any():
        raise SGIInputError(
            "the angles break the triangle inequality, so they are not the angles of one (q, c, r) triple",
            rows=(np.flatnonzero(broken) + 1).tolist(),
            hint="Pass theta_qc, theta_rq and theta_rc computed from the same embeddings",
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.where(qc == 0, 0.0, (rq**2 - rc**2 + qc**2) / (2.0 * qc))
        y = np.sqrt(np.clip(rq**2 - x**2, 0.0, None))
    c_xy = np.column_stack([qc, np.zeros_like(qc)])
    r_xy = np.column_stack([x, y])
    if normalize:
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(qc > 0, 1.0 / qc, np.nan)[:, None]
        return c_xy * scale, r_xy * scale
    return c_xy, r_xy


def sgi_isolines(levels, *, theta_qc: float = 1.0, n_points: int = 200, y_max: float = np.pi) -> dict:
    """Points of the SGI level sets in the canonical triangle's plane (upper half).

    With q at the origin and c at ``(d, 0)``, ``d = theta_qc``, the points r with
    ``|r - q| / |r - c| = s`` (SGI = s, ignoring its 1e-8) form an Apollonius circle:
    centre ``(s**2 d / (s**2 - 1), 0)``, radius ``s d / |s**2 - 1|``, around c when
    ``s > 1`` (grounded side) and around q when ``s < 1``. For ``s = 1`` the locus is
    the bisector ``x = d / 2``, drawn from ``y = 0`` to ``y = y_max``.

    Parameters
    ----------
    levels : iterable of float
        SGI values, each > 0.
    theta_qc : float, default 1.0
        1.0 matches :func:`canonical_triangle` with ``normalize=True``.
    n_points : int, default 200
    y_max : float, default pi
        Height of the ``s = 1`` line.

    Returns
    -------
    dict of float -> ndarray of shape (n_points, 2)
        The upper half of each circle (or the line segment).

    Examples
    --------
    >>> pts = sgi_isolines([2.0], n_points=3)[2.0]
    >>> pts.round(6).tolist()
    [[2.0, 0.0], [1.333333, 0.666667], [0.666667, 0.0]]
    """
    d = float(theta_qc)
    if not (np.isfinite(d) and d > 0):
        raise SGIInputError(f"The 'theta_qc' parameter of sgi_isolines must be a number > 0. Got {theta_qc!r} instead.")
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) or n_points < 2:
        raise SGIInputError(f"The 'n_points' parameter of sgi_isolines must be an int >= 2. Got {n_points!r} instead.")
    out = {}
    for s in levels:
        s = float(s)
        if not (np.isfinite(s) and s > 0):
            raise SGIInputError(f"SGI levels must be numbers > 0. Got {s!r}.")
        if s == 1.0:
            out[s] = np.column_stack([np.full(n_points, d / 2.0), np.linspace(0.0, y_max, n_points)])
            continue
        centre, radius = s * s * d / (s * s - 1.0), s * d / abs(s * s - 1.0)
        phi = np.linspace(0.0, np.pi, n_points)
        out[s] = np.column_stack([centre + radius * np.cos(phi), radius * np.sin(phi)])
    return out
