"""What a dashboard user waits for once the rows are scored: thresholds, calibration, report, maps.

    .venv/bin/python benchmarks/bench_interaction.py [--rows 20000] [--model hashing-384] [--json OUT]

On the first ``--rows`` rows of the paired HaluEval QA file, scored once (untimed;
``--cache-dir`` reuses embeddings from an earlier run), times:

- ``threshold_metrics``: the metrics at one threshold, what a slider move recomputes;
- ``threshold_grid``: the metrics at every candidate threshold;
- ``calibration_<method>``: fitting a calibrator on half the labelled rows and
  measuring it on the other half (:func:`sgi_core.calibration_analysis`);
- ``report``: :func:`sgi_core.evaluation.evaluate`, 1,000 bootstrap resamples;
- ``pca``: the 2-D PCA map of all ``3 * rows`` question, context and response points;
- ``umap``: the UMAP map of the same points as the dashboard makes it (above
  :data:`sgi_core.projection.UMAP_FIT_POINTS` points: fitted on a sample of triples, the
  rest placed by ``transform``), after a warm-up on 4,500 points that compiles UMAP's
  numba code for both steps (the first fit in a process pays that once).

``--umap-quality N`` also fits UMAP on every point once (``umap_full``) and compares the
two maps by trustworthiness (:func:`sklearn.manifold.trustworthiness`, 15 neighbours,
cosine in the embedding space) on the same ``N`` points drawn at random: 1 when every
point's 2-D neighbours are also its neighbours in the embedding space.

Each is the median of ``--repeats`` runs (UMAP: ``--umap-repeats``) after one
untimed call. The default encoder is the hashing test encoder at MiniLM's width
(384): these costs depend on the number of rows and the embedding width, not on
which model made the vectors, and it scores 20,000 rows in seconds instead of
minutes. ``--model minilm`` uses the real model.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import pandas as pd
from bench_scoring import DATA, limit_threads, machine, timed

from sgi_core.stats.calibration import calibration_analysis
from sgi_core.stats.thresholds import threshold_metrics, threshold_metrics_grid

TARGETS_S = {"threshold_metrics": 0.1, "pca": 1.0, "umap": 20.0}
CALIBRATION_METHODS = ("minmax", "platt", "isotonic")
UMAP_WARM_UP_TRIPLES = 1_500
# Above 4,095 points UMAP finds neighbours by NN-descent: a warm-up fitted on more points than
# that, with a few left over to transform, compiles the code paths the timed map runs.
UMAP_WARM_UP_FIT_POINTS = 4_200


def median_seconds(run, repeats: int) -> dict:
    """Medians of wall and CPU seconds of ``repeats`` calls of ``run`` after one untimed call."""
    run()
    runs = [timed(run) for _ in range(repeats)]
    return {"seconds": statistics.median(r[0] for r in runs), "cpu_seconds": statistics.median(r[1] for r in runs),
            "runs": [r[0] for r in runs]}


def scored_rows(args, cache_dir: str):
    from sgi_core.embedding import EmbeddingCache, load_encoder
    from sgi_core.io.triples import validate_triples
    from sgi_core.scoring import embed_table, score_table

    frame = pd.read_csv(args.data, dtype=str, keep_default_na=False, nrows=args.rows)
    table = validate_triples(frame, source=Path(args.data).name)
    encoder = load_encoder(args.model)
    cache = EmbeddingCache(encoder.model_id, cache_dir)
    scored = score_table(table, encoder, cache=cache)
    q_emb, c_emb, r_emb, _ = embed_table(table, encoder, cache=cache)
    return scored, (q_emb, c_emb, r_emb)


def umap_quality(embeddings, sampled, size: int, seed: int = 0) -> dict:
    """Trustworthiness of the sampled-fit map and of a full fit on the same ``size`` random points."""
    import numpy as np
    from sklearn.manifold import trustworthiness

    from sgi_core.geometry import l2_normalize
    from sgi_core.projection import project_triples, sample_rows

    seconds, _, full = timed(lambda: project_triples(*embeddings, method="umap", max_fit_points=None))
    stacked = np.vstack([l2_normalize(e) for e in embeddings])
    points = sample_rows(len(stacked), size, seed=seed)

    def trust(projection) -> float:
        coords = np.vstack([projection.question, projection.context, projection.response])
        return float(trustworthiness(stacked[points], coords[points], n_neighbors=15, metric="cosine"))

    return {"full_fit_seconds": seconds, "points": len(points),
            "trustworthiness_sampled_fit": trust(sampled), "trustworthiness_full_fit": trust(full)}


def measure(args, scored: pd.DataFrame, embeddings) -> dict[str, dict]:
    from sgi_core import evaluation
    from sgi_core.projection import project_triples
    from sgi_core.render.lines import projection_note

    labels, sgi = scored["label"].to_numpy(), scored["sgi"].to_numpy()
    threshold = float(scored["sgi"].median())
    tasks = {
        "threshold_metrics": (lambda: threshold_metrics(labels, sgi, threshold), args.repeats),
        "threshold_grid": (lambda: threshold_metrics_grid(labels, sgi), args.repeats),
        **{f"calibration_{m}": (lambda m=m: calibration_analysis(labels, sgi, method=m), args.repeats)
           for m in CALIBRATION_METHODS},
        "report": (lambda: evaluation.evaluate(scored), max(1, args.repeats // 3)),
        "pca": (lambda: project_triples(*embeddings, method="pca"), args.repeats),
    }
    results = {}
    for name, (run, repeats) in tasks.items():
        results[name] = median_seconds(run, repeats)
        print(f"  {name:<22} {results[name]['seconds']:9.4f} s", file=sys.stderr)
    if args.umap_repeats > 0:
        warm_up = tuple(e[:UMAP_WARM_UP_TRIPLES] for e in embeddings)
        warm_up_seconds = timed(lambda: project_triples(*warm_up, method="umap",
                                                        max_fit_points=UMAP_WARM_UP_FIT_POINTS))[0]
        runs = [timed(lambda: project_triples(*embeddings, method="umap")) for _ in range(args.umap_repeats)]
        projection = runs[-1][2]
        results["umap"] = {"seconds": statistics.median(r[0] for r in runs),
                           "cpu_seconds": statistics.median(r[1] for r in runs),
                           "runs": [r[0] for r in runs], "warm_up_seconds": warm_up_seconds,
                           "fit_points": projection.fit_points, "note": projection_note(projection)}
        print(f"  {'umap':<22} {results['umap']['seconds']:9.4f} s", file=sys.stderr)
        if args.umap_quality > 0:
            results["umap"]["quality"] = umap_quality(embeddings, projection, args.umap_quality)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--model", default="hashing-384")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--umap-repeats", type=int, default=1, help="UMAP fits to time (0 to skip UMAP)")
    parser.add_argument("--umap-quality", type=int, default=0, metavar="N",
                        help="also fit UMAP on every point and compare trustworthiness on N points (0: skip)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch and BLAS threads (default: the libraries' own choice, one per core)")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--cache-dir", help="embedding cache to score from and fill (default: a temporary one)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    limit_threads(args.threads)

    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="sgi-bench-") as tmp:
        scored, embeddings = scored_rows(args, args.cache_dir or tmp)
    results = measure(args, scored, embeddings)
    info = machine(args.threads)
    load = (load_start, os.getloadavg()[0])
    targets = {name: {"seconds": results[name]["seconds"], "target": f"< {bound:g} s",
                      "met": results[name]["seconds"] < bound}
               for name, bound in TARGETS_S.items() if name in results}

    print(f"machine: {info['cpu']}, {info['logical_cpus']} logical CPUs, {info['memory_gb']} GB RAM, "
          f"Python {info['python']}; load average (1 min) at start {load[0]:.2f}, at end {load[1]:.2f}")
    print(f"{len(scored)} scored rows ({3 * len(scored)} points to map) of {Path(args.data).name}, "
          f"encoder {args.model}; medians of {args.repeats} runs (report: {max(1, args.repeats // 3)}, "
          f"UMAP: {args.umap_repeats}) after one untimed call\n")
    print(f"{'task':<22} {'seconds':>9} {'cpu s':>9}   target")
    for name, result in results.items():
        target = targets.get(name)
        verdict = f"{target['target']:<8} {'met' if target['met'] else 'NOT MET'}" if target else ""
        print(f"{name:<22} {result['seconds']:>9.4f} {result['cpu_seconds']:>9.4f}   {verdict}")
    if "umap" in results:
        umap_result = results["umap"]
        print(f"\nUMAP warm-up on {3 * UMAP_WARM_UP_TRIPLES:,} points (numba compilation, once per process): "
              f"{umap_result['warm_up_seconds']:.1f} s")
        print(umap_result["note"] or f"UMAP fitted on all {umap_result['fit_points']:,} points")
        if "quality" in umap_result:
            quality = umap_result["quality"]
            print(f"UMAP fitted on every point: {quality['full_fit_seconds']:.1f} s. Trustworthiness (15 neighbours) "
                  f"on {quality['points']:,} random points: sampled fit "
                  f"{quality['trustworthiness_sampled_fit']:.4f}, full fit {quality['trustworthiness_full_fit']:.4f}")
    if args.json:
        args.json.write_text(json.dumps({"rows": len(scored), "model": args.model, "repeats": args.repeats,
                                         "machine": info, "load_average_start_end": load,
                                         "results": results, "targets": targets}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
