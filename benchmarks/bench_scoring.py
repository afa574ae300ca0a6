"""Scoring throughput on the paired HaluEval QA file: our path against the baselines.

    .venv/bin/python benchmarks/bench_scoring.py [--rows 2000] [--model minilm] [--json OUT]

Variants, all on the first ``--rows`` rows (both answers of ``rows / 2`` questions):

- ``reference``: one ``SentenceTransformer.encode`` call per string, 3 per row, as the
  paper's code does;
- ``naive_batched``: one batched ``encode`` over all ``3 * rows`` strings;
- ``limit``: one batched ``encode`` over the distinct strings only (the model's own
  throughput; sentence-transformers batches them by character length);
- ``cold``: :func:`sgi_core.scoring.score_table` with an empty embedding cache;
- ``warm``: the same again with the cache full (a fresh cache connection each time,
  median of ``--warm-repeats``);
- ``claims``: claim-level grounding, :func:`sgi_core.detectors.claims.claim_scores`
  (response and context split into sentences, every distinct piece embedded), with an
  empty cache of its own: its seconds against ``cold`` are the cost of going from one
  vector per response to one per sentence. It computes no whole-response SGI, so it
  has no SGI difference to report.

Every variant runs in its own process, so its peak RSS is its own (it includes the
interpreter, torch and the model). The model is loaded and warmed up on unrelated
text before the clock starts. Model-bound variants run ``--repeats`` times,
interleaved, and the median is reported. Each variant's SGI is checked against the
reference's.

The scale test scores the file repeated to ``--scale-rows`` rows with the hashing test
encoder (384 dimensions, MiniLM's width), the whole table at once and chunk by chunk
through the ``score`` command's path, and reports each one's peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]

DATA = REPO.parent / "shared" / "data" / "halueval" / "halueval_qa.csv"
TEXT_COLUMNS = ("question", "context", "response")
VARIANTS = ("reference", "naive_batched", "limit", "cold", "warm", "claims")
#: name -> (slower variant, faster variant): the ratio of their seconds.
RATIOS = {
    "speedup_cold_vs_reference": ("reference", "cold"),
    "speedup_cold_vs_naive": ("naive_batched", "cold"),
    "cold_over_limit": ("cold", "limit"),
    "speedup_warm_vs_cold": ("cold", "warm"),
    "claims_over_cold": ("claims", "cold"),
}
SCALE_ENCODER = "hashing-384"
TARGETS = {
    "speedup_cold_vs_reference": (">=", 3.0),
    "cold_over_limit": ("<=", 1.10),
    "speedup_warm_vs_cold": (">=", 100.0),
    "scale_chunked_peak_rss_mb": ("<", 2048.0),
}


# ---------------------------------------------------------------- measured in a child process


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def limit_threads(threads: int | None) -> None:
    """Cap torch's and the BLAS libraries' thread pools (``None``: leave their defaults).

    On a machine shared with other busy processes, a pool thread that is not
    scheduled stalls every small operation at its barrier; one thread avoids that.
    """
    if threads:
        import torch
        from threadpoolctl import threadpool_limits

        torch.set_num_threads(threads)
        threadpool_limits(threads)


def load_rows(path: Path, rows: int) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, nrows=rows)
    if len(frame) < rows:
        raise SystemExit(f"{path} has only {len(frame)} rows")
    return frame


def sgi_of(q_emb, c_emb, r_emb) -> np.ndarray:
    from sgi_core.geometry import triple_angles

    return triple_angles(q_emb, c_emb, r_emb).sgi


def timed(run) -> tuple[float, float, object]:
    """Wall seconds, CPU seconds of this process, and the result of ``run()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def run_model_variant(spec: dict) -> dict:
    """Time one variant; save its SGI to ``spec['sgi_out']``."""
    from sgi_core.data import validate_triples
    from sgi_core.embedding import EmbeddingCache, load_encoder
    from sgi_core.scoring import score_table

    frame = load_rows(Path(spec["data"]), spec["rows"])
    limit_threads(spec["threads"])
    encoder = load_encoder(spec["model"])
    model = encoder.model
    batch_size = spec["batch_size"]
    # Warm-up on unrelated text: the first forward pass pays one-off allocation costs.
    model.encode(["warm-up sentence number %d" % i for i in range(2 * batch_size)], batch_size=batch_size)
    strings = np.concatenate([frame[col].to_numpy(dtype=object) for col in TEXT_COLUMNS]).tolist()
    n = len(frame)
    rss_before = peak_rss_mb()
    variant = spec["variant"]
    out = {"variant": variant, "texts_encoded": None}

    def encode(texts):
        return model.encode(texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)

    if variant == "reference":
        wall, cpu, emb = timed(lambda: np.vstack([encode(text) for text in strings]))
        sgi = sgi_of(emb[:n], emb[n : 2 * n], emb[2 * n :])
        out["texts_encoded"] = len(strings)
    elif variant == "naive_batched":
        wall, cpu, emb = timed(lambda: encode(strings))
        sgi = sgi_of(emb[:n], emb[n : 2 * n], emb[2 * n :])
        out["texts_encoded"] = len(strings)
    elif variant == "limit":
        codes, unique = pd.factorize(pd.Series(strings, dtype=object))
        wall, cpu, emb = timed(lambda: encode(list(unique)))
        sgi = sgi_of(emb[codes[:n]], emb[codes[n : 2 * n]], emb[codes[2 * n :]])
        out["texts_encoded"] = len(unique)
    elif variant == "claims":
        from sgi_core.detectors.claims import claim_scores

        table = validate_triples(frame, source="halueval_qa.csv")
        cache_dir = spec["cache_dir"] + "-claims"
        wall, cpu, _ = timed(lambda: claim_scores(
            table.frame, encoder, cache=EmbeddingCache(encoder.model_id, cache_dir), batch_size=batch_size))
        out["texts_encoded"] = len(EmbeddingCache(encoder.model_id, cache_dir))
        sgi = None
    else:
        table = validate_triples(frame, source="halueval_qa.csv")
        cache_dir = spec["cache_dir"]
        cached_before = len(EmbeddingCache(encoder.model_id, cache_dir))
        if variant == "cold":
            wall, cpu, scored = timed(lambda: score_table(
                table, encoder, cache=EmbeddingCache(encoder.model_id, cache_dir), batch_size=batch_size))
        else:
            runs = [timed(lambda: score_table(table, encoder, cache=EmbeddingCache(encoder.model_id, cache_dir),
                                              batch_size=batch_size))
                    for _ in range(spec["warm_repeats"])]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            out["warm_runs_seconds"] = [r[0] for r in runs]
            scored = runs[-1][2]
        out["texts_encoded"] = len(EmbeddingCache(encoder.model_id, cache_dir)) - cached_before
        sgi = scored["sgi"].to_numpy(dtype=float)
    if sgi is not None:
        np.save(spec["sgi_out"], sgi)
    out.update(seconds=wall, cpu_seconds=cpu, rss_before_mb=rss_before, peak_rss_mb=peak_rss_mb())
    return out


