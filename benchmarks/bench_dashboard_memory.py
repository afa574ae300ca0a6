"""Peak memory of the dashboard opening a scored Parquet of millions of rows.

    .venv/bin/python benchmarks/bench_dashboard_memory.py [--rows 2000000] [--repeats 3] \
        [--variants pandas,data,overview,strata,calibration,geometry,explorer,models,judge,detectors,review,\
                    compare_runs] \
        [--json OUT]

Builds, in a temporary folder, a scored Parquet of ``--rows`` rows shaped like the
output of ``python -m sgi_core score``: the bundled HaluEval sample's rows repeated,
each text made distinct by a suffix (so nothing is shared between rows in memory),
with angles (within the triangle inequality), SGI and ``sgi_status`` drawn at random, and the
word-overlap share that ``score`` writes beside them computed from the texts. Each variant then runs in a fresh
Python process, which reports its own peak resident memory
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``):

- ``pandas``: the baseline, ``pandas.read_parquet`` of the file and nothing else;
- ``data``: the app itself (:class:`streamlit.testing.v1.AppTest` of ``dashboard/app.py``)
  opened on its Data page, the file's path typed in the "open a file on this machine"
  box, the page run to the end (read under the limits, recognised as scored, validated,
  its rows counted and listed) with no error on the page;
- ``overview``, ``strata``, ``calibration``, ``geometry``, ``explorer``, ``models``,
  ``judge``, ``detectors``, ``review``, ``compare_runs``: the same, then that page opened
  and run to the end with no error (its statistics on every row, its charts drawn from a
  sample). The Retrieval page is listed only for files with retrieval columns, which
  this one has not.

Each figure is the median of ``--repeats`` processes; seconds count from the start of
the process to the end of the last page.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from sgi_core.columns import WORD_OVERLAP_COLUMN
from sgi_core.scores.baselines import lexical_groundedness

REPO = Path(__file__).resolve().parents[1]
SAMPLE_CSV = REPO / "sample_data" / "halueval_qa_sample.csv"
#: What each fresh process does: a bare pandas read, or the app opening the file and then one page.
VARIANTS = ("pandas", "data", "overview", "strata", "calibration", "geometry", "explorer", "models", "judge",
            "detectors", "review", "compare_runs")

_CHILD = r"""
import resource, sys, time
path, variant = sys.argv[1], sys.argv[2]
start = time.perf_counter()
if variant == "pandas":
    import pandas as pd
    rows = len(pd.read_parquet(path))
else:
    import os
    from streamlit.testing.v1 import AppTest
    os.environ.setdefault("SGI_DASHBOARD_MODEL", "hashing")
    # The path box opens files only under the folder the operator names.
    os.environ["SGI_LOCAL_FILES_ROOT"] = os.path.dirname(path)
    at = AppTest.from_file(sys.argv[3], default_timeout=600)
    at.run()
    at.text_input(key="data.path").set_value(path).run()
    problems = [e.value for e in at.exception] + [e.value for e in at.error]
    if problems:
        raise SystemExit(f"the app showed: {problems}")
    rows = int(next(m.value for m in at.metric if m.label == "Rows read").replace(",", ""))
    if variant != "data":
        at.switch_page(f"app_pages/{variant}.py").run()
        problems = [e.value for e in at.exception] + [e.value for e in at.error]
        if problems:
            raise SystemExit(f"the {variant} page showed: {problems}")
print(rows, time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def build_scored_parquet(path: Path, rows: int, *, seed: int = 0) -> None:
    """A scored Parquet of ``rows`` rows, written a block of the sample at a time."""
    sample = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    rng = np.random.default_rng(seed)
    writer = None
    for block, start in enumerate(range(0, rows, len(sample))):
        frame = sample.head(rows - start).copy()
        for column in ("question", "context", "response", "id"):
            frame[column] = frame[column] + f" #{block}"
        frame["label"] = frame["label"].astype(float)
        frame["input_row"] = np.arange(start + 1, start + len(frame) + 1)
        frame["theta_qc"], frame["theta_rc"] = rng.uniform(0.4, 1.5, (2, len(frame)))
        # theta_rq within the triangle inequality's bounds, as angles of one embedding triple are.
        frame["theta_rq"] = rng.uniform(abs(frame["theta_qc"] - frame["theta_rc"]),
                                        frame["theta_qc"] + frame["theta_rc"])
        frame["sgi"] = frame["theta_rq"] / frame["theta_rc"]
        frame["sgi_status"] = "ok"
        frame[WORD_OVERLAP_COLUMN] = lexical_groundedness(frame["response"], frame["context"], warn=False)
        table = pa.Table.from_pandas(frame, preserve_index=False)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema, compression="zstd")
        writer.write_table(table)
    writer.close()


def measure(path: Path, variant: str) -> dict:
    """One fresh process: rows seen, seconds and peak RSS in bytes."""
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path), variant, str(REPO / "dashboard" / "app.py")],
                          cwd=REPO, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{variant} failed:\n{done.stderr[-4000:]}")
    rows, seconds, peak = done.stdout.split()[-3:]
    return {"rows": int(rows), "seconds": float(seconds), "peak_rss_bytes": int(peak)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="comma-separated, from: " + ", ".join(VARIANTS))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scored.parquet"
        build_scored_parquet(path, args.rows)
        size = path.stat().st_size
        print(f"{args.rows:,} scored rows, {size / 2**20:,.0f} MiB of Parquet")
        results = {}
        for variant in args.variants.split(","):
            runs = [measure(path, variant) for _ in range(args.repeats)]
            assert all(run["rows"] == args.rows for run in runs), runs
            results[variant] = {"peak_rss_mib": statistics.median(r["peak_rss_bytes"] for r in runs) / 2**20,
                                "seconds": statistics.median(r["seconds"] for r in runs),
                                "runs": runs}
            print(f"{variant:>11}: peak RSS {results[variant]['peak_rss_mib']:,.0f} MiB, "
                  f"{results[variant]['seconds']:.1f} s (median of {args.repeats})")
    if "pandas" in results:
        for variant in [name for name in results if name != "pandas"]:
            print(f"{variant} / bare pandas read: "
                  f"{results[variant]['peak_rss_mib'] / results['pandas']['peak_rss_mib']:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"rows": args.rows, "parquet_bytes": size, **results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
