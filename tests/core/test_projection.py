import numpy as np
import pytest
import scipy.sparse

from sgi_core.errors import SGIInputError
from sgi_core.geometry import l2_normalize
from sgi_core.projection import (
    UMAP_FIT_MIN_POINTS,
    TripleProjection,
    initial_placement,
    project_triples,
    sample_rows,
)
from sgi_core.render.lines import projection_note


def random_triples(n=40, d=12, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=(n, d)), rng.normal(size=(n, d))


def test_pca_equals_sklearn_on_stacked_normalised_rows():
    from sklearn.decomposition import PCA

    q, c, r = random_triples()
    out = project_triples(q, c, r)
    stacked = np.vstack([l2_normalize(x) for x in (q, c, r)])
    pca = PCA(n_components=2, svd_solver="full").fit(stacked)
    expected = pca.transform(stacked)
    np.testing.assert_allclose(np.vstack([out.question, out.context, out.response]), expected, atol=1e-10)
    np.testing.assert_allclose(out.explained_variance_ratio, pca.explained_variance_ratio_)


def test_only_directions_matter():
    q, c, r = random_triples()
    plain = project_triples(q, c, r)
    scaled = project_triples(3 * q, 0.1 * c, 7 * r)
    np.testing.assert_allclose(plain.response, scaled.response, atol=1e-10)


def test_rows_stay_paired():
    q, c, r = random_triples(n=5, d=3)
    out = project_triples(q, c, r)
    swapped = project_triples(q[::-1], c[::-1], r[::-1])
    np.testing.assert_allclose(out.response[::-1], swapped.response, atol=1e-10)


def test_round_trip_through_dict():
    out = project_triples(*random_triples(n=6, d=4))
    back = TripleProjection.from_dict(out.to_dict())
    np.testing.assert_array_equal(back.context, out.context)
    assert back.explained_variance_ratio == out.explained_variance_ratio
    assert back.fit_points == out.fit_points == 18 and projection_note(back) == projection_note(out) == ""


def test_round_trip_keeps_what_the_note_is_made_of():
    coords = np.arange(8.0).reshape(4, 2)
    out = TripleProjection("umap", coords, coords + 1, coords + 2, fit_points=6, seed=7)
    back = TripleProjection.from_dict(out.to_dict())
    assert (back.method, back.fit_points, back.seed) == ("umap", 6, 7)
    assert projection_note(back).startswith("UMAP was fitted on 6 of the 12 points (the question, context and "
                                            "response of 2 triples drawn with seed 7); the other 6 points")
    np.testing.assert_array_equal(back.response, out.response)


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "tsne"}, "must be one of pca, umap"),
])
def test_bad_method(kwargs, message):
    with pytest.raises(SGIInputError, match=message):
        project_triples(*random_triples(n=3, d=3), **kwargs)


def test_shapes_must_match():
    q, c, r = random_triples(n=4, d=3)
    with pytest.raises(SGIInputError, match="same shape"):
        project_triples(q, c[:3], r)


def test_umap_needs_enough_points():
    with pytest.raises(SGIInputError, match="UMAP needs at least 10 points"):
        project_triples(*random_triples(n=3, d=3), method="umap")


@pytest.mark.slow
def test_umap_places_close_texts_close():
    """UMAP (slow: numba compiles on first use) keeps two well separated clusters apart."""
    rng = np.random.default_rng(1)
    centre_a, centre_b = rng.normal(size=16), rng.normal(size=16)
    def cluster(centre):
        return centre + 0.05 * rng.normal(size=(20, 16))
    out = project_triples(cluster(centre_a), cluster(centre_a), cluster(centre_b), method="umap")
    assert out.method == "umap" and out.explained_variance_ratio == ()
    within = np.linalg.norm(out.question - out.context, axis=1).max()
    between = np.linalg.norm(out.question[:, None] - out.response[None], axis=2).min()
    assert between > within


@pytest.mark.parametrize("max_fit_points", [UMAP_FIT_MIN_POINTS - 1, 0, 30.5, "all"])
def test_bad_fit_size(max_fit_points):
    assert UMAP_FIT_MIN_POINTS == 12  # the points of 4 triples, the fewest with UMAP's 10 points
    with pytest.raises(SGIInputError, match="max_fit_points must be an int >= 12 or None"):
        project_triples(*random_triples(n=20, d=3), method="umap", max_fit_points=max_fit_points)


def umap_oracle(points, seed=0):
    """UMAP as project_triples configures it, fitted directly on ``points``."""
    import umap

    reducer = umap.UMAP(n_components=2, n_neighbors=15, metric="cosine", random_state=seed, n_jobs=1)
    return reducer.fit_transform(np.asarray(points, dtype=np.float32))


@pytest.mark.slow
def test_umap_below_the_fit_size_fits_every_point():
    q, c, r = random_triples(n=20, d=8)
    out = project_triples(q, c, r, method="umap", max_fit_points=60)
    assert out.fit_points == 60 and projection_note(out) == ""
    expected = umap_oracle(np.vstack([l2_normalize(x) for x in (q, c, r)]))
    np.testing.assert_array_equal(np.vstack([out.question, out.context, out.response]), expected)