def run_scale_variant(spec: dict) -> dict:
    """Score ``spec['csv']`` whole or chunked with the hashing encoder; report time and peak RSS."""
    from sgi_core.data import load_triples
    from sgi_core.embedding import EmbeddingCache, load_encoder
    from sgi_core.io.export import write_table
    from sgi_core.scoring import score_table
    from sgi_core.io.streaming import read_chunks, score_to_file

    limit_threads(spec["threads"])
    encoder = load_encoder(SCALE_ENCODER)
    cache = EmbeddingCache(encoder.model_id, spec["cache_dir"])
    rss_before = peak_rss_mb()
    if spec["variant"] == "whole":
        def run():
            write_table(score_table(load_triples(spec["csv"]), encoder, cache=cache), spec["out"])
    else:
        def run():
            score_to_file(read_chunks(spec["csv"], chunk_rows=spec["chunk_rows"]), spec["out"], encoder, cache=cache)
    wall, cpu, _ = timed(run)
    return {"variant": spec["variant"], "rows": spec["rows"], "seconds": wall, "cpu_seconds": cpu,
            "rss_before_mb": rss_before, "peak_rss_mb": peak_rss_mb()}


# ---------------------------------------------------------------- the parent process


def in_child(kind: str, spec: dict) -> dict:
    result = subprocess.run([sys.executable, __file__, f"--child-{kind}", json.dumps(spec)],
                            capture_output=True, text=True, cwd=REPO)
    if result.returncode != 0:
        raise SystemExit(f"{kind} {spec.get('variant')} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def machine(threads: int | None = None) -> dict:
    import sentence_transformers
    import torch

    cpu_model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), platform.processor())
    mem_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                  if line.startswith("MemTotal"))
    return {"cpu": cpu_model, "logical_cpus": os.cpu_count(), "memory_gb": round(mem_kb / 2**20, 1),
            "torch_threads": threads or torch.get_num_threads(), "python": platform.python_version(),
            "torch": torch.__version__, "sentence_transformers": sentence_transformers.__version__,
            "numpy": np.__version__, "pandas": pd.__version__, "platform": platform.platform()}


