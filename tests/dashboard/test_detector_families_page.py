"""Detectors page: computed detector families and the paired comparison show sgi_core's numbers on the same rows."""

import numpy as np
import pandas as pd

from dashboard.services.detector_services import DETECTOR_NAMES, DISAGREEMENT_ROWS
from sgi_core.detectors.registry import FAMILIES
from sgi_core.detectors.report import detector_report
from sgi_core.embedding import load_encoder
from sgi_core.evaluation import evaluate
from sgi_core.io.triples import load_triples
from sgi_core.render.numbers import format_ci
from sgi_core.scores.baselines import response_length
from sgi_core.scoring import score_table
from sgi_core.stats.length_matched import length_matched_auroc
from sgi_core.stats.paired import delong_test, disagreements, mcnemar_test
from sgi_core.stats.thresholds import choose_threshold
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import MODEL, app_n_boot, assert_clean, figures, goto, metric, upload

COMBINED = DETECTOR_NAMES["combined"]
#: Every registered family but the reference-set one, which needs labelled reference rows, and those computed only
#: when given a resource (a grounding model folder, tests/grounding/test_detectors_page.py).
LABEL_FREE = tuple(kind for kind, family in FAMILIES.items() if kind != "reference" and family.resource is None)


def compute(app, *, uncheck=()):
    for kind in uncheck:
        app.checkbox(key=f"detectors.family.{kind}").uncheck().run()
    next(b for b in app.button if b.label == "Compute the detectors").click().run()
    assert_clean(app)
    return app


def detector_table(app) -> pd.DataFrame:
    return next(df.value for df in app.dataframe if "AUROC leaky (not a result)" in df.value.columns)


def expected_report(path, kinds):
    table = load_triples(path)
    scored = score_table(table, load_encoder(MODEL))
    report, scores = detector_report(table, scored, load_encoder(MODEL), model=MODEL, kinds=kinds, n_boot=app_n_boot(),
                                     seed=0)
    return scored, report, scores


def assert_comparison(app, labels, a, b):
    """The DeLong metrics, the McNemar table and the disagreement rows equal the library's on ``a`` and ``b``."""
    delong = delong_test(labels, a, b)
    assert metric(app, "AUROC A") == f"{delong.auroc_a:.3f}"
    assert metric(app, "AUROC B") == f"{delong.auroc_b:.3f}"
    assert metric(app, "AUROC A − B") == f"{delong.difference:+.3f}"
    assert metric(app, "DeLong z") == f"{delong.z:+.2f}"
    assert metric(app, "p (two-sided)") == f"{delong.p_value:.3g}"
    assert any(f"95% CI [{delong.ci[0]:+.3f}, {delong.ci[1]:+.3f}]" in c.value for c in app.caption)
    thresholds = [choose_threshold(labels, s, method="youden").threshold for s in (a, b)]
    mcnemar = mcnemar_test(labels, a, b, *thresholds)
    table = next(df.value for df in app.dataframe if "B right" in df.value.columns)
    assert table.to_numpy().tolist() == [[mcnemar.both_right, mcnemar.a_only_right],
                                        [mcnemar.b_only_right, mcnemar.both_wrong]]
    assert any(f"Exact McNemar p = {mcnemar.p_value:.3g}" in m.value for m in app.markdown)
    rows = disagreements(None, a, b, n=DISAGREEMENT_ROWS)
    shown = next(df.value for df in app.dataframe if "A − B" in df.value.columns)
    assert shown["row"].tolist() == [p + 1 for p in rows.positions]
    np.testing.assert_allclose(shown["A − B"].to_numpy(dtype=float), rows.gap)
    np.testing.assert_allclose(shown["A score"].to_numpy(dtype=float), a[list(rows.positions)])
    return rows


def test_families_are_computed_only_when_asked(app):
    goto(app, "detectors")
    assert_clean(app)
    assert any("computed only when asked" in block.value for block in app.info)
    assert not [df for df in app.dataframe if "AUROC leaky (not a result)" in df.value.columns]


