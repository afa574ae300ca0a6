"""What each variant of ``bench_scoring.py`` measures, run in a process of its own.

``run_model_variant`` times one model-bound variant on the first rows of the file and saves
its SGI; ``run_scale_variant`` times scoring a file whole or chunk by chunk (the ``score``
command's path). Both report wall and CPU seconds and the process's peak RSS.
"""

from __future__ import annotations

import resource
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

TEXT_COLUMNS = ("question", "context", "response")


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


#: Variants that are ``cold`` through another backend.
BACKEND_VARIANTS = {"onnx": "onnx", "onnx_int8": "onnx-int8", "onnx_limit": "onnx", "default": "auto"}


def run_table1(spec: dict) -> dict:
    """Table 1's AUROC and Cohen's d of SGI on ``spec['data']`` scored through ``spec['backend']``."""
    from sgi_core.embedding import EmbeddingCache, load_encoder
    from sgi_core.io.triples import load_triples
    from sgi_core.scoring import score_table
    from sgi_core.stats.effect_size import effect_size
    from sgi_core.stats.ranking import roc_analysis

    limit_threads(spec["threads"])
    encoder = load_encoder(spec["model"], device="cpu", backend=spec["backend"])
    table = load_triples(Path(spec["data"]))
    scored = score_table(table, encoder, cache=EmbeddingCache(encoder.model_id, spec["cache_dir"]))
    labels, sgi = table.frame["label"].to_numpy(), scored["sgi"].to_numpy(dtype=float)
    np.save(spec["sgi_out"], sgi)
    return {"backend": spec["backend"], "rows": len(sgi), "auroc": roc_analysis(labels, sgi, n_boot=0).auroc,
            "cohens_d": effect_size(labels, sgi, n_boot=0).cohens_d}


#: Batch sizes tried for the ONNX Runtime limit; the fastest on the first texts is timed.
LIMIT_BATCH_SIZES = (8, 16, 32, 64, 128)


def onnx_session_limit(encoder, texts: list[str]):
    """The raw limit of the default path: its ONNX Runtime session over ``texts`` sorted by token count.

    No cache, no window cut, no bookkeeping: tokenise, run the session, pool. The batch
    size is the fastest of :data:`LIMIT_BATCH_SIZES` on the first 512 texts. Returns the
    timed callable and that batch size.
    """
    import time

    counts = encoder.token_counts(texts, truncate=True)
    order = np.argsort(counts, kind="stable")

    def run_with(batch_size, rows):
        out = np.empty((len(texts), encoder.dimension), dtype=np.float32)
        for start in range(0, len(rows), batch_size):
            batch = rows[start:start + batch_size]
            out[batch] = encoder._embed([texts[i] for i in batch])
        return out

    trial = order[:: max(1, len(order) // 512)][:512]
    seconds = {}
    for size in LIMIT_BATCH_SIZES:
        start = time.perf_counter()
        run_with(size, trial)
        seconds[size] = time.perf_counter() - start
    best = min(seconds, key=seconds.get)
    return (lambda: run_with(best, order)), best


def run_model_variant(spec: dict) -> dict:
    """Time one variant; save its SGI to ``spec['sgi_out']``."""
    from sgi_core.embedding import EmbeddingCache, load_encoder
    from sgi_core.io.triples import validate_triples
    from sgi_core.models.device import DEFAULT_TOKEN_BUDGET
    from sgi_core.scoring import score_table

    frame = load_rows(Path(spec["data"]), spec["rows"])
    limit_threads(spec["threads"])
    variant = spec["variant"]
    precision = "fp32" if variant == "cold_fp32" else spec["precision"]
    backend = BACKEND_VARIANTS.get(variant, "torch")
    # An ONNX backend exports the model on its first load (into $SGI_CACHE_DIR), before the clock starts.
    encoder = load_encoder(spec["model"], device=spec["device"], precision=precision,
                           token_budget=spec["token_budget"], backend=backend)
    if backend != "torch":
        # Loaded again once exported: the default path then runs without torch, as users run it.
        encoder = load_encoder(spec["model"], device=spec["device"], precision=precision, backend=backend)
    model = getattr(encoder, "model", None)  # the torch-free ONNX encoder has no sentence-transformers model
    batch_size = spec["batch_size"]
    warm_up = [f"warm-up sentence number {i}" for i in range(2 * batch_size)]
    # Warm-up on unrelated text: the first forward pass pays one-off allocation costs.
    encoder.encode(warm_up, batch_size=batch_size)
    strings = np.concatenate([frame[col].to_numpy(dtype=object) for col in TEXT_COLUMNS]).tolist()
    n = len(frame)
    out = {"variant": variant, "texts_encoded": None}
    if variant == "gpu_limit":
        from forward_limit import load_forward_model, mean_pooled, transformer_folder

        tokenizer, forward = load_forward_model(transformer_folder(encoder), encoder.device, precision)

        def forward_pass(texts):
            return mean_pooled(tokenizer, forward, texts, max_length=encoder.max_seq_length,
                               token_budget=spec["token_budget"] or DEFAULT_TOKEN_BUDGET)

        forward_pass(warm_up)
    rss_before = peak_rss_mb()

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
    elif variant in ("limit", "gpu_limit"):
        codes, unique = pd.factorize(pd.Series(strings, dtype=object))
        wall, cpu, emb = timed(lambda: (encode if variant == "limit" else forward_pass)(list(unique)))
        sgi = sgi_of(emb[codes[:n]], emb[codes[n : 2 * n]], emb[codes[2 * n :]])
        out["texts_encoded"] = len(unique)
    elif variant == "onnx_limit":
        codes, unique = pd.factorize(pd.Series(strings, dtype=object))
        run, out["onnx_limit_batch_size"] = onnx_session_limit(encoder, list(unique))
        wall, cpu, emb = timed(run)
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
        cache_dir = spec["cache_dir"] + ("" if variant in ("cold", "warm") else f"-{variant}")
        cached_before = len(EmbeddingCache(encoder.model_id, cache_dir))
        if variant != "warm":
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
    """Score ``spec['csv']`` whole, or chunked as the ``score`` command does; report time and peak RSS."""
    from sgi_core.embedding import EmbeddingCache, load_encoder
    from sgi_core.io.export import write_table
    from sgi_core.io.triples import load_triples
    from sgi_core.pipelines.local_engine import read_chunks, score_to_file
    from sgi_core.scoring import score_table

    limit_threads(spec["threads"])
    encoder = load_encoder(spec["model"], device=spec["device"], precision=spec["precision"],
                           token_budget=spec["token_budget"])
    encoder.encode([f"warm-up sentence number {i}" for i in range(spec["batch_size"])])
    cache = EmbeddingCache(encoder.model_id, spec["cache_dir"]) if spec["cache_dir"] else None
    rss_before = peak_rss_mb()
    if spec["variant"] == "whole":
        def run():
            write_table(score_table(load_triples(spec["csv"]), encoder, cache=cache), spec["out"])
    else:
        def run():
            return score_to_file(read_chunks(spec["csv"], chunk_rows=spec["chunk_rows"]), spec["out"], encoder,
                                 cache=cache, batch_size=spec["batch_size"])
    wall, cpu, summary = timed(run)
    return {"variant": spec["variant"], "rows": spec["rows"], "seconds": wall, "cpu_seconds": cpu,
            "rss_before_mb": rss_before, "peak_rss_mb": peak_rss_mb(),
            "texts_encoded": summary.new_texts if summary else None}
