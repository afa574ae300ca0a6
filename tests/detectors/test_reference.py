import math
import warnings

import numpy as np
import pytest
from scipy.stats import special_ortho_group
from sklearn.neighbors import NearestNeighbors

from sgi_core.detectors import REFERENCE_DETECTORS, ReferenceScores, reference_scores, reference_sets
from sgi_core.errors import SGIInputError
from sgi_core.geometry import triple_angles
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.stats.ranking import roc_analysis

SQ3 = math.sqrt(3.0)


def toy_3d():
    """One unlabelled row scored against two grounded rows (its only possible neighbours).

    Every question is e1 = (1, 0, 0).
    - scored row: r = e3, so theta_rq = pi/2, d = (-1, 0, 1), |d| = sqrt 2; c = (0, 1, 1)/sqrt 2,
      theta_rc = pi/4, SGI = 2.
    - grounded g1: r = (1/2, 0, sqrt3/2), theta_rq = pi/3, d1 = (-1/2, 0, sqrt3/2), |d1| = 1;
      c = q, theta_rc = pi/3, SGI = 1.
    - grounded g2: r = e2, theta_rq = pi/2, d2 = (-1, 1, 0), |d2| = sqrt 2; c = (0, 1, 1)/sqrt 2,
      theta_rc = pi/4, SGI = 2.
    """
    s = 1 / math.sqrt(2.0)
    q = np.array([[1.0, 0, 0]] * 3)
    r = np.array([[0, 0, 1.0], [0.5, 0, SQ3 / 2], [0, 1.0, 0]])
    c = np.array([[0, s, s], [1.0, 0, 0], [0, s, s]])
    return q, c, r, np.array([np.nan, 1.0, 1.0])


def test_each_formula_on_a_hand_made_3d_case():
    q, c, r, y = toy_3d()
    res = reference_scores(q, c, r, y, protocol="leaky", n_neighbors=2, n_directions=2)
    got = {name: values[0] for name, values in res.scores.items()}
    # m = (d1 + d2) / 2 = (-3/4, 1/2, sqrt3/4), |m|^2 = 9/16 + 4/16 + 3/16 = 1.
    # consistency = d.m / (|d||m|) = (3/4 + sqrt3/4) / sqrt 2.
    assert got["displacement_consistency"] == pytest.approx((3 + SQ3) / (4 * math.sqrt(2)), rel=1e-12)
    # q + m = (1/4, 1/2, sqrt3/4), norm 1/sqrt 2; its cosine with r = e3 is (sqrt3/4) sqrt 2 = sqrt6/4.
    assert got["expected_response_deviation"] == pytest.approx(-math.acos(math.sqrt(6) / 4), rel=1e-12)
    # |d_nb| = (1, sqrt 2): mean (1 + sqrt 2)/2, sd (ddof=1) (sqrt 2 - 1)/sqrt 2;
    # z = (sqrt 2 - mean) / sd = ((sqrt 2 - 1)/2) / ((sqrt 2 - 1)/sqrt 2) = 1/sqrt 2.
    assert got["displacement_magnitude"] == pytest.approx(1 / math.sqrt(2), rel=1e-12)
    # Two directions span the plane of d1, d2, normal n = d1 x d2 = (-sqrt3/2, -sqrt3/2, -1/2),
    # |n|^2 = 7/4, d.n = sqrt3/2 - 1/2; outside share (d.n)^2 / (|n|^2 |d|^2) = (1 - sqrt3/2) / 3.5.
    assert got["tangent_space_residual"] == pytest.approx(-(2 - SQ3) / 7, rel=1e-9)
    # SGI 2 over the median of (1, 2).
    assert got["lsgi"] == pytest.approx(2 / 1.5, rel=1e-7)
    assert res.fold == (-1, -1, -1) and res.n_folds == 0


def test_grounded_rows_of_the_toy_see_themselves_only_under_leaky():
    q, c, r, y = toy_3d()
    res = reference_scores(q, c, r, y, protocol="leaky", n_neighbors=2, n_directions=2)
    # g2's neighbours are g1 and g2 itself: its displacement lies in their plane.
    assert res.scores["tangent_space_residual"][2] == pytest.approx(0.0, abs=1e-12)


