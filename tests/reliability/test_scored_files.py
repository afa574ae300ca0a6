"""A scored file edited by hand: infinite scores are kept as rows without scores, with a warning."""

import numpy as np
import pandas as pd
import pytest

from sgi_core.io.limits import InputLimits
from sgi_core.io.reading import read_table
from sgi_core.io.scored import scored_table


def scored_csv(tmp_path, sgi: list) -> pd.DataFrame:
    frame = pd.DataFrame({"question": ["q1", "q2", "q3"], "context": ["c1", "c2", "c3"], "response": ["r1", "r2", "r3"],
                          "label": [1.0, 0.0, 1.0], "theta_qc": [1.0, 1.1, 1.2], "theta_rq": [0.9, 0.5, 0.7],
                          "theta_rc": [0.6, 0.7, 0.8], "sgi": sgi, "sgi_status": ["ok"] * 3})
    frame.to_csv(tmp_path / "scored.csv", index=False)
    return read_table(tmp_path / "scored.csv", limits=InputLimits())  # "inf" and "-inf" as the file holds them


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_an_infinite_sgi_is_a_row_kept_without_scores(tmp_path, bad):
    table, scores = scored_table(scored_csv(tmp_path, [1.5, bad, 0.875]), source="scored.csv")
    assert scores["sgi_status"].tolist() == ["ok", "not scored: an infinite score in the file", "ok"]
    np.testing.assert_array_equal(scores["sgi"].to_numpy(), [1.5, np.nan, 0.875])
    assert scores.loc[1, ["theta_qc", "theta_rq", "theta_rc"]].isna().all()
    assert scores.loc[[0, 2], "theta_rq"].tolist() == [0.9, 0.7]
    assert table.unscorable == {2: "an infinite score in the file"}
    assert table.warnings[-1] == "the file's scores are infinite in row 2: those rows are kept as not scored"


def test_finite_scores_are_left_as_they_are(tmp_path):
    table, scores = scored_table(scored_csv(tmp_path, [1.5, 0.5 / 0.7, 0.875]), source="scored.csv")
    assert scores["sgi_status"].tolist() == ["ok"] * 3 and table.unscorable == {}
    assert not any("infinite" in warning for warning in table.warnings)


def test_a_scored_csv_with_unlabelled_and_unscored_rows_opens_again(tmp_path):
    from sgi_core.cli import main

    source = tmp_path / "in.csv"
    pd.DataFrame({"question": ["q1", "q2", "q3"], "context": ["Paris is in France", "c2", "c3"],
                  "response": ["Paris", "", "the"], "label": ["1", "", "0"]}).to_csv(source, index=False)
    out = tmp_path / "scored.csv"
    assert main(["score", str(source), "-o", str(out), "--model", "hashing-16", "--no-cache"]) == 0
    # A CSV is read back as text: the unlabelled row's label, the unscored row's scores and the
    # share of a response without content words are empty strings.
    table, scores = scored_table(read_table(out, limits=InputLimits()), source="scored.csv")
    np.testing.assert_array_equal(scores["label"].to_numpy(), [1.0, np.nan, 0.0])
    assert scores["sgi_status"].tolist()[1] == "not scored: empty response" and np.isnan(scores.loc[1, "sgi"])
    np.testing.assert_array_equal(scores["lexical_groundedness"].to_numpy(), [1.0, np.nan, np.nan])
    assert table.unscorable == {2: "empty response"} and table.n_rows == 3
