"""One judged file: a score planted in the registry reaches every face, the command line's and the app's reports of
one file give the same judgements and verdict, and a page build judges each score once."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from sgi_core.cli import main
from sgi_core.scores import registry
from sgi_core.scores.registry import ScoreSpec
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import MODEL, app, assert_clean, goto, upload  # noqa: F401  (app: fixture)

#: A registered score whose high values mean hallucinated, read from its column.
PLANTED = ScoreSpec("planted_risk", "planted risk, negated", "hallucinated", "a score planted for the test",
                    ("the file",), "detector")


def with_columns(path, *, seed: int = 5) -> pd.DataFrame:
    """The sample with the planted score and a judge column (both separating, high = hallucinated)."""
    frame = pd.read_csv(SAMPLE_CSV)
    label = frame["label"].to_numpy(dtype=float)
    rng = np.random.default_rng(seed)
    frame["planted_risk"] = np.round(1 - label + rng.normal(scale=0.6, size=len(frame)), 4)
    frame["judge_halluc"] = np.round(1 - label + rng.normal(scale=0.9, size=len(frame)), 4)
    frame.to_csv(path, index=False)
    return frame


@pytest.fixture
def planted(monkeypatch):
    monkeypatch.setitem(registry.SCORES, PLANTED.name, PLANTED)
    return PLANTED


def test_a_planted_score_reaches_the_report_its_verdict_compare_and_both_gates(planted, tmp_path, capsys):
    frame = with_columns(tmp_path / "base.csv")
    with_columns(tmp_path / "new.csv", seed=6)
    expected = roc_auc_score(frame["label"], -frame["planted_risk"])
    out, page = tmp_path / "report.json", tmp_path / "report.html"
    assert main(["report", str(tmp_path / "base.csv"), "--models", "hashing", "--n-boot", "50", "--json", str(out),
                 "--html", str(page)]) == 0
    model = json.loads(out.read_text())["models"]["hashing"]
    assert model["report"]["judgements"]["neg_planted_risk"]["auroc"] == pytest.approx(expected)
    assert "neg_planted_risk" in [score["name"] for score in model["verdict"]["scores"]]
    assert "planted risk, negated" in page.read_text(encoding="utf-8")

    assert main(["compare", str(tmp_path / "base.csv"), str(tmp_path / "new.csv"), "--model", "hashing", "--n-boot",
                 "0", "--json", str(tmp_path / "compare.json")]) == 0
    assert "neg_planted_risk" in (tmp_path / "compare.json").read_text()

    assert main(["gate", str(tmp_path / "base.csv"), "--write-policy", str(tmp_path / "policy.json"),
                 "--score-column", "planted_risk", "--n-boot", "100"]) == 0
    assert json.loads((tmp_path / "policy.json").read_text())["score_column"] == "neg_planted_risk"
    capsys.readouterr()
    assert main(["gate", str(tmp_path / "new.csv"), "--baseline", str(tmp_path / "base.csv"), "--model", "hashing",
                 "--score", "neg_planted_risk", "--max-drop", "10", "--allow-unvalidated", "--n-boot", "0"]) in (0, 1)
    assert "neg_planted_risk" in capsys.readouterr().out


def test_a_planted_score_is_offered_on_the_detectors_page(planted, app, tmp_path):  # noqa: F811
    with_columns(tmp_path / "planted.csv")
    upload(app, "planted.csv", (tmp_path / "planted.csv").read_bytes())
    page = goto(app, "detectors")
    assert_clean(page)
    assert "planted risk, negated" in page.selectbox(key="detectors.compare_a").options


def test_a_build_of_the_overview_judges_each_score_once(app, roc_counts, tmp_path):  # noqa: F811
    with_columns(tmp_path / "judged.csv")
    roc_counts.clear()
    upload(app, "judged.csv", (tmp_path / "judged.csv").read_bytes())
    page = goto(app, "overview")
    analysed = len(roc_counts)
    page.multiselect(key="detectors.columns").set_value(["judge_halluc"]).run()
    assert_clean(page)
    # SGI, the three trivial scores and the judge column: each analysed once, for the page's report, its verdict
    # and its curves alike; declaring the judge column, already judged in its own direction, analyses nothing again.
    assert analysed >= 5 and len(roc_counts) == analysed
    assert max(roc_counts.values()) == 1, roc_counts


def _app_report(path, specs):
    """The app's report, verdict and HTML of a file, by the services the Overview's download calls."""
    from dashboard import services, state
    from dashboard.services import confound_services
    from sgi_core.io.triples import load_triples
    from sgi_core.render import html_report

    table = load_triples(path)
    key = state.DataKey(path.name, "digest", (), "grounded")
    frame = services.scored_frame(key, MODEL, table)
    report = services.report(key, MODEL, frame, specs)
    verdict = confound_services.file_verdict(key, MODEL, specs, table, frame)
    matched = confound_services.length_matched(key, MODEL, frame)
    return report, verdict, html_report.file_report(report, verdict, frame, matched, {"file": path.name})


def test_the_command_lines_and_the_apps_reports_of_one_file_agree(planted, tmp_path, isolated_cache):
    path = tmp_path / "judged.csv"
    with_columns(path)
    out, page = tmp_path / "report.json", tmp_path / "report.html"
    # The app's reports draw their intervals from 200 resamples in the tests (tests/conftest.py).
    assert main(["report", str(path), "--models", MODEL, "--n-boot", "200", "--detector",
                 "judge_halluc:hallucinated", "--json", str(out), "--html", str(page)]) == 0
    cli = json.loads(out.read_text())["models"][MODEL]
    report, verdict, app_html = _app_report(path, (("judge_halluc", "hallucinated"),))
    assert list(report.judgements) == list(cli["report"]["judgements"])
    assert {"neg_judge_halluc", "neg_planted_risk"} <= set(report.judgements)
    for name, judged in report.judgements.items():
        assert judged.auroc == pytest.approx(cli["report"]["judgements"][name]["auroc"])
    assert verdict.to_dict() == cli["verdict"]
    cli_html = page.read_text(encoding="utf-8")
    for text in ("judge: halluc", "planted risk, negated", "Beats the best trivial score"):
        assert (text in cli_html) == (text in app_html), text



def test_the_overviews_auroc_table_lists_the_verdicts_scores_in_its_order(app, tmp_path):  # noqa: F811
    from dashboard.views.tables import DISPLAY
    from sgi_core.render.names import curve_name

    path = tmp_path / "judged.csv"
    with_columns(path)
    upload(app, "judged.csv", path.read_bytes())
    page = goto(app, "overview")
    assert_clean(page)
    table = next(df.value for df in page.dataframe if DISPLAY["description"][0] in df.value.columns)
    report, verdict, _ = _app_report(path, ())
    names = [score.name for score in verdict.scores]
    # The judge's column is a row as it is a curve and a verdict score: every score the verdict reads, in its order.
    assert "judge_halluc" in names and list(report.held_fixed) == names
    assert table["score"].tolist() == [curve_name(name) for name in names]
    np.testing.assert_allclose(table["AUROC"].to_numpy(dtype=float),
                               [report.judgements[name].auroc for name in names])
