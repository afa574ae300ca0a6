"""Reproduce the paper's Tables 1-5 on the public data and write docs/REPRODUCTION.md.

Runs the paper's protocol (HaluEval QA, one answer per question, answers under 20
characters dropped, first 5,000 rows) with every registered model available offline,
then the paired HaluEval set (both answers of all 10,000 questions) and the two
TruthfulQA setups, and writes the paper's value beside ours for each cell, the
length-confound table and a verdict computed from the numbers.

    .venv/bin/python benchmarks/reproduce_paper.py [--models minilm,mpnet] [--paired-models minilm]

Embeddings go through the embedding cache, so a rerun only recomputes statistics.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from controls_tables import detectors_section, length_matched_section
from paper_tables import (
    PAPER_TABLE1,
    agreement_section,
    calibration_section,
    confound_section,
    long_context_section,
    table1_section,
    table2_section,
    table3_section,
    table4_section,
    table5_section,
    verdict_section,
)

from sgi_core.detectors.report import detector_report
from sgi_core.embedding import EmbeddingCache, load_encoder, model_availability
from sgi_core.evaluation import evaluate
from sgi_core.io.triples import load_triples
from sgi_core.long_context import truncation_report
from sgi_core.results import UndefinedStatisticWarning
from sgi_core.scores.baselines import response_length
from sgi_core.scoring import score_table
from sgi_core.stats.calibration import calibration_analysis
from sgi_core.stats.correlation import cross_model_agreement
from sgi_core.stats.effect_size import effect_size
from sgi_core.stats.length_matched import length_matched_auroc
from sgi_core.stats.ranking import roc_analysis

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
FILES = {
    "paperlike": DATA / "halueval" / "halueval_qa_paperlike5000.csv",
    "paired": DATA / "halueval" / "halueval_qa.csv",
    "truthfulqa_ctx_question": DATA / "truthfulqa" / "truthfulqa_ctx_question.csv",
    "truthfulqa_references": DATA / "truthfulqa" / "truthfulqa.csv",
}
#: The seed's detector families this document reproduces (later registered families are reported by `report`).
SEED_FAMILIES = ("reference", "claims")

def score_file(path: Path, model: str) -> tuple[pd.DataFrame, object, object]:
    encoder = load_encoder(model)
    cache = EmbeddingCache(encoder.model_id)
    table = load_triples(path)
    start = time.perf_counter()
    frame = score_table(table, encoder, cache=cache)
    print(f"  {model} {path.name}: scored {len(frame)} rows in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return frame, table, encoder


def run(models: list[str], paired_models: list[str], detector_models: list[str], n_boot: int) -> dict:
    """Every number the document needs, model by model."""
    out: dict = {"models": models, "paired_models": paired_models, "detector_models": detector_models,
                 "n_boot": n_boot, "data": {}}
    for key, path in FILES.items():
        run_models = paired_models if key == "paired" else models
        out["data"][key] = {"file": str(path.relative_to(DATA.parent)), "models": {}}
        scores = {}
        for model in run_models:
            frame, table, encoder = score_file(path, model)
            report = evaluate(frame, n_boot=n_boot, seed=0)
            entry = {"report": report, "truncation": truncation_report(encoder, table.frame["context"])}
            labels, sgi = frame["label"].to_numpy(float), frame["sgi"].to_numpy(float)
            entry["theta_rq_roc"] = roc_analysis(labels, frame["theta_rq"], n_boot=n_boot, seed=0)
            entry["median_abs_sgi_minus_1"] = float(np.nanmedian(np.abs(sgi - 1.0)))
            if key == "paperlike":
                entry["calibration"] = {
                    "minmax_in_sample": calibration_analysis(labels, sgi, method="minmax", test_size=None),
                    "minmax_split": calibration_analysis(labels, sgi, method="minmax"),
                    "platt_split": calibration_analysis(labels, sgi, method="platt"),
                    "isotonic_split": calibration_analysis(labels, sgi, method="isotonic"),
                }
            entry["length_matched"] = length_matched_auroc(labels, sgi, response_length(table.frame["response"]),
                                                           n_boot=n_boot, seed=0)
            if key in ("paperlike", "paired") and model in detector_models:
                entry["detectors"] = detector_report(table, frame, encoder, model=model, kinds=SEED_FAMILIES,
                                                     cache=EmbeddingCache(encoder.model_id), n_boot=n_boot, seed=0)[0]
            if key in ("paperlike", "paired") and getattr(encoder, "tokenizer", None) is not None:
                cache = EmbeddingCache(encoder.model_id)
                entry["chunked"] = {}
                for strategy in ("mean", "nearest"):
                    chunked = score_table(table, encoder, context_strategy=strategy, cache=cache)
                    entry["chunked"][strategy] = {
                        "n_long": int((chunked["context_pieces"] > 1).sum()),
                        "d": effect_size(labels, chunked["sgi"], n_boot=0).cohens_d,
                        "auroc": roc_analysis(labels, chunked["sgi"], n_boot=0).auroc,
                    }
            out["data"][key]["models"][model] = entry
            scores[model] = sgi
        if len(scores) > 1:
            out["data"][key]["agreement"] = cross_model_agreement(scores)
    return out


def write_document(res: dict, path: Path, seconds: float) -> None:
    counts = {key: len(pd.read_csv(p, usecols=["label"])) for key, p in FILES.items()}
    header = [
        "# Reproducing the paper's tables", "",
        "Generated by `benchmarks/reproduce_paper.py` (do not edit by hand). Paper values are those of arXiv "
        "2512.13771 as quoted in the reference README and `../shared/docs/FINDINGS.md`; a `-` marks a cell the "
        "sources do not give. Every number labelled *ours* was measured in this run.", "",
        f"- Models (offline): {', '.join(res['models'])}; on the paired set: {', '.join(res['paired_models'])}. "
        f"Not run: {', '.join(m for m in PAPER_TABLE1 if m not in res['models']) or 'none'} (not available "
        "offline here; their paper values appear in Table 1 without ours).",
        *[f"- `{res['data'][key]['file']}`: {counts[key]:,} rows" for key in FILES],
        "- Angles in float64 from the cached float32 embeddings; default max sequence lengths (truncation); "
        f"bootstrap {res['n_boot']} resamples, seed 0. Run time {seconds / 60:.0f} min (embeddings from the cache "
        "where present).", "",
    ]
    sections = (table1_section, table2_section, table3_section, table4_section, table5_section,
                calibration_section, agreement_section, confound_section, length_matched_section,
                detectors_section, long_context_section, verdict_section)
    body = [line for section in sections for line in section(res)]
    path.write_text("\n".join(header + body))


def main(argv: list[str] | None = None) -> int:
    available = [a.name for a in model_availability() if a.available]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(available), help="default: every model available offline")
    parser.add_argument("--paired-models", default=None,
                        help="models for the 20,000-row paired set (default: --models)")
    parser.add_argument("--detector-models", default="minilm",
                        help="models whose reference-set and claim detectors are computed on the HaluEval files")
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "REPRODUCTION.md")
    parser.add_argument("--json", type=Path, default=None, help="also write the headline numbers as JSON")
    args = parser.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    paired_models = [m for m in (args.paired_models or args.models).split(",") if m]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)  # caveats are kept in each report's notes
        res = run(models, paired_models, [m for m in args.detector_models.split(",") if m], args.n_boot)
    write_document(res, args.out, time.perf_counter() - start)
    if args.json:
        summary = {key: {m: e["report"].summary() for m, e in block["models"].items()}
                   for key, block in res["data"].items()}
        args.json.write_text(json.dumps(summary, indent=2))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
