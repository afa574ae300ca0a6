import json
import math

import numpy as np
import pandas as pd
import pytest

from sgi_core.embedding import load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.evaluation import EvaluationReport, evaluate
from sgi_core.evaluation.judgement import judge_score
from sgi_core.io.triples import load_triples
from sgi_core.render.tables import baselines_table, table1, table2, table3, table5
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.scores import BASELINES, SCORES, TRIVIAL
from sgi_core.scores.baselines import response_length
from sgi_core.scoring import score_table
from sgi_core.stats.effect_size import cohens_d, effect_size
from sgi_core.stats.length_matched import length_matched_auroc
from sgi_core.stats.ranking import roc_analysis
from tests.conftest import SAMPLE_CSV


@pytest.fixture(scope="module")
def scored_sample():
    return score_table(load_triples(SAMPLE_CSV), load_encoder("hashing"))


def test_toy_frame_hand_computed():
    frame = pd.DataFrame({"label": [1, 1, 1, 0, 0, 0], "sgi": [1.3, 1.1, 1.2, 0.8, 1.0, 0.9]})
    rep = evaluate(frame, n_boot=0)
    # valid mean 1.2, halluc mean 0.9, both SD 0.1 -> d = 3; every valid above every halluc -> AUROC 1.
    summary = rep.summary()
    assert summary["cohens_d"] == pytest.approx(3.0) and summary["auroc"] == 1.0
    assert (summary["n"], summary["n_valid"], summary["n_halluc"]) == (6, 3, 3)
    assert summary["sgi_mean_valid"] == pytest.approx(1.2)
    assert rep.theta_qc_strata is None and rep.angle_effects is None and rep.beyond_length is None
    assert rep.baselines == {} and rep.notes == () and list(rep.judgements) == ["sgi"]


def test_report_parts_equal_direct_calls(scored_sample):
    with pytest.warns(UndefinedStatisticWarning, match=r"\d+ caveats?;"):
        rep = evaluate(scored_sample, n_boot=200, seed=3)
    y, s = scored_sample["label"], scored_sample["sgi"]
    assert rep.effect_size == effect_size(y, s, n_boot=200, seed=3)
    assert rep.roc == roc_analysis(y, s, n_boot=200, seed=3)
    assert [st.name for st in rep.length_strata] == ["question", "context", "response"]
    assert rep.strata_by_name("response").strata[0].n == 100
    # Every trivial score of the registry is judged, keyed by its name, after the score itself.
    assert list(rep.judgements) == ["sgi", *TRIVIAL] and list(rep.baselines) == list(TRIVIAL)
    # On HaluEval rows the length baseline beats SGI; the report must show it.
    length = rep.baselines["neg_response_length"]
    assert length.auroc > rep.roc.auroc
    assert "confounded with answer length" in rep.beyond_length.verdict
    # the report carries SGI's length-matched AUROC and each baseline's ROC curve
    assert rep.length_matched == length_matched_auroc(y, s, response_length(scored_sample["response"]), n_boot=200,
                                                      seed=3)
    curve = roc_analysis(y, -response_length(scored_sample["response"]), n_boot=0)
    np.testing.assert_array_equal(length.roc.fpr, curve.fpr)
    np.testing.assert_array_equal(length.roc.tpr, curve.tpr)
    judged = judge_score(y, -response_length(scored_sample["response"]), lengths=None, n_boot=200, seed=3)
    assert (length.auroc, length.auroc_ci, length.cohens_d, length.cohens_d_ci) == (
        judged.auroc, judged.auroc_ci, judged.cohens_d, judged.cohens_d_ci)


def test_json_round_trip(scored_sample):
    with pytest.warns(UndefinedStatisticWarning):
        rep = evaluate(scored_sample, n_boot=50)
    data = json.loads(json.dumps(rep.to_dict()))
    back = EvaluationReport.from_dict(data)
    assert back.to_dict() == rep.to_dict()
    assert back.roc == rep.roc and back.theta_qc_strata.strata[0].auroc == rep.theta_qc_strata.strata[0].auroc