def test_tangent_residual_with_one_direction_in_2d():
    # q = e1 everywhere. Neighbours r = e2 and r = -e1 give d1 = (-1, 1), d2 = (-2, 0);
    # D^T D = [[5, -1], [-1, 1]] has top eigenvalue lam = 3 + sqrt 5, whose eigenvector
    # v ~ (1, 5 - lam) (first row of (D^T D - lam I) v = 0) is the one principal direction.
    q = np.array([[1.0, 0]] * 3)
    r = np.array([[1 / math.sqrt(2), -1 / math.sqrt(2)], [0, 1.0], [-1.0, 0]])
    c = np.array([[0.6, 0.8], [0.6, 0.8], [0.8, 0.6]])
    y = np.array([0.0, 1.0, 1.0])
    res = reference_scores(q, c, r, y, protocol="leaky", n_neighbors=2, n_directions=1)
    lam = 3 + math.sqrt(5)
    v = np.array([1.0, 5 - lam]) / math.hypot(1.0, 5 - lam)
    d = r[0] - q[0]
    outside = 1 - (d @ v) ** 2 / (d @ d)
    assert res.scores["tangent_space_residual"][0] == pytest.approx(-outside, rel=1e-9)
    assert res.n_directions == 1


def brute_force(q, c, r, y, folds, k, n_directions):
    """Scores row by row: sklearn's cosine neighbours and numpy's SVD, no shared code path."""
    q_hat, r_hat = (x / np.linalg.norm(x, axis=1, keepdims=True) for x in (q, r))
    d = r_hat - q_hat
    sgi = triple_angles(q, c, r).sgi
    out = {name: np.full(len(q), np.nan) for name in REFERENCE_DETECTORS}
    for scored, reference in reference_sets(folds, y):
        nn = NearestNeighbors(n_neighbors=k, metric="cosine", algorithm="brute").fit(q[reference])
        for i, nb in zip(scored, nn.kneighbors(q[scored], return_distance=False)):
            nb = reference[nb]
            m = d[nb].mean(axis=0)
            out["displacement_consistency"][i] = d[i] @ m / (np.linalg.norm(d[i]) * np.linalg.norm(m))
            e = q_hat[i] + m
            out["expected_response_deviation"][i] = -np.arccos(np.clip(r_hat[i] @ e / np.linalg.norm(e), -1, 1))
            mags = np.linalg.norm(d[nb], axis=1)
            out["displacement_magnitude"][i] = (np.linalg.norm(d[i]) - mags.mean()) / mags.std(ddof=1)
            vt = np.linalg.svd(d[nb])[2][:n_directions]
            out["tangent_space_residual"][i] = -np.sum((d[i] - vt.T @ (vt @ d[i])) ** 2) / (d[i] @ d[i])
            out["lsgi"][i] = sgi[i] / np.median(sgi[nb])
    return out


def test_crossfit_matches_a_brute_force_oracle_on_the_same_folds():
    rng = np.random.default_rng(7)
    n, width = 160, 12
    q, c, r = rng.normal(size=(3, n, width))
    y = rng.choice([1.0, 0.0, np.nan], size=n, p=[0.5, 0.4, 0.1])
    groups = np.arange(n) // 2
    res = reference_scores(q, c, r, y, groups, n_neighbors=5, n_directions=3, n_folds=4, seed=2)
    expected = brute_force(q, c, r, y, np.asarray(res.fold), 5, 3)
    for name in REFERENCE_DETECTORS:
        np.testing.assert_allclose(res.scores[name], expected[name], rtol=1e-6, atol=1e-6, err_msg=name)
    assert not np.isnan(res.frame()[list(REFERENCE_DETECTORS)].to_numpy()).any()


def paired_toy(n_pairs=200, width=256, seed=0):
    """Both answers of a question share its embedding; responses and contexts are random."""
    rng = np.random.default_rng(seed)
    q = np.repeat(rng.normal(size=(n_pairs, width)), 2, axis=0)
    c = np.repeat(rng.normal(size=(n_pairs, width)), 2, axis=0)
    r = rng.normal(size=(2 * n_pairs, width))
    return q, c, r, np.tile([1.0, 0.0], n_pairs), np.repeat(np.arange(n_pairs), 2)


def test_leaky_is_near_perfect_where_crossfit_is_at_chance():
    # Under leaky a grounded row is its own nearest reference and a hallucinated row meets
    # its grounded twin (same question): labels leak. Cross-fitted, neither is possible.
    q, c, r, y, groups = paired_toy()
    leaky = reference_scores(q, c, r, y, groups, protocol="leaky", n_neighbors=2, n_directions=2)
    honest = reference_scores(q, c, r, y, groups, n_neighbors=2, n_directions=2)
    for name in ("displacement_consistency", "expected_response_deviation", "tangent_space_residual"):
        assert roc_analysis(y, leaky.scores[name], n_boot=0).auroc > 0.97, name
        assert abs(roc_analysis(y, honest.scores[name], n_boot=0).auroc - 0.5) < 0.1, name