def model_benchmark(args, workdir: Path) -> dict:
    runs: dict[str, list[dict]] = {v: [] for v in args.variants}
    sgi: dict[str, np.ndarray] = {}
    for repeat in range(args.repeats):
        cache_dir = workdir / f"cache-{repeat}"
        for variant in args.variants:
            spec = {"variant": variant, "rows": args.rows, "model": args.model, "data": str(args.data),
                    "batch_size": args.batch_size, "threads": args.threads, "cache_dir": str(cache_dir),
                    "warm_repeats": args.warm_repeats, "sgi_out": str(workdir / f"sgi-{variant}.npy")}
            result = in_child("model", spec)
            runs[variant].append(result)
            if Path(spec["sgi_out"]).exists():
                sgi[variant] = np.load(spec["sgi_out"])
            print(f"  repeat {repeat + 1}/{args.repeats} {variant:<14} {result['seconds']:9.3f} s", file=sys.stderr)
    seconds = {v: statistics.median(r["seconds"] for r in rs) for v, rs in runs.items()}
    compared_with = "reference" if "reference" in sgi else next(iter(sgi), None)
    return {
        "seconds": seconds,
        "cpu_seconds": {v: statistics.median(r["cpu_seconds"] for r in rs) for v, rs in runs.items()},
        "all_seconds": {v: [r["seconds"] for r in rs] for v, rs in runs.items()},
        "warm_runs_seconds": runs["warm"][-1]["warm_runs_seconds"] if "warm" in runs else [],
        "triples_per_s": {v: args.rows / s for v, s in seconds.items()},
        "texts_encoded": {v: rs[0]["texts_encoded"] for v, rs in runs.items()},
        "peak_rss_mb": {v: max(r["peak_rss_mb"] for r in rs) for v, rs in runs.items()},
        "rss_before_mb": {v: max(r["rss_before_mb"] for r in rs) for v, rs in runs.items()},
        "sgi_compared_with": compared_with,
        "sgi_max_abs_diff": {v: float(np.nanmax(np.abs(s - sgi[compared_with]))) for v, s in sgi.items()},
    }


