"""Hostile uploads on the dashboard's Data page: the exact reason on screen, never an exception."""

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard.views.texts import plain
from tests.conftest import REPO
from tests.reliability.hostile_files import REFUSED, TRIPLE, csv_lines

ONE_CLASS_NOTE = ("only one label class is present (every labelled row is grounded): scores are computed, but "
                  "label-based metrics (AUROC, effect size, calibration, thresholds) are undefined")


@pytest.fixture
def app(monkeypatch, isolated_cache):
    monkeypatch.setenv("SGI_DASHBOARD_MODEL", "hashing")
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(REPO / "dashboard" / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception
    return at


def upload(at, name, content):
    at.file_uploader(key="data.upload").set_value((name, content, "application/octet-stream"))
    at.run()
    return at


@pytest.mark.parametrize("case_id", ["random bytes", "xlsx renamed .csv", "missing required columns", "unknown labels",
                                     "header only", "row wider than the header"])
def test_hostile_upload_shows_its_reason(app, case_id):
    case = next(case for case in REFUSED if case.id == case_id)
    upload(app, case.filename, case.content)
    assert not app.exception, [e.value for e in app.exception]
    assert [e.value for e in app.error] == [plain(case.message.format(source=case.filename))]


def test_one_class_upload_is_scored_with_the_note(app):
    upload(app, "one.csv", csv_lines("question,context,response,label", *(",".join(TRIPLE) + ",1" for _ in range(3))))
    assert not app.exception and not app.error
    assert plain(ONE_CLASS_NOTE) in [w.value for w in app.warning]
    assert [m.value for m in app.metric if m.label == "Rows read"] == ["3"]
    assert "**hashing**: scored. Every row scored normally." in [m.value for m in app.markdown]
    app.switch_page("app_pages/overview.py").run()
    assert not app.exception and not app.error
    assert {m.label: m.value for m in app.metric}["Scored"] == "3"
    assert any("are undefined" in note.value for note in app.info)


def test_upload_limit_is_explained(app):
    assert any(c.value.startswith("Up to 200 MB per file: the limit is `server.maxUploadSize` in "
                                  "`.streamlit/config.toml`; raise it there and restart for bigger files.")
               for c in app.caption)
