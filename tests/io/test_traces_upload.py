"""The Data page opens an uploaded trace export as one row per trace, its ``trace_id`` kept and its gaps listed."""

import pytest

from tests.dashboard.conftest import app, assert_clean, metric, upload  # noqa: F401 (app is a fixture)
from tests.io.test_traces import EXPECTED, LANGFUSE, OTEL, PHOENIX


@pytest.mark.parametrize(("path", "fmt", "not_scored"), [
    (PHOENIX, "phoenix", [(1, "empty response"), (3, "empty context")]),
    (LANGFUSE, "langfuse", [(3, "empty context"), (5, "empty response")]),
    (OTEL, "otel", [(3, "empty context")]),
])
def test_an_uploaded_trace_export_opens_as_its_triples(app, path, fmt, not_scored):  # noqa: F811
    upload(app, path.name, path.read_bytes())
    assert_clean(app)
    mapping = {s.key: s.value for s in app.selectbox if s.key.startswith("data.mapping.")}
    assert {role: mapping[f"data.mapping.{role}"] for role in ("question", "context", "response")} == \
        {"question": "question", "context": "context", "response": "response"}
    assert metric(app, "Rows read") == str(len(EXPECTED[fmt]))
    assert metric(app, "Rows that cannot be scored") == str(len(not_scored))
    rejected = next(df.value for df in app.dataframe if "reason" in df.value.columns)
    assert list(rejected.itertuples(index=False, name=None)) == not_scored
    scored = next(df.value for df in app.dataframe if "trace_id" in df.value.columns and "sgi" in df.value.columns)
    assert scored["trace_id"].tolist() == [row[0] for row in EXPECTED[fmt]]
