"""The HaluEval sample and a TruthfulQA draw scored once by the real MiniLM, for the monitoring simulations."""

import pandas as pd
import pytest

from tests.conftest import SAMPLE_CSV, SHARED_DATA

TRUTHFULQA = SHARED_DATA / "truthfulqa" / "truthfulqa.csv"
#: TruthfulQA rows drawn (seeded) for the run of another distribution.
TRUTHFULQA_ROWS = 300


@pytest.fixture(scope="session")
def scored_sample(minilm):
    from sgi_core.io.triples import load_triples
    from sgi_core.scoring import score_table

    frame = score_table(load_triples(SAMPLE_CSV), minilm)
    return frame.assign(pair_id=pd.to_numeric(frame["pair_id"]).astype(int))


@pytest.fixture(scope="session")
def scored_truthfulqa(minilm, tmp_path_factory):
    if not TRUTHFULQA.exists():
        pytest.skip("../shared/data is not beside the repository")
    from sgi_core.io.triples import load_triples
    from sgi_core.scoring import score_table

    drawn = pd.read_csv(TRUTHFULQA).sample(TRUTHFULQA_ROWS, random_state=0)[["question", "context", "response", "label"]]
    path = tmp_path_factory.mktemp("truthfulqa") / "truthfulqa_draw.csv"
    drawn.to_csv(path, index=False)
    return score_table(load_triples(path), minilm)
