import numpy as np
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.geometry import (
    SGI_EPSILON,
    l2_normalize,
    pairwise_angle,
    sgi_bounds,
    sgi_from_angles,
    triple_angles,
)

S = 2 ** -0.5


@pytest.mark.parametrize(
    "q, c, r, theta_rq, theta_rc, sgi",
    [
        # r halfway between q and c: equal angles, SGI 1
        ([1, 0], [0, 1], [S, S], np.pi / 4, np.pi / 4, 1.0),
        # r = q: theta_rq 0, SGI 0
        ([1, 0], [0, 1], [1, 0], 0.0, np.pi / 2, 0.0),
        # r at 60 degrees from q, 30 from c
        ([1, 0], [0, 1], [0.5, 3 ** 0.5 / 2], np.pi / 3, np.pi / 6, 2.0),
        # r opposite q
        ([1, 0], [0, 1], [-1, 0], np.pi, np.pi / 2, 2.0),
    ],
)
def test_toy_triples(q, c, r, theta_rq, theta_rc, sgi):
    out = triple_angles([q], [c], [r])
    assert out.theta_rq[0] == pytest.approx(theta_rq, abs=1e-12)
    assert out.theta_rc[0] == pytest.approx(theta_rc, abs=1e-12)
    assert out.theta_qc[0] == pytest.approx(np.pi / 2, abs=1e-12)
    assert out.sgi[0] == pytest.approx(sgi, rel=1e-7)


def test_angle_matches_arccos_oracle():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(200, 32)), rng.normal(size=(200, 32))
    oracle = np.arccos(np.clip(np.sum(l2_normalize(a) * l2_normalize(b), axis=1), -1, 1))
    np.testing.assert_allclose(pairwise_angle(a, b), oracle, atol=1e-10)


def test_rotation_and_scale_invariance():
    rng = np.random.default_rng(1)
    q, c, r = (rng.normal(size=(50, 16)) for _ in range(3))
    rotation, _ = np.linalg.qr(rng.normal(size=(16, 16)))
    before = triple_angles(q, c, r)
    after = triple_angles(q @ rotation * 3.0, c @ rotation * 0.1, r @ rotation * 7.0)
    np.testing.assert_allclose(after.sgi, before.sgi, rtol=1e-10)
    np.testing.assert_allclose(after.theta_qc, before.theta_qc, atol=1e-12)


def test_identical_float32_vectors_give_exact_zero_angle():
    v = np.random.default_rng(2).normal(size=(1, 384)).astype(np.float32)
    assert pairwise_angle(v, v.copy())[0] == 0.0


def test_response_equals_context_is_flagged_and_unbounded():
    q, c = np.array([[1.0, 0.0, 0.0]]), np.array([[0.0, 1.0, 0.0]])
    out = triple_angles(q, c, c)
    assert out.theta_rc[0] == 0.0
    assert out.response_is_context[0]
    assert out.sgi[0] == pytest.approx((np.pi / 2) / SGI_EPSILON)


def test_context_equals_question_gives_sgi_one():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(20, 8))
    r = rng.normal(size=(20, 8))
    out = triple_angles(q, q, r)
    assert out.context_is_question.all()
    np.testing.assert_allclose(out.sgi, 1.0, rtol=1e-7)


def test_zero_vector_is_an_error_naming_the_row():
    with pytest.raises(SGIInputError, match=r"zero vectors.*row 2"):
        pairwise_angle([[1.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]])


def test_nan_and_shape_errors():
    with pytest.raises(SGIInputError, match="NaN"):
        pairwise_angle([[np.nan, 1.0]], [[1.0, 0.0]])
    with pytest.raises(SGIInputError, match="widths differ"):
        pairwise_angle([[1.0, 0.0]], [[1.0, 0.0, 0.0]])
    with pytest.raises(SGIInputError, match="row counts differ"):
        pairwise_angle(np.ones((2, 3)), np.ones((3, 3)))


def test_sgi_formula():
    np.testing.assert_allclose(sgi_from_angles([1.0, 0.3], [0.5, 0.3]), [1.0 / (0.5 + 1e-8), 0.3 / (0.3 + 1e-8)])


def test_bounds_hold_on_random_triples_and_squeeze_to_one():
    rng = np.random.default_rng(4)
    q, c, r = (rng.normal(size=(500, 5)) for _ in range(3))
    out = triple_angles(q, c, r)
    lo, hi = sgi_bounds(out.theta_qc, out.theta_rc)
    assert np.all(out.sgi >= lo - 1e-9) and np.all(out.sgi <= hi + 1e-9)
    lo, hi = sgi_bounds(1e-9, 0.7)
    assert lo[0] == pytest.approx(1.0, abs=1e-6) and hi[0] == pytest.approx(1.0, abs=1e-6)
