"""Stopping as soon as it looks decided: how often the fixed-sample interval and the confidence sequence err.

    .venv/bin/python benchmarks/optional_stopping.py [--runs 2000] [--labels 150] [--discordance 0.2]
        [--rate 0.3] [--seed 0] [--json OUT]

Two runs with **no change** (both hallucinate at ``--rate``; a key is hallucinated in one run
only with probability ``--discordance``, half each way) are labelled key by key in both. After
every key the reader looks at the 95% interval of ``rate_new - rate_base`` and stops at the
first one that excludes zero, calling a change that is not there. Printed: the share of
``--runs`` labelling sessions of at most ``--labels`` keys that stop so, for

* the fixed-sample interval (Newcombe's paired interval,
  :func:`sgi_core.stats.proportions.paired_difference_ci`), valid only at a number of keys
  planned in advance, and
* the confidence sequence (:func:`sgi_core.stats.confidence_sequence.betting_confidence_sequence`),
  valid at every number of keys at once.

The sequence must hold its level (at most 5%); the fixed interval, read this way, does not.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sgi_core.stats.confidence_sequence import betting_confidence_sequence  # noqa: E402
from sgi_core.stats.proportions import paired_difference_ci  # noqa: E402


def _session(rng, n_labels: int, rate: float, discordance: float) -> tuple[np.ndarray, np.ndarray]:
    """One labelling session's (y_base, y_new) per key, 1 = hallucinated, both runs at ``rate``."""
    cells = rng.choice(4, size=n_labels, p=[rate - discordance / 2, discordance / 2, discordance / 2,
                                            1 - rate - discordance / 2])
    return np.isin(cells, (0, 1)).astype(float), np.isin(cells, (0, 2)).astype(float)


def stopping_errors(*, runs: int = 2000, labels: int = 150, discordance: float = 0.2, rate: float = 0.3,
                    seed: int = 0, confidence: float = 0.95) -> dict:
    """Share of no-change sessions in which each interval, read after every key, ever excludes zero."""
    rng = np.random.default_rng(seed)
    fixed_errors = sequence_errors = 0
    for _ in range(runs):
        base, new = _session(rng, labels, rate, discordance)
        both, base_only, new_only = (np.cumsum(v) for v in (base * new, base * (1 - new), (1 - base) * new))
        neither = np.arange(1, labels + 1) - both - base_only - new_only
        fixed_errors += any(lo > 0 or hi < 0 for lo, hi in
                            (paired_difference_ci(int(a), int(b), int(c), int(d), confidence=confidence)
                             for a, b, c, d in zip(both, base_only, new_only, neither)))
        low, high = betting_confidence_sequence(new - base, lower=-1.0, upper=1.0, confidence=confidence)
        sequence_errors += bool(np.any((low > 0) | (high < 0)))
    return {"runs": runs, "labels": labels, "discordance": discordance, "rate": rate, "seed": seed,
            "fixed_error": fixed_errors / runs, "sequence_error": sequence_errors / runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--labels", type=int, default=150)
    parser.add_argument("--discordance", type=float, default=0.2)
    parser.add_argument("--rate", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    result = stopping_errors(runs=args.runs, labels=args.labels, discordance=args.discordance, rate=args.rate,
                             seed=args.seed)
    print(f"{result['runs']} no-change sessions of up to {result['labels']} keys labelled in both runs "
          f"(discordance {result['discordance']:.0%}, rate {result['rate']:.0%}), stopped at the first interval "
          f"excluding zero: fixed-sample interval {result['fixed_error']:.1%} wrong, confidence sequence "
          f"{result['sequence_error']:.1%} wrong")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
