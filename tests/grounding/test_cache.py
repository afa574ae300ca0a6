"""A rerun is free: every pair's probability comes back from the cache, keyed by the folder's fingerprint."""

import numpy as np
import pandas as pd

from sgi_core.embedding.cache import EmbeddingCache
from sgi_core.grounding.runtime import GroundingModel
from sgi_core.grounding.scoring import grounding_scores, pair_key

FRAME = pd.DataFrame({"context": ["Paris is the capital of France.", "Water boils at one hundred degrees."],
                      "response": ["Paris is in France. It is big.", "Water boils."]})


def test_a_rerun_reads_every_pair_from_the_cache(tiny_models, tmp_path, monkeypatch):
    model = tiny_models["deberta_cne"]
    cache = EmbeddingCache("grounding-test", tmp_path)
    first = grounding_scores(FRAME, model, cache=cache)
    assert len(cache) == 3  # three (chunk, sentence) pairs

    def no_forward(*args, **kwargs):
        raise AssertionError("the model ran on a cached pair")

    monkeypatch.setattr(GroundingModel, "support", no_forward)
    pd.testing.assert_frame_equal(grounding_scores(FRAME, model, cache=cache), first)


def test_pairs_are_keyed_by_both_texts_and_the_model():
    assert pair_key("ab", "c", "m") != pair_key("a", "bc", "m")
    assert pair_key("a\x00b", "c", "m") != pair_key("a", "b\x00c", "m")
    assert pair_key("a", "b", "m") != pair_key("a", "b", "n")
    assert pair_key("a", "b", "m") == pair_key("a", "b", "m")


def test_another_model_does_not_read_these_pairs(tiny_models, tmp_path):
    cache = EmbeddingCache("grounding-test", tmp_path)
    first = grounding_scores(FRAME, tiny_models["bert_cen"], cache=cache)
    # Same texts, a model of the same shape and other weights: its pairs are other keys, scored afresh.
    other = grounding_scores(FRAME, tiny_models["bert_enc"], cache=cache)
    assert len(cache) == 6
    assert not np.allclose(first.iloc[:, 0], other.iloc[:, 0])


def test_the_pair_cache_lives_inside_the_cache_folder(tiny_models, tmp_path, monkeypatch):
    from sgi_core.grounding.family import model_cache

    monkeypatch.setenv("SGI_CACHE_DIR", str(tmp_path / "cache"))
    cache = model_cache(tiny_models["bert_cen"])
    assert cache.path.is_relative_to(tmp_path / "cache") and cache.path.parent.name == "grounding"
