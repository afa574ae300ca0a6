"""The score registry: how each score is made and oriented, and its labels used only where scores are drawn."""

import ast

import numpy as np
import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.scores import BASELINES, TRIVIAL, ScoreSpec, column_spec, oriented_scores
from sgi_core.scores.registry import BASELINE_LABELS, REVERSED_LABELS, SCORES
from tests.conftest import REPO

#: Where a registered score's label may be written: the registry, and the drawing layer of the library.
LABEL_HOMES = (("sgi_core", "scores"), ("sgi_core", "render"))


def label_literals(root, labels) -> list[str]:
    """``path:line: 'label'`` for every string constant in sgi_core and dashboard equal to one of ``labels``."""
    found = []
    homes = [root.joinpath(*home) for home in LABEL_HOMES]
    for package in ("sgi_core", "dashboard"):
        for path in sorted((root / package).rglob("*.py")):
            if any(home in path.parents for home in homes):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in labels:
                    found.append(f"{path.relative_to(root)}:{node.lineno}: {node.value!r}")
    return found


def registered_labels() -> set[str]:
    return {spec.label for spec in SCORES.values()} | set(REVERSED_LABELS.values()) | set(BASELINE_LABELS.values())


def test_no_registered_label_is_written_outside_the_registry_and_the_renderer():
    assert label_literals(REPO, registered_labels()) == []


def test_the_label_check_finds_a_planted_label(tmp_path):
    page = tmp_path / "dashboard" / "app_pages" / "planted.py"
    page.parent.mkdir(parents=True)
    page.write_text('scores = {"SGI": 1.0}\nname = f"{x} SGI"\n', encoding="utf-8")
    (tmp_path / "sgi_core" / "render").mkdir(parents=True)
    (tmp_path / "sgi_core" / "render" / "names.py").write_text('LABEL = "SGI"\n', encoding="utf-8")
    found = label_literals(tmp_path, {"SGI"})
    # The dict key is a literal; the f-string's text is not the label itself; the renderer is the label's home.
    assert found == ["dashboard/app_pages/planted.py:1: 'SGI'"]


def test_oriented_scores_hand_computed():
    frame = pd.DataFrame({"response": ["Paris", "The capital of Spain"], "context": ["Paris, France", "Paris"],
                          "sgi": [1.4, 0.9], "theta_rc": [0.3, 1.1], "judge_score": ["0.8", ""]}, index=[7, 2])
    out = oriented_scores(frame, ["sgi", "theta_rc", "neg_response_length", "lexical_groundedness", "judge_score",
                                  column_spec("sgi", higher_is="hallucinated")])
    # Column names are the oriented names; hallucinated-high scores are negated; the frame's index is kept.
    assert list(out.columns) == ["sgi", "neg_theta_rc", "neg_response_length", "lexical_groundedness",
                                 "judge_score", "neg_sgi"]
    assert list(out.index) == [7, 2]
    np.testing.assert_array_equal(out["neg_theta_rc"], [-0.3, -1.1])
    np.testing.assert_array_equal(out["neg_response_length"], [-5.0, -20.0])
    # "capital" and "spain" are the content words of row 2; neither is in "paris": 0 of 2.
    np.testing.assert_array_equal(out["lexical_groundedness"], [1.0, 0.0])
    np.testing.assert_array_equal(out["judge_score"], [0.8, np.nan])
    np.testing.assert_array_equal(out["neg_sgi"], [-1.4, -0.9])


def test_oriented_scores_say_what_writes_a_missing_score():
    frame = pd.DataFrame({"response": ["a"], "context": ["b"]})
    with pytest.raises(SGIInputError, match="python -m sgi_core score"):
        oriented_scores(frame, ["sgi"])
    with pytest.raises(SGIInputError, match="report --detectors claims"):
        oriented_scores(frame, ["claim_min_support"])
    with pytest.raises(SGIInputError, match="detector scores must be numbers"):
        oriented_scores(pd.DataFrame({"judge_x": ["0.1", "high"]}), ["judge_x"])


def test_orientation_reads_blank_cells_as_nan_and_negates_hallucinated_high():
    np.testing.assert_array_equal(column_spec("x").oriented(["1", " ", None, "2.5"]), [1, np.nan, np.nan, 2.5])
    np.testing.assert_array_equal(column_spec("x", higher_is="hallucinated").oriented([0.2, 0.7]), [-0.2, -0.7])
    # A registered hallucinated-high score is negated by its entry alone.
    np.testing.assert_array_equal(SCORES["theta_rc"].oriented(pd.Series([0.3, 1.1], index=[5, 6])), [-0.3, -1.1])


@pytest.mark.parametrize("dtype", [np.float64, np.int64, "float32", "Float64", "str", "string[pyarrow]", object])
def test_every_kind_of_column_is_oriented_to_the_same_numbers(dtype):
    cells = pd.Series(["3", "1", "2"], index=[10, 11, 12]).astype(dtype)
    np.testing.assert_array_equal(column_spec("x", higher_is="hallucinated").oriented(cells), [-3.0, -1.0, -2.0])
    with_blank = pd.Series([0.5, None, 2.0], index=[7, 8, 9], dtype="float64")
    np.testing.assert_array_equal(column_spec("x").oriented(with_blank), [0.5, np.nan, 2.0])


def test_orientation_names_the_rows_that_are_not_finite_numbers():
    with pytest.raises(SGIInputError, match=r"must be numbers \(file 'f.csv', column 'judge', rows 2, 3\)"):
        column_spec("judge").oriented(["0.1", "high", "n/a?"], source="f.csv")
    with pytest.raises(SGIInputError, match=r"must be finite \(file 'f.csv', column 'judge', row 1\)"):
        column_spec("judge").oriented([np.inf, 0.2], source="f.csv")


def test_every_baseline_names_a_function_of_the_frame_and_is_trivial():
    assert BASELINES and set(BASELINES) <= set(TRIVIAL)
    frame = pd.DataFrame({"response": ["Paris"], "context": ["Paris"]})
    for name in BASELINES:
        spec = SCORES[name]
        assert spec.kind == "baseline" and spec.compute
        assert len(spec.raw_values(frame)) == 1
        assert name in REVERSED_LABELS and name in BASELINE_LABELS


def test_detector_scores_say_their_family_and_bad_specs_are_refused():
    from sgi_core.detectors.registry import FAMILIES

    for name, family in FAMILIES.items():
        assert all(spec.family == name for spec in family.scores)
    with pytest.raises(ValueError, match="compute must be 'module:function'"):
        ScoreSpec("x", "x", compute="no_colon")
