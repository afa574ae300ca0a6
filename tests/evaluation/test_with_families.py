"""The detector families' judgements join the file's one report: the verdict and the table read them there."""

import numpy as np
import pandas as pd
import pytest

from sgi_core.evaluation.judgement import judge_score
from sgi_core.evaluation.report import evaluate, with_declared, with_families
from sgi_core.evaluation.verdict import file_verdict, report_verdict
from sgi_core.render.tables import judgements_table
from sgi_core.scores.oriented import oriented_scores


@pytest.fixture
def scored():
    """120 labelled rows: SGI, θ(r,q), texts of two lengths, a judge column; two family scores beside them."""
    rng = np.random.default_rng(11)
    label = np.repeat([1.0, 0.0], 60)
    frame = pd.DataFrame({
        "label": label,
        "sgi": 1.0 + 0.2 * label + rng.normal(scale=0.2, size=120),
        "theta_rq": 1.2 + rng.normal(scale=0.1, size=120),
        "response": [("word " * int(n)).strip() for n in rng.integers(3, 30, size=120)],
        "context": ["word context " * 5] * 120,
        "judge_x": np.round(label + rng.normal(scale=0.8, size=120), 4),
    })
    families = pd.DataFrame({"lsgi": label + rng.normal(scale=0.5, size=120),
                             "specifics_unsupported_share": 1 - label + rng.normal(scale=0.7, size=120)})
    return frame, families


def _family_judgements(frame, families, n_boot=0):
    labels = frame["label"].to_numpy()
    return {"lsgi": judge_score(labels, families["lsgi"], lengths=None, protocol="crossfit", n_boot=n_boot),
            "neg_specifics_unsupported_share": judge_score(labels, -families["specifics_unsupported_share"],
                                                           lengths=None, n_boot=n_boot),
            "combined": judge_score(labels, families["lsgi"] + frame["sgi"], lengths=None,
                                    protocol="combined (out of fold)", n_boot=n_boot)}


def test_the_families_join_the_report_in_the_choosers_order_judged_once(scored):
    frame, families = scored
    report = evaluate(frame, n_boot=0)
    judged = _family_judgements(frame, families)
    merged = with_families(report, {"combined": judged["combined"], "neg_specifics_unsupported_share":
                                    judged["neg_specifics_unsupported_share"], "lsgi": judged["lsgi"]})
    # The families' order as computed, ``combined`` last whatever its place (the chooser's rule).
    assert list(merged.judgements) == [*report.judgements, "neg_specifics_unsupported_share", "lsgi", "combined"]
    assert all(merged.judgements[name] is judgement for name, judgement in judged.items())
    assert all(merged.judgements[name] is judgement for name, judgement in report.judgements.items())
    # The verdict's scores: the score, the scores held fixed (combined, fitted on the labels, left out), the trivial.
    assert list(merged.held_fixed) == ["sgi", "judge_x", "neg_specifics_unsupported_share", "lsgi",
                                       "neg_response_length", "lexical_groundedness", "theta_rq"]
    assert with_families(report, {}) is report


def test_a_family_carried_as_a_column_takes_the_familys_judgement_in_place(scored):
    frame, families = scored
    report = evaluate(frame.assign(lsgi=families["lsgi"]), n_boot=0)
    judged = _family_judgements(frame, families)
    merged = with_families(report, {"lsgi": judged["lsgi"]})
    assert list(merged.judgements) == list(report.judgements)
    assert merged.judgements["lsgi"] is judged["lsgi"] and merged.judgements["lsgi"].protocol == "crossfit"


def test_the_verdict_reads_the_family_scores_from_the_one_report(scored):
    frame, families = scored
    report = with_declared(evaluate(frame, n_boot=200), frame, ["judge_x"], n_boot=200)
    judged = _family_judgements(frame, families, n_boot=200)
    verdict = report_verdict(report, frame, families=judged, family_scores=families, n_boot=200)
    merged = with_families(report, judged)
    assert [score.name for score in verdict.scores] == list(merged.held_fixed)
    assert [c.detector for c in verdict.comparisons] == ["sgi", "judge_x", "lsgi", "neg_specifics_unsupported_share"]
    # Oracle: the verdict made from the oriented values themselves, every ROC computed afresh with the same settings.
    trivial = oriented_scores(frame, ["neg_response_length", "lexical_groundedness", "theta_rq"])
    direct = file_verdict(frame["label"], {"sgi": frame["sgi"], "judge_x": frame["judge_x"], "lsgi": families["lsgi"],
                                           "neg_specifics_unsupported_share": -families["specifics_unsupported_share"]},
                          {name: trivial[name] for name in trivial.columns}, n_boot=200)
    assert verdict == direct
    # A report that already holds the families gives the same verdict: the merge judges nothing twice.
    assert report_verdict(merged, frame, family_scores=families, n_boot=200) == verdict


def test_the_judgements_table_lists_the_verdicts_scores_in_its_order(scored):
    frame, families = scored
    merged = with_families(evaluate(frame, n_boot=0), _family_judgements(frame, families))
    verdict = report_verdict(merged, frame, family_scores=families, n_boot=0)
    table = judgements_table(merged)
    assert table["score"].tolist() == [score.name for score in verdict.scores]
    assert table["auroc"].tolist() == [judged.auroc for judged in merged.held_fixed.values()]
    # Each row's AUROC is the one the verdict states, in the stated direction (a flipped trivial score mirrored).
    stated = [1 - score.auroc.value if score.flipped else score.auroc.value for score in verdict.scores]
    np.testing.assert_allclose(table["auroc"], stated, rtol=0, atol=1e-12)