def test_families_table_and_roc_match_detector_report(app):
    goto(app, "detectors")
    compute(app)
    scored, expected, _ = expected_report(SAMPLE_CSV, ("reference", *LABEL_FREE))
    sgi = evaluate(scored, n_boot=app_n_boot())
    table = detector_table(app)
    assert table["detector"].tolist() == ["SGI", *(DETECTOR_NAMES[name] for name in expected.detectors)]
    results = list(expected.detectors.values())
    np.testing.assert_allclose(table["AUROC"].to_numpy(dtype=float), [sgi.roc.auroc, *(r.auroc for r in results)])
    assert table["AUROC 95% CI"].tolist() == [format_ci(sgi.roc.auroc_ci), *(format_ci(r.auroc_ci) for r in results)]
    np.testing.assert_allclose(table["Cohen's d"].to_numpy(dtype=float),
                               [sgi.effect_size.cohens_d, *(r.cohens_d for r in results)])
    np.testing.assert_allclose(table["AUROC leaky (not a result)"].to_numpy(dtype=float),
                               [np.nan, *(r.auroc_leaky for r in results)])
    matched = length_matched_auroc(scored["label"].to_numpy(), scored["sgi"].to_numpy(),
                                   response_length(scored["response"]))
    np.testing.assert_allclose(table["length-matched AUROC"].to_numpy(dtype=float),
                               [matched.auroc, *(r.length_matched_auroc for r in results)])
    for family in (FAMILIES[kind] for kind in ("reference", *LABEL_FREE)):  # each computed family, from its entry
        assert any(f"{family.label}: {family.explanation}." in caption.value for caption in app.caption)
    honest = table.set_index("detector")["protocol"]
    assert honest[DETECTOR_NAMES["lsgi"]] == "cross-fitted (honest)"
    assert honest[DETECTOR_NAMES["claim_min_support"]] == "label-free"
    names = [trace["name"] for trace in figures(app)[0]["data"]]
    assert names[0] == f"SGI (AUROC {sgi.roc.auroc:.3f})"
    assert f"{COMBINED} (AUROC {expected.detectors['combined'].auroc:.3f})" in names


def test_comparison_with_a_computed_detector_opens_rows_in_the_explorer(app):
    goto(app, "detectors")
    compute(app)
    scored, _, scores = expected_report(SAMPLE_CSV, ("reference", *LABEL_FREE))
    labels = scored["label"].to_numpy()
    assert app.selectbox(key="detectors.compare_b").value == COMBINED
    app.selectbox(key="detectors.compare_b").set_value(DETECTOR_NAMES["displacement_consistency"]).run()
    assert_clean(app)
    rows = assert_comparison(app, labels, scored["sgi"].to_numpy(),
                             scores["displacement_consistency"].to_numpy())
    picked = rows.positions[3] + 1
    app.selectbox(key="detectors.compare_row").set_value(picked).run()
    assert_clean(app)
    assert app.number_input(key="explorer.row").value == picked
    assert app.text_area(key="explorer.response").value == scored["response"].iloc[picked - 1]


def test_file_without_numeric_columns_still_gets_families_and_comparison(app, tmp_path):
    plain = tmp_path / "plain.csv"
    pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).drop(columns=["pair_id"]).to_csv(plain, index=False)
    upload(app, "plain.csv", plain.read_bytes())
    goto(app, "detectors")
    assert_clean(app)
    assert any("no numeric column" in block.value for block in app.info)
    scored, expected, scores = expected_report(plain, LABEL_FREE)
    labels = scored["label"].to_numpy()
    assert app.selectbox(key="detectors.compare_b").value == "response length (shorter = grounded)"
    assert_comparison(app, labels, scored["sgi"].to_numpy(),
                      -response_length(scored["response"]).astype(float))

    compute(app, uncheck=("reference",))
    assert app.selectbox(key="detectors.compare_b").value == COMBINED
    table = detector_table(app)
    assert table["detector"].tolist() == ["SGI", *(DETECTOR_NAMES[name] for name in expected.detectors)]
    assert DETECTOR_NAMES["claim_min_support"] in table["detector"].tolist()
    np.testing.assert_allclose(table["AUROC"].to_numpy(dtype=float)[1:],
                               [r.auroc for r in expected.detectors.values()])
    # The combination is fitted on these labels: it is compared by the refit bootstrap, never by DeLong's test.
    from sgi_core.detectors.report import compare_with_combined
    from sgi_core.io.triples import load_triples

    refit = compare_with_combined(load_triples(plain), scored, scores, scored["sgi"].to_numpy(), refitted="b",
                                  n_folds=expected.n_folds, seed=0)
    assert metric(app, "AUROC B") == f"{refit.auroc_b:.3f}"
    assert metric(app, "p (two-sided)") == f"{refit.p_value:.3g}"
    assert not [m for m in app.metric if m.label == "DeLong z"]


def test_clicking_a_disagreement_row_opens_it_in_the_explorer(app, sample_scores):
    goto(app, "detectors")
    length = -response_length(sample_scores["response"]).astype(float)
    rows = disagreements(None, sample_scores["sgi"].to_numpy(), length, n=DISAGREEMENT_ROWS)
    app.session_state["detectors.compare_table"] = {"selection": {"rows": [2], "columns": [], "cells": []}}
    app.run()
    assert_clean(app)
    assert app.number_input(key="explorer.row").value == rows.positions[2] + 1
    assert app.text_area(key="explorer.question").value == sample_scores["question"].iloc[rows.positions[2]]
