"""A scored CSV opened in the app: the file `score -o x.csv` writes and the app's own scored download."""

import pandas as pd
import pytest

from dashboard import services
from sgi_core.cli import main
from sgi_core.embedding import load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.io.scored import scored_table
from sgi_core.io.triples import load_triples
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import MODEL, assert_clean, goto, upload


def written_by_score(folder):
    path = folder / "scored.csv"
    assert main(["score", str(SAMPLE_CSV), "-o", str(path), "--model", MODEL]) == 0
    return path


def downloaded_from_app(folder):
    path = folder / "scored_download.csv"
    path.write_bytes(services.csv_bytes(score_table(load_triples(SAMPLE_CSV), load_encoder(MODEL))))
    return path


@pytest.mark.parametrize("write", [written_by_score, downloaded_from_app])
def test_explorer_opens_a_scored_csv_on_the_row_asked_for(app, tmp_path, write):
    path = write(tmp_path)
    scores = pd.read_csv(path)
    upload(app, path.name, path.read_bytes())
    assert_clean(app)
    goto(app, "explorer")
    assert_clean(app)
    assert app.text_area(key="explorer.question").value == scores["question"].iloc[0]
    app.number_input(key="explorer.row").set_value(7).run()
    assert_clean(app)
    assert app.text_area(key="explorer.response").value == scores["response"].iloc[6]
    assert any(c.value.startswith("Row 7 is labelled") and f"{scores['sgi'].iloc[6]:.4f}" in c.value
               for c in app.caption)


def test_scored_csv_row_numbers_are_read_as_numbers():
    frame = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).head(3)
    frame = frame.assign(label=["1.0", "0.0", "1.0"], input_row=["1", "2", "3"], theta_qc="1.0", theta_rq="0.9",
                         theta_rc="0.6", sgi="1.5", sgi_status="ok")
    assert scored_table(frame, source="s.csv")[1]["input_row"].tolist() == [1, 2, 3]
    frame.loc[1, "input_row"] = "2.5"
    with pytest.raises(SGIInputError, match=r"^a scored file's input_row must be a whole number from 1 "
                                            r"\(file 's.csv', column 'input_row', row 2\)"):
        scored_table(frame, source="s.csv")
