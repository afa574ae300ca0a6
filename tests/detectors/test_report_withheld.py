"""detector_report below the events-per-feature floor: the combination is withheld, with its reason, everywhere."""

import json

import pandas as pd
import pytest

from sgi_core.detectors.report import DetectorReport, compare_with_combined, detector_report
from sgi_core.embedding import load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.evaluation.events_per_feature import MIN_EVENTS_PER_FEATURE
from sgi_core.io.triples import load_triples
from sgi_core.render.report import detector_report_text
from sgi_core.scores import BASELINES
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV

KINDS = ("specifics",)
#: SGI, three angles, the registry's baselines and the one specifics score (7 with length and word overlap).
FEATURES = 1 + 3 + len(BASELINES) + 1
#: Rows of the smaller class the combination needs (70 for 7 features).
FLOOR = MIN_EVENTS_PER_FEATURE * FEATURES
REASON = f"withheld: {FEATURES} features need at least {FLOOR} rows of the smaller class; there are {FLOOR - 1}"


def subset(tmp_path, n_grounded, n_hallucinated):
    """The first rows of each class of the bundled sample, scored with the hashing encoder."""
    frame = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    rows = pd.concat([frame[frame["label"] == "1"].head(n_grounded), frame[frame["label"] == "0"].head(n_hallucinated)])
    path = tmp_path / f"sample_{n_grounded}_{n_hallucinated}.csv"
    rows.to_csv(path, index=False)
    table = load_triples(path)
    encoder = load_encoder("hashing")
    scored = score_table(table, encoder)
    report, scores = detector_report(table, scored, encoder, model="hashing", kinds=KINDS, n_boot=0)
    return table, scored, report, scores


def test_just_below_the_floor_the_combination_is_withheld_with_its_reason(tmp_path):
    table, scored, report, scores = subset(tmp_path, FLOOR + 5, FLOOR - 1)
    reason = REASON
    assert len(report.combined_features) == FEATURES
    assert report.withheld == {"combined": reason}
    assert "combined" not in report.detectors and "combined" not in scores
    assert list(report.detectors) == ["neg_specifics_unsupported_share"]  # the score alone is judged as ever
    assert DetectorReport.from_dict(json.loads(json.dumps(report.to_dict()))).withheld == report.withheld
    text = detector_report_text(report)
    (line,) = [line for line in text.splitlines() if line.split()[:2] == ["combined", "withheld:"]]
    assert line.replace(reason, "").split() == ["combined"]  # the reason, and no number
    with pytest.raises(SGIInputError, match="the combined detector was withheld"):
        compare_with_combined(table, scored, scores, scored["sgi"].to_numpy())


def test_at_the_floor_the_combination_is_judged(tmp_path):
    _, _, report, scores = subset(tmp_path, FLOOR + 5, FLOOR)
    assert report.withheld == {}
    assert 0.0 <= report.detectors["combined"].auroc <= 1.0 and scores["combined"].notna().sum() == 2 * FLOOR + 5


def test_the_report_json_gives_the_withheld_combination_its_reason_and_no_number(tmp_path):
    from sgi_core.cli import main

    frame = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    rows = pd.concat([frame[frame["label"] == "1"].head(FLOOR + 5), frame[frame["label"] == "0"].head(FLOOR - 1)])
    rows.to_csv(tmp_path / "s.csv", index=False)
    assert main(["report", str(tmp_path / "s.csv"), "--models", "hashing", "--detectors", "specifics",
                 "--n-boot", "0", "--json", str(tmp_path / "r.json")]) == 0
    detectors = json.loads((tmp_path / "r.json").read_text())["models"]["hashing"]["detectors"]
    assert detectors["combined"] == {"withheld": REASON}
    assert "auroc" in detectors["neg_specifics_unsupported_share"]
