"""Start-up of ``python -m sgi_core compute`` on one triple: median wall seconds of fresh processes.

    .venv/bin/python benchmarks/bench_startup.py [--model minilm] [--runs 5] [--repo PATH ...]

Each ``--repo`` (default: this checkout) is timed in turn, ``--runs`` fresh processes
each, interleaved run by run so that two checkouts compared back to back see the same
load; one untimed run first makes the model's ONNX export and fills the disk caches.
``compute`` reads no embedding cache: every run embeds its three texts. Prints one
line per checkout: the median and the runs, and whether the run imported scikit-learn or
scipy (``-X importtime`` in one more run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TRIPLE = ["--q", "What is the capital of France?", "--c", "Paris is the capital and largest city of France.",
          "--r", "Paris"]


def command(model: str) -> list[str]:
    return [sys.executable, "-m", "sgi_core", "compute", *TRIPLE, "--model", model]


def run_once(repo: Path, model: str) -> float:
    start = time.perf_counter()
    subprocess.run(command(model), cwd=repo, check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(repo)})
    return time.perf_counter() - start


def heavy_imports(repo: Path, model: str) -> list[str]:
    """The heavy statistics libraries the command imported."""
    out = subprocess.run([sys.executable, "-X", "importtime", *command(model)[1:]], cwd=repo, check=True,
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(repo)})
    modules = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    return sorted(name for name in ("sklearn", "scipy") if name in modules)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repo", type=Path, action="append", default=None,
                        help="a checkout to time (repeatable; default this one)")
    args = parser.parse_args(argv)
    repos = args.repo or [REPO]
    for repo in repos:
        run_once(repo, args.model)  # the ONNX export and the disk caches, before the clock
    seconds = {repo: [] for repo in repos}
    for _ in range(args.runs):
        for repo in repos:
            seconds[repo].append(run_once(repo, args.model))
    load = os.getloadavg()[0]
    for repo in repos:
        runs = ", ".join(f"{s:.2f}" for s in seconds[repo])
        heavy = ", ".join(heavy_imports(repo, args.model)) or "neither sklearn nor scipy"
        print(f"{repo}: compute of one triple ({args.model}): median {statistics.median(seconds[repo]):.2f} s of "
              f"{args.runs} ({runs}); imports {heavy}; load {load:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