def test_scores_are_invariant_to_a_rotation_of_the_embedding_space():
    q, c, r, y, groups = paired_toy(n_pairs=40, width=8, seed=3)
    rotation = special_ortho_group.rvs(8, random_state=1)
    base = reference_scores(q, c, r, y, groups, n_neighbors=4)
    turned = reference_scores(q @ rotation, c @ rotation, r @ rotation, y, groups, n_neighbors=4)
    for name in REFERENCE_DETECTORS:
        np.testing.assert_allclose(base.scores[name], turned.scores[name], rtol=1e-8, atol=1e-10)


def test_rows_without_usable_embeddings_are_nan_and_never_references():
    q, c, r, y, groups = paired_toy(n_pairs=30, width=6, seed=4)
    r_broken = r.copy()
    r_broken[0] = np.nan  # a grounded row
    full = reference_scores(q, c, r_broken, y, groups, protocol="leaky", n_neighbors=3)
    subset = reference_scores(q[1:], c[1:], r[1:], y[1:], groups[1:], protocol="leaky", n_neighbors=3)
    for name in REFERENCE_DETECTORS:
        assert math.isnan(full.scores[name][0])
        np.testing.assert_allclose(full.scores[name][1:], subset.scores[name], rtol=1e-12)


def test_too_small_a_reference_set_gives_nan_and_a_warning():
    q, c, r, _, groups = paired_toy(n_pairs=5, width=4)
    y = np.array([1.0] + [0.0] * 9)
    with pytest.warns(UndefinedStatisticWarning, match="only 1 grounded reference rows"):
        res = reference_scores(q, c, r, y, protocol="leaky", n_neighbors=2)
    assert np.isnan(res.frame()[list(REFERENCE_DETECTORS)].to_numpy()).all()


def test_a_response_equal_to_its_question_is_undefined_for_consistency():
    q, c, r, y = toy_3d()
    r[0] = q[0]
    with pytest.warns(UndefinedStatisticWarning) as record:
        res = reference_scores(q, c, r, y, protocol="leaky", n_neighbors=2)
    assert [str(w.message).split(" is undefined for 1 rows")[0] for w in record] == [
        "displacement_consistency", "tangent_space_residual"]
    assert math.isnan(res.scores["displacement_consistency"][0])
    assert math.isnan(res.scores["tangent_space_residual"][0])
    # |d| = 0 sits below both neighbours': z = (0 - (1 + sqrt 2)/2) / ((sqrt 2 - 1)/sqrt 2).
    expected = -(1 + math.sqrt(2)) / 2 / ((math.sqrt(2) - 1) / math.sqrt(2))
    assert res.scores["displacement_magnitude"][0] == pytest.approx(expected, rel=1e-12)


def test_result_survives_a_json_round_trip():
    q, c, r, y, groups = paired_toy(n_pairs=20, width=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = reference_scores(q, c, r, y, groups, n_neighbors=3, n_folds=3, seed=9)
    back = ReferenceScores.from_dict(res.to_dict())
    assert back.frame().equals(res.frame())
    assert (back.protocol, back.n_neighbors, back.n_directions, back.n_folds, back.seed) == ("crossfit", 3, 3, 3, 9)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"protocol": "transductive"}, "'protocol' parameter of reference_scores must be one of"),
        ({"n_neighbors": 1}, "'n_neighbors' parameter of reference_scores must be an int >= 2"),
        ({"n_directions": 0}, "'n_directions' parameter of reference_scores must be an int >= 1"),
        ({"n_neighbors": 3, "n_directions": 4}, r"must be <= n_neighbors \(3\)"),
        ({"groups": None}, "cross-fitting needs the question group of each row"),
        ({"groups": [0, 1]}, "'groups' has 2 values but the embeddings have 40 rows"),
        ({"y_true": [1.0, 0.0]}, "'y_true' has 2 values but the embeddings have 40 rows"),
        ({"c_emb": np.ones((40, 3))}, r"'c_emb' must be an \(n, d\) array shaped like 'q_emb'"),
    ],
)
def test_reference_scores_errors(kwargs, message):
    q, c, r, y, groups = paired_toy(n_pairs=20, width=4)
    args = {"q_emb": q, "c_emb": c, "r_emb": r, "y_true": y, "groups": groups, **kwargs}
    with pytest.raises(SGIInputError, match=message):
        reference_scores(**args)
