"""Does a few-label interval of a fitted combination cover what the combination scores on the whole file?

    .venv/bin/python benchmarks/combined_coverage.py [--data truthfulqa] [--sizes 44,150,300,600]
        [--samples 40] [--model minilm] [--json OUT]

A labelled file of ``../shared/data`` (TruthfulQA's 2,408 answers by default, HaluEval's
paper-like 5,000 with ``--data halueval``) is scored once with ``--model``; its detector scores
are SGI, the three angles, response length, word overlap and the unsupported-specifics share
(0 for a response naming no number or name): 7 features, oriented higher = grounded. The reference
value is the out-of-fold AUROC of their logistic combination on every labelled row
(:func:`~sgi_core.evaluation.detectors.compare_detectors`, question groups kept in one fold).

For each size ``n`` of ``--sizes``, ``--samples`` times: ``n`` rows drawn at random (whole
question groups never split by the folds) are what a user has labelled.
``compare_detectors`` then either withholds the combination (fewer than
:data:`~sgi_core.evaluation.events_per_feature.MIN_EVENTS_PER_FEATURE` rows of the smaller
class per feature) or reports its AUROC with the refit interval. Printed per size: the share
withheld; among the rest, how often the refit interval holds the whole-file value, against the
naive interval (the fitted out-of-fold probabilities bootstrapped as if they were a fixed score),
and the median widths; the share "undefined" (fewer labelled rows of a class than folds); and, for
the withheld samples, what the refit interval would have been (computed here, never shown by the
product), so that the floor's effect can be read.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sgi_core.detectors.specifics import specifics_scores  # noqa: E402
from sgi_core.embedding import EmbeddingCache, load_encoder  # noqa: E402
from sgi_core.evaluation.detectors import compare_detectors  # noqa: E402
from sgi_core.evaluation.refit import judge_combined  # noqa: E402
from sgi_core.io.triples import load_triples  # noqa: E402
from sgi_core.results import UndefinedStatisticWarning  # noqa: E402
from sgi_core.scores import oriented_scores  # noqa: E402
from sgi_core.scores.selection import trivial_names  # noqa: E402
from sgi_core.scoring import score_table  # noqa: E402
from sgi_core.stats.crossval import out_of_fold_probability  # noqa: E402
from sgi_core.stats.folds import crossfit_folds  # noqa: E402
from sgi_core.stats.ranking import roc_analysis  # noqa: E402

DATA = {"truthfulqa": REPO.parent / "shared" / "data" / "truthfulqa" / "truthfulqa.csv",
        "halueval": REPO.parent / "shared" / "data" / "halueval" / "halueval_qa_paperlike5000.csv"}
N_BOOT = 200


def detector_features(path: Path, model: str) -> tuple[dict, np.ndarray, np.ndarray]:
    """The file's 7 oriented detector scores, its labels and its question groups."""
    table = load_triples(path)
    encoder = load_encoder(model)
    scored = score_table(table, encoder, cache=EmbeddingCache(encoder.model_id))
    scores = {"sgi": scored["sgi"].to_numpy(dtype=float),
              "neg_theta_rc": -scored["theta_rc"].to_numpy(dtype=float),
              "neg_theta_qc": -scored["theta_qc"].to_numpy(dtype=float)}
    trivial = oriented_scores(scored, trivial_names(scored.columns))
    scores.update({name: column.to_numpy(dtype=float) for name, column in trivial.items()})
    # A response naming no number or name has no unsupported specific: share 0, not a missing row.
    unsupported = specifics_scores(scored)["specifics_unsupported_share"].fillna(0.0)
    scores["neg_unsupported_specifics"] = -unsupported.to_numpy(dtype=float)
    groups = pd.factorize(scored["question"])[0]
    return scores, scored["label"].to_numpy(dtype=float), groups


def covers(interval, value: float) -> bool:
    return bool(interval[0] <= value <= interval[1])


