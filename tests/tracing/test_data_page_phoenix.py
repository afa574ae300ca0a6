"""The Data page's Phoenix source: a refused pull is said on the page and leaves the current file as it was."""

from dashboard.views.texts import plain
from tests.dashboard.conftest import app, metric  # noqa: F401 (the app fixture)

PULL = "Pull the window"


def pull(at, url: str, project: str, since: str = "", until: str = ""):
    for name, value in (("url", url), ("project", project), ("since", since), ("until", until)):
        at.text_input(key=f"data.phoenix.{name}").set_value(value)
    at.run()  # the button is enabled once a URL and a project are given
    next(button for button in at.button if button.label == PULL).click().run()
    return at


def test_a_server_that_is_not_there_is_named_and_the_sample_stays(app):
    rows = metric(app, "Rows read")
    pull(app, "http://127.0.0.1:9", "rag")
    assert [e.value for e in app.error] == [plain("cannot connect to http://127.0.0.1:9. Check the URL and that the "
                                                  "server is running")]
    assert metric(app, "Rows read") == rows


def test_a_time_that_is_not_iso_8601_is_named(app):
    pull(app, "http://127.0.0.1:9", "rag", since="last tuesday")
    assert "Since 'last tuesday' is not an ISO 8601 time" in app.error[0].value
