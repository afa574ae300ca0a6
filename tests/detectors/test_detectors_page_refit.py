"""Detectors page, "Compare two scores" against the combined detector: the refit bootstrap, never DeLong's test.

(An AppTest of dashboard/app_pages/detectors.py; it lives here beside the library tests of the refit comparison.)
"""

import numpy as np

from dashboard.services.detector_services import COMBINED_LABEL
from sgi_core.detectors.registry import FAMILIES
from sgi_core.detectors.report import compare_with_combined, detector_report
from sgi_core.embedding import load_encoder
from sgi_core.io.triples import load_triples
from sgi_core.render.numbers import format_ci
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import MODEL, app, assert_clean, goto, metric  # noqa: F401 (app is a fixture)

LABEL_FREE = tuple(kind for kind, family in FAMILIES.items() if kind != "reference" and family.resource is None)


def test_combined_is_compared_by_the_refit_bootstrap_and_gets_no_mcnemar(app):  # noqa: F811
    goto(app, "detectors")
    app.checkbox(key="detectors.family.reference").uncheck().run()
    next(b for b in app.button if b.label == "Compute the detectors").click().run()
    assert_clean(app)
    assert app.selectbox(key="detectors.compare_b").value == COMBINED_LABEL

    table = load_triples(SAMPLE_CSV)
    scored = score_table(table, load_encoder(MODEL))
    report, scores = detector_report(table, scored, load_encoder(MODEL), model=MODEL, kinds=LABEL_FREE, n_boot=1000,
                                     seed=0)
    expected = compare_with_combined(table, scored, scores, scored["sgi"].to_numpy(), refitted="b",
                                     n_folds=report.n_folds, seed=0)
    assert metric(app, "AUROC A") == f"{expected.auroc_a:.3f}"
    assert metric(app, "AUROC B") == f"{expected.auroc_b:.3f}" == f"{report.detectors['combined'].auroc:.3f}"
    assert metric(app, "AUROC A − B") == f"{expected.difference:+.3f}"
    assert metric(app, "resamples") == f"{expected.n_boot:,}"
    assert metric(app, "p (two-sided)") == f"{expected.p_value:.3g}"
    assert not [m for m in app.metric if m.label == "DeLong z"]
    assert any(f"95% CI {format_ci(expected.ci, '+.3f')} (refit percentile bootstrap)" in c.value for c in app.caption)
    assert any("McNemar's test is not run with the combined detector" in block.value for block in app.info)
    assert not [df for df in app.dataframe if "B right" in df.value.columns]
    # The families table says how each interval was made; the caption says the combination's refits.
    families = next(df.value for df in app.dataframe if "AUROC leaky (not a result)" in df.value.columns)
    assert families.set_index("detector").loc[COMBINED_LABEL, "interval"] == "bootstrap refitting the model"
    assert any("refit the model in each of 200 bootstrap resamples" in c.value for c in app.caption)
    assert np.isfinite(expected.ci).all()