def one_sample(scores: dict, labels, groups, rows, full: float, seed: int) -> dict:
    """The product's answer on ``rows`` (withheld, or the refit interval), the naive interval and the refit one."""
    sub = {name: values[rows] for name, values in scores.items()}
    y, g = labels[rows], groups[rows]
    result = compare_detectors(sub, y, groups=g, n_boot=N_BOOT, seed=seed)
    features = np.column_stack(list(sub.values()))
    keep = ~np.isnan(features).any(axis=1) & ~np.isnan(y)
    folds = crossfit_folds(g[keep], y_true=y[keep], n_folds=5, seed=seed)
    prob = out_of_fold_probability(features[keep], y[keep], folds, seed=seed)
    naive = roc_analysis(y[keep], prob, n_boot=N_BOOT, seed=seed).auroc_ci
    refit = judge_combined(y[keep], prob, features[keep], groups=g[keep], n_refit=N_BOOT, seed=seed).auroc_ci
    status = "withheld" if result.withheld else "undefined" if result.level == "undefined" else "shown"
    return {"status": status, "naive": naive, "refit": refit,
            "shown": result.combined_roc.auroc_ci if status == "shown" else None, "full": full}


def summary(rows: list[dict]) -> dict:
    def share(key, subset):
        return float(np.mean([covers(r[key], r["full"]) for r in subset])) if subset else float("nan")

    def width(key, subset):
        return float(np.median([r[key][1] - r[key][0] for r in subset])) if subset else float("nan")

    shown = [r for r in rows if r["status"] == "shown"]
    withheld = [r for r in rows if r["status"] == "withheld"]
    return {"samples": len(rows), "withheld": len(withheld) / len(rows),
            "undefined": float(np.mean([r["status"] == "undefined" for r in rows])),
            "shown_cover": share("shown", shown), "shown_width": width("shown", shown),
            "naive_cover_shown": share("naive", shown),
            "withheld_refit_cover": share("refit", withheld), "withheld_naive_cover": share("naive", withheld),
            "withheld_naive_width": width("naive", withheld)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", choices=sorted(DATA), default="truthfulqa")
    parser.add_argument("--sizes", default="44,150,300,600")
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore", UndefinedStatisticWarning)
    warnings.simplefilter("ignore", UserWarning)  # scikit-learn's folds of few groups, counted by the product
    scores, labels, groups = detector_features(DATA[args.data], args.model)
    full = compare_detectors(scores, labels, groups=groups, n_boot=0, seed=args.seed).cv_auroc_combined
    print(f"{args.data}: {len(labels):,} rows, {int((labels == 1).sum()):,} grounded / {int((labels == 0).sum()):,} "
          f"hallucinated, {len(scores)} features; whole-file out-of-fold AUROC of the combination {full:.3f}")
    rng = np.random.default_rng(args.seed)
    out = {"data": args.data, "model": args.model, "full_auroc": full, "sizes": {}}
    print(f"{'labels':>6} {'undefined':>9} {'withheld':>8} {'shown: cover':>12} {'width':>6} {'naive cover':>11} "
          f"{'withheld: refit cover':>21} {'naive cover':>11} {'naive width':>11}")
    for n in (int(s) for s in args.sizes.split(",")):
        rows = []
        for sample in range(args.samples):
            chosen = np.sort(rng.choice(len(labels), n, replace=False))
            rows.append(one_sample(scores, labels, groups, chosen, full, seed=args.seed + sample))
        res = summary(rows)
        out["sizes"][n] = res
        print(f"{n:>6} {res['undefined']:>9.0%} {res['withheld']:>8.0%} {res['shown_cover']:>12.3f} "
              f"{res['shown_width']:>6.3f} "
              f"{res['naive_cover_shown']:>11.3f} {res['withheld_refit_cover']:>21.3f} "
              f"{res['withheld_naive_cover']:>11.3f} {res['withheld_naive_width']:>11.3f}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
