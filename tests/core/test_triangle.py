import numpy as np
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.geometry import canonical_triangle, sgi_isolines, triple_angles


def _random_triples(n=500, dim=8, seed=0):
    rng = np.random.default_rng(seed)
    q, c = rng.normal(size=(n, dim)), rng.normal(size=(n, dim))
    r = rng.uniform(0, 1, (n, 1)) * c + rng.uniform(0, 1, (n, 1)) * q + 0.5 * rng.normal(size=(n, dim))
    return triple_angles(q, c, r)


def test_side_lengths_are_reproduced():
    a = _random_triples()
    c_xy, r_xy = canonical_triangle(a.theta_qc, a.theta_rq, a.theta_rc)
    np.testing.assert_allclose(np.linalg.norm(c_xy, axis=1), a.theta_qc, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(r_xy, axis=1), a.theta_rq, atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(r_xy - c_xy, axis=1), a.theta_rc, atol=1e-9)
    assert (r_xy[:, 1] >= 0).all() and (c_xy[:, 1] == 0).all()


def test_grounded_responses_lie_past_the_bisector():
    a = _random_triples(seed=1)
    _, r_xy = canonical_triangle(a.theta_qc, a.theta_rq, a.theta_rc)
    clear = np.abs(a.sgi - 1.0) > 1e-6
    assert ((a.sgi > 1)[clear] == (r_xy[:, 0] > a.theta_qc / 2)[clear]).all()
    assert (a.sgi[clear] > 1).any() and (a.sgi[clear] < 1).any()


def test_hand_computed_triangles():
    c_xy, r_xy = canonical_triangle([4.0, 1.0, 2.0], [3.0, 1.0, 1.0], [5.0, 1.0, 1.0])
    # Right angle at q (3-4-5), equilateral, and a flat triangle with r halfway to c.
    np.testing.assert_allclose(r_xy, [[0.0, 3.0], [0.5, np.sqrt(3) / 2], [1.0, 0.0]], atol=1e-12)
    np.testing.assert_allclose(c_xy, [[4.0, 0.0], [1.0, 0.0], [2.0, 0.0]])


def test_normalized_view_puts_c_at_one_and_keeps_sgi():
    a = _random_triples(n=100, seed=2)
    c_xy, r_xy = canonical_triangle(a.theta_qc, a.theta_rq, a.theta_rc, normalize=True)
    np.testing.assert_allclose(c_xy, np.tile([1.0, 0.0], (100, 1)))
    ratio = np.linalg.norm(r_xy, axis=1) / np.linalg.norm(r_xy - c_xy, axis=1)
    np.testing.assert_allclose(ratio, a.theta_rq / a.theta_rc, rtol=1e-8)


def test_degenerate_rounding_and_nan_rows():
    c_xy, r_xy = canonical_triangle([0.0, 1.0, np.nan], [0.7, 0.5, 0.3], [0.7, 0.5 + 1.0 + 1e-9, 0.2])
    np.testing.assert_allclose(r_xy[0], [0.0, 0.7])  # context = question: r straight above q
    assert r_xy[1, 1] == 0.0  # a 1e-9 violation is rounding: clipped onto the axis
    assert np.isnan(r_xy[2]).all() and np.isnan(c_xy[2, 0])
    c_norm, _ = canonical_triangle([0.0], [0.7], [0.7], normalize=True)
    assert np.isnan(c_norm).all()


def test_triangle_errors():
    with pytest.raises(SGIInputError, match=r"break the triangle inequality.*row 2"):
        canonical_triangle([1.0, 1.0], [0.5, 0.1], [0.5, 0.1])
    with pytest.raises(SGIInputError, match="must be 1-d and of one length"):
        canonical_triangle([1.0, 1.0], [0.5], [0.5, 0.5])


@pytest.mark.parametrize("theta_qc", [1.0, 0.37])
def test_isoline_points_have_the_stated_ratio(theta_qc):
    lines = sgi_isolines([0.5, 0.8, 1.0, 1.25, 3.0], theta_qc=theta_qc, n_points=50)
    c = np.array([theta_qc, 0.0])
    for s, pts in lines.items():
        assert pts.shape == (50, 2) and (pts[:, 1] >= -1e-12).all()
        ratio = np.linalg.norm(pts, axis=1) / np.linalg.norm(pts - c, axis=1)
        np.testing.assert_allclose(ratio, s, rtol=1e-9)
    np.testing.assert_allclose(lines[1.0][:, 0], theta_qc / 2)


def test_isoline_errors():
    with pytest.raises(SGIInputError, match="SGI levels must be numbers > 0"):
        sgi_isolines([0.0])
    with pytest.raises(SGIInputError, match="The 'theta_qc' parameter of sgi_isolines must be a number > 0"):
        sgi_isolines([2.0], theta_qc=0.0)
    with pytest.raises(SGIInputError, match="The 'n_points' parameter of sgi_isolines must be an int >= 2"):
        sgi_isolines([2.0], n_points=1)
