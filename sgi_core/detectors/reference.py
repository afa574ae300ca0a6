"""Reference-set displacement detectors, scored out of fold.

Each row is scored against the grounded rows of a reference set (its nearest reference questions and
their displacements). The ``"crossfit"`` protocol never lets a row, or its question, into its own
reference set; the ``"leaky"`` protocol does, and exists only to be shown beside the honest number
(:func:`reference_scores` gives the formulas).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.detectors.columns import REFERENCE_DETECTORS
from sgi_core.errors import SGIInputError
from sgi_core.geometry import l2_normalize, pairwise_angle, triple_angles
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.checks import as_labels, check_choice, check_int
from sgi_core.stats.folds import crossfit_folds

PROTOCOLS = ("crossfit", "leaky")
#: Principal directions of the neighbours' displacements that span the tangent space.
DEFAULT_N_DIRECTIONS = 3
#: Scored rows per block: bounds the (rows, k, width) neighbour arrays to tens of MB.
_BLOCK_ROWS = 1024
#: Gram eigenvalues below this share of the largest (squared singular values) span no direction.
_RANK_TOL = 1e-12
_WHY_UNDEFINED = {
    "displacement_consistency": "the response equals the question or the neighbours' displacements cancel",
    "expected_response_deviation": "the question and the neighbours' mean displacement cancel",
    "displacement_magnitude": "the neighbours' |d| have no spread",
    "tangent_space_residual": "the response equals the question",
    "lsgi": "the neighbours' median SGI is 0",
}


@dataclass(frozen=True)
class ReferenceScores(JsonResult):
    """Out-of-fold reference-set detector scores, one per row.

    Attributes
    ----------
    scores : dict of str to tuple of float
        Detector name (:data:`REFERENCE_DETECTORS`) -> score per row, high =
        grounded; NaN where the row could not be scored.
    fold : tuple of int
        Fold of each row under ``"crossfit"``; -1 for every row under ``"leaky"``,
        which uses no folds.
    protocol : {"crossfit", "leaky"}
    n_neighbors, n_directions, n_folds, seed : int
        The settings used.
    """

    scores: dict[str, tuple[float, ...]]
    fold: tuple[int, ...]
    protocol: str
    n_neighbors: int
    n_directions: int
    n_folds: int
    seed: int

    def frame(self) -> pd.DataFrame:
        """The scores as columns named after the detectors, plus ``fold``."""
        return pd.DataFrame({**{name: np.asarray(v, dtype=np.float64) for name, v in self.scores.items()},
                             "fold": np.asarray(self.fold, dtype=np.int64)})


def reference_sets(fold, y_true, *, protocol: str = "crossfit", usable=None):
    """Yield the scored rows and their reference rows, one pair per fold.

    Under ``"crossfit"`` fold ``f``'s rows (labelled or not) are scored against the
    grounded rows of every other fold. Under ``"leaky"`` all rows are scored against
    all grounded rows, themselves included.

    Parameters
    ----------
    fold : array_like of int, shape (n,)
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled; only 1 enters a reference.
    protocol : {"crossfit", "leaky"}
    usable : array_like of bool, optional
        Rows that can be scored or used as reference (default all).

    Yields
    ------
    scored, reference : ndarray of int64
        Row positions.

    Examples
    --------
    >>> [(s.tolist(), r.tolist()) for s, r in reference_sets([0, 0, 1, 1], [1, 0, 1, 0])]
    [([0, 1], [2]), ([2, 3], [0])]
    """
    check_choice(protocol, "protocol", "reference_sets", PROTOCOLS)
    fold = np.asarray(fold, dtype=np.int64).ravel()
    labels = as_labels(y_true)
    usable = np.ones(len(labels), dtype=bool) if usable is None else np.asarray(usable, dtype=bool)
    grounded = usable & (labels == 1.0)
    if protocol == "leaky":
        yield np.flatnonzero(usable), np.flatnonzero(grounded)
        return
    for f in np.unique(fold):
        yield np.flatnonzero(usable & (fold == f)), np.flatnonzero(grounded & (fold != f))


def _embeddings(q_emb, c_emb, r_emb) -> tuple[np.ndarray, ...]:
    """Float64 arrays of one shape, and the rows with finite, non-zero q, c and r."""
    arrays = [np.asarray(x, dtype=np.float64) for x in (q_emb, c_emb, r_emb)]
    for name, arr in zip(("q_emb", "c_emb", "r_emb"), arrays):
        if arr.ndim != 2 or arr.shape != arrays[0].shape:
            raise SGIInputError(f"'{name}' must be an (n, d) array shaped like 'q_emb' {arrays[0].shape}; "
                                f"got {arr.shape}")
    usable = np.ones(len(arrays[0]), dtype=bool)
    for arr in arrays:
        usable &= np.isfinite(arr).all(axis=1) & (np.abs(arr).sum(axis=1) > 0)
    return (*arrays, usable)


def _nearest(query: np.ndarray, reference_unit: np.ndarray, reference: np.ndarray, k: int) -> np.ndarray:
    """Row positions of the ``k`` reference questions of highest cosine to each query row.

    Unit vectors in float32: choosing neighbours needs no more, and it halves the
    cost of the (query x reference) similarity matrix and of its partition.
    """
    similarity = query @ reference_unit.T
    return reference[np.argpartition(similarity, -k, axis=1)[:, -k:]]


def _norm(x: np.ndarray) -> np.ndarray:
    return np.linalg.norm(x, axis=-1)


def _score_block(d, q_hat, r_hat, sgi, rows, neighbours, n_directions) -> dict[str, np.ndarray]:
    """All five detectors for ``rows`` given their neighbours (shape (b, k))."""
    d_i, d_nb = d[rows], d[neighbours]
    mean_nb = d_nb.mean(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        consistency = (d_i * mean_nb).sum(axis=1) / (_norm(d_i) * _norm(mean_nb))

        expected = q_hat[rows] + mean_nb
        deviation = np.full(len(rows), np.nan)
        ok = _norm(expected) > 0
        deviation[ok] = -pairwise_angle(r_hat[rows][ok], expected[ok])

        mag_nb = _norm(d_nb)
        spread = mag_nb.std(axis=1, ddof=1)
        magnitude = np.where(spread > 0, (_norm(d_i) - mag_nb.mean(axis=1)) / spread, np.nan)

        # The right singular vectors of d_nb are v_j = d_nb^T u_j / sqrt(l_j), with (l_j, u_j)
        # the eigenpairs of the k x k Gram matrix d_nb d_nb^T, so (v_j . d)^2 = (u_j . d_nb d)^2 / l_j:
        # a batch of small eigenproblems instead of SVDs of (k, width) matrices.
        eigval, eigvec = np.linalg.eigh(d_nb @ d_nb.transpose(0, 2, 1))
        top_val, top_vec = eigval[:, ::-1][:, :n_directions], eigvec[:, :, ::-1][:, :, :n_directions]
        spans = top_val > _RANK_TOL * top_val[:, :1]
        along = np.einsum("bkj,bk->bj", top_vec, np.einsum("bkw,bw->bk", d_nb, d_i))
        inside = np.where(spans, along**2 / np.where(spans, top_val, 1.0), 0.0).sum(axis=1) / _norm(d_i) ** 2
        residual = -np.clip(1.0 - inside, 0.0, 1.0)

        lsgi = sgi[rows] / np.median(sgi[neighbours], axis=1)
    return {
        "displacement_consistency": consistency,
        "expected_response_deviation": deviation,
        "displacement_magnitude": magnitude,
        "tangent_space_residual": residual,
        "lsgi": np.where(np.isfinite(lsgi), lsgi, np.nan),
    }


def reference_scores(q_emb, c_emb, r_emb, y_true, groups=None, *, fold=None, protocol: str = "crossfit",
                     n_neighbors: int = 10, n_directions: int | None = None, n_folds: int = 5,
                     seed: int = 0) -> ReferenceScores:
    """Score every row with the five reference-set detectors, out of fold.

    With ``d = r_hat - q_hat``, ``N`` the ``n_neighbors`` reference rows whose
    questions have the highest cosine to the row's question, and
    ``m = mean_{j in N} d_j`` (all high = grounded):

    - ``displacement_consistency = d . m / (|d| |m|)``: the response moves from its
      question the way grounded responses to similar questions move.
    - ``expected_response_deviation = -theta(r_hat, normalize(q_hat + m))``: minus
      the angle between the response and where the neighbours predict it. The sign
      is the reference definition's, not fitted to labels. When the neighbours'
      displacements point many ways (short grounded answers each naming a different
      entity), ``m`` is short, the predicted point sits near the question, and the
      score then favours responses that stay near their question: on such data it
      ranks hallucinated answers higher (AUROC below 0.5).
    - ``displacement_magnitude = (|d| - mean_N |d_j|) / sd_N |d_j|`` (ddof=1), not
      negated: hallucinated answers stay near their question ("semantic laziness";
      valid answers have the larger ``theta(r, q)``, paper Table 5) and so have a
      shorter displacement than the grounded neighbours, a negative z.
    - ``tangent_space_residual = -|d - P P^T d|^2 / |d|^2``, in ``[-1, 0]``: minus
      the share of ``|d|^2`` outside the span ``P`` of the top ``n_directions``
      right singular vectors of the neighbours' displacements. They are not
      centred: the span is taken through the question point, so the mean
      displacement itself lies in it (centring would remove the most typical
      direction). Three directions of ten neighbours keep a low-dimensional
      tangent space in a 384+-dimensional embedding space.
    - ``lsgi = SGI / median_N SGI_j`` with ``SGI = theta(r, q) / (theta(r, c) + 1e-8)``.

    Parameters
    ----------
    q_emb, c_emb, r_emb : array_like of shape (n, d)
        Question, context and response embeddings. Rows with a non-finite or zero
        vector are not scored (NaN) and never enter a reference set.
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled. Only grounded rows enter
        references; unlabelled rows are still scored out of fold.
    groups : array_like of shape (n,)
        Question group of each row (:func:`~sgi_core.detectors.folds.question_groups`);
        required for ``"crossfit"`` unless ``fold`` is given.
    fold : array_like of int, shape (n,), optional
        The folds already dealt (:func:`~sgi_core.detectors.folds.crossfit_folds`), so
        that every cross-fitted score of a table shares them; ``groups``, ``n_folds``
        and ``seed`` then deal none.
    protocol : {"crossfit", "leaky"}, default "crossfit"
        ``"leaky"`` puts every grounded row, the scored one included, in the
        reference set: for showing the leakage only, never for a reported score.
    n_neighbors : int, default 10
        ``k``, at least 2 (the magnitude z-score needs a spread).
    n_directions : int, optional
        Principal directions of the tangent space, at most ``n_neighbors``; by
        default :data:`DEFAULT_N_DIRECTIONS` (3), or ``n_neighbors`` if smaller.
    n_folds, seed : int
        Folds of :func:`~sgi_core.detectors.folds.crossfit_folds`.

    Returns
    -------
    ReferenceScores
        A row whose reference set has fewer than ``n_neighbors`` rows, or where a
        detector is undefined, gets NaN with an :class:`UndefinedStatisticWarning`.

    Raises
    ------
    SGIInputError
        Arrays of different shapes, bad options, no ``groups`` for cross-fitting.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, c, r = rng.normal(size=(3, 40, 8))
    >>> res = reference_scores(q, c, r, np.tile([1.0, 0.0], 20), np.repeat(np.arange(20), 2), n_neighbors=3)
    >>> res.frame().shape, res.protocol
    ((40, 6), 'crossfit')
    """
    func = "reference_scores"
    check_choice(protocol, "protocol", func, PROTOCOLS)
    k = check_int(n_neighbors, "n_neighbors", func, minimum=2)
    if n_directions is None:
        n_directions = min(DEFAULT_N_DIRECTIONS, k)
    n_directions = check_int(n_directions, "n_directions", func, minimum=1)
    if n_directions > k:
        raise SGIInputError(f"The 'n_directions' parameter of {func} must be <= n_neighbors ({k}). "
                            f"Got {n_directions} instead.")
    q_raw, c_raw, r_raw, usable = _embeddings(q_emb, c_emb, r_emb)
    n = len(q_raw)
    labels = as_labels(y_true)
    if len(labels) != n:
        raise SGIInputError(f"'y_true' has {len(labels)} values but the embeddings have {n} rows", column="y_true")
    if protocol == "crossfit" and fold is not None:
        fold = np.asarray(fold, dtype=np.int64).ravel()
        if len(fold) != n:
            raise SGIInputError(f"'fold' has {len(fold)} values but the embeddings have {n} rows")
        n_folds = len(np.unique(fold))
    elif protocol == "crossfit":
        if groups is None:
            raise SGIInputError("cross-fitting needs the question group of each row",
                                hint="Pass groups=sgi_core.detectors.question_groups(frame)")
        if len(np.asarray(groups).ravel()) != n:
            raise SGIInputError(f"'groups' has {len(np.asarray(groups).ravel())} values but the embeddings "
                                f"have {n} rows")
        fold = crossfit_folds(groups, y_true=labels, n_folds=n_folds, seed=seed)
    else:
        fold = np.full(n, -1, dtype=np.int64)

    q_hat, c_hat, r_hat = (np.zeros_like(q_raw) for _ in range(3))
    for hat, raw, name in ((q_hat, q_raw, "q_emb"), (c_hat, c_raw, "c_emb"), (r_hat, r_raw, "r_emb")):
        hat[usable] = l2_normalize(raw[usable], name=name)
    sgi = np.full(n, np.nan)
    sgi[usable] = triple_angles(q_hat[usable], c_hat[usable], r_hat[usable]).sgi
    d = r_hat - q_hat
    q_unit = q_hat.astype(np.float32)
    question_id = np.unique(q_unit, axis=0, return_inverse=True)[1].ravel()

    scores = {name: np.full(n, np.nan) for name in REFERENCE_DETECTORS}
    reached = np.zeros(n, dtype=bool)
    for scored, reference in reference_sets(fold, labels, protocol=protocol, usable=usable):
        if len(reference) < k:
            if len(scored):
                warn_undefined(f"{len(scored)} rows have only {len(reference)} grounded reference rows "
                               f"(fewer than n_neighbors={k}); they are not scored")
            continue
        reached[scored] = True
        reference_unit = q_unit[reference]
        # Rows that share a question share its neighbours: search once per distinct question.
        scored = scored[np.argsort(question_id[scored], kind="stable")]
        for start in range(0, len(scored), _BLOCK_ROWS):
            rows = scored[start : start + _BLOCK_ROWS]
            _, first, inverse = np.unique(question_id[rows], return_index=True, return_inverse=True)
            neighbours = _nearest(q_unit[rows[first]], reference_unit, reference, k)[inverse]
            block = _score_block(d, q_hat, r_hat, sgi, rows, neighbours, n_directions)
            for name, values in block.items():
                scores[name][rows] = values
    for name, values in scores.items():
        undefined = int((reached & np.isnan(values)).sum())
        if undefined:
            warn_undefined(f"{name} is undefined for {undefined} rows ({_WHY_UNDEFINED[name]}); they are NaN")
    return ReferenceScores(
        scores={name: tuple(values.tolist()) for name, values in scores.items()},
        fold=tuple(fold.tolist()),
        protocol=protocol,
        n_neighbors=k,
        n_directions=n_directions,
        n_folds=int(n_folds) if protocol == "crossfit" else 0,
        seed=int(seed),
    )
