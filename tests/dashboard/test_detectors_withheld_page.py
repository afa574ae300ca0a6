"""Detectors page below the events-per-feature floor: each combination shows its reason, no number, and is never
offered."""

import numpy as np
import pandas as pd

from dashboard.services.detector_services import COMBINED_LABEL, LENGTH_LABEL
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import assert_clean, figures, goto, upload

SAMPLE = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
#: SGI and the file's judge column: 2 features, 20 rows of the smaller class needed, 19 given.
COLUMNS_REASON = "withheld: 2 features need at least 20 rows of the smaller class; there are 19"
#: SGI, three angles, length, word overlap and the three label-free detector scores: 9 features.
FAMILIES_REASON = "withheld: 9 features need at least 90 rows of the smaller class; there are 19"


def small_file() -> bytes:
    """30 grounded and 19 hallucinated rows of the bundled sample, with a judge column that tracks the label."""
    rows = pd.concat([SAMPLE[SAMPLE["label"] == "1"].head(30), SAMPLE[SAMPLE["label"] == "0"].head(19)])
    noise = np.random.default_rng(5).normal(scale=0.7, size=len(rows))
    rows["judge_score"] = [f"{v:.4f}" for v in rows["label"].astype(float).to_numpy() + noise]
    return rows.to_csv(index=False).encode()


def test_withheld_combinations_show_their_reason_and_are_never_compared(app):
    upload(app, "small.csv", small_file())
    goto(app, "detectors")
    app.multiselect(key="detectors.columns").set_value(["judge_score"]).run()
    app.checkbox(key="detectors.family.reference").uncheck().run()
    next(b for b in app.button if b.label == "Compute the detectors").click().run()
    assert_clean(app)

    families = next(df.value for df in app.dataframe if "AUROC leaky (not a result)" in df.value.columns)
    row = families.set_index("detector").loc[COMBINED_LABEL]
    assert row["AUROC 95% CI"] == FAMILIES_REASON and np.isnan(row[["AUROC", "Cohen's d"]].to_numpy(float)).all()
    columns = next(df.value for df in app.dataframe if "Spearman with SGI" in df.value.columns).set_index("score")
    assert columns.loc["combined (logistic, out of fold)", "note"] == COLUMNS_REASON
    assert columns.loc["combined (logistic, out of fold)", ["AUROC", "cross-validated AUROC"]].isna().all()
    warnings = [block.value for block in app.warning]
    assert f"{COMBINED_LABEL} {FAMILIES_REASON}" in warnings and COLUMNS_REASON in warnings
    assert any(f"no number is shown for it ({FAMILIES_REASON})." in c.value for c in app.caption)
    assert any(f"no number is shown for it ({COLUMNS_REASON})." in c.value for c in app.caption)
    curves = [trace["name"] for figure in figures(app) for trace in figure["data"]]
    assert not [name for name in curves if name.startswith(("combined", COMBINED_LABEL))]

    score_b = app.selectbox(key="detectors.compare_b")
    assert COMBINED_LABEL not in score_b.options
    assert COMBINED_LABEL not in app.selectbox(key="detectors.compare_a").options
    assert score_b.value == LENGTH_LABEL
    assert not [m for m in app.metric if m.label == "resamples"]  # DeLong's test between two fixed scores
