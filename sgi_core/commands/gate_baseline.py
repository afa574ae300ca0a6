"""``gate NEW --baseline BASE``: fail a CI job when a score's mean dropped by more than allowed.

For each ``--score NAME`` (oriented higher = grounded, as ``compare`` names it), the
check fails when the lower end of the 95% bootstrap interval of
``mean(NEW) - mean(BASE)`` over matched keys is below ``-max_drop``: the data cannot
rule out a drop larger than allowed. Exit 1 when a check fails, 0 otherwise, 2 on
bad input; one printed line per check.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult

# The statistics are imported inside run(): every CLI call builds the gate parser, and scipy with
# scikit-learn would add seconds to `compute`.
if TYPE_CHECKING:
    from sgi_core.evaluation.run_comparison import RunComparison


@dataclass(frozen=True)
class DropCheck(JsonResult):
    """One score held to a maximum drop: ``passed`` when ``ci[0] >= -max_drop``.

    ``difference = mean_new - mean_base`` over ``n_keys`` matched keys, ``ci`` its
    bootstrap interval; an undefined interval fails.
    """

    score: str
    n_keys: int
    mean_base: float
    mean_new: float
    difference: float
    ci: tuple[float, float]
    max_drop: float
    passed: bool


def drop_checks(comparison: RunComparison, scores, max_drop: float) -> tuple[DropCheck, ...]:
    """Hold each of ``scores`` in a comparison to ``max_drop`` (see the module docstring).

    An undefined interval (no key scored in both runs, or no resamples) fails: the drop
    cannot be bounded.

    Raises
    ------
    SGIInputError
        A negative or non-finite ``max_drop``, or a score the comparison does not hold.
    """
    if not (math.isfinite(max_drop) and max_drop >= 0):
        raise SGIInputError(f"--max-drop must be a finite number >= 0; got {max_drop!r}")
    by_name = {d.score: d for d in comparison.scores}
    missing = [s for s in scores if s not in by_name]
    if missing:
        raise SGIInputError(f"score {', '.join(map(repr, missing))} is not in both runs",
                            hint=f"Scores of both runs: {', '.join(by_name)}")
    return tuple(DropCheck(name, d.n_keys, d.mean_base, d.mean_new, d.difference, d.ci, float(max_drop),
                           bool(d.ci[0] >= -max_drop))
                 for name, d in ((name, by_name[name]) for name in scores))


def add_options(p: argparse.ArgumentParser) -> None:
    """The options of the baseline mode of ``gate`` (``--baseline`` itself sits in gate's mode group)."""
    p.add_argument("--score", action="append", default=None, metavar="NAME",
                   help="with --baseline: a score to hold (repeatable; default sgi), named as `compare` prints it")
    p.add_argument("--max-drop", type=float, default=None,
                   help="with --baseline: the largest allowed drop of each score's mean (in its own units)")
    p.add_argument("--key", default="question", help="with --baseline: the column matching rows (default question)")


def run(args) -> int:
    """``gate NEW --baseline BASE --score NAME --max-drop X``: one line per check, exit 1 on a failed one."""
    from sgi_core.commands.options import model_load_options
    from sgi_core.embedding import DEFAULT_MODEL
    from sgi_core.evaluation.run_comparison import compare_runs
    from sgi_core.evaluation.run_matching import match_runs
    from sgi_core.progress import EmbeddingProgress
    from sgi_core.render.runs import drop_check_line
    from sgi_core.results import UndefinedStatisticWarning
    from sgi_core.pipelines.runs import load_run, model_scorer

    if args.max_drop is None:
        raise SGIInputError("gate --baseline needs --max-drop X, the largest allowed drop of the score's mean")
    scores = args.score or ["sgi"]
    model = args.model or DEFAULT_MODEL
    scorer = model_scorer(model, load_options=model_load_options(args), batch_size=args.batch_size,
                          use_cache=not args.no_cache, progress=EmbeddingProgress(model))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedStatisticWarning)
        runs = [load_run(path, scorer=scorer, label_positive=args.label_positive, key=args.key)
                for path in (args.baseline, args.input)]
        matched = match_runs(runs[0].frame, runs[1].frame, key=args.key, scores=runs[0].scores)
    missing = [s for s in scores if s not in matched.scores]
    if missing:
        raise SGIInputError(f"score {', '.join(map(repr, missing))} is not in both runs",
                            hint=f"Scores of both runs: {', '.join(matched.scores)}")
    # Only the gated scores, and no labels: resampling the rest would be wasted.
    gated = replace(matched, scores=tuple(scores), base=matched.base.drop(columns="label", errors="ignore"),
                    new=matched.new.drop(columns="label", errors="ignore"))
    comparison = compare_runs(gated, n_boot=args.n_boot, seed=args.seed)
    for note in dict.fromkeys(str(w.message) for w in caught):
        print(f"note: {note}", file=sys.stderr)
    checks = drop_checks(comparison, scores, args.max_drop)
    for check in checks:
        print(drop_check_line(check, comparison.confidence))
    unmatched = len(comparison.match.only_in_base) + len(comparison.match.only_in_new)
    if unmatched:
        print(f"note: {unmatched} keys are in one run only and were left out (see `compare`)", file=sys.stderr)
    return 0 if all(c.passed for c in checks) else 1

