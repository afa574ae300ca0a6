import numpy as np
import pandas as pd
import pytest

from sgi_core.detectors import question_groups, reference_sets
from sgi_core.errors import SGIInputError
from sgi_core.stats.folds import crossfit_folds


def partition(groups) -> list[int]:
    """Group numbers renumbered by first appearance: what rows share a group, whatever the numbers."""
    return pd.factorize(np.asarray(groups))[0].tolist()


def test_question_groups_from_question_text_only():
    frame = pd.DataFrame({"question": ["a", "b", "a", "c", "b"]})
    assert partition(question_groups(frame)) == [0, 1, 0, 2, 1]
    assert sorted(set(question_groups(frame))) == [0, 1, 2]


def test_question_groups_join_pair_id_and_question_links():
    # Rows 0-1 share pair 7; row 2 has pair 8 but row 1's question, so 0, 1, 2 are one group;
    # row 3 has a blank pair id, which ties nothing, and a question of its own.
    frame = pd.DataFrame({"question": ["q1", "q2", "q2", "q3", "q4"], "pair_id": ["7", "7", "8", "", "9"]})
    assert partition(question_groups(frame)) == [0, 0, 0, 1, 2]


def test_question_groups_prefers_a_group_column_and_accepts_a_named_one():
    frame = pd.DataFrame({"question": ["a", "b", "c", "d"], "group": [1, 1, 2, 2], "topic": [1, 2, 2, 3]})
    assert partition(question_groups(frame)) == [0, 0, 1, 1]
    assert partition(question_groups(frame, group_column="topic")) == [0, 1, 1, 2]


def test_a_rows_group_and_fold_do_not_depend_on_the_row_order():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"question": [f"q{i % 40}" for i in range(120)], "pair_id": [str(i // 2) for i in range(120)]})
    labels = rng.integers(0, 2, len(frame)).astype(float)
    groups = question_groups(frame)
    folds = crossfit_folds(groups, y_true=labels, n_folds=5, seed=0)
    for seed in range(3):
        order = np.random.default_rng(seed).permutation(len(frame))
        shuffled = question_groups(frame.iloc[order].reset_index(drop=True))
        assert (shuffled == groups[order]).all()
        assert (crossfit_folds(shuffled, y_true=labels[order], n_folds=5, seed=0) == folds[order]).all()


def test_question_groups_errors():
    with pytest.raises(SGIInputError, match="no 'question' column"):
        question_groups(pd.DataFrame({"text": ["a"]}))
    with pytest.raises(SGIInputError, match="no column 'pair'"):
        question_groups(pd.DataFrame({"question": ["a"]}), group_column="pair")


def test_crossfit_folds_keep_groups_whole_and_balance_grounded_groups():
    rng = np.random.default_rng(3)
    groups = rng.integers(0, 300, size=1000)
    labels = rng.choice([1.0, 0.0, np.nan], size=1000)
    folds = crossfit_folds(groups, y_true=labels, n_folds=5, seed=1)
    assert pd.Series(folds).groupby(groups).nunique().max() == 1
    assert set(folds.tolist()) == {0, 1, 2, 3, 4}
    has_grounded = pd.Series(labels == 1.0).groupby(groups).any()
    fold_of_group = pd.Series(folds).groupby(groups).first()
    per_fold = fold_of_group[has_grounded].value_counts()
    assert per_fold.max() - per_fold.min() <= 1


def test_crossfit_folds_are_seeded():
    groups = np.repeat(np.arange(50), 2)
    assert np.array_equal(crossfit_folds(groups, seed=4), crossfit_folds(groups, seed=4))
    assert not np.array_equal(crossfit_folds(groups, seed=4), crossfit_folds(groups, seed=5))


def test_crossfit_folds_errors():
    with pytest.raises(SGIInputError, match="'n_folds' parameter of crossfit_folds must be an int >= 2"):
        crossfit_folds([0, 1, 2], n_folds=1)
    with pytest.raises(SGIInputError, match="got 3 groups for 5 folds"):
        crossfit_folds([0, 0, 1, 2])
    with pytest.raises(SGIInputError, match="'y_true' has 2 values but 'groups' has 3"):
        crossfit_folds([0, 1, 2], y_true=[1, 0], n_folds=2)


def test_no_reference_set_holds_a_scored_row_or_its_question():
    # HaluEval-like: both answers of a question share pair_id; some questions recur under
    # another pair id, which must not let a twin of the scored question into its reference.
    rng = np.random.default_rng(0)
    n_pairs = 120
    questions = [f"question {i % 100}" for i in range(n_pairs)]
    frame = pd.DataFrame({"question": np.repeat(questions, 2), "pair_id": np.repeat(np.arange(n_pairs), 2)})
    labels = np.tile([1.0, 0.0], n_pairs)
    labels[rng.choice(len(labels), 30, replace=False)] = np.nan
    groups = question_groups(frame)
    folds = crossfit_folds(groups, y_true=labels, n_folds=5, seed=0)
    scored_all = []
    for scored, reference in reference_sets(folds, labels):
        assert not set(scored) & set(reference)
        assert not set(frame["question"].iloc[scored]) & set(frame["question"].iloc[reference])
        assert not set(groups[scored]) & set(groups[reference])
        assert (labels[reference] == 1.0).all()
        scored_all.extend(scored.tolist())
    assert sorted(scored_all) == list(range(len(frame)))


def test_leaky_reference_set_is_every_grounded_row_including_the_scored_ones():
    labels = np.array([1.0, 0.0, np.nan, 1.0])
    ((scored, reference),) = list(reference_sets([0, 0, 1, 1], labels, protocol="leaky"))
    assert scored.tolist() == [0, 1, 2, 3]
    assert reference.tolist() == [0, 3]


def test_reference_sets_rejects_an_unknown_protocol():
    with pytest.raises(SGIInputError, match="'protocol' parameter of reference_sets must be one of"):
        list(reference_sets([0], [1], protocol="transductive"))
