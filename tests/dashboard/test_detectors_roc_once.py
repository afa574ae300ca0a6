"""The Detectors page computes each score's ROC once: SGI's is the report's, a file column's its judgement's."""

from tests.dashboard.conftest import assert_clean, goto, upload
from tests.evaluation.test_roc_once import with_judge_column


def test_the_detectors_page_computes_each_roc_once(app, roc_counts, tmp_path):
    path = tmp_path / "judged.csv"
    with_judge_column(path)
    upload(app, "judged.csv", path.read_bytes())
    roc_counts.clear()
    goto(app, "detectors")
    app.multiselect(key="detectors.columns").set_value(["judge_halluc"]).run()
    app.radio(key="detectors.higher_is.judge_halluc").set_value("hallucinated").run()
    assert_clean(app)
    assert len(roc_counts) >= 5
    assert max(roc_counts.values()) == 1, roc_counts
