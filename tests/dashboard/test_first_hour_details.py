"""Small things a new user trips on: counts that add up, labelled AUROCs, plurals, context truncation in the app."""

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard.services import model_services
from sgi_core.embedding import load_encoder
from sgi_core.long_context import truncation_report
from sgi_core.scores.oriented import oriented_scores
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import APP, assert_clean, goto, metric, upload


def test_overview_counts_add_up_and_the_cross_validated_aurocs_are_named(app, sample_scores):
    goto(app, "overview")
    assert_clean(app)
    (matched,) = [t.value for t in app.dataframe if "rows used" in t.value.columns]
    rows = int(metric(app, "Rows"))
    assert (matched["rows used"] + matched["rows dropped"] + matched["rows without a label or score"] == rows).all()
    # Word overlap has no score for the sample's responses without a content word.
    overlap = oriented_scores(sample_scores, ["lexical_groundedness"])["lexical_groundedness"]
    no_content = int(overlap.isna().sum())
    assert no_content > 0
    overlap = matched.set_index("score").loc["word overlap with the context"]
    assert overlap["rows without a label or score"] == no_content
    assert any(c.value.startswith("SGI beside response length in cross-validated logistic models")
               and c.value.endswith("These AUROCs are of out-of-fold predictions, so they differ a little from the "
                                    "table's AUROCs of the raw scores.") for c in app.caption)


def test_one_caveat_is_one_caveat(app):
    frame = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    frame.loc[0, "response"] = frame.loc[0, "context"]  # one row with degenerate geometry: the one caveat
    upload(app, "one_copy.csv", frame.to_csv(index=False).encode())
    goto(app, "overview")
    caveats = [e.label for e in app.expander if "from the statistics" in e.label]
    assert caveats == ["1 caveat from the statistics"]


def test_no_tokenizer_is_said_in_words(app):
    goto(app, "overview")
    assert any("**hashing** has no tokenizer" in c.value for c in app.caption)


@pytest.mark.slow
def test_truncated_contexts_are_counted_on_the_overview_and_strata_pages(monkeypatch, isolated_cache):
    frame = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).head(24)
    # Eight contexts repeated past MiniLM's 256 tokens.
    frame.loc[::3, "context"] = frame.loc[::3, "context"].map(lambda text: " ".join([text] * 12))
    raw = frame.to_csv(index=False).encode()
    monkeypatch.setenv("SGI_DASHBOARD_MODEL", "minilm")
    st.cache_data.clear()
    st.cache_resource.clear()
    app = AppTest.from_file(str(APP), default_timeout=300)
    app.run()
    upload(app, "long.csv", raw)
    expected = truncation_report(load_encoder("minilm"), frame["context"])
    assert expected.n_truncated == 8
    for name in ("overview", "strata"):
        goto(app, name)
        assert_clean(app)
        assert any(w.value.startswith(f"8 of 24 contexts (33%) are longer than the {expected.max_seq_length:,} "
                                      "tokens **minilm** reads (the longest has") for w in app.warning), \
            [w.value for w in app.warning]
    assert model_services.TRUNCATION_MAX_ROWS >= 24
