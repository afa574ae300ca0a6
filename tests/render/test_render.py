"""The renderer words results it is given; these pin its lines on hand-made results."""

import math

import numpy as np

from sgi_core.policy.baseline_gate import DropCheck
from sgi_core.policy.policy_gate import GateCheck, GateResult
from sgi_core.projection import TripleProjection
from sgi_core.render.lines import gate_check_line, projection_note, score_summary_lines
from sgi_core.render.numbers import format_ci
from sgi_core.render.runs import drop_check_line
from sgi_core.scoring import ScoreSummary


def test_one_interval_format_with_a_word_for_an_undefined_one():
    assert format_ci((0.1234, 0.98765)) == "[0.123, 0.988]"
    assert format_ci((-0.5, 0.25), "+.2f") == "[-0.50, +0.25]"
    assert format_ci((math.nan, 0.3)) == "" and format_ci((0.1, math.nan), undefined=None) is None


def test_drop_check_lines_pass_fail_and_unbounded():
    def check(lo, passed):
        return DropCheck("sgi", 40, 1.10, 1.08, -0.02, (lo, 0.01), 0.05, passed, True, "AUROC above 0.5")

    assert drop_check_line(check(-0.04, True)) == (
        "PASS sgi: lower 95% bound -0.04 >= -0.05 allowed (mean 1.1 -> 1.08, new - base -0.02 "
        "[-0.0400, +0.0100] over 40 keys)")
    assert drop_check_line(check(-0.09, False)).startswith("FAIL sgi: lower 95% bound -0.09 < -0.05 allowed")
    assert drop_check_line(check(math.nan, False)).startswith("FAIL sgi: no 95% interval (mean 1.1 -> 1.08")
    unvalidated = DropCheck("sgi", 40, 1.10, 1.08, -0.02, (-0.04, 0.01), 0.05, True, False, "no labels")
    assert drop_check_line(unvalidated).endswith("over 40 keys; NOT VALIDATED on these labels (no labels): the drop "
                                                 "says nothing about grounding)")


def test_gate_lines_name_the_bound_each_check_is_held_to():
    auroc = GateCheck("auroc", False, 0.61, 0.7, 0.68, (0.61, 0.75))
    recall = GateCheck("recall", True, 0.5, 0.6, 0.5, (0.3, 0.7))
    empty = GateCheck("precision", False, math.nan, 0.8, math.nan, (math.nan, math.nan))
    result = GateResult((auroc, recall, empty), False, "sgi", 1.25, 30, 20)
    assert gate_check_line(auroc, result) == ("FAIL auroc: lower 95% bound 0.610 < minimum 0.700 (AUROC 0.680 "
                                              "[0.610, 0.750], 30 grounded / 20 hallucinated rows)")
    assert gate_check_line(recall, result) == ("PASS recall: 0.500 [0.300, 0.700] flagging sgi < 1.25; upper bound "
                                               "reaches the policy's held-out 0.600")
    assert gate_check_line(empty, result) == "FAIL precision: undefined flagging sgi < 1.25 (zero denominator)"


def test_score_summaries_of_both_engines():
    local = ScoreSummary("local", rows=10, scored=9, seconds=1.0, new_texts=27, chunks=1)
    assert score_summary_lines(local, "out.csv") == ["27 new texts embedded, the rest from the cache",
                                                     "wrote 10 rows (9 scored) to out.csv"]
    ray = ScoreSummary("ray", rows=8, scored=8, seconds=2.04, shards=3, actors=1)
    assert score_summary_lines(ray, "out") == ["wrote 8 rows (8 scored) from 3 shards with 1 encoder actor in 2.0 s; "
                                               "Parquet dataset in out"]


def test_projection_note_only_for_a_map_fitted_on_a_sample():
    coords = np.zeros((10, 2))
    assert projection_note(TripleProjection("umap", coords, coords, coords, fit_points=30)) == ""
    assert projection_note(TripleProjection("pca", coords, coords, coords, fit_points=30)) == ""
    assert projection_note(TripleProjection("umap", coords, coords, coords, fit_points=12, seed=3)) == (
        "UMAP was fitted on 12 of the 30 points (the question, context and response of 4 triples drawn with seed 3); "
        "the other 18 points were placed into that map by UMAP's transform.")
