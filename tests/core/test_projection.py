import numpy as np
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.geometry import l2_normalize
from sgi_core.projection import TripleProjection, project_triples, sample_rows


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


def test_sample_rows_is_deterministic_sorted_and_without_repeats():
    first = sample_rows(1000, 50, seed=3)
    np.testing.assert_array_equal(first, sample_rows(1000, 50, seed=3))
    assert len(np.unique(first)) == 50 and np.all(np.diff(first) > 0)
    np.testing.assert_array_equal(sample_rows(4, 10), np.arange(4))
    with pytest.raises(SGIInputError, match="sample size"):
        sample_rows(10, 0)
