"""int8 variants of the ONNX export against fp32 ONNX: how far each moves SGI and Table 1, and how fast it encodes.

    .venv/bin/python benchmarks/int8_variants.py [--rows 2000] [--repeats 3] [--model minilm] [--json OUT]

On the first ``--rows`` rows of the paired HaluEval QA file (both answers of ``rows / 2``
questions), the distinct texts are encoded by the fp32 export (the ``onnx`` backend) and by
each int8 recipe of :data:`sgi_core.models.int8.INT8_VARIANTS` made from it
(``full`` is the ``onnx-int8`` backend), all through the torch-free encoder
(:class:`sgi_core.embedding.onnx_encoder.OnnxEncoder`: same tokenizer, window, pooling and
normalising; only the ONNX model differs). For each variant it prints:

- ``max |dSGI|`` and ``p99 |dSGI|``: over rows, ``|SGI_variant - SGI_fp32|``;
- ``min cos``: the smallest cosine between a text's variant and fp32 vectors;
- ``AUROC`` and ``d``: Table 1's AUROC and Cohen's d of SGI
  (:func:`sgi_core.evaluation.roc_analysis`, :func:`sgi_core.stats.effect_size`, as
  ``bench_scoring.py --table1`` computes them), and ``|dAUROC|``, ``|dd|`` against fp32;
- ``wall s`` and ``cpu s``: medians over ``--repeats`` encodes of all distinct texts (the
  variants interleaved within each repeat, each session warmed up first), and
  ``speedup``: fp32's median wall seconds over the variant's (``cpu x``: the same in CPU
  seconds of this process);
- ``rule``: ``yes`` where the variant may be the default by the project's rule, Table 1
  within 0.002 (AUROC and d) and every row's |dSGI| within 0.05.

The static variant is calibrated on the distinct texts of ``sample_data/*.csv`` that are
not among the texts measured, in batches of :data:`CALIBRATION_BATCH`. The fp32 export is
the ``onnx`` backend's own, made on first use in ``$SGI_CACHE_DIR``; the int8 files are
written to a temporary folder.
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

import numpy as np
import pandas as pd
from bench_scoring import DATA, machine
from scoring_variants import TEXT_COLUMNS, load_rows, sgi_of, timed

REPO = Path(__file__).resolve().parents[1]
#: Rule for an int8 default: Table 1 moves by at most this (AUROC and d) ...
TABLE1_BOUND = 0.002
#: ... and no row's SGI by more than this.
DSGI_BOUND = 0.05
#: Texts per calibration batch of the static variant.
CALIBRATION_BATCH = 16


def fp32_encoder(model: str):
    """The torch-free ``onnx`` encoder of ``model`` and the path of its fp32 export (exported if missing)."""
    from sgi_core.embedding import load_encoder
    from sgi_core.embedding.onnx_encoder import OnnxEncoder
    from sgi_core.models.cache_folder import default_cache_dir
    from sgi_core.models.onnx_export import MODEL_FILE, export_folder

    encoder = load_encoder(model, device="cpu", backend="onnx")
    if not isinstance(encoder, OnnxEncoder):
        encoder = load_encoder(model, device="cpu", backend="onnx")  # exported by the first load: now torch-free
    if not isinstance(encoder, OnnxEncoder):
        raise SystemExit(f"model '{model}' has modules the torch-free encoder does not run")
    fingerprint = encoder.cache_key.split("|")[0]
    return encoder, export_folder(default_cache_dir(), fingerprint, "onnx") / MODEL_FILE


def calibration_texts(measured: set[str]) -> list[str]:
    """Distinct texts of the bundled ``sample_data/*.csv`` files, less those in ``measured``."""
    texts = []
    for path in sorted((REPO / "sample_data").glob("*.csv")):
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        texts += [text for col in TEXT_COLUMNS if col in frame for text in frame[col]]
    return [text for text in dict.fromkeys(texts) if text and text not in measured]


def build_variants(encoder, fp32_path: Path, workdir: Path, names: list[str], calibration: list[str]) -> dict:
    """``{name: (encoder, seconds to quantise)}``: fp32 ``onnx`` first, then each int8 variant."""
    from sgi_core.models.int8 import INT8_VARIANTS, quantize_int8

    built = {"onnx": (encoder, 0.0)}
    for name in names:
        target = workdir / f"{name}.onnx"
        batches = (encoder.feeds(calibration[i:i + CALIBRATION_BATCH])
                   for i in range(0, len(calibration), CALIBRATION_BATCH))
        start = time.perf_counter()
        quantize_int8(fp32_path, target, name, calibration=batches if INT8_VARIANTS[name].static else None)
        built[name] = (encoder.with_model(target, f"onnx-int8-{name}"), time.perf_counter() - start)
        print(f"  quantised {name:<12} {built[name][1]:6.1f} s", file=sys.stderr)
    return built


def time_encodes(encoders: dict, texts: list[str], repeats: int, batch_size: int) -> tuple[dict, dict, dict]:
    """Wall and CPU seconds of every encode of ``texts`` (variants interleaved), and each variant's vectors."""
    warm_up = [f"warm-up sentence number {i}" for i in range(2 * batch_size)]
    for encoder in encoders.values():
        encoder.encode(warm_up, batch_size=batch_size)
    wall = {name: [] for name in encoders}
    cpu = {name: [] for name in encoders}
    vectors = {}
    for repeat in range(repeats):
        for name, encoder in encoders.items():
            seconds, cpu_seconds, vectors[name] = timed(lambda encoder=encoder: encoder.encode(texts,
                                                                                         batch_size=batch_size))
            wall[name].append(seconds)
            cpu[name].append(cpu_seconds)
            print(f"  repeat {repeat + 1}/{repeats} {name:<12} {seconds:8.2f} s", file=sys.stderr)
    return wall, cpu, vectors


def table1(labels: np.ndarray, sgi: np.ndarray) -> tuple[float, float]:
    """Table 1's AUROC and Cohen's d of SGI (no bootstrap)."""
    from sgi_core.stats.effect_size import effect_size
    from sgi_core.stats.ranking import roc_analysis

    return roc_analysis(labels, sgi, n_boot=0).auroc, effect_size(labels, sgi, n_boot=0).cohens_d


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise ``a_i . b_i / (||a_i|| ||b_i||)``."""
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def compare(vectors: dict, codes: np.ndarray, n: int, labels: np.ndarray) -> dict:
    """Per variant: SGI's differences from fp32 ``onnx``, min cosine, Table 1 and its differences."""
    rows = {}
    reference = vectors["onnx"]
    reference_sgi = sgi_of(reference[codes[:n]], reference[codes[n:2 * n]], reference[codes[2 * n:]])
    auroc0, d0 = table1(labels, reference_sgi)
    for name, emb in vectors.items():
        sgi = sgi_of(emb[codes[:n]], emb[codes[n:2 * n]], emb[codes[2 * n:]])
        dsgi = np.abs(sgi - reference_sgi)
        auroc, d = table1(labels, sgi)
        rows[name] = {"max_abs_dsgi": float(np.nanmax(dsgi)), "p99_abs_dsgi": float(np.nanpercentile(dsgi, 99)),
                      "min_cosine": float(np.min(cosines(emb, reference))),
                      "auroc": auroc, "cohens_d": d, "abs_dauroc": abs(auroc - auroc0), "abs_dd": abs(d - d0)}
        rows[name]["meets_rule"] = bool(rows[name]["max_abs_dsgi"] <= DSGI_BOUND
                                        and rows[name]["abs_dauroc"] <= TABLE1_BOUND
                                        and rows[name]["abs_dd"] <= TABLE1_BOUND)
    return rows


def print_table(report: dict) -> None:
    m = report["machine"]
    start, end = report["load_average_start_end"]
    print(f"machine: {m['cpu']}, {m['logical_cpus']} logical CPUs; onnxruntime {report['onnxruntime']}, "
          f"int8 config {report['quantization_target']}, Python {m['python']}")
    print(f"{report['rows']} rows of {Path(report['data']).name} ({report['texts']} distinct texts), "
          f"model {report['model']}, batch size {report['batch_size']}; medians of {report['repeats']} encode(s); "
          f"load average (1 min) at start {start:.2f}, at end {end:.2f}")
    print(f"static variant calibrated on {report['calibration_texts']} sample texts; rule: |dAUROC| and |dd| "
          f"<= {TABLE1_BOUND}, max |dSGI| <= {DSGI_BOUND}\n")
    print(f"{'variant':<12} {'max|dSGI|':>9} {'p99|dSGI|':>9} {'min cos':>8} {'AUROC':>7} {'d':>7} "
          f"{'|dAUROC|':>8} {'|dd|':>7} {'wall s':>7} {'cpu s':>7} {'speedup':>7} {'cpu x':>6}  rule")
    for name, row in report["variants"].items():
        print(f"{name:<12} {row['max_abs_dsgi']:>9.4f} {row['p99_abs_dsgi']:>9.4f} {row['min_cosine']:>8.5f} "
              f"{row['auroc']:>7.4f} {row['cohens_d']:>+7.4f} {row['abs_dauroc']:>8.4f} {row['abs_dd']:>7.4f} "
              f"{row['wall_seconds']:>7.2f} {row['cpu_seconds']:>7.2f} {row['speedup']:>6.2f}x "
              f"{row['cpu_speedup']:>5.2f}x"
              f"  {'fp32' if name == 'onnx' else 'yes' if row['meets_rule'] else 'no'}")


def main() -> int:
    import onnxruntime

    from sgi_core.io.triples import validate_triples
    from sgi_core.models.int8 import INT8_VARIANTS, quantization_target

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--repeats", type=int, default=3, help="encodes of the distinct texts per variant (median)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--variants", default=",".join(INT8_VARIANTS),
                        help=f"comma-separated subset of {', '.join(INT8_VARIANTS)}")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    names = [name for name in INT8_VARIANTS if name in args.variants.split(",")]
    load_start = os.getloadavg()[0]
    frame = load_rows(args.data, args.rows)
    labels = validate_triples(frame, source=args.data.name).frame["label"].to_numpy(dtype=float)
    strings = np.concatenate([frame[col].to_numpy(dtype=object) for col in TEXT_COLUMNS])
    codes, unique = pd.factorize(pd.Series(strings, dtype=object))
    texts = list(unique)
    calibration = calibration_texts(set(texts))
    encoder, fp32_path = fp32_encoder(args.model)
    with tempfile.TemporaryDirectory(prefix="sgi-int8-") as tmp:
        built = build_variants(encoder, fp32_path, Path(tmp), names, calibration)
        wall, cpu, vectors = time_encodes({name: enc for name, (enc, _) in built.items()}, texts, args.repeats,
                                          args.batch_size)
    variants = compare(vectors, codes, len(frame), labels)
    for name, row in variants.items():
        row.update(wall_seconds=statistics.median(wall[name]), cpu_seconds=statistics.median(cpu[name]),
                   all_wall_seconds=wall[name], quantise_seconds=built[name][1])
    for row in variants.values():
        row.update(speedup=variants["onnx"]["wall_seconds"] / row["wall_seconds"],
                   cpu_speedup=variants["onnx"]["cpu_seconds"] / row["cpu_seconds"])
    report = {"rows": len(frame), "texts": len(texts), "model": args.model, "data": str(args.data),
              "repeats": args.repeats, "batch_size": args.batch_size, "calibration_texts": len(calibration),
              "onnxruntime": onnxruntime.__version__, "quantization_target": quantization_target(),
              "machine": machine(), "load_average_start_end": (load_start, os.getloadavg()[0]), "variants": variants}
    print_table(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
