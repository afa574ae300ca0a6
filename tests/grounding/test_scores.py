"""Each adapter's score equals a direct transformers forward and softmax, read by label name."""

import numpy as np
import pandas as pd
import pytest

from sgi_core.columns import grounding_columns
from sgi_core.grounding.scoring import grounding_scores
from tests.grounding.conftest import FOLDERS
from tests.grounding.oracle import direct_support

#: The label each folder's score reads: the supported one, or a token classifier's hallucinated one.
READ_LABEL = {"bert_cen": "entailment", "bert_enc": "entailment", "bert_cne": "ENTAILMENT",
              "roberta_enc": "entailment", "deberta_cne": "ENTAILMENT", "modernbert_cen": "entailment",
              "roberta_two": "supported", "deberta_two": "supported", "modernbert_token": "hallucinated",
              "bert_token": "hallucinated", "hhem": "consistent"}
#: Short rows of different lengths (one batch pads them), each response one sentence.
ROWS = pd.DataFrame({
    "question": ["Where is Paris?", "When does water boil?", "Who jumps?"],
    "context": ["Paris is the capital of France.", "Water boils at one hundred degrees.",
                "A quick brown fox jumps over the lazy dog near the river that flows north through the valley."],
    "response": ["Paris is in France.", "Water boils at one hundred degrees.", "The fox jumps."],
})


def test_every_folder_has_its_read_label():
    assert set(READ_LABEL) == set(FOLDERS)


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_score_equals_a_direct_forward(tiny_folders, tiny_models, name):
    model = tiny_models[name]
    scores = grounding_scores(ROWS, model, batch_size=8)
    expected = [direct_support(tiny_folders[name], c, r, label=READ_LABEL[name])
                for c, r in zip(ROWS["context"], ROWS["response"])]
    low, mean, chunks, cut = grounding_columns(name)
    np.testing.assert_allclose(scores[low], expected, atol=1e-5, rtol=0)
    np.testing.assert_allclose(scores[mean], expected, atol=1e-5, rtol=0)
    assert scores[chunks].tolist() == [1, 1, 1] and scores[cut].tolist() == [0, 0, 0]
    # The rows differ, so a score read at the wrong label or token would not match them all.
    assert np.ptp(expected) > 1e-4


@pytest.mark.parametrize("order, index", [("bert_cen", 1), ("bert_enc", 0), ("bert_cne", 2)])
def test_publisher_label_orders_are_read_by_name(tiny_models, order, index):
    assert tiny_models[order].adapter.label_index == index
    assert tiny_models[order].adapter.kind == "nli"


@pytest.mark.parametrize("name, kind", [("roberta_two", "consistency"), ("deberta_two", "consistency"),
                                        ("modernbert_token", "token"), ("hhem", "hhem"), ("deberta_cne", "nli")])
def test_adapter_detected_from_the_config(tiny_models, name, kind):
    assert tiny_models[name].adapter.kind == kind


def test_several_sentences_give_min_and_mean_of_their_best_support(tiny_folders, tiny_models):
    row = pd.DataFrame({"context": ["Paris is the capital of France."],
                        "response": ["Paris is in France. Water boils at one hundred degrees. The fox jumps."]})
    scores = grounding_scores(row, tiny_models["bert_cen"])
    each = [direct_support(tiny_folders["bert_cen"], row["context"][0], s, label="entailment")
            for s in ("Paris is in France.", "Water boils at one hundred degrees.", "The fox jumps.")]
    assert scores["grounding_bert_cen_min"][0] == pytest.approx(min(each), abs=1e-5)
    assert scores["grounding_bert_cen_mean"][0] == pytest.approx(np.mean(each), abs=1e-5)


def test_every_row_is_kept_and_empty_texts_get_nan(tiny_models):
    frame = pd.DataFrame({"context": ["Paris is the capital of France.", "", "Water boils.", None],
                          "response": ["Paris is in France.", "Anything.", "   ", "Water boils."]},
                         index=[10, 11, 12, 13])
    scores = grounding_scores(frame, tiny_models["roberta_enc"])
    assert scores.index.tolist() == [10, 11, 12, 13]
    assert np.isfinite(scores["grounding_roberta_enc_min"]).tolist() == [True, False, False, False]
    assert scores["grounding_roberta_enc_chunks"].tolist() == [1, 0, 0, 0]


def test_a_column_of_the_same_name_is_refused(tiny_models):
    frame = ROWS.assign(grounding_bert_cen_mean=1.0)
    with pytest.raises(ValueError, match="already has a column named grounding_bert_cen_mean.*OTHER=DIR"):
        grounding_scores(frame, tiny_models["bert_cen"])


def test_pairs_are_batched_by_token_count_not_characters(tiny_models, monkeypatch):
    from dataclasses import replace

    from sgi_core.grounding import adapters

    model = tiny_models["bert_enc"]
    kind = adapters.ADAPTER_KINDS[model.adapter.kind]
    widths = []

    def encode(m, premises, hypotheses):
        inputs, batch = kind.encode(m, premises, hypotheses)
        widths.append(sorted(int(n) for n in batch["attention_mask"].sum(dim=1)))
        return inputs, batch

    monkeypatch.setitem(adapters.ADAPTER_KINDS, model.adapter.kind, replace(kind, encode=encode))
    # Close in characters, far apart in tokens: a character sort would pair a short and a long one.
    hypotheses = ["supercalifragilistic!!", "a,b,c,d,e,f,g,h,i,j,k,l", "supercalifragilistic!!!!",
                  "m,n,o,p,q,r,s,t,u,v,w,x,y"]
    tokens, chars = model.count_tokens(hypotheses), [len(h) for h in hypotheses]
    assert chars == sorted(chars) and tokens[1] > tokens[2] and tokens[3] > tokens[2]  # a character sort mixes them
    model.support(["The museum opens at nine."] * 4, hypotheses, batch_size=2)
    assert len(widths) == 2 and all(batch[-1] - batch[0] <= 2 for batch in widths)  # by characters: 15 apart
