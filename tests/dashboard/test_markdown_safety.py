"""Text from a file is shown literally: a cell, a column or a file name never renders a link or an image."""

import json

import numpy as np
import pandas as pd
import pytest

from dashboard.views.texts import plain
from sgi_core.policy.sessions import new_session, session_to_json
from sgi_core.stats.calibration import calibration_analysis
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import MODEL, assert_clean, figures, goto, upload

HOSTILE = "![x](http://evil.example/i.png) [click](http://evil.example) **bold** <http://evil.example>"


@pytest.mark.parametrize("text", [HOSTILE, "www.evil.example", "`code` _em_ # head", "a\nb"])
def test_plain_leaves_no_markdown_construct(text):
    escaped = plain(text)
    # every character Markdown gives a meaning to comes after a backslash, so none of it is syntax
    for position, char in enumerate(escaped):
        if char in "[]()!*<>_#`.:":
            assert escaped[position - 1] == "\\", (escaped, position)
    # every character of the text is still there, in order
    assert escaped.replace("\\", "").replace("  \n", "\n").replace("\u200d", "") == text


def test_an_error_quoting_a_cell_shows_it_literally(app):
    content = ("question,context,response,label\n"
               f"q,c,r,\"{HOSTILE}\"\n").encode()
    upload(app, "evil.csv", content)
    assert not app.exception
    shown = " ".join(e.value for e in app.error)
    assert "evil" in shown and "![" not in shown and "](" not in shown


def test_a_file_name_is_shown_literally(app):
    upload(app, "[click](http:evil.example).csv", b"question,context,response,label\nq,c,r,1\nq2,c2,r2,0\n")
    assert not app.exception
    shown = [m.value for m in app.markdown if "Current file" in m.value]
    assert shown and "](" not in shown[0] and "\\[click\\]" in shown[0]


def test_a_sessions_saved_date_is_shown_literally(app, sample_scores):
    fitted = calibration_analysis(sample_scores["label"], sample_scores["sgi"], method="platt")
    session = json.loads(session_to_json(new_session(model=MODEL, calibrator=fitted.calibrator, threshold=1.0,
                                                     frame=sample_scores)))
    session["created"] = HOSTILE
    at = goto(app, "calibration")
    at.file_uploader(key="calibration.session_upload").set_value(("s.json", json.dumps(session).encode(), "x"))
    at.run()
    assert_clean(at)
    shown = [m.value for kind in ("success", "caption", "markdown") for m in getattr(at, kind)
             if "evil" in m.value]
    assert shown and all("![" not in text and "](" not in text for text in shown), shown


def test_a_column_name_in_a_detectors_label_is_shown_literally(app):
    column = "s` ![x](http://evil.example/i.png) `"
    frame = pd.read_csv(SAMPLE_CSV).assign(**{column: np.arange(300) / 300})
    upload(app, "scores.csv", frame.to_csv(index=False).encode())
    at = goto(app, "detectors")
    at.multiselect(key="detectors.columns").set_value([column]).run()
    assert not at.exception
    (label,) = [r.label for r in at.radio if "high values mean" in r.label]
    assert "](" not in label and "\\!\\[x\\]" in label


def test_cell_text_in_plotly_hover_is_not_html(app):
    link = '<a href="http://evil.example">click</a><img src="http://evil.example/i.png">'
    frame = pd.read_csv(SAMPLE_CSV, nrows=60)
    frame["response"] = link + " " + frame["response"].astype(str)
    upload(app, "hover.csv", frame.to_csv(index=False).encode())
    at = goto(app, "geometry")
    assert_clean(at)
    hover = [text for figure in figures(at) for trace in figure["data"] for text in (trace.get("text") or [])
             if isinstance(text, str) and "evil" in text]
    assert hover and not [t for t in hover if "<a " in t or "<img" in t]
    assert all("&lt;a href=&quot;http://evil.example&quot;&gt;click&lt;/a&gt;" in t for t in hover)
