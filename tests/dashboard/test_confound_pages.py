"""Length matching, groups, held-out thresholds and the retrieval diagnosis order: sgi_core's numbers on screen."""

import json
from pathlib import PurePosixPath

import numpy as np
import pandas as pd
import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import app_test

from dashboard.views.texts import plain
from sgi_core import evaluation
from sgi_core.embedding import backend_used, load_encoder
from sgi_core.policy.file import policy_from_json
from sgi_core.policy.making import make_policy
from sgi_core.policy.references import FEATURE_NAMES, feature_values
from sgi_core.render import figures as charts
from sgi_core.retrieval import DIAGNOSES
from sgi_core.scores.baselines import response_length
from sgi_core.scores.oriented import oriented_scores
from sgi_core.scores.selection import trivial_names
from sgi_core.stats.length_matched import length_matched_auroc
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import (
    MODEL,
    app_n_boot,
    array,
    assert_clean,
    figures,
    goto,
    metric,
    upload,
)

SAMPLE = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)


def table_with(at, column: str) -> pd.DataFrame:
    (found,) = [df.value for df in at.dataframe if column in df.value.columns]
    return found


def interval(ci, spec: str = ".3f") -> str:
    return f"[{ci[0]:{spec}}, {ci[1]:{spec}}]"


def test_overview_shows_the_length_matched_auroc(app, sample_scores):
    goto(app, "overview")
    assert_clean(app)
    labels, lengths = sample_scores["label"], response_length(sample_scores["response"])
    sgi = length_matched_auroc(labels, sample_scores["sgi"], lengths, n_boot=app_n_boot())
    assert metric(app, "AUROC, length-matched") == f"{sgi.auroc:.3f}"
    (sentence,) = [c.value for c in app.caption if c.value.startswith("Length-matched AUROC")]
    assert sentence.startswith(f"Length-matched AUROC {sgi.auroc:.3f} {interval(sgi.auroc_ci)} against "
                               f"{sgi.plain_auroc:.3f} unmatched: the length confound controlled")
    assert f"Method: {sgi.method} ({sgi.n_bins} bins;" in sentence
    assert f"{sgi.n_used:,} rows used, {sgi.n_dropped:,} dropped in {sgi.n_bins_dropped} bins" in sentence

    shown = table_with(app, "length-matched AUROC").set_index("score")
    baselines = oriented_scores(sample_scores, trivial_names(sample_scores.columns))
    expected = {"SGI": sgi}
    for name in ("theta_rq", "lexical_groundedness"):
        expected[charts.BASELINE_NAMES[name]] = length_matched_auroc(labels, baselines[name], lengths,
                                                                                n_boot=app_n_boot())
    assert shown.index.tolist() == list(expected)
    for name, result in expected.items():
        row = shown.loc[name]
        assert row["length-matched AUROC"] == pytest.approx(result.auroc)
        assert row["AUROC"] == pytest.approx(result.plain_auroc)
        assert row["95% CI"] == interval(result.auroc_ci)
        assert row["length-matched d"] == pytest.approx(result.cohens_d)
        assert (row["rows used"], row["rows dropped"]) == (result.n_used, result.n_dropped)


