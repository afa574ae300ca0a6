"""Text from a file is shown literally: a cell, a column or a file name never renders a link or an image."""

import pytest

from dashboard.texts import plain
from tests.dashboard.conftest import upload

HOSTILE = "![x](http://evil.example/i.png) [click](http://evil.example) **bold** <http://evil.example>"


@pytest.mark.parametrize("text", [HOSTILE, "www.evil.example", "`code` _em_ # head", "a\nb"])
def test_plain_leaves_no_markdown_construct(text):
    escaped = plain(text)
    # every character Markdown gives a meaning to comes after a backslash, so none of it is syntax
    for position, char in enumerate(escaped):
        if char in "[]()!*<>_#`.:":
            assert escaped[position - 1] == "\\", (escaped, position)
    # every character of the text is still there, in order
    assert escaped.replace("\\", "").replace("  \n", "\n") == text


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
