"""Columns that are the label are no group and no detector; ids are no score; the export has one label column."""

import io

import numpy as np
import pandas as pd

from dashboard import services
from dashboard.services import calibration_services
from sgi_core.io.scored import scored_table
from sgi_core.stats.calibration import fit_calibrator
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import assert_clean, goto, upload

SAMPLE = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)


def with_columns() -> pd.DataFrame:
    """The sample with a real group, a judge score, and a float copy of the label."""
    label = SAMPLE["label"].astype(float)
    rng = np.random.default_rng(0)
    return SAMPLE.assign(generator=np.where(np.arange(len(SAMPLE)) // 2 % 2 == 0, "llama", "mistral"),
                         judge=label * 0.5 + rng.normal(0, 0.5, len(SAMPLE)), label_copy=label * 2.0)


def test_label_copies_are_kept_out_of_groups_and_detectors_with_a_message(app):
    upload(app, "leaky.csv", with_columns().to_csv(index=False).encode())
    assert_clean(app)
    messages = [w.value.replace("\\", "") for w in app.warning]
    assert ("'answer_type' determines the label: each of its values goes with one label class only, so it is kept "
            "out of the groups (Strata, Calibration) and the detector score columns (Overview, Detectors).") in messages
    assert any(m.startswith("'label_copy' determines the label") for m in messages)
    goto(app, "strata")
    assert app.selectbox(key="strata.group_column").options == ["generator"]
    assert any(c.value.startswith("`answer\\_type` is not offered: it determines the label") for c in app.caption)
    goto(app, "overview")
    options = app.multiselect(key="detectors.columns").options
    assert "judge" in options and not {"answer_type", "label_copy", "pair_id", "id"} & set(options)
    goto(app, "detectors")
    assert app.multiselect(key="detectors.columns").options == options


def test_the_scored_exports_have_one_label_column(sample_scores):
    assert "input_label" in sample_scores.columns  # the reader keeps the input label's cells beside `label`
    for exported in (services.csv_bytes(sample_scores),
                     calibration_services.flagged_csv(
                         sample_scores, fit_calibrator(sample_scores["sgi"], sample_scores["label"]), 1.0)):
        table, _ = scored_table(pd.read_csv(io.BytesIO(exported)))
        assert "input_label" not in table.frame.columns
        assert table.frame["label"].tolist() == SAMPLE["label"].astype(float).tolist()


def test_keep_together_defaults_to_the_question_never_the_generator(app):
    system = np.where(np.arange(len(SAMPLE)) % 3 == 0, "gpt", "llama")
    upload(app, "systems.csv", SAMPLE.drop(columns=["pair_id"]).assign(system=system).to_csv(index=False).encode())
    goto(app, "calibration")
    box = app.selectbox(key="calibration.holdout_groups")
    assert box.options[0] == "rows with the same question" and box.value == "question" and "system" in box.options
    assert any("(rows with the same question on one side)" in c.value for c in app.caption)
