import numpy as np
import pandas as pd
import pytest

from sgi_core.embedding import EmbeddingCache, HashingEncoder
from sgi_core.errors import SGIInputError
from sgi_core.geometry import sgi_bounds, triple_angles
from sgi_core.io.triples import load_triples, validate_triples
from sgi_core.scoring import score_table, score_triple
from tests.conftest import SAMPLE_CSV


def test_rows_kept_in_order_with_status():
    frame = pd.DataFrame({
        "question": ["what is x", "what is y", "q3", "q4"],
        "context": ["x is a cat", "y is a dog", "ctx", "what is x"],
        "response": ["x is a cat", "", "ctx words", "anything at all"],
        "extra": ["a", "b", "c", "d"],
    })
    frame.loc[3, "question"] = "what is x"
    table = validate_triples(frame)
    out = score_table(table, HashingEncoder(64))
    assert out["extra"].tolist() == ["a", "b", "c", "d"]
    assert out["sgi_status"].tolist() == [
        "degenerate: response equals context (SGI unbounded)",
        "not scored: empty response",
        "ok",
        "degenerate: context equals question (SGI ~1 whatever the response)",
    ]
    assert np.isnan(out.loc[1, "sgi"]) and np.isfinite(out.loc[[0, 2, 3], "sgi"]).all()
    assert out.loc[3, "sgi"] == pytest.approx(1.0, rel=1e-6)


def test_scores_equal_direct_geometry():
    table = load_triples(SAMPLE_CSV)
    enc = HashingEncoder(128)
    out = score_table(table, enc)
    f = table.frame
    direct = triple_angles(enc.encode(f["question"].tolist()), enc.encode(f["context"].tolist()),
                           enc.encode(f["response"].tolist()))
    np.testing.assert_allclose(out["sgi"].to_numpy(), direct.sgi, rtol=1e-12)
    np.testing.assert_allclose(out["theta_qc"].to_numpy(), direct.theta_qc, atol=1e-12)


def test_all_rows_unscorable():
    table = validate_triples(pd.DataFrame({"question": [""], "context": ["c"], "response": ["r"]}))
    out = score_table(table, HashingEncoder(8))
    assert out["sgi_status"].tolist() == ["not scored: empty question"]


@pytest.mark.slow
def test_direction_grounded_scores_higher_with_minilm(minilm):
    """High SGI = grounded: on real HaluEval rows valid answers score higher."""
    out = score_table(load_triples(SAMPLE_CSV), minilm)
    valid = out.loc[out["label"] == 1, "sgi"]
    halluc = out.loc[out["label"] == 0, "sgi"]
    assert valid.mean() > halluc.mean() + 0.1
    assert (out["sgi_status"] == "ok").all()


def test_cold_warm_and_uncached_scores_are_identical(tmp_path):
    table = load_triples(SAMPLE_CSV)
    enc = HashingEncoder(64)
    cache = EmbeddingCache(enc.model_id, tmp_path)
    plain = score_table(table, enc)
    pd.testing.assert_frame_equal(score_table(table, enc, cache=cache), plain)
    pd.testing.assert_frame_equal(score_table(table, enc, cache=EmbeddingCache(enc.model_id, tmp_path)), plain)


def test_score_triple_equals_the_table_path():
    triple = {"question": ["who wrote hamlet"], "context": ["hamlet is a play by shakespeare"],
              "response": ["shakespeare wrote it"]}
    encoder = HashingEncoder(64)
    row = score_table(validate_triples(pd.DataFrame(triple)), encoder).iloc[0]
    one = score_triple(triple["question"][0], triple["context"][0], triple["response"][0], encoder)
    for name in ("theta_qc", "theta_rq", "theta_rc", "sgi"):
        assert getattr(one, name) == pytest.approx(row[name], rel=1e-12)
    lower, upper = sgi_bounds([row["theta_qc"]], [row["theta_rc"]])
    assert (one.sgi_lower, one.sgi_upper) == pytest.approx((lower[0], upper[0]))


@pytest.mark.parametrize("role", ["question", "context", "response"])
def test_score_triple_refuses_an_empty_text(role):
    texts = {"question": "q", "context": "c", "response": "r", role: "  "}
    with pytest.raises(SGIInputError, match=f"the {role} is empty"):
        score_triple(texts["question"], texts["context"], texts["response"], HashingEncoder(8))
