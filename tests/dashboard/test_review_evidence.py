"""The Review page's evidence: similarity read against the file, the passages apart, and per-row label buttons."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from scipy.stats import percentileofscore

from dashboard.app_pages.review_panel import label_button_key
from dashboard.views.evidence import evidence_caption, percentile_shade
from sgi_core.detectors.claims import sentence_scores
from sgi_core.detectors.support import FileSupports, file_supports
from sgi_core.embedding import load_encoder
from sgi_core.io.triples import load_triples
from sgi_core.render.numbers import format_ci
from sgi_core.stats.ranking import roc_analysis
from sgi_core.text.sentences import split_sentences
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import app_n_boot, assert_clean, goto, upload
from tests.dashboard.test_review_page import label, review, shown_row  # noqa: F401 (the fixture)

SIMILARITY = "similarity to the nearest context sentence"


def evidence(at) -> pd.DataFrame:
    (table,) = [d.value for d in at.dataframe if SIMILARITY in d.value.columns]
    return table


def listed(tmp_path) -> tuple[bytes, object]:
    """40 sample rows whose context is a JSON list of two passages: its first sentence, then the rest."""
    sample = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).head(40)
    passages = []
    for text in sample["context"]:
        sentences = split_sentences(text)
        passages.append([sentences[0], " ".join(sentences[1:]) or "Nothing else is known."])
    content = sample.assign(context=[json.dumps(p) for p in passages]).to_csv(index=False).encode()
    path = tmp_path / "lists.csv"
    path.write_bytes(content)
    return content, load_triples(path)


def test_similarity_is_shaded_by_its_percentile_in_the_file(review):
    at = review
    table = load_triples(SAMPLE_CSV)
    row = table.frame.iloc[shown_row(at) - 1]
    encoder = load_encoder("hashing")
    supports = file_supports(table.frame, encoder)
    expected = sentence_scores(row.to_frame().T, encoder)
    shown = evidence(at)
    assert "support" not in shown.columns and "passage" not in shown.columns  # a plain context: one passage
    assert shown["response sentence"].tolist() == expected["sentence"].tolist()
    np.testing.assert_allclose(shown[SIMILARITY], expected["support"])
    np.testing.assert_allclose(shown["percentile in the file"],
                               [percentileofscore(supports.support, s, kind="weak") for s in expected["support"]])
    captions = [c.value for c in at.caption]
    assert any("not whether the context entails the sentence" in c and
               f"among the {len(supports.support):,} response sentences of the file (its 300 rows)" in c
               for c in captions)
    roc = roc_analysis(table.frame["label"].to_numpy(dtype=float), supports.weakest, n_boot=app_n_boot())
    assert (f"Weakest-sentence similarity against the labels on these rows: AUROC {roc.auroc:.3f}, 95% CI "
            f"{format_ci(roc.auroc_ci)} (150 grounded, 150 hallucinated") in " ".join(captions)


def test_without_labels_the_weakest_sentence_line_needs_labels(review):
    unlabelled = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).head(30).drop(columns=["label"])
    at = upload(review, "unlabelled.csv", unlabelled.to_csv(index=False).encode())
    goto(at, "review")
    assert_clean(at)
    assert any(c.value.startswith("Weakest-sentence similarity against the labels: needs labels of both classes")
               for c in at.caption)


def test_passages_are_shown_apart_and_named_in_the_evidence(review, tmp_path):
    content, table = listed(tmp_path)
    at = upload(review, "lists.csv", content)
    goto(at, "review")
    assert_clean(at)
    position = shown_row(at) - 1
    passages = table.passages[position]
    texts = [t.value for t in at.text]
    assert passages[0] in texts and passages[1] in texts and table.frame["context"].iloc[position] not in texts
    assert [c.value for c in at.caption if c.value.startswith("Passage ")] == ["Passage 1 of 2", "Passage 2 of 2"]
    encoder = load_encoder("hashing")
    expected = sentence_scores(table.frame.iloc[[position]], encoder, passages=(passages,))
    shown = evidence(at)
    assert shown["passage"].tolist() == [f"passage {p} of 2" for p in expected["passage"]]
    assert shown["nearest context sentence"].tolist() == expected["context_piece"].tolist()
    supports = file_supports(table.frame, encoder, passages=table.passages)
    np.testing.assert_allclose(shown["percentile in the file"],
                               [percentileofscore(supports.support, s, kind="weak") for s in expected["support"]])


def test_each_row_has_its_own_label_buttons(review):
    at = review
    first = label(at, "grounded")
    second = shown_row(at)
    keys = {b.key for b in at.button}
    assert {label_button_key(word, second) for word in ("grounded", "hallucinated", "unsure")} <= keys
    # The pressed button belonged to the previous row: a new widget stands in its place, not focused.
    assert label_button_key("grounded", first) not in keys
    assert label_button_key("grounded", first) != label_button_key("grounded", first, "base")


def test_the_shade_deepens_with_the_percentile_and_the_caption_names_a_sample():
    alphas = [float(percentile_shade(p).rsplit(", ", 1)[1].rstrip(")")) for p in (0.0, 50.0, 100.0)]
    assert alphas == sorted(alphas) and alphas[0] < alphas[-1] and percentile_shade(float("nan")) == ""
    sampled = FileSupports(np.array([0.1, 0.2, 0.3]), (2, 5), np.array([0.1, 0.2]), 5_000, 0)
    assert "(a seeded random sample of 2 of its 5,000 rows)" in evidence_caption(sampled)
