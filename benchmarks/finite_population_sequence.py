"""The confidence sequence over a run's finite set of keys against the one that ignores it, on the bundled runs.

    .venv/bin/python benchmarks/finite_population_sequence.py [--orders 1000] [--seed 0] [--json OUT]

Every key of the bundled runs (``sample_data/runs``: 150 questions, base 39% hallucinated,
new 25%) is labelled in both runs, the labels taken from the sample's answer types, and
read in ``--orders`` random orders. For each order the paired difference ``y_new - y_base``
enters the betting confidence sequence one key at a time, drawn with replacement (no
population, as before) and without replacement from the 150 keys
(:func:`sgi_core.stats.confidence_sequence.betting_confidence_sequence` with
``population``). Printed, for each:

* on the real pair: the share of orders whose sequence excludes zero before the last key
  (decides the change) and the median keys it took; the mean width at 40 and 80 keys;
* on a null pair (the base run against a run hallucinating on as many questions, drawn at
  random, so that the difference over the 150 keys is exactly zero): the share of orders
  whose sequence ever excludes zero (a wrong stop).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sgi_core.stats.confidence_sequence import betting_confidence_sequence  # noqa: E402


def bundled_pairs(seed: int = 0) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{"real": (base, new), "null": (base, other)}``: per question, 1.0 where the run's answer is hallucinated."""
    sample = pd.read_csv(REPO / "sample_data" / "halueval_qa_sample.csv")
    hallucinated = set(sample.loc[sample["answer_type"] == "hallucinated", "response"])
    runs = {name: pd.read_csv(REPO / "sample_data" / "runs" / f"{name}.csv").sort_values("id")
            for name in ("base", "new")}
    base, new = (run["response"].isin(hallucinated).to_numpy(dtype=float) for run in runs.values())
    other = np.zeros(len(base))
    other[np.random.default_rng(seed).choice(len(base), int(base.sum()), replace=False)] = 1.0
    return {"real": (base, new), "null": (base, other)}


def _reading(d: np.ndarray, population: int | None) -> tuple[np.ndarray, np.ndarray]:
    return betting_confidence_sequence(d, lower=-1.0, upper=1.0, population=population)


def measure(*, orders: int = 1000, seed: int = 0) -> dict:
    """The figures of the module notes."""
    pairs = bundled_pairs(seed)
    rng = np.random.default_rng(seed)
    n = len(pairs["real"][0])
    out = {"keys": n, "orders": orders, "seed": seed,
           "true_difference": float(pairs["real"][1].mean() - pairs["real"][0].mean())}
    for name, population in (("with_replacement", None), ("without_replacement", n)):
        decided, widths, wrong = [], [], 0
        for _ in range(orders):
            order = rng.permutation(n)
            base, new = pairs["real"]
            low, high = _reading(new[order] - base[order], population)
            # The last key closes the finite sequence on the truth: a decision counts before it.
            excludes = np.flatnonzero((high[:-1] < 0) | (low[:-1] > 0))
            decided.append(int(excludes[0]) + 1 if len(excludes) else 0)
            widths.append((high - low)[[39, 79]])
            base, other = pairs["null"]
            low, high = _reading(other[order] - base[order], population)
            wrong += bool(np.any((high < 0) | (low > 0)))
        stops = np.array(decided)
        out[name] = {"decided": float(np.mean(stops > 0)),
                     "median_keys": float(np.median(stops[stops > 0])) if np.any(stops > 0) else None,
                     "width_40": float(np.mean([w[0] for w in widths])),
                     "width_80": float(np.mean([w[1] for w in widths])), "wrong_stops_null": wrong / orders}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--orders", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    result = measure(orders=args.orders, seed=args.seed)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
