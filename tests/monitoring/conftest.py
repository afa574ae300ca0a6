"""The HaluEval sample and a TruthfulQA draw scored once by the real MiniLM, for the monitoring simulations."""

import pandas as pd
import pytest

from tests.conftest import SAMPLE_CSV, SHARED_DATA

TRUTHFULQA = SHARED_DATA / "truthfulqa" / "truthfulqa.csv"
#: TruthfulQA rows drawn (seeded) for the run of another distribution.
TRUTHFULQA_ROWS = 300
PAPERLIKE = SHARED_DATA / "halueval" / "halueval_qa_paperlike5000.csv"
#: Rows of each class drawn (seeded) from the paper's loader: HaluEval answers of 20 characters or more.
PAPERLIKE_PER_CLASS = 300


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

    drawn = pd.read_csv(TRUTHFULQA).sample(TRUTHFULQA_ROWS, random_state=0)
    drawn = drawn[["question", "context", "response", "label"]]
    path = tmp_path_factory.mktemp("truthfulqa") / "truthfulqa_draw.csv"
    drawn.to_csv(path, index=False)
    return score_table(load_triples(path), minilm)


@pytest.fixture(scope="session")
def scored_paperlike(minilm, tmp_path_factory):
    """HaluEval answers as the paper's loader keeps them (20 characters or more), none of the bundled sample's
    questions."""
    if not PAPERLIKE.exists():
        pytest.skip("../shared/data is not beside the repository")
    from sgi_core.io.triples import load_triples
    from sgi_core.scoring import score_table

    frame = pd.read_csv(PAPERLIKE)
    frame = frame[~frame["question"].isin(pd.read_csv(SAMPLE_CSV)["question"])]
    drawn = pd.concat([frame[frame["label"] == label].sample(PAPERLIKE_PER_CLASS, random_state=0) for label in (0, 1)])
    path = tmp_path_factory.mktemp("paperlike") / "paperlike_draw.csv"
    drawn[["question", "context", "response", "label"]].to_csv(path, index=False)
    return score_table(load_triples(path), minilm)
