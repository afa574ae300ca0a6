"""The sidebar's context strategy: the scores of a file of passages follow it, and the Explorer scores alike."""

import pytest

from dashboard import state
from sgi_core.embedding import load_encoder
from sgi_core.io.triples import load_triples
from sgi_core.scoring import score_table
from tests.dashboard.conftest import assert_clean, goto, metric, upload
from tests.io.test_context_lists import ROWS, write_ragas_jsonl

SGI_METRIC = "SGI = θ(r,q) / θ(r,c)"


def test_the_sidebar_offers_the_strategies_starting_at_joined(app):
    (box,) = [s for s in app.selectbox if s.key == state.CONTEXT_STRATEGY]
    assert box.options == ["joined", "mean", "nearest"] and box.value == "joined"


@pytest.mark.parametrize("strategy", ["joined", "mean", "nearest"])
def test_the_explorer_shows_the_row_scored_with_the_chosen_strategy(app, tmp_path, strategy):
    path = write_ragas_jsonl(tmp_path / "ragas.jsonl")
    app.selectbox(key=state.CONTEXT_STRATEGY).set_value(strategy).run()
    upload(app, "ragas.jsonl", path.read_bytes())
    goto(app, "explorer")
    app.number_input(key="explorer.row").set_value(1).run()
    assert_clean(app)
    expected = score_table(load_triples(path), load_encoder("hashing"), context_strategy=strategy)
    assert metric(app, SGI_METRIC) == f"{expected['sgi'].iloc[0]:.4f}"
    assert f"its SGI in the scored file is {expected['sgi'].iloc[0]:.4f}" in " ".join(c.value for c in app.caption)
    if strategy != "joined":
        joined = score_table(load_triples(path), load_encoder("hashing"))
        assert f"{joined['sgi'].iloc[0]:.4f}" != f"{expected['sgi'].iloc[0]:.4f}"
    assert len(ROWS[0][1]) == 2
