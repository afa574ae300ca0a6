"""One bootstrap setting for the app: ``$SGI_APP_RESAMPLES`` sets every interval's resamples, unset the CLI's."""

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard.services.resamples import RESAMPLES_ENV, app_resamples, resamples_setting
from sgi_core.errors import SGIInputError
from sgi_core.evaluation import evaluate
from tests.dashboard.conftest import APP, MODEL, assert_clean, goto


def open_app(monkeypatch) -> AppTest:
    monkeypatch.setenv("SGI_DASHBOARD_MODEL", MODEL)
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=120)
    return at.run()


@pytest.mark.parametrize("setting, count", [(None, 1000), ("300", 300)])
def test_the_overview_interval_uses_the_setting_or_the_command_lines_count(monkeypatch, sample_scores, setting,
                                                                            count):
    if setting is None:
        monkeypatch.delenv(RESAMPLES_ENV, raising=False)
    else:
        monkeypatch.setenv(RESAMPLES_ENV, setting)
    at = open_app(monkeypatch)
    said = [block.value for block in at.sidebar.caption if RESAMPLES_ENV in block.value]
    assert said == ([] if setting is None else [f"Every interval: {count:,} bootstrap resamples (`{RESAMPLES_ENV}`)."])
    goto(at, "overview")
    assert_clean(at)
    lo, hi = evaluate(sample_scores, n_boot=count).roc.auroc_ci
    (caption,) = [block.value for block in at.caption if block.value.startswith("95% intervals")]
    assert f"AUROC [{lo:.3f}, {hi:.3f}] (percentile bootstrap of {count:,} resamples)" in caption


@pytest.mark.parametrize("text", ["12", "many", "30000", "1e3"])
def test_a_bad_setting_is_refused_with_the_variable_and_the_range(monkeypatch, text):
    monkeypatch.setenv(RESAMPLES_ENV, text)
    with pytest.raises(SGIInputError, match=f"{RESAMPLES_ENV} is '{text}'.*from 100 to 20,000"):
        app_resamples(1000)
    at = open_app(monkeypatch)
    assert not at.exception
    shown = [block.value.replace("\\", "") for block in at.error]
    assert any(RESAMPLES_ENV in text and "Unset it" in text for text in shown), shown


def test_unset_or_blank_gives_each_intervals_own_default(monkeypatch):
    monkeypatch.setenv(RESAMPLES_ENV, "  ")
    assert resamples_setting() is None and app_resamples(2000) == 2000
    monkeypatch.setenv(RESAMPLES_ENV, " 250 ")
    assert resamples_setting() == 250 and app_resamples(2000) == 250