def test_unlabelled_frame_gives_nan_and_notes(scored_sample):
    frame = scored_sample.assign(label=np.nan)
    with pytest.warns(UndefinedStatisticWarning, match=r"\d+ caveats?;"):
        rep = evaluate(frame, n_boot=100)
    assert math.isnan(rep.effect_size.cohens_d) and math.isnan(rep.roc.auroc)
    assert rep.n_valid == rep.n_halluc == 0 and rep.n_scored == 300
    assert any("AUROC needs both classes" in note for note in rep.notes)
    assert any("Cohen's d needs at least 2 rows" in note for note in rep.notes)
    assert all(st.n == 100 for st in rep.theta_qc_strata.strata)  # strata still count rows


def test_one_class_frame(scored_sample):
    frame = scored_sample[scored_sample["label"] == 1.0]
    with pytest.warns(UndefinedStatisticWarning):
        rep = evaluate(frame, n_boot=100)
    assert math.isnan(rep.roc.auroc) and rep.n_valid == 150
    assert rep.beyond_length.verdict.startswith("undefined")


def test_degenerate_rows_are_noted():
    frame = pd.DataFrame({
        "label": [1, 1, 0, 0], "sgi": [1.0, 1.1, 1.0, 0.9],
        "sgi_status": ["degenerate: context equals question (SGI ~1 whatever the response)", "ok", "ok", "ok"],
    })
    with pytest.warns(UndefinedStatisticWarning, match=r"\d+ caveats?;"):
        rep = evaluate(frame, n_boot=0)
    assert rep.n_degenerate == 1 and "1 scored rows have degenerate geometry" in rep.notes[-1]
    assert "left out of the means and Cohen's d" in rep.notes[-1]


def test_degenerate_rows_leave_means_and_d_but_not_auroc():
    # A response copying its context: SGI ~1e8 would dominate the grounded mean and d.
    sgi = [1.3, 1.1, 1.2, 1e8, 0.8, 1.0, 0.9, 0.7]
    status = ["ok"] * 3 + ["degenerate: response equals context (SGI unbounded)"] + ["ok"] * 4
    frame = pd.DataFrame({"label": [1, 1, 1, 1, 0, 0, 0, 0], "sgi": sgi, "sgi_status": status})
    with pytest.warns(UndefinedStatisticWarning, match=r"\d+ caveats?;"):
        rep = evaluate(frame, n_boot=0)
    assert rep.effect_size.mean_valid == pytest.approx(1.2)
    assert rep.effect_size.n_valid == 3
    assert rep.effect_size.cohens_d == pytest.approx(cohens_d([1.3, 1.1, 1.2], [0.8, 1.0, 0.9, 0.7]))
    assert rep.roc.auroc == 1.0 and rep.roc.n_pos == 4


def test_missing_columns_raise():
    with pytest.raises(SGIInputError, match="evaluation needs the columns sgi"):
        evaluate(pd.DataFrame({"label": [1, 0]}))
    with pytest.raises(SGIInputError, match="values other than 1"):
        evaluate(pd.DataFrame({"label": [1, 3], "sgi": [1.0, 2.0]}))


def test_other_score_column(scored_sample):
    with pytest.warns(UndefinedStatisticWarning):
        rep = evaluate(scored_sample, score_col="theta_rq", n_boot=0)
    assert rep.summary()["theta_rq_mean_valid"] == pytest.approx(
        scored_sample.loc[scored_sample["label"] == 1, "theta_rq"].mean()
    )
    assert f"{SCORES['theta_rq'].label} adds" in rep.beyond_length.verdict  # a registered score by its label


def test_tables_read_the_report(scored_sample):
    with pytest.warns(UndefinedStatisticWarning):
        rep = evaluate(scored_sample, n_boot=50)
    t1 = table1({"hashing": rep})
    assert t1.loc[0, "cohens_d"] == rep.effect_size.cohens_d and t1.loc[0, "auroc"] == rep.roc.auroc
    assert list(table2(rep)["label"]) == ["low", "medium", "high"]
    assert list(table3(rep)["text"]) == ["question"] * 3 + ["context"] * 3 + ["response"] * 3
    assert table5({"hashing": rep}).loc[0, "cohens_d_theta_rq"] == rep.angle_effects.cohens_d_theta_rq
    assert list(baselines_table({"hashing": rep})["score"]) == ["sgi (hashing)", *BASELINES, "theta_rq (hashing)"]
