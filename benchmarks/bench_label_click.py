"""What one label click on the Review page costs as the annotations file grows.

    .venv/bin/python benchmarks/bench_label_click.py [--lines 1000,300000] [--rows 100000] [--repeats 7] [--json OUT]

For each size, an annotations file of ``--lines`` decisions (grounded, hallucinated and
unsure, from random and targeted queues, with undos) on the keys of a table of ``--rows``
rows is written and read once (untimed, as the app reads it when the page first opens).
Then each click appends one decision (:meth:`AnnotationStore.add`) and brings the rows'
labels up to date, timed two ways, one after the other:

- ``incremental``: :meth:`RowLabelTracker.update` on the store's log, taking in the one new record;
- ``rebuild``: what every click did before, the decisions in force of the whole file,
  :func:`labels_from_decisions` and :func:`join_labels` on every row, and the rows annotated.

Each figure is the median wall time of ``--repeats`` clicks after one untimed click, each
timed call preceded by a garbage collection; the kept labels are checked equal to the rebuilt
ones after the incremental clicks and after every rebuilt one.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sgi_core.review.annotations import AnnotationStore  # noqa: E402
from sgi_core.review.decision_log import decision_line  # noqa: E402
from sgi_core.review.label_sources import join_labels, labels_from_decisions  # noqa: E402
from sgi_core.review.row_labels import RowLabelTracker  # noqa: E402

LABELS = ("grounded", "hallucinated", "unsure")
QUEUES = ("random", "uncertain", "disagreement")


def write_store(path: Path, keys: np.ndarray, n_lines: int, rng: np.random.Generator) -> None:
    """``n_lines`` decision lines on random keys, one in twenty an undo of the line before it on its key."""
    lines, last_id = [], {}
    for _ in range(n_lines):
        key = keys[int(rng.integers(len(keys)))]
        if key in last_id and rng.random() < 0.05:
            lines.append(decision_line(key, "retract", retracts=last_id.pop(key)))
            continue
        decision_id = f"{int(rng.integers(2**63)):016x}"
        lines.append(decision_line(key, LABELS[int(rng.integers(3))], decision_id=decision_id,
                                   queue=QUEUES[int(rng.integers(3))]))
        last_id[key] = decision_id
    path.write_bytes(b"".join(lines))


def rebuild(store: AnnotationStore, keys: np.ndarray):
    """The labels made from the whole file, as each click made them before."""
    current = store.current()
    labels = labels_from_decisions(current, source=str(store.path))
    return join_labels(keys, labels, require_match=False), pd.Index(keys).isin(current["key"])


def click(store: AnnotationStore, keys: np.ndarray, rng: np.random.Generator) -> None:
    store.add(keys[int(rng.integers(len(keys)))], LABELS[int(rng.integers(3))], queue="random")


def timed(run) -> float:
    """Wall seconds of ``run()``, after a garbage collection so that it pays for no earlier garbage."""
    gc.collect()
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def check(kept, joined, annotated) -> None:
    """The kept labels are the rebuilt ones."""
    assert np.array_equal(kept.joined.label, joined.label, equal_nan=True)
    assert kept.joined.to_dict() == joined.to_dict() and np.array_equal(kept.annotated, annotated)


def measure(n_lines: int, n_rows: int, repeats: int, folder: Path) -> dict:
    rng = np.random.default_rng(n_lines)
    keys = np.array([f"{i:032x}" for i in rng.permutation(n_rows)], dtype=object)
    store = AnnotationStore(folder / f"annotations_{n_lines}.jsonl")
    write_store(store.path, keys, n_lines, rng)
    started = time.perf_counter()
    tracker = RowLabelTracker(keys, source=str(store.path))
    tracker.update(store.log())
    first_read = time.perf_counter() - started
    times = {"incremental": [], "rebuild": []}
    # One way at a time: a rebuild leaves the whole file's frames in the log's cache, whose freeing the next
    # call would pay; the app, keeping its labels incrementally, never makes them on a click.
    for _ in range(repeats + 1):
        click(store, keys, rng)
        times["incremental"].append(timed(lambda: tracker.update(store.log())))
    kept = tracker.update(store.log())
    check(kept, *rebuild(store, keys))
    for _ in range(repeats + 1):
        click(store, keys, rng)
        times["rebuild"].append(timed(lambda: rebuild(store, keys)))
        check(tracker.update(store.log()), *rebuild(store, keys))
    times = {name: values[1:] for name, values in times.items()}  # the first click is untimed
    return {"lines": n_lines, "rows": n_rows, "first_read_seconds": first_read,
            **{f"{name}_seconds": statistics.median(values) for name, values in times.items()},
            "runs": times}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", default="1000,300000", help="annotation file sizes, comma-separated")
    parser.add_argument("--rows", type=int, default=100_000, help="rows of the table the labels are put on")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory() as folder:
        os.environ["SGI_DATA_DIR"] = folder
        for n_lines in (int(size) for size in args.lines.split(",")):
            result = measure(n_lines, args.rows, args.repeats, Path(folder))
            results.append(result)
            print(f"{n_lines:>9,} lines, {args.rows:,} rows: per click {result['incremental_seconds'] * 1e3:8.2f} ms "
                  f"incremental, {result['rebuild_seconds'] * 1e3:9.1f} ms rebuilt from the whole file "
                  f"(medians of {args.repeats}; first read {result['first_read_seconds']:.1f} s)", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                                           "platform": platform.platform()},
                                               "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
