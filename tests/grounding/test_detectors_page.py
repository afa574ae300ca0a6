"""The Detectors page shows a grounding model beside SGI and the trivial baselines, with the library's numbers."""

import numpy as np
import pytest

from sgi_core.detectors.report import detector_report
from sgi_core.embedding import load_encoder
from sgi_core.grounding.runtime import load_grounding_model
from sgi_core.io.triples import load_triples
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import MODEL, app, assert_clean, goto  # noqa: F401 (app is a fixture)


def _open_with(app, text, monkeypatch, root):  # noqa: F811
    monkeypatch.setenv("SGI_LOCAL_FILES_ROOT", str(root))
    goto(app, "detectors")
    for kind in ("reference", "claims", "specifics"):
        app.checkbox(key=f"detectors.family.{kind}").uncheck().run()
    app.text_area(key="detectors.resource.grounding_models").input(text).run()
    app.checkbox(key="detectors.resource.grounding_models.no_self_test").check().run()
    next(b for b in app.button if b.label == "Compute the detectors").click().run()
    return app


def test_the_page_judges_a_grounding_model_as_the_library_does(app, tiny_folders, monkeypatch):  # noqa: F811
    folder = tiny_folders["bert_cen"]
    _open_with(app, f"tiny={folder.name}", monkeypatch, folder.parent)
    assert_clean(app)
    table = next(df.value for df in app.dataframe if "AUROC leaky (not a result)" in df.value.columns)
    triples = load_triples(SAMPLE_CSV)
    scored = score_table(triples, load_encoder(MODEL))
    model = load_grounding_model(folder, name="tiny", self_test=False)
    expected, _ = detector_report(triples, scored, load_encoder(MODEL), model=MODEL, kinds=("grounding",),
                                  resources={"grounding_models": (model,)}, n_boot=1000, seed=0)
    shown = table.set_index("detector")
    for column, label in (("grounding_tiny_min", "grounding model tiny: weakest sentence"),
                          ("grounding_tiny_mean", "grounding model tiny: mean sentence")):
        assert shown.loc[label, "AUROC"] == pytest.approx(expected.detectors[column].auroc, abs=1e-12)
        assert shown.loc[label, "protocol"] == "label-free"
    assert table["detector"].iloc[0] == "SGI"
    assert np.isfinite(shown.loc["grounding model tiny: weakest sentence", "length-matched AUROC"])


def test_a_folder_outside_the_root_is_refused_on_the_page(app, tiny_folders, tmp_path, monkeypatch):  # noqa: F811
    _open_with(app, str(tiny_folders["bert_cen"]), monkeypatch, tmp_path)
    assert any("leads outside the folder" in e.value for e in app.error)


def test_review_shows_each_sentence_best_chunk_from_the_models_computed(app, tiny_folders, tiny_models,  # noqa: F811
                                                                         monkeypatch, tmp_path):
    from sgi_core.grounding.evidence import row_evidence
    from tests.dashboard.test_review_page import shown_row

    monkeypatch.setenv("SGI_DATA_DIR", str(tmp_path / "data"))
    folder = tiny_folders["modernbert_token"]
    _open_with(app, f"spans={folder.name}", monkeypatch, folder.parent)
    goto(app, "review")
    assert_clean(app)
    row = load_triples(SAMPLE_CSV).frame.iloc[shown_row(app) - 1]
    (shown,) = [d.value for d in app.dataframe if "P(supported)" in d.value.columns]
    expected = row_evidence(tiny_models["modernbert_token"], row["context"], row["response"])
    assert shown["response sentence"].tolist() == expected["sentence"].tolist()
    np.testing.assert_allclose(shown["P(supported)"], expected["support"], atol=1e-6)
    assert shown["best-supporting context chunk"].tolist() == expected["premise"].tolist()
    if any(expected["spans"]):
        assert shown["marked unsupported"].tolist() == [
            "; ".join(f"{s[a:b]} ({p:.2f})" for a, b, p in spans) for s, spans in zip(expected["sentence"],
                                                                                    expected["spans"])]
    assert any("Grounding model spans" in m.value for m in app.markdown)