def scale_benchmark(args, workdir: Path) -> list[dict]:
    base = pd.read_csv(args.data, dtype=str, keep_default_na=False)
    results = []
    for rows in sorted({max(args.scale_rows // 5, 1), args.scale_rows}):
        csv = workdir / f"scale-{rows}.csv"
        repeated = pd.concat([base] * -(-rows // len(base)), ignore_index=True).head(rows)
        repeated.to_csv(csv, index=False)
        for variant in ("whole", "chunked"):
            spec = {"variant": variant, "rows": rows, "csv": str(csv), "chunk_rows": args.chunk_rows,
                    "threads": args.threads,
                    "cache_dir": str(workdir / f"scale-cache-{rows}-{variant}"),
                    "out": str(workdir / f"scale-out-{rows}-{variant}.parquet")}
            result = in_child("scale", spec)
            result["file_mb"] = csv.stat().st_size / 2**20
            results.append(result)
            print(f"  scale {rows:>7} rows {variant:<8} {result['seconds']:8.2f} s  "
                  f"{result['peak_rss_mb']:7.0f} MB", file=sys.stderr)
    return results


def summarise(args, bench: dict, scale: list[dict], info: dict, load: tuple) -> dict:
    s = bench["seconds"]
    ratios = {name: s[slow] / s[fast] for name, (slow, fast) in RATIOS.items() if slow in s and fast in s}
    measured = dict(ratios)
    if args.repeats > 1 and "cold_over_limit" in ratios:
        # Each repeat runs limit then cold back to back, so their ratio sees the same load;
        # on a shared machine its median drifts less than the ratio of the two medians.
        runs = bench["all_seconds"]
        measured["cold_over_limit_paired_median"] = statistics.median(
            c / lim for c, lim in zip(runs["cold"], runs["limit"]))
    chunked = [r for r in scale if r["variant"] == "chunked"]
    if chunked:
        measured["scale_chunked_peak_rss_mb"] = max(r["peak_rss_mb"] for r in chunked)
    targets = {}
    for name, (op, bound) in TARGETS.items():
        if name not in measured:
            continue
        value = measured[name]
        met = value >= bound if op == ">=" else value <= bound if op == "<=" else value < bound
        targets[name] = {"value": value, "target": f"{op} {bound:g}", "met": bool(met)}
    return {"rows": args.rows, "model": args.model, "batch_size": args.batch_size, "repeats": args.repeats,
            "warm_repeats": args.warm_repeats, "data": str(args.data), "machine": info,
            "load_average_start_end": load, **bench, **ratios, "measured": measured, "scale": scale,
            "targets": targets}


def print_report(report: dict) -> None:
    m = report["machine"]
    print(f"machine: {m['cpu']}, {m['logical_cpus']} logical CPUs, {m['memory_gb']} GB RAM; "
          f"torch {m['torch']} ({m['torch_threads']} threads), sentence-transformers {m['sentence_transformers']}, "
          f"Python {m['python']}")
    start, end = report["load_average_start_end"]
    print(f"load average (1 min) at start {start:.2f}, at end {end:.2f}; medians of {report['repeats']} run(s), "
          f"warm: median of {report['warm_repeats']}")
    print(f"\n{report['rows']} rows of {Path(report['data']).name}, model {report['model']}, "
          f"batch size {report['batch_size']}\n")
    print(f"{'variant':<14} {'texts':>7} {'seconds':>9} {'cpu s':>9} {'triples/s':>10} {'peak RSS MB':>12} "
          f"{'max |dSGI|':>11}   (SGI compared with {report['sgi_compared_with']})")
    for v in report["seconds"]:
        print(f"{v:<14} {report['texts_encoded'][v]:>7} {report['seconds'][v]:>9.3f} {report['cpu_seconds'][v]:>9.3f} "
              f"{report['triples_per_s'][v]:>10.1f} {report['peak_rss_mb'][v]:>12.0f} "
              f"{report['sgi_max_abs_diff'].get(v, float('nan')):>11.1e}")
    print()
    for name, value in report["measured"].items():
        t = report["targets"].get(name)
        verdict = f"target {t['target']:<8} {'met' if t['met'] else 'NOT MET'}" if t else ""
        print(f"{name:<28} {value:>10.2f}   {verdict}")
    if report["scale"]:
        print(f"\nscale test, {SCALE_ENCODER} encoder, chunks of {report['scale_chunk_rows']} rows")
        print(f"{'rows':>8} {'file MB':>8} {'variant':<8} {'seconds':>8} {'RSS before MB':>14} {'peak RSS MB':>12}")
        for r in report["scale"]:
            print(f"{r['rows']:>8} {r['file_mb']:>8.1f} {r['variant']:<8} {r['seconds']:>8.2f} "
                  f"{r['rss_before_mb']:>14.0f} {r['peak_rss_mb']:>12.0f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=None,
                        help="torch and BLAS threads (default: the libraries' own choice, one per core)")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help=f"comma-separated subset of {', '.join(VARIANTS)} (warm needs cold before it)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each model-bound variant (median)")
    parser.add_argument("--warm-repeats", type=int, default=7, help="warm runs in its process (median)")
    parser.add_argument("--scale-rows", type=int, default=100_000, help="rows of the scale test (0 to skip it)")
    parser.add_argument("--chunk-rows", type=int, default=None, help="chunk size of the scale test")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--child-model", help=argparse.SUPPRESS)
    parser.add_argument("--child-scale", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_model or args.child_scale:
        run = run_model_variant if args.child_model else run_scale_variant
        print(json.dumps(run(json.loads(args.child_model or args.child_scale))))
        return 0
    from sgi_core.io.streaming import DEFAULT_CHUNK_ROWS

    args.chunk_rows = args.chunk_rows or DEFAULT_CHUNK_ROWS
    args.variants = [v for v in VARIANTS if v in args.variants.split(",")]
    if not args.variants or ("warm" in args.variants and "cold" not in args.variants):
        parser.error(f"--variants must name some of {', '.join(VARIANTS)}, and cold with warm")
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="sgi-bench-") as tmp:
        workdir = Path(tmp)
        bench = model_benchmark(args, workdir)
        scale = scale_benchmark(args, workdir) if args.scale_rows > 0 else []
    report = summarise(args, bench, scale, machine(args.threads), (load_start, os.getloadavg()[0]))
    report["scale_chunk_rows"] = args.chunk_rows
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
