"""A damaged or hostile grounding folder ends in a clear input error, never a traceback from deep inside a loader."""

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.grounding.adapters import check_prompt
from sgi_core.grounding.runtime import load_grounding_model
from sgi_core.grounding.selftest import MIN_SEPARATION, SELF_TEST_PAIRS, run_self_test


@pytest.fixture
def nli(tiny_folders, tmp_path):
    return shutil.copytree(tiny_folders["bert_enc"], tmp_path / "nli")


def _edit_json(path, **changes):
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


@pytest.mark.parametrize("model_type", ["evil", "../evil", 7])
def test_a_model_type_transformers_lacks_is_refused(nli, model_type):
    _edit_json(nli / "config.json", model_type=model_type)
    with pytest.raises(SGIInputError, match=r"names the model type .*which transformers does not define"):
        load_grounding_model(nli, backend="torch", self_test=False)


@pytest.mark.parametrize(("tokenizer_class", "match"), [
    ("AutoModel", "tokenizer class 'AutoModel', which is not a tokenizer"),
    ("evil", "tokenizer class 'evil', which is not a tokenizer"),
    ("os.system", "'tokenizer_config.json' names module 'os.system'"),  # the trust check sees a dotted name first
])
def test_a_tokenizer_class_that_is_no_tokenizer_is_refused(nli, tokenizer_class, match):
    _edit_json(nli / "tokenizer_config.json", tokenizer_class=tokenizer_class)
    with pytest.raises(SGIInputError, match=match):
        load_grounding_model(nli, backend="torch", self_test=False)


def test_truncated_weights_and_an_absurd_header_are_input_errors(nli):
    weights = nli / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])
    with pytest.raises(SGIInputError, match=rf"cannot load model folder '{nli.resolve()}'.*complete save_pretrained"):
        load_grounding_model(nli, backend="torch", self_test=False)
    weights.write_bytes(struct.pack("<Q", 2**40) + b"{}")
    with pytest.raises(SGIInputError, match="cannot load model folder"):
        load_grounding_model(nli, backend="torch", self_test=False)


def test_a_manifest_max_length_beyond_the_positions_is_refused(nli):
    positions = json.loads((nli / "config.json").read_text())["max_position_embeddings"]
    (nli / "sgi_grounding.json").write_text(json.dumps({"max_length": positions + 1}))
    with pytest.raises(SGIInputError, match=rf"max_length {positions + 1}, beyond the {positions} tokens"):
        load_grounding_model(nli, backend="torch", self_test=False)
    (nli / "sgi_grounding.json").write_text(json.dumps({"max_length": positions}))
    assert load_grounding_model(nli, backend="torch", self_test=False).max_length == positions


@pytest.mark.parametrize("prompt", ["{text1} {text3}", "{0} {text1} {text2}", "{text1:Z} {text2}",
                                    "{text1.__class__.__mro__} {text2}", "{text1} {text2:>200000000}",
                                    "{text1!r} {text2}", "{text1[0]} {text2}", "{text1} {text2", "{text1} only"])
def test_hhem_prompts_hold_only_plain_text1_and_text2(prompt):
    with pytest.raises(SGIInputError, match="prompt of model folder 'f'"):
        check_prompt(prompt, "f")


def test_a_plain_hhem_prompt_with_literal_braces_is_accepted():
    check_prompt("<pad> {{Premise}}: {text1}\n\nHypothesis: {text2} and again {text2}", "f")


def test_a_random_weight_model_fails_the_self_test(tiny_folders):
    for name in ("bert_enc", "roberta_two", "deberta_two"):
        with pytest.raises(SGIInputError, match=r"does not separate entailments from contradictions.*random or "
                                                r"mislabelled weights\?"):
            load_grounding_model(tiny_folders[name], backend="torch")


def test_equal_means_fail_and_the_margin_is_the_boundary():
    with pytest.raises(SGIInputError, match="does not separate"):
        run_self_test(lambda p, h: np.full(len(p), 0.5), source="constant")
    entailed = {hypothesis for _, hypothesis, _ in SELF_TEST_PAIRS}

    def gap(size):
        return lambda p, h: np.array([0.5 + size / 2 if x in entailed else 0.5 - size / 2 for x in h])

    assert run_self_test(gap(MIN_SEPARATION + 1e-9), source="toy").passed
    with pytest.raises(SGIInputError, match="does not separate"):
        run_self_test(gap(MIN_SEPARATION - 1e-3), source="toy")


def test_a_chosen_folder_replaced_by_a_link_is_not_loaded(nli, tmp_path):
    from sgi_core.grounding.options import load_choice, page_choice

    choice = page_choice((f"nli={nli}",), {"no_self_test": True}, folder=lambda typed: Path(typed).resolve(),
                         backend="torch")
    assert load_choice(choice)[0].name == "nli"
    elsewhere = shutil.copytree(nli, tmp_path / "elsewhere")
    shutil.rmtree(nli)
    nli.symlink_to(elsewhere)  # after the page checked the path under its root
    with pytest.raises(SGIInputError, match="was replaced by a link after it was chosen"):
        load_choice(choice)
