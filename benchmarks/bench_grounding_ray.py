"""Grounding models on a local Ray against the local engine on the same cores: parity, throughput, per-core figure.

    .venv/bin/python benchmarks/bench_grounding_ray.py [--rows 16] [--repeats 3] [--shards 4] [--json OUT]

Two folders, built here with random weights (nothing downloaded): a tiny BERT NLI model
(the tests' ``classifier_folder``) and a DeBERTa-v3-base of real size (184M parameters,
``bench_grounding.build_folder``). On the first ``--rows`` rows of HaluEval QA, cut into
``--shards`` CSV shards (Ray reads a shard whole into one block, so shards are what the
actors share out; each shard is one actor call, as it is one chunk of the local engine),
each model scores every row twice per repeat, interleaved:

- ``local``: the ``score`` command's local engine (:func:`sgi_core.pipelines.local_engine.score_to_file`
  with the ``grounding`` family), one process, ONNX Runtime on every core;
- ``ray``: :func:`sgi_core.pipelines.ray_engine.score_with_ray` on a Ray started once on the
  machine's cores (its start-up is timed apart, as ``ray_start_s``), one actor per core,
  each loading the model and running ONNX Runtime on one thread.

Both clocks run from the folder's path to the written file: the local engine's load of
the folder, or the Ray driver's check of it (private copy, trust check, fingerprint: no
network, as ``score --engine ray --no-self-test``) and the actors' loads; reading, scoring
(SGI with the ``hashing`` test encoder,
which costs nothing beside the model) and writing. ``ray_over_local`` is the ratio of the
medians and ``ray_over_local_paired`` the median of each repeat's ratio (target <= 1.25 for
the real-size model). ``pairs`` counts the distinct (premise, hypothesis) pairs the model
scored (from the local run's pair cache); ``pairs_per_s_per_core`` is Ray's pairs per second
over the cores its actors hold. ``max_abs_diff`` is the largest |ray - local| over every
grounding column of every row, matched by the order key (parity within 1e-6). Figures are
for this machine's CPU; no GPU is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]

DATA = REPO.parent / "shared" / "data" / "halueval" / "halueval_qa.csv"
BATCH_SIZE = 16


def write_shards(rows: int, shards: int, folder: Path) -> Path:
    import numpy as np
    import pandas as pd

    frame = pd.read_csv(DATA, nrows=rows, dtype=str, keep_default_na=False)
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(frame)), shards)):
        frame.iloc[part].to_csv(folder / f"part-{i}.csv", index=False)
    return folder


def run_local(shards: Path, folder: Path, out: Path) -> tuple[float, int]:
    """Seconds of the local engine over every shard (one output per shard), and the pairs it scored.

    The pair cache starts empty and is deleted after the run: its size is the pairs scored,
    and the next run scores them all again.
    """
    from sgi_core.embedding import EmbeddingCache, load_encoder
    from sgi_core.grounding.family import model_cache
    from sgi_core.grounding.runtime import load_grounding_model
    from sgi_core.pipelines.local_engine import read_chunks, score_to_file

    start = time.perf_counter()
    model = load_grounding_model(folder, name="m", self_test=False)
    encoder = load_encoder("hashing")
    out.mkdir()
    for shard in sorted(shards.glob("*.csv")):
        score_to_file(read_chunks(shard), out / f"{shard.stem}.parquet", encoder,
                      cache=EmbeddingCache(encoder.model_id), batch_size=BATCH_SIZE, families=("grounding",),
                      resources={"grounding_models": (model,)})
    seconds, cache = time.perf_counter() - start, model_cache(model)
    pairs = len(cache)
    for path in cache.path.parent.glob(f"{cache.path.name}*"):
        path.unlink()
    return seconds, pairs


def run_ray(shards: Path, folder: Path, out: Path, actors: int, batch_rows: int) -> float:
    from sgi_core.grounding.runtime import load_grounding_model
    from sgi_core.pipelines.ray_engine import score_with_ray

    start = time.perf_counter()
    # As `score --engine ray --no-self-test` does: the driver checks the folder, the actors load it.
    model = load_grounding_model(folder, name="m", self_test=False, network=False)
    score_with_ray(shards, out, model="hashing", concurrency=actors, batch_rows=batch_rows, batch_size=BATCH_SIZE,
                   use_cache=False, families=("grounding",), resources={"grounding_models": (model,)})
    return time.perf_counter() - start


def max_abs_diff(local: Path, ray_out: Path) -> float:
    import numpy as np
    import pandas as pd

    from sgi_core.columns import grounding_columns

    parts = [pd.read_parquet(path).assign(input_shard=int(path.stem.split("-")[1]))
             for path in sorted(local.glob("*.parquet"))]
    key = ["input_shard", "input_row"]
    mine = pd.read_parquet(ray_out).sort_values(key).reset_index(drop=True)
    reference = pd.concat(parts).sort_values(key).reset_index(drop=True)
    if mine[key].to_numpy().tolist() != reference[key].to_numpy().tolist():
        raise SystemExit("the Ray output does not hold the local output's rows")
    columns = list(grounding_columns("m"))
    return float(np.nanmax(np.abs(mine[columns].to_numpy(float) - reference[columns].to_numpy(float))))


def bench_model(name: str, folder: Path, shards: Path, work: Path, repeats: int, actors: int, batch_rows: int) -> dict:
    times = {"local": [], "ray": []}
    diffs, pairs = [], None
    for repeat in range(repeats):
        local_out, ray_out = work / f"{name}-local-{repeat}", work / f"{name}-ray-{repeat}"
        seconds, pairs = run_local(shards, folder, local_out)
        times["local"].append(seconds)
        times["ray"].append(run_ray(shards, folder, ray_out, actors, batch_rows))
        diffs.append(max_abs_diff(local_out, ray_out))
        print(f"  {name} repeat {repeat + 1}/{repeats}: local {times['local'][-1]:.1f} s, ray "
              f"{times['ray'][-1]:.1f} s, max |diff| {diffs[-1]:.2e}", file=sys.stderr)
    local, ray = (statistics.median(times[k]) for k in ("local", "ray"))
    return {"pairs": pairs, "seconds": {"local": local, "ray": ray}, "runs": times,
            "ray_over_local": ray / local,
            "ray_over_local_paired": statistics.median(r / s for r, s in zip(times["ray"], times["local"])),
            "pairs_per_s": {"local": pairs / local, "ray": pairs / ray},
            "pairs_per_s_per_core": pairs / ray / actors, "max_abs_diff": max(diffs)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--models", default="tiny,deberta-v3-base")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import ray
    from bench_grounding import build_folder

    from tests.grounding.tiny_models import NLI_ORDERS, classifier_folder

    cores = os.cpu_count()
    report = {"rows": args.rows, "shards": args.shards, "repeats": args.repeats, "cores": cores, "actors": cores,
              "load_average_start": os.getloadavg()[0], "models": {}}
    with tempfile.TemporaryDirectory(prefix="sgi-ray-bench-") as tmp:
        work = Path(tmp)
        os.environ["SGI_CACHE_DIR"] = str(work / "driver-cache")  # the ONNX exports go there, and are removed
        shards = write_shards(args.rows, args.shards, work / "shards")
        start = time.perf_counter()
        ray.init(num_cpus=cores, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"SGI_CACHE_DIR": os.environ["SGI_CACHE_DIR"]}})
        report["ray_start_s"] = time.perf_counter() - start
        try:
            for name in args.models.split(","):
                folder = (classifier_folder(work / name, "bert", NLI_ORDERS["cen"]) if name == "tiny"
                          else build_folder(name, work / name))
                from sgi_core.grounding.runtime import load_grounding_model

                load_grounding_model(folder, self_test=False)  # the export, made once before any clock starts
                # A shard's rows are one actor call, as they are one chunk of the local engine.
                report["models"][name] = bench_model(name, folder, shards, work, args.repeats, cores,
                                                     -(-args.rows // args.shards))
        finally:
            ray.shutdown()
    report["load_average_end"] = os.getloadavg()[0]
    for name, row in report["models"].items():
        print(f"{name:<16} pairs {row['pairs']:>5}  local {row['seconds']['local']:7.1f} s  ray "
              f"{row['seconds']['ray']:7.1f} s  ray/local {row['ray_over_local']:.3f} (paired "
              f"{row['ray_over_local_paired']:.3f})  {row['pairs_per_s_per_core']:.3f} pairs/s per core  "
              f"max |diff| {row['max_abs_diff']:.1e}")
    print(f"Ray start-up {report['ray_start_s']:.1f} s; load average {report['load_average_start']:.1f} -> "
          f"{report['load_average_end']:.1f} on {cores} cores; medians of {args.repeats}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
