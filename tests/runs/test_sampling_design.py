"""Labelling designs: the predictor's probability, reproducible draws in any row order, the plan."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sgi_core.errors import SGIInputError
from sgi_core.runs.sampling_design import halluc_probability, make_design, plan_labels, unit_uniforms
from sgi_core.stats.active_inference import UNIFORM_SHARE
from sgi_core.stats.calibration import fit_calibrator

KEYS = np.array([f"q{i}" for i in range(200)], dtype=object)


def _p(seed=0, n=200):
    return np.random.default_rng(seed).uniform(0, 1, (n, 2))


def test_the_predictors_probability_by_column_kind():
    frame = pd.DataFrame({"judge_p": [0.9, 0.2, np.nan], "neg_p_halluc": [-0.1, -0.7, -1.0]})
    assert halluc_probability(frame, "judge_p").tolist() == pytest.approx([0.1, 0.8, 0.5])  # NaN: most unsure
    assert halluc_probability(frame, "neg_p_halluc").tolist() == pytest.approx([0.1, 0.7, 1.0])


def test_a_policys_calibrator_maps_any_score():
    rng = np.random.default_rng(0)
    y = rng.binomial(1, 0.5, 200)
    score = y + rng.normal(0, 1, 200)
    calibrator = fit_calibrator(score, y, method="platt")
    policy = type("P", (), {"score_column": "sgi", "calibrator": calibrator.to_dict()})()
    frame = pd.DataFrame({"sgi": [-1.0, 0.5, 2.0]})
    assert halluc_probability(frame, "sgi", policy=policy).tolist() == pytest.approx(
        (1 - calibrator.predict([-1.0, 0.5, 2.0])).tolist())
    with pytest.raises(SGIInputError, match="the policy calibrates 'sgi', not the predictor 'other'"):
        halluc_probability(frame.assign(other=0.5), "other", policy=policy)


def test_a_score_that_is_no_probability_needs_a_policy():
    frame = pd.DataFrame({"sgi": [0.4, 1.7]})
    with pytest.raises(SGIInputError, match=r"'sgi' is not a probability: its values run from 0.4 to 1.7.*--policy"):
        halluc_probability(frame, "sgi")
    with pytest.raises(SGIInputError, match="'judge_x' is not in the run"):
        halluc_probability(frame, "judge_x")


def test_uniform_design_and_its_draw_by_hand():
    d = make_design(KEYS, np.full((200, 1), np.nan), design="uniform", budget=50, seed=4)
    assert (d.pi == 0.25).all()
    assert d.drawn.tolist() == (unit_uniforms(KEYS, 4) < 0.25).tolist()
    assert 30 <= d.n_drawn <= 70  # Binomial(200, 0.25): mean 50, sd 6.1


def test_active_design_follows_the_uncertainty_of_the_difference():
    p = np.array([[0.5, 0.5], [0.0, 0.0], [0.5, 0.0], [0.0, 1.0]])
    d = make_design(["a", "b", "c", "d"], p, design="active", budget=1.5, seed=0, predictor="m")
    # u = sqrt(p_b (1 - p_b) + p_n (1 - p_n)) = (0.707, 0, 0.5, 0); pi = 1.5 (0.8 u / sum(u) + 0.05), none over 1
    u = np.array([np.sqrt(0.5), 0.0, 0.5, 0.0])
    assert d.pi.tolist() == pytest.approx((1.5 * (0.8 * u / u.sum() + 0.05)).tolist())
    prediction, variance = d.target()
    assert prediction.tolist() == [0.0, 0.0, -0.5, 1.0] and variance.tolist() == [0.5, 0.0, 0.25, 0.0]


@given(st.integers(0, 2 ** 31), st.sampled_from(["uniform", "active"]), st.randoms(use_true_random=False))
def test_reproducible_from_the_seed_and_independent_of_row_order(seed, design, random):
    p = _p(seed % 7)
    d = make_design(KEYS, p, design=design, budget=40, seed=seed, predictor="m")
    again = make_design(KEYS, p, design=design, budget=40, seed=seed, predictor="m")
    assert d.pi.tolist() == again.pi.tolist() and d.drawn.tolist() == again.drawn.tolist()
    order = list(range(len(KEYS)))
    random.shuffle(order)
    shuffled = make_design(KEYS[order], p[order], design=design, budget=40, seed=seed, predictor="m")
    assert shuffled.pi.tolist() == d.pi[order].tolist() and shuffled.drawn.tolist() == d.drawn[order].tolist()
    assert shuffled.folds().tolist() == d.folds()[order].tolist()
    assert d.pi.sum() == pytest.approx(40) and d.pi.min() >= UNIFORM_SHARE * 40 / 200 - 1e-12


def test_another_seed_draws_other_keys():
    a, b = (make_design(KEYS, _p(), design="active", budget=40, seed=s, predictor="m") for s in (1, 2))
    assert a.pi.tolist() == b.pi.tolist() and a.drawn.tolist() != b.drawn.tolist()


def test_design_errors():
    with pytest.raises(SGIInputError, match="an active design needs a predictor"):
        make_design(KEYS, _p(), design="active", budget=40, seed=0)
    with pytest.raises(SGIInputError, match=r"in \(0, 200\], the keys at hand; got 300"):
        make_design(KEYS, _p(), design="uniform", budget=300, seed=0)
    with pytest.raises(SGIInputError, match="distinct keys"):
        make_design(["a", "a"], [[0.1], [0.2]], design="uniform", budget=1, seed=0)
    with pytest.raises(SGIInputError, match="the seed must be an int >= 0"):
        make_design(KEYS, _p(), design="uniform", budget=4, seed=-1)
    with pytest.raises(SGIInputError, match="must be one of uniform, active"):
        make_design(KEYS, _p(), design="stratified", budget=4, seed=0)


def test_the_plan_needs_fewer_keys_actively_when_the_predictor_is_sure_of_many():
    p = np.r_[np.full((150, 2), 0.02), np.full((50, 2), 0.5)]
    d = make_design(KEYS, p, design="active", budget=60, seed=0, predictor="m")
    plan = plan_labels(d, 0.15)
    assert plan.keys_active < 0.7 * plan.keys_uniform and plan.n_units == 200
    with pytest.raises(SGIInputError, match="a plan needs a predictor"):
        plan_labels(make_design(KEYS, _p(), design="uniform", budget=4, seed=0), 0.1)


def test_an_unchanged_key_needs_no_label_for_the_difference():
    # Same texts in both runs, same label: the difference is 0, so the key keeps only the uniform floor.
    p = np.full((4, 2), 0.5)
    d = make_design(["a", "b", "c", "d"], p, design="active", budget=2, seed=0, predictor="m",
                    unchanged=[True, False, False, True])
    assert d.pi.tolist() == pytest.approx([0.1, 0.9, 0.9, 0.1])  # 2 (0.8 * 0 + 0.05), 2 (0.8 / 2 + 0.05)
    prediction, variance = d.target()
    assert variance.tolist() == [0.0, 0.5, 0.5, 0.0] and prediction.tolist() == [0.0] * 4
