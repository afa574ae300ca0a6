"""Detectors page: the unsupported-specifics family shows its AUROC, length-matched AUROC and intervals."""

import numpy as np

from dashboard.services.detector_services import DETECTOR_NAMES
from sgi_core.detectors.registry import FAMILIES
from sgi_core.detectors.report import detector_report
from sgi_core.embedding import load_encoder
from sgi_core.io.triples import load_triples
from sgi_core.render.numbers import format_ci
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import MODEL, app_n_boot, assert_clean, goto


def test_specifics_row_equals_the_library(app):
    goto(app, "detectors")
    for kind, family in FAMILIES.items():
        if kind != "specifics" and family.resource is None:  # a family given a resource has no checkbox
            app.checkbox(key=f"detectors.family.{kind}").uncheck().run()
    next(b for b in app.button if b.label == "Compute the detectors").click().run()
    assert_clean(app)
    table = load_triples(SAMPLE_CSV)
    expected, _ = detector_report(table, score_table(table, load_encoder(MODEL)), load_encoder(MODEL), model=MODEL,
                                  kinds=("specifics",), n_boot=app_n_boot(), seed=0)
    shown = next(df.value for df in app.dataframe if "AUROC leaky (not a result)" in df.value.columns)
    row = shown.set_index("detector").loc[DETECTOR_NAMES["neg_specifics_unsupported_share"]]
    judged = expected.detectors["neg_specifics_unsupported_share"]
    np.testing.assert_allclose([row["AUROC"], row["length-matched AUROC"]],
                               [judged.auroc, judged.length_matched_auroc])
    assert row["AUROC 95% CI"] == format_ci(judged.auroc_ci)
    assert row["length-matched 95% CI"] == format_ci(judged.length_matched_auroc_ci)
    assert row["protocol"] == "label-free"
    assert any(FAMILIES["specifics"].explanation in caption.value for caption in app.caption)