@pytest.mark.slow
def test_umap_above_the_fit_size_fits_a_sample_of_triples_and_places_the_rest():
    # 40 triples, 120 points; max_fit_points=60 fits the 3 points of 20 triples drawn by sample_rows.
    q, c, r = random_triples(n=40, d=8)
    out = project_triples(q, c, r, method="umap", max_fit_points=60, seed=5)
    assert out.fit_points == 60
    assert projection_note(out).startswith("UMAP was fitted on 60 of the 120 points (the question, context and "
                                           "response of 20 triples drawn with seed 5); the other 60 points were placed")
    coords = np.stack([out.question, out.context, out.response])  # (role, triple, 2)
    assert coords.shape == (3, 40, 2) and np.isfinite(coords).all()
    import umap

    fitted = np.zeros(40, dtype=bool)
    fitted[sample_rows(40, 20, seed=5)] = True
    unit = [l2_normalize(x).astype(np.float32) for x in (q, c, r)]
    oracle = umap.UMAP(n_components=2, n_neighbors=15, metric="cosine", random_state=5, n_jobs=1)
    np.testing.assert_array_equal(coords[:, fitted],
                                  oracle.fit_transform(np.vstack([x[fitted] for x in unit])).reshape(3, 20, 2))
    # The placed points are UMAP's own transform, its per-point loop and all.
    np.testing.assert_array_equal(coords[:, ~fitted],
                                  oracle.transform(np.vstack([x[~fitted] for x in unit])).reshape(3, 20, 2))


@pytest.mark.slow
def test_umap_sample_fit_is_reproducible():
    triples = random_triples(n=40, d=8)
    first = project_triples(*triples, method="umap", max_fit_points=45, seed=3)
    again = project_triples(*triples, method="umap", max_fit_points=45, seed=3)
    other = project_triples(*triples, method="umap", max_fit_points=45, seed=4)
    for role in ("question", "context", "response"):
        np.testing.assert_array_equal(getattr(first, role), getattr(again, role))
    assert not np.array_equal(first.response, other.response)
    assert projection_note(first) == projection_note(again) != projection_note(other)


@pytest.mark.slow
def test_umap_places_unfitted_points_beside_their_cluster():
    """Points left out of the fit land nearer their own cluster's fitted points than the other's."""
    rng = np.random.default_rng(2)
    centres = rng.normal(size=(2, 16))
    side = np.repeat([0, 1], 30)  # triple i belongs to cluster side[i]; all its three texts too
    q, c, r = (centres[side] + 0.05 * rng.normal(size=(60, 16)) for _ in range(3))
    out = project_triples(q, c, r, method="umap", max_fit_points=60)
    fitted = np.zeros(60, dtype=bool)
    fitted[sample_rows(60, 20)] = True
    points = np.vstack([out.question, out.context, out.response])
    is_fit, cluster = np.tile(fitted, 3), np.tile(side, 3)
    centroid = np.array([points[is_fit & (cluster == k)].mean(axis=0) for k in (0, 1)])
    placed = points[~is_fit]
    nearest = np.argmin(np.linalg.norm(placed[:, None] - centroid[None], axis=2), axis=1)
    np.testing.assert_array_equal(nearest, cluster[~is_fit])


def test_sample_rows_is_deterministic_sorted_and_without_repeats():
    first = sample_rows(1000, 50, seed=3)
    np.testing.assert_array_equal(first, sample_rows(1000, 50, seed=3))
    assert len(np.unique(first)) == 50 and np.all(np.diff(first) > 0)
    np.testing.assert_array_equal(sample_rows(4, 10), np.arange(4))
    with pytest.raises(SGIInputError, match="sample size"):
        sample_rows(10, 0)


def test_initial_placement_equals_umaps_loop_bit_for_bit():
    from umap.umap_ import init_graph_transform

    rng = np.random.default_rng(4)
    n_new, n_fitted = 400, 60
    lengths = rng.integers(0, 31, size=n_new)
    lengths[:3] = 0
    rows = np.repeat(np.arange(n_new), lengths)
    cols = np.concatenate([rng.choice(n_fitted, size=k, replace=False) for k in lengths])
    weights = rng.random(len(rows)).astype(np.float32) + np.float32(1e-3)
    weights[rng.random(len(rows)) < 0.03] = 1.0  # points that coincide with a fitted point
    graph = scipy.sparse.csr_matrix((weights, (rows, cols)), shape=(n_new, n_fitted))
    embedding = (10 * rng.normal(size=(n_fitted, 2))).astype(np.float32)
    got = initial_placement(graph, embedding)
    assert got.dtype == np.float32 and np.isnan(got[:3]).all()
    np.testing.assert_array_equal(got, init_graph_transform(graph, embedding))


def test_initial_placement_hand_computed():
    graph = scipy.sparse.csr_matrix(np.array([[0.25, 0.75, 0.0], [0.0, 1.0, 1.0]], dtype=np.float32))
    embedding = np.array([[0.0, 4.0], [8.0, 0.0], [5.0, 5.0]], dtype=np.float32)
    # Row 0: 0.25 * (0, 4) + 0.75 * (8, 0); row 1: the first exact match, fitted point 1.
    np.testing.assert_array_equal(initial_placement(graph, embedding), [[6.0, 1.0], [8.0, 0.0]])
