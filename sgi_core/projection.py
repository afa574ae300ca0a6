"""2-D projections of question, context and response embeddings, for plotting.

Questions, contexts and responses share one map of their unit vectors, so the distance between a
response and its own question or context can be seen: PCA by default, UMAP on request
(:func:`project_triples` says how each is fitted).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import scipy.sparse

from sgi_core.errors import SGIInputError
from sgi_core.geometry import l2_normalize
from sgi_core.results import JsonResult

METHODS = ("pca", "umap")

#: UMAP's spectral initialisation needs a few more points than neighbours.
UMAP_MIN_POINTS = 10

#: Most points a UMAP map is fitted on by default; larger inputs are fitted on a sample
#: of ``UMAP_FIT_POINTS // 3`` triples and the remaining points are placed by ``transform``.
UMAP_FIT_POINTS = 6_000

#: The smallest ``max_fit_points``: the points of enough triples for UMAP_MIN_POINTS.
UMAP_FIT_MIN_POINTS = 3 * -(-UMAP_MIN_POINTS // 3)

# Held while UMAP's module-level placement function is swapped for initial_placement.
_PLACEMENT_SWAP = threading.Lock()


@dataclass(frozen=True)
class TripleProjection(JsonResult):
    """2-D coordinates of each triple's question, context and response.

    Attributes
    ----------
    method : {"pca", "umap"}
    question, context, response : ndarray of shape (m, 2)
        Row ``i`` of each belongs to the same triple.
    fit_points : int
        How many of the ``3 * m`` points the map was fitted on; the others were placed
        into the fitted map by UMAP's ``transform``.
    explained_variance_ratio : tuple of float
        Share of the variance of the stacked, normalised embeddings carried by each
        of the two PCA axes; empty for UMAP, whose axes have no such meaning.
    seed : int
        UMAP's random state and the draw of the fitted triples
        (:func:`sgi_core.render.lines.projection_note` words how the map was made).
    """

    method: str
    question: np.ndarray
    context: np.ndarray
    response: np.ndarray
    fit_points: int
    explained_variance_ratio: tuple = ()
    seed: int = 0

    @classmethod
    def from_dict(cls, data: dict) -> TripleProjection:
        return cls(
            method=data["method"],
            question=np.asarray(data["question"], dtype=np.float64).reshape(-1, 2),
            context=np.asarray(data["context"], dtype=np.float64).reshape(-1, 2),
            response=np.asarray(data["response"], dtype=np.float64).reshape(-1, 2),
            fit_points=int(data["fit_points"]),
            explained_variance_ratio=tuple(data.get("explained_variance_ratio", ())),
            seed=int(data.get("seed", 0)),
        )


def sample_rows(n_rows: int, size: int, *, seed: int = 0) -> np.ndarray:
    """Sorted indices of ``min(size, n_rows)`` rows drawn without replacement.

    The same ``(n_rows, size, seed)`` always gives the same rows, so a plot does not
    reshuffle when the page is redrawn.

    Examples
    --------
    >>> sample_rows(5, 10).tolist()
    [0, 1, 2, 3, 4]
    >>> len(sample_rows(1000, 50))
    50
    """
    if size < 1:
        raise SGIInputError(f"the sample size must be an int >= 1. Got {size} instead")
    if size >= n_rows:
        return np.arange(n_rows)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n_rows, size=size, replace=False))


def project_triples(q_emb, c_emb, r_emb, *, method: str = "pca", seed: int = 0,
                    max_fit_points: int | None = UMAP_FIT_POINTS) -> TripleProjection:
    """Project the three embeddings of each triple into one shared 2-D map.

    Parameters
    ----------
    q_emb, c_emb, r_emb : array_like of shape (m, d)
        Row ``i`` of each is one triple.
    method : {"pca", "umap"}
    seed : int
        UMAP's random state and the draw of the triples it is fitted on (PCA is
        deterministic). The same inputs and seed give the same coordinates.
    max_fit_points : int or None
        UMAP only: with more than this many points (``3 * m``), UMAP is fitted on the
        question, context and response of ``max_fit_points // 3`` triples drawn by
        :func:`sample_rows`, and ``transform`` places each other point at the weighted
        mean of its fitted neighbours, then refines it against the fixed map;
        :func:`sgi_core.render.lines.projection_note` says so. ``None`` fits every point. Keep it above
        4,095 for large inputs: below that UMAP's ``transform`` computes exact
        distances on a slow path.

    Returns
    -------
    TripleProjection

    Raises
    ------
    SGIInputError
        Unknown method, mismatched shapes, too few triples for the method, or
        ``max_fit_points`` below ``UMAP_FIT_MIN_POINTS``.

    Notes
    -----
    The three embeddings of every triple are L2-normalised (SGI lives on the unit
    sphere, so only directions matter) and stacked into one matrix, so questions,
    contexts and responses share one map and the distance between a response and its
    own question or context can be seen. PCA is the default: exact, deterministic and
    fast. UMAP keeps local neighbourhoods better, but its first fit in a process compiles
    numba code and its layout does not parallelise under a fixed seed: above
    :data:`UMAP_FIT_POINTS` points it is fitted on a sample of triples (all three roles of
    each) and places the other points with ``transform`` (timings in docs/PERFORMANCE.md).
    UMAP's ``transform`` starts each new point at the weighted mean of its fitted neighbours
    in a Python loop per point; :func:`initial_placement` computes the same numbers, bit for
    bit, in array operations and stands in for it here. :func:`warm_up_umap` pays the
    compile on a few random points ahead of the first real map (a background thread of the
    app does it when the app opens).

    Examples
    --------
    >>> q = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    >>> c = [[0.0, 0.0, 1.0], [0.0, 1.0, 1.0]]
    >>> r = [[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    >>> project_triples(q, c, r).response.shape
    (2, 2)
    """
    if method not in METHODS:
        raise SGIInputError(f"the projection method must be one of {', '.join(METHODS)}. Got {method!r} instead")
    parts = [l2_normalize(x, name=name) for x, name in ((q_emb, "q_emb"), (c_emb, "c_emb"), (r_emb, "r_emb"))]
    m = parts[0].shape[0]
    if any(p.shape != parts[0].shape for p in parts):
        raise SGIInputError(
            f"question, context and response embeddings must have the same shape; got "
            f"{', '.join(str(p.shape) for p in parts)}"
        )
    stacked = np.vstack(parts)
    if method == "pca":
        coords, explained = _pca(stacked, m)
        return TripleProjection(method, coords[:m], coords[m : 2 * m], coords[2 * m :], len(stacked), explained)
    coords, fit_points = _umap(stacked, m, seed, max_fit_points)
    return TripleProjection(method, coords[:m], coords[m : 2 * m], coords[2 * m :], fit_points, seed=seed)


def _pca(stacked: np.ndarray, m: int) -> tuple[np.ndarray, tuple]:
    from sklearn.decomposition import PCA

    if m < 1 or stacked.shape[1] < 2:
        raise SGIInputError("PCA needs at least one triple and embeddings of width 2 or more")
    # Exact like the full SVD, but through the d x d covariance matrix: with far more points
    # than dimensions it is about 10x faster (docs/PERFORMANCE.md). Needs scikit-learn >= 1.5.
    pca = PCA(n_components=2, svd_solver="covariance_eigh")
    coords = pca.fit_transform(stacked)
    return coords, tuple(float(v) for v in pca.explained_variance_ratio_)


def _umap(stacked: np.ndarray, m: int, seed: int, max_fit_points: int | None) -> tuple[np.ndarray, int]:
    if max_fit_points is not None and (not isinstance(max_fit_points, int) or max_fit_points < UMAP_FIT_MIN_POINTS):
        raise SGIInputError(
            f"max_fit_points must be an int >= {UMAP_FIT_MIN_POINTS} or None. Got {max_fit_points!r} instead"
        )
    n_points = len(stacked)
    if n_points < UMAP_MIN_POINTS:
        raise SGIInputError(
            f"UMAP needs at least {UMAP_MIN_POINTS} points (question, context and response each count); "
            f"got {n_points}",
            hint="Use PCA for so few triples",
        )
    if max_fit_points is None or n_points <= max_fit_points:
        return _fit_umap(stacked, seed).embedding_.astype(np.float64), n_points
    triples = sample_rows(m, max_fit_points // 3, seed=seed)
    fit = np.zeros(n_points, dtype=bool)
    fit[np.concatenate([triples, triples + m, triples + 2 * m])] = True
    coords = np.empty((n_points, 2))
    reducer = _fit_umap(stacked[fit], seed)
    coords[fit] = reducer.embedding_
    coords[~fit] = _transform(reducer, stacked[~fit])
    return coords, int(fit.sum())


#: Points of the random cloud :func:`warm_up_umap` fits: enough for UMAP's spectral start.
WARM_UP_POINTS = 60
_warm_up_lock = threading.Lock()
_warmed_up = False


def warm_up_umap() -> bool:
    """Fit UMAP once on :data:`WARM_UP_POINTS` random unit vectors, so that numba compiles before a real map needs it.

    UMAP's numba functions are compiled on their first call in a process and not
    cached on disk; the fit below runs the same code path as :func:`project_triples`
    (float64 points, cosine metric, exact neighbours below 4,096 points), so a first
    300-triple map afterwards takes seconds instead of tens of seconds. Safe to call
    from several threads: one warms up, the others wait for it.

    Returns
    -------
    bool
        True if this call did the warm-up, False if it had been done already.
    """
    global _warmed_up
    with _warm_up_lock:
        if _warmed_up:
            return False
        cloud = l2_normalize(np.random.default_rng(0).normal(size=(WARM_UP_POINTS, 16)))
        _fit_umap(cloud, 0)
        _warmed_up = True
        return True


def _fit_umap(points: np.ndarray, seed: int):
    import umap  # imported here: loading numba costs seconds that PCA users should not pay

    return umap.UMAP(
        n_components=2,
        n_neighbors=min(15, len(points) - 1),
        metric="cosine",
        random_state=seed,
        # A fixed random_state already forces one thread; saying so silences UMAP's warning.
        n_jobs=1,
    ).fit(points)


def _transform(reducer, points: np.ndarray) -> np.ndarray:
    """``reducer.transform(points)`` with :func:`initial_placement` as its starting layout."""
    import umap.umap_

    with _PLACEMENT_SWAP:
        original = umap.umap_.init_graph_transform
        umap.umap_.init_graph_transform = initial_placement
        try:
            return reducer.transform(points)
        finally:
            umap.umap_.init_graph_transform = original


def initial_placement(graph, embedding: np.ndarray) -> np.ndarray:
    """Starting 2-D position of each new point: the weighted mean of its fitted neighbours.

    The same numbers, bit for bit, as ``umap.umap_.init_graph_transform`` (umap-learn
    0.5), without its Python loop over rows. For new point ``i`` with membership
    strengths ``w_ij`` to fitted points ``j`` (row ``i`` of ``graph``):

    - no neighbour (empty row): NaN;
    - some ``w_ij == 1`` (the point coincides with a fitted point): the position of the
      first such ``j`` in the row's stored order;
    - otherwise ``sum_j (w_ij / sum_k w_ik) * embedding[j]``, summed in stored order in
      float32, with ``sum_k w_ik`` summed as NumPy sums the row's values.

    Parameters
    ----------
    graph : scipy.sparse matrix of shape (n_new, n_fitted)
        Membership strengths, float32 as UMAP builds them.
    embedding : ndarray of shape (n_fitted, dim)
        Positions of the fitted points.

    Returns
    -------
    ndarray of shape (n_new, dim), float32

    Examples
    --------
    >>> import scipy.sparse
    >>> graph = scipy.sparse.csr_matrix(np.array([[0.5, 0.5, 0], [0, 0, 0], [0.2, 1, 0]], dtype=np.float32))
    >>> initial_placement(graph, np.array([[0, 0], [2, 4], [9, 9]], dtype=np.float32)).tolist()
    [[1.0, 2.0], [nan, nan], [2.0, 4.0]]
    """
    graph = scipy.sparse.csr_matrix(graph)
    weights, columns, starts = graph.data, graph.indices, graph.indptr[:-1]
    counts = np.diff(graph.indptr)
    rows = np.repeat(np.arange(graph.shape[0]), counts)
    # Row sums grouped by length: each row's values reduced alone, as NumPy reduces a row.
    row_sums = np.zeros(graph.shape[0], dtype=weights.dtype)
    for count in np.unique(counts[counts > 0]):
        same = np.flatnonzero(counts == count)
        row_sums[same] = np.add.reduce(weights[starts[same, None] + np.arange(count)], axis=1)
    placed = np.zeros((graph.shape[0], embedding.shape[1]), dtype=np.float32)
    np.add.at(placed, rows, (weights / row_sums[rows])[:, None] * embedding[columns])
    exact = np.flatnonzero(weights == 1)
    exact_rows, first = np.unique(rows[exact], return_index=True)
    placed[exact_rows] = embedding[columns[exact[first]]]
    placed[counts == 0] = np.nan
    return placed
