"""A file scored with a grounding model offers its scores to the review queues by name, never its counts."""

import numpy as np
import pandas as pd

from sgi_core.embedding import load_encoder
from sgi_core.grounding.scoring import grounding_scores
from sgi_core.io.triples import load_triples
from sgi_core.scoring import score_table
from tests.conftest import SAMPLE_CSV


def test_queue_scores_name_grounding_scores_and_skip_their_counts(tiny_models, tmp_path):
    from dashboard import state
    from dashboard.services import review_services
    from sgi_core.render.names import display_name

    frame = pd.read_csv(SAMPLE_CSV).head(20)
    columns = grounding_scores(frame, tiny_models["bert_cen"])
    path = tmp_path / "scored.csv"
    frame.join(columns).to_csv(path, index=False)
    table = load_triples(path)
    scored = score_table(table, load_encoder("hashing"))
    scores = review_services.queue_scores(state.DataKey("scored.csv", "x", (), "grounded"), "hashing", table, scored)
    # Keyed by score name; the page draws each by its display name.
    np.testing.assert_allclose(scores["grounding_bert_cen_min"], columns["grounding_bert_cen_min"])
    np.testing.assert_allclose(scores["grounding_bert_cen_mean"], columns["grounding_bert_cen_mean"])
    assert display_name("grounding_bert_cen_min") == "grounding model bert_cen: weakest sentence"
    assert not [name for name in scores if "chunks" in name or name.endswith("_cut")]
