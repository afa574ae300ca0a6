"""User text never comes out as a live link or a remote image (L1): Markdown, GFM autolinks, plotly's HTML."""

import re

import pandas as pd
import pytest

from dashboard import services
from dashboard.views.texts import plain
from sgi_core.embedding import load_encoder
from sgi_core.io.triples import load_triples
from sgi_core.render import compare_figures
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import MODEL, assert_clean, goto, upload

HOSTILE = ["[x](https://evil.example)", "![i](https://evil.example/a.png)", "https://evil.example",
           "www.evil.example", "HTTP://evil.example", "see WWW.evil.example/x", "mail me@evil.example"]
# What Streamlit's Markdown (remark-gfm) autolinks in the parsed text, backslash escapes already undone:
# the patterns of mdast-util-gfm-autolink-literal, as in streamlit/static's StreamlitMarkdown bundle.
_AUTOLINK = re.compile(r"(https?://|www(?=\.))([-.\w]+)", re.IGNORECASE | re.ASCII)
_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)", re.ASCII)


def assert_no_link(markdown: str) -> None:
    # link and image syntax: every bracket, parenthesis, "!" and "<" escaped
    for position, char in enumerate(markdown):
        if char in "[]()!<>":
            assert markdown[position - 1] == "\\", (markdown, position)
    text = re.sub(r"\\(.)", r"\1", markdown)  # the parsed text
    assert not _AUTOLINK.search(text) and not _EMAIL.search(text), markdown


@pytest.mark.parametrize("text", HOSTILE + [" ".join(HOSTILE)])
def test_plain_defeats_links_images_and_autolinks(text):
    escaped = plain(text)
    assert_no_link(escaped)
    # what the reader sees is the text: only backslashes and invisible zero-width joiners were added
    assert escaped.replace("\\", "").replace("\u200d", "") == text


def test_the_check_itself_sees_an_autolink():
    with pytest.raises(AssertionError):
        assert_no_link(r"https\://evil\.example")  # escapes alone: remark-gfm still links it
    with pytest.raises(AssertionError):
        assert_no_link(r"www\.evil\.example")


def test_compare_chart_title_and_hover_are_not_html():
    key = '<a href="https://evil.example">click</a><img src="https://evil.example/a.png"> & more'
    points = pd.DataFrame({"key": [key, "plain"], "base": [0.5, 0.6], "new": [0.4, 0.7]})
    fig = compare_figures.paired_figure(points, "<b>col</b><a href='https://evil.example'>x</a>")
    texts = [t for trace in fig.data if trace.text is not None for t in trace.text]
    assert any("evil" in t for t in texts)
    assert not [t for t in texts if "<" in t or ">" in t]
    assert "&lt;a href=&quot;https://evil.example&quot;&gt;click&lt;/a&gt;" in texts[0] and "&amp; more" in texts[0]
    title = fig.layout.title.text
    assert "<" not in title and ">" not in title and "&lt;b&gt;" in title


def test_explorer_caption_shows_a_scored_files_status_literally(app, tmp_path):
    frame = score_table(load_triples(SAMPLE_CSV), load_encoder(MODEL))
    frame = frame.to_pandas() if hasattr(frame, "to_pandas") else frame
    frame["sgi_status"] = frame["sgi_status"].astype(object)
    frame.loc[frame.index[0], "sgi_status"] = " ".join(HOSTILE)
    upload(app, "scored.csv", services.csv_bytes(frame))
    assert_clean(app)
    at = goto(app, "explorer")
    assert_clean(at)
    (caption,) = [c.value for c in at.caption if "Typing here" in c.value]
    assert "evil" in caption
    status = re.search(r"scored file is \S+ \((.*)\)\. Typing here", caption).group(1)  # the page's own ( )
    assert_no_link(status)
    assert status == plain(" ".join(HOSTILE))
