"""2-D projections of question, context and response embeddings, for plotting.

The three embeddings of every triple are L2-normalised (SGI lives on the unit
sphere, so only directions matter) and stacked into one matrix, so questions,
contexts and responses share one map and the distance between a response and its
own question or context can be seen. PCA is the default: exact, deterministic and
fast. UMAP keeps local neighbourhoods better but its first fit in a process spends
tens of seconds compiling numba code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sgi_core.errors import SGIInputError
from sgi_core.geometry import l2_normalize
from sgi_core.results import JsonResult

METHODS = ("pca", "umap")

#: UMAP's spectral initialisation needs a few more points than neighbours.
UMAP_MIN_POINTS = 10


@dataclass(frozen=True)
class TripleProjection(JsonResult):
    """2-D coordinates of each triple's question, context and response.

    Attributes
    ----------
    method : {"pca", "umap"}
    question, context, response : ndarray of shape (m, 2)
        Row ``i`` of each belongs to the same triple.
    explained_variance_ratio : tuple of float
        Share of the variance of the stacked, normalised embeddings carried by each
        of the two PCA axes; empty for UMAP, whose axes have no such meaning.
    """

    method: str
    question: np.ndarray
    context: np.ndarray
    response: np.ndarray
    explained_variance_ratio: tuple = ()

    @classmethod
    def from_dict(cls, data: dict) -> "TripleProjection":
        return cls(
            method=data["method"],
            question=np.asarray(data["question"], dtype=np.float64).reshape(-1, 2),
            context=np.asarray(data["context"], dtype=np.float64).reshape(-1, 2),
            response=np.asarray(data["response"], dtype=np.float64).reshape(-1, 2),
            explained_variance_ratio=tuple(data.get("explained_variance_ratio", ())),
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


def project_triples(q_emb, c_emb, r_emb, *, method: str = "pca", seed: int = 0) -> TripleProjection:
    """Project the three embeddings of each triple into one shared 2-D map.

    Parameters
    ----------
    q_emb, c_emb, r_emb : array_like of shape (m, d)
        Row ``i`` of each is one triple.
    method : {"pca", "umap"}
    seed : int
        UMAP's random state (PCA is deterministic).

    Returns
    -------
    TripleProjection

    Raises
    ------
    SGIInputError
        Unknown method, mismatched shapes, or too few triples for the method.

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
    else:
        coords, explained = _umap(stacked, seed), ()
    return TripleProjection(method, coords[:m], coords[m : 2 * m], coords[2 * m :], explained)


def _pca(stacked: np.ndarray, m: int) -> tuple[np.ndarray, tuple]:
    from sklearn.decomposition import PCA

    if m < 1 or stacked.shape[1] < 2:
        raise SGIInputError("PCA needs at least one triple and embeddings of width 2 or more")
    # Exact like the full SVD, but through the d x d covariance matrix: with far more points
    # than dimensions it is about 10x faster (docs/PERFORMANCE.md). Needs scikit-learn >= 1.5.
    pca = PCA(n_components=2, svd_solver="covariance_eigh")
    coords = pca.fit_transform(stacked)
    return coords, tuple(float(v) for v in pca.explained_variance_ratio_)


def _umap(stacked: np.ndarray, seed: int) -> np.ndarray:
    if len(stacked) < UMAP_MIN_POINTS:
        raise SGIInputError(
            f"UMAP needs at least {UMAP_MIN_POINTS} points (question, context and response each count); "
            f"got {len(stacked)}",
            hint="Use PCA for so few triples",
        )
    import umap  # imported here: loading numba costs seconds that PCA users should not pay

    reducer = umap.UMAP(
        n_components=2,
        n_neighbors=min(15, len(stacked) - 1),
        metric="cosine",
        random_state=seed,
        # A fixed random_state already forces one thread; saying so silences UMAP's warning.
        n_jobs=1,
    )
    return np.asarray(reducer.fit_transform(stacked), dtype=np.float64)
