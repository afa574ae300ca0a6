"""A file with one row of a label class: every analysis page draws, with undefined intervals, and no traceback."""

import pandas as pd
import pytest

from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import goto, upload

SAMPLE = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)


@pytest.fixture
def one_grounded(app):
    rows = pd.concat([SAMPLE[SAMPLE["label"] == "1"].head(1), SAMPLE[SAMPLE["label"] == "0"].head(40)])
    upload(app, "one_grounded.csv", rows.to_csv(index=False).encode())
    return app


@pytest.mark.parametrize("name", ["overview", "strata", "calibration", "detectors"])
def test_analysis_pages_survive_a_class_of_one_row(one_grounded, name):
    page = goto(one_grounded, name)
    assert not page.exception, [e.value for e in page.exception]
