import json
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

from sgi_core.errors import SGIInputError
from sgi_core.evaluation import BeyondLengthResult, beyond_length
from sgi_core.evaluation.beyond_length import length_verdict
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.scores import TRIVIAL, oriented_scores
from sgi_core.scores.baselines import LEXICAL_FLAG_BELOW, lexical_groundedness, response_length


def test_response_length_counts_characters():
    assert response_length(["Paris", "", "Ünïcode", None]).tolist() == [5, 0, 7, 0]


def test_lexical_groundedness_hand_computed():
    # "the", "is", "of" are stopwords. Response 1: capital, paris -> both in context.
    # Response 2: eiffel, tower, berlin -> only "tower" in context: 1/3.
    # Response 3: repeated tokens count each time: paris, paris, rome -> 2/3.
    out = lexical_groundedness(
        ["The capital is Paris", "Eiffel Tower of Berlin", "Paris, Paris, Rome"],
        ["Paris is the capital of France", "A tower in Paris", "paris"],
    )
    assert out.tolist() == pytest.approx([1.0, 1 / 3, 2 / 3])
    assert LEXICAL_FLAG_BELOW == 0.1


def test_lexical_groundedness_without_content_words_is_nan_with_warning():
    with pytest.warns(UndefinedStatisticWarning, match="1 responses have no content word"):
        out = lexical_groundedness(["it is", "Paris"], ["Paris", "Paris"])
    assert math.isnan(out[0]) and out[1] == 1.0


def test_lexical_groundedness_length_mismatch_raises():
    with pytest.raises(SGIInputError, match="2 responses but 1 contexts"):
        lexical_groundedness(["a", "b"], ["c"])


def test_trivial_scores_orientation_and_order():
    frame = pd.DataFrame(
        {"response": ["Paris", "A long invented sentence"], "context": ["Paris, France", "Paris"],
         "theta_rq": [1.2, 0.6]},
        index=[10, 3],
    )
    out = oriented_scores(frame, TRIVIAL)
    # The registry's trivial scores, in its order: a new baseline is one registry entry and its function.
    assert list(out.columns) == list(TRIVIAL)
    assert list(out.index) == [10, 3]
    assert out["neg_response_length"].tolist() == [-5, -24]
    # The short, context-drawn answer scores higher on every baseline (higher = grounded).
    assert (out.iloc[0] > out.iloc[1]).all()


def test_baselines_need_text_columns():
    with pytest.raises(SGIInputError, match="word-overlap baseline needs the columns context"):
        oriented_scores(pd.DataFrame({"response": ["a"]}), ["lexical_groundedness"])
    with pytest.raises(SGIInputError, match="response-length baseline needs the column response"):
        oriented_scores(pd.DataFrame({"context": ["a"]}), ["neg_response_length"])


def _toy(n=400, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([1.0, 0.0], n // 2)
    length = rng.normal(50, 10, n) - 8 * y  # shorter when grounded
    return rng, y, length


def test_length_alone_auroc_is_the_out_of_fold_auroc_of_length():
    # A logistic model on a monotone transform of one feature ranks test rows by that feature.
    rng, y, length = _toy()
    res = beyond_length(length, rng.normal(size=len(y)), y, n_splits=5, seed=4)
    folds = StratifiedKFold(5, shuffle=True, random_state=4)
    per_fold = [roc_auc_score(y[test], -length[test]) for _, test in folds.split(length[:, None], y)]
    assert res.auroc_length == pytest.approx(np.mean(per_fold))
    assert res.n == len(y) and len(res.fold_deltas) == 5


def test_noise_score_adds_nothing_and_informative_score_adds_signal():
    rng, y, length = _toy()
    noise = beyond_length(length, rng.normal(size=len(y)), y)
    assert abs(noise.delta) < 0.02
    assert noise.verdict.startswith("SGI adds no consistent signal beyond response length")
    useful = beyond_length(length, y + rng.normal(0, 0.7, len(y)), y)
    assert useful.delta > 0.05
    assert useful.verdict.startswith("SGI adds clear signal beyond response length")


def test_verdict_names_the_length_confound():
    text = length_verdict(0.95, 0.951, (0.001, -0.002, 0.003))
    assert text.startswith("SGI adds no consistent signal")
    assert "labels are confounded with answer length" in text
    assert "small signal" in length_verdict(0.7, 0.71, (0.01, 0.01))
    assert "confounded" not in length_verdict(0.7, 0.71, (0.01, 0.01))


def test_beyond_length_too_few_rows_warns():
    with pytest.warns(UndefinedStatisticWarning, match="at least 5 rows of each class"):
        res = beyond_length([1, 2, 3, 4], [1.0, 2.0, 3.0, 4.0], [1, 0, 1, 0])
    assert math.isnan(res.delta) and res.verdict.startswith("undefined")


def test_beyond_length_bad_splits_raise():
    with pytest.raises(SGIInputError, match="'n_splits' parameter of beyond_length must be an int >= 2"):
        beyond_length([1, 2], [1.0, 2.0], [1, 0], n_splits=1)


def test_json_round_trip():
    rng, y, length = _toy(100)
    res = beyond_length(length, rng.normal(size=100), y)
    assert BeyondLengthResult.from_dict(json.loads(json.dumps(res.to_dict()))) == res


def test_lexical_groundedness_ignores_case_and_context_word_order():
    responses = ["The Eiffel Tower is in Paris", "Berlin has a tower"]
    contexts = ["paris hosts the eiffel tower", "A TOWER stands in Berlin"]
    base = lexical_groundedness(responses, contexts)
    shuffled = [" ".join(reversed(c.split())) for c in contexts]
    assert lexical_groundedness([r.upper() for r in responses], shuffled).tolist() == base.tolist()


def test_beyond_length_invariant_to_monotone_transforms():
    # Features are mapped to normal quantiles first, so only their order matters.
    rng, y, length = _toy(300, seed=5)
    score = y + rng.normal(0, 1.0, len(y))
    base = beyond_length(length, score, y)
    moved = beyond_length(np.exp(length / 10), score ** 3, y)
    assert moved.auroc_length == pytest.approx(base.auroc_length, abs=1e-3)
    assert moved.auroc_length_score == pytest.approx(base.auroc_length_score, abs=1e-3)


@pytest.mark.parametrize("delta, folds, level, words", [
    (0.05, (0.04, 0.06), "clear", "adds clear signal"),
    (0.05, (-0.01, 0.11), "none", "adds no consistent signal"),  # a big mean gain that one fold contradicts
    (0.01, (0.01, 0.01), "small", "adds a small signal"),
    (0.001, (0.001, 0.001), "none", "adds no consistent signal"),
])
def test_verdict_level_and_sentence_agree(delta, folds, level, words):
    from sgi_core.evaluation.beyond_length import length_level

    assert length_level(delta, folds) == level
    assert words in length_verdict(0.7, 0.7 + delta, folds)