def generator_file() -> tuple[pd.DataFrame, np.ndarray]:
    """The sample with a `generator` column: one model wrote only hallucinated answers, two wrote both kinds."""
    label = SAMPLE["label"].astype(int).to_numpy()
    position = np.arange(len(SAMPLE))
    # Rows come in (grounded, hallucinated) pairs: whole pairs alternate between llama and mistral.
    generator = np.where((label == 0) & (position % 3 == 0), "gpt-x",
                         np.where(position // 2 % 2 == 0, "llama", "mistral"))
    return SAMPLE.drop(columns=["answer_type"]).assign(generator=generator), generator


def test_group_section_shows_the_confound_and_each_group(app, sample_scores):
    frame, generator = generator_file()
    upload(app, "generators.csv", frame.to_csv(index=False).encode())
    goto(app, "strata")
    assert_clean(app)
    assert app.selectbox(key="strata.group_column").options == ["generator"]
    expected = evaluation.group_analysis(sample_scores["label"], sample_scores["sgi"], generator, column="generator",
                                         n_boot=app_n_boot())
    assert expected.confound.level == "warning" and expected.confound.pure_groups == ("gpt-x",)
    (warning,) = [w.value for w in app.warning if "Authorship confound" in w.value]
    assert f"**Authorship confound.** {plain(expected.confound.message)}." in warning

    shown = table_with(app, "share grounded").set_index("group")
    assert shown.index.tolist() == [g.group for g in expected.groups] == ["gpt-x", "llama", "mistral"]
    for group in expected.groups:
        row = shown.loc[group.group]
        assert (row["grounded"], row["hallucinated"]) == (group.n_valid, group.n_halluc)
        np.testing.assert_allclose([row["AUROC"], row["Cohen's d"]], [group.auroc, group.cohens_d])
        if not np.isnan(group.auroc):
            assert row["AUROC 95% CI"] == interval(group.auroc_ci)
            assert row["d 95% CI"] == interval(group.cohens_d_ci, "+.2f")

    (forest,) = [f for f in figures(app) if f["layout"].get("title", {}).get("text", "").startswith("SGI within")]
    auroc_trace, d_trace = forest["data"]
    np.testing.assert_allclose(array(auroc_trace["x"]).astype(float), [g.auroc for g in expected.groups])
    np.testing.assert_allclose(array(d_trace["x"]).astype(float), [g.cohens_d for g in expected.groups])
    upper = [g.auroc_ci[1] - g.auroc for g in expected.groups]
    np.testing.assert_allclose(array(auroc_trace["error_x"]["array"]).astype(float), upper)


def test_group_section_on_the_sample_and_without_a_group_column(app, sample_scores):
    goto(app, "strata")
    assert_clean(app)
    # The sample's only categorical column, answer_type (right/hallucinated), is the label: no group.
    assert not any("Authorship confound" in w.value for w in app.warning)
    assert any("no column to group by" in i.value for i in app.info)

    upload(app, "plain.csv", SAMPLE.drop(columns=["answer_type"]).to_csv(index=False).encode())
    goto(app, "strata")
    assert_clean(app)
    (info,) = [i.value for i in app.info if "no column to group by" in i.value]
    assert "`generator`" in info and "`pair_id`" in info


@pytest.fixture
def media(monkeypatch) -> dict:
    """Bytes of every file the app hands to the browser (download buttons), by file id."""
    stored = {}

    class Recording(MemoryMediaFileStorage):
        def load_and_get_id(self, path_or_data, mimetype, kind, filename=None):
            file_id = super().load_and_get_id(path_or_data, mimetype, kind, filename)
            stored[file_id] = self.get_file(file_id).content
            return file_id

    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", Recording)
    return stored


def test_threshold_that_holds_and_its_policy(app, sample_scores, media):
    page = goto(app, "calibration")
    assert_clean(page)
    labels, scores = sample_scores["label"], sample_scores["sgi"]
    features = {k: v for k, v in feature_values(sample_scores, scores.to_numpy()).items() if k != "score"}
    policy, holdout = make_policy(labels, scores, model=MODEL, calibration="platt", method="youden",
                                             groups=sample_scores["pair_id"].astype(str).to_numpy(),
                                             features=features)
    held = holdout.heldout
    assert metric(page, "Held-out precision") == f"{held.precision:.3f}"
    assert metric(page, "Held-out recall") == f"{held.recall:.3f}"
    assert metric(page, "Held-out flag rate") == f"{held.flag_rate:.3f}"
    (caption,) = [c.value for c in page.caption if c.value.startswith("Flag SGI <")]
    assert caption.startswith(f"Flag SGI < {holdout.threshold:.4f}: chosen on {holdout.n_dev:,} development rows")
    assert f"judged on {holdout.n_heldout:,} held-out rows (rows with the same pair\\_id on one side)" in caption
    assert (f"precision {interval(holdout.precision_ci)}, recall {interval(holdout.recall_ci)}, "
            f"flag rate {interval(holdout.flag_rate_ci)}") in caption
    assert any("`python -m sgi_core gate FILE --policy policy.json`" in m.value for m in page.markdown)

    (button,) = [b for b in page.get("download_button") if b.proto.label == "Download the policy (JSON)"]
    raw = media[PurePosixPath(button.proto.url).stem]
    shown = policy_from_json(raw.decode())
    # The policy records what made the scores: the app's model at fp32 on the backend that ran it.
    assert (shown.model_precision, shown.model_backend) == ("fp32", backend_used(load_encoder(MODEL)))
    unrecorded = {"created": None, "model_precision": None, "model_backend": None}
    assert {**shown.to_dict(), **unrecorded} == {**policy.to_dict(), **unrecorded}
    assert shown.threshold == holdout.threshold and shown.model == MODEL
    # What the monitor needs: the held-out counts and the per-class references of every monitored feature.
    assert shown.heldout_counts == {"tp": held.tp, "fp": held.fp, "fn": held.fn, "tn": held.tn}
    assert set(shown.references) == set(FEATURE_NAMES)


def test_holdout_rule_and_grouping_follow_the_widgets(app, sample_scores):
    page = goto(app, "calibration")
    page.selectbox(key="calibration.holdout_groups").set_value("question").run()
    page.selectbox(key="calibration.holdout_rule").set_value("target_recall").run()
    page.number_input(key="calibration.holdout_target").set_value(0.8).run()
    assert_clean(page)
    _, holdout = make_policy(sample_scores["label"], sample_scores["sgi"], model=MODEL,
                                        method="target_recall", target=0.8,
                                        groups=sample_scores["question"].to_numpy())
    assert metric(page, "Held-out recall") == f"{holdout.heldout.recall:.3f}"
    (caption,) = [c.value for c in page.caption if c.value.startswith("Flag SGI <")]
    assert f"Flag SGI < {holdout.threshold:.4f}" in caption and "'reach a recall 0.8'" in caption
    assert "(rows with the same question on one side)" in caption


def test_retrieval_diagnosis_order_and_rules_come_from_the_library(app, sample_scores):
    frame = SAMPLE.copy()
    position = np.arange(len(frame))
    # Every third row misses; the others find the relevant id at rank 2, so SGI decides generation vs ranking.
    frame["retrieved_ids"] = [json.dumps(["x", f"d{i}"]) if i % 3 else "x|y" for i in position]
    frame["relevant_ids"] = [f"d{i}" for i in position]
    upload(app, "rag.csv", frame.to_csv(index=False).encode())
    goto(app, "retrieval")
    assert_clean(app)
    shown = table_with(app, "diagnosis")
    assert shown["diagnosis"].tolist() == [d.name for d in DIAGNOSES]
    assert shown["rule"].tolist() == [d.rule for d in DIAGNOSES]
    order = " → ".join(f"**{d.name}**" for d in DIAGNOSES)
    assert any(f"tested in this order: {order}" in c.value for c in app.caption)

    found = position % 3 != 0
    grounded = sample_scores["sgi"].to_numpy() >= 1.0
    by_hand = {"no relevant ids": 0, "retrieval miss": int((~found).sum()),
               "generation": int((found & ~grounded).sum()), "ranking": int((found & grounded).sum()), "ok": 0}
    assert shown.set_index("diagnosis")["n"].to_dict() == by_hand


def test_a_split_that_cannot_hold_both_labels_is_explained(app):
    # Two batches, one of hallucinated rows only: whole batches on one side leave a half with one label.
    batch = np.where((SAMPLE["label"] == "1") | (np.arange(len(SAMPLE)) == 1), "a", "b")
    upload(app, "batches.csv", SAMPLE.assign(batch=batch).to_csv(index=False).encode())
    page = goto(app, "calibration")
    assert page.selectbox(key="calibration.holdout_groups").options == ["pair_id", "rows with the same question",
                                                                       "batch"]
    page.selectbox(key="calibration.holdout_groups").set_value("batch").run()
    assert not page.exception
    assert "has only one label class" in page.error[0].value
    assert any("leave a half with one label only" in i.value for i in page.info)
    assert not [m for m in page.metric if m.label.startswith("Held-out")]
