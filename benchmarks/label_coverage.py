"""Do 40-label intervals of two runs' hallucination-rate difference cover the truth? Real texts, the real model.

    .venv/bin/python benchmarks/label_coverage.py [--questions 143] [--labelled 40] [--run-pairs 5]
        [--samples 100] [--model minilm] [--json OUT]

Two runs of a system are built from HaluEval QA (``../shared/data/halueval/halueval_qa.csv``):
``--questions`` questions drawn with a seed, each run answering every question with its right
or its hallucinated answer, the base run hallucinating with probability 0.35 per question and
the new run with 0.245 (about the rates of two generator versions answering the same questions),
drawn independently per run. Both runs are scored once with ``--model``. The truth is the
difference of hallucination rates over all matched keys, from every label.

For each of ``--run-pairs`` pairs of runs, ``--samples`` times: ``--labelled`` keys drawn at
random are labelled in both runs and :func:`sgi_core.runs.labels.label_shift`
estimates the difference (prediction-powered over every key, the labels-only interval beside
it). Printed: the coverage of the 95% intervals (the share that hold the truth), their median
width, and how often the verdict word is wrong (a regression called where the new run is
better, or the reverse). SGI is near chance on this kind of comparison, so the candidate
scores include the trivial baselines that do track HaluEval's labels: the check is that the
intervals hold whatever the predictor is.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sgi_core.embedding import EmbeddingCache, load_encoder  # noqa: E402
from sgi_core.runs.labels import label_shift  # noqa: E402
from sgi_core.runs.matching import match_runs  # noqa: E402
from sgi_core.runs.reading import read_run  # noqa: E402
from sgi_core.scoring import score_table  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "halueval" / "halueval_qa.csv"
RATES = {"base": 0.35, "new": 0.245}


def build_runs(paired: pd.DataFrame, n_questions: int, seed: int) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    pairs = rng.choice(paired["pair_id"].unique(), n_questions, replace=False)
    chosen = paired[paired["pair_id"].isin(set(pairs))]
    runs = {}
    for name, rate in RATES.items():
        wrong = dict(zip(pairs, rng.random(len(pairs)) < rate))
        answer = np.where(chosen["pair_id"].map(wrong), "hallucinated", "right")
        runs[name] = chosen[chosen["answer_type"] == answer].sort_values("pair_id").reset_index(drop=True)
    return runs


def scored_pair(runs: dict, encoder, cache):
    scored = [read_run(frame, source=name, scorer=lambda table: score_table(table, encoder, cache=cache), key="pair_id")
              for name, frame in runs.items()]
    return match_runs(scored[0].frame, scored[1].frame, key="pair_id", scores=scored[0].scores)


def one_estimate(matched, n_labelled: int, rng):
    keep = np.zeros(len(matched.keys), dtype=bool)
    keep[rng.choice(len(keep), n_labelled, replace=False)] = True
    sample = replace(matched, base=matched.base.assign(label=matched.base["label"].where(keep)),
                     new=matched.new.assign(label=matched.new["label"].where(keep)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return label_shift(sample, seed=int(rng.integers(1 << 30)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=143)
    parser.add_argument("--labelled", type=int, default=40)
    parser.add_argument("--run-pairs", type=int, default=5)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    paired = pd.read_csv(DATA, dtype={"label": float})
    encoder = load_encoder(args.model)
    cache = EmbeddingCache(encoder.model_id)
    rows = []
    for pair in range(args.run_pairs):
        matched = scored_pair(build_runs(paired, args.questions, seed=pair), encoder, cache)
        truth = float((1 - matched.new["label"]).mean() - (1 - matched.base["label"]).mean())
        rng = np.random.default_rng(1000 + pair)
        for _ in range(args.samples):
            res = one_estimate(matched, args.labelled, rng)
            rows.append({"pair": pair, "truth": truth, "estimate": res.difference, "lo": res.ci[0], "hi": res.ci[1],
                         "labels_lo": res.labels_only_ci[0], "labels_hi": res.labels_only_ci[1],
                         "method": res.method, "verdict": res.verdict})
    out = pd.DataFrame(rows)
    covered = (out["lo"] <= out["truth"]) & (out["truth"] <= out["hi"])
    labels_covered = (out["labels_lo"] <= out["truth"]) & (out["truth"] <= out["labels_hi"])
    wrong_word = ((out["verdict"] == "regression") & (out["truth"] < 0)) | (
        (out["verdict"] == "improvement") & (out["truth"] > 0))
    summary = {
        "model": args.model, "questions": args.questions, "labelled": args.labelled, "estimates": len(out),
        "truths": sorted(set(np.round(out["truth"], 4))),
        "coverage": float(covered.mean()), "labels_only_coverage": float(labels_covered.mean()),
        "median_width": float((out["hi"] - out["lo"]).median()),
        "labels_only_median_width": float((out["labels_hi"] - out["labels_lo"]).median()),
        "wrong_verdict_share": float(wrong_word.mean()),
        "improvement_share": float((out["verdict"] == "improvement").mean()),
        "methods": out["method"].value_counts().to_dict(),
    }
    for name, value in summary.items():
        print(f"{name}: {value}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
