"""The rules of ``gate NEW --baseline BASE``: hold a new run to its baseline on labels and on validated scores.

Checks, each on a :class:`~sgi_core.runs.comparison.RunComparison`:

* :func:`rate_check`: fails when the upper 95% bound of the hallucination-rate
  increase ``rate_new - rate_base`` (from the labels, prediction-powered where only a
  sample is labelled) exceeds ``max_increase``; refuses a ``max_increase`` below the
  smallest margin the labels could pass were the difference zero
  (:mod:`~sgi_core.stats.margin_power`), saying how many keys it would need, unless the
  observed interval already clears it. Read sequentially, the smallest margin and the keys
  needed are the confidence sequence's own. Read
  sequentially, it passes when the confidence sequence's upper bound is at most
  ``max_increase``, fails when its lower bound is above, and is undecided (failed, label
  more) otherwise;
* :func:`drop_checks`: fails when the lower 95% bound of a score's mean change
  ``mean(new) - mean(base)`` is below ``-max_drop``; a score that is not validated on
  these labels is refused (its movement says nothing about grounding) unless the
  caller allows it;
* :func:`auroc_floor_checks`: fails when a score's AUROC lower bound is below
  ``min_auroc`` in either run;
* :func:`key_coverage`: fails when keys of the base run are missing from the new run,
  unscored there, or have fewer scored rows there than in the base run, unless allowed
  (a run that kept only its best questions, or only the best answer of each, must not
  pass).

Refusals (bad input, an unvalidated score, no labels for a label check, keys labelled in
both runs that are not a sample of the keys (:func:`~sgi_core.runs.label_sample.check_labelled_sample`),
fewer than :data:`MIN_MATCHED_KEYS` matched keys) raise :class:`~sgi_core.errors.SGIInputError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult
from sgi_core.runs.headline_rates import headline_rates
from sgi_core.runs.label_sample import MIXED_LABELS_FIX, check_labelled_sample, no_labels_sentence

#: Fewer matched keys than this leave every interval too wide to gate on.
MIN_MATCHED_KEYS = 30


@dataclass(frozen=True)
class DropCheck(JsonResult):
    """One score held to a maximum drop: ``passed`` when ``ci[0] >= -max_drop``.

    ``difference = mean_new - mean_base`` over ``n_keys`` matched keys, ``ci`` its
    bootstrap interval; an undefined interval fails. ``validated`` and ``validation``
    say whether the score tracks grounding on these labels.
    """

    score: str
    n_keys: int
    mean_base: float
    mean_new: float
    difference: float
    ci: tuple[float, float]
    max_drop: float
    passed: bool
    validated: bool
    validation: str


@dataclass(frozen=True)
class RateCheck(JsonResult):
    """The hallucination-rate increase held to ``max_increase``: ``passed`` when ``ci[1] <= max_increase``.

    ``smallest_margin`` is what the labels could pass were the difference zero. With
    ``sequential``, ``ci`` is the confidence sequence's and ``decided`` says whether it
    excludes ``max_increase``; a fixed-sample check is always decided.
    """

    n_keys: int
    rate_base: float
    rate_new: float
    difference: float
    ci: tuple[float, float]
    method: str
    max_increase: float
    passed: bool
    smallest_margin: float = math.nan
    sequential: bool = False
    decided: bool = True


@dataclass(frozen=True)
class AurocFloorCheck(JsonResult):
    """A score's AUROC lower bound in one run held to ``min_auroc``."""

    score: str
    run: str
    auroc: float
    auroc_ci: tuple[float, float]
    min_auroc: float
    passed: bool


@dataclass(frozen=True)
class KeyCoverage(JsonResult):
    """Base keys the new run lacks, leaves unscored or scores on fewer rows; ``passed`` when none or allowed.

    Attributes
    ----------
    n_keys_base : int
    missing, unscored : tuple of str
        Base keys absent from the new run; matched keys with no scored row in the new run.
    allowed, passed : bool
    fewer_scored : tuple of str
        Matched keys scored in the new run on fewer rows than in the base run (some scored).
    rows_unscored : int
        Rows those keys lack in the new run: the sum over them of ``scored_base - scored_new``.
    """

    n_keys_base: int
    missing: tuple[str, ...]
    unscored: tuple[str, ...]
    allowed: bool
    passed: bool
    fewer_scored: tuple[str, ...] = ()
    rows_unscored: int = 0


def _finite_bound(value: float, name: str) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
        raise SGIInputError(f"{name} must be a finite number >= 0; got {value!r}")
    return float(value)


def check_enough_keys(comparison) -> None:
    """Refuse fewer than :data:`MIN_MATCHED_KEYS` matched keys."""
    n = comparison.match.n_matched
    if n < MIN_MATCHED_KEYS:
        raise SGIInputError(f"the runs share only {n} keys; the gate needs at least {MIN_MATCHED_KEYS} to bound a "
                            "change", hint="Compare runs of the same inputs, or match them on another --key")


def key_coverage(comparison, matched, scores, *, allow_missing: bool) -> KeyCoverage:
    """Base keys absent from the new run, and matched keys a score of ``scores`` leaves (partly) unscored in the new
    run.

    A key counts as scored only when the new run scores as many of its rows as the base
    run does (per score, from ``matched.scored_rows_*``): a run that empties the weaker
    answer of each question keeps every key but not every answer.
    """
    unscored = np.zeros(len(matched.keys), dtype=bool)
    lacking = np.zeros(len(matched.keys), dtype=np.int64)
    for score in scores:
        base, new = matched.base[score].to_numpy(), matched.new[score].to_numpy()
        unscored |= ~np.isnan(base) & np.isnan(new)
        if matched.scored_rows_base is not None and matched.scored_rows_new is not None:
            gap = matched.scored_rows_base[score].to_numpy() - matched.scored_rows_new[score].to_numpy()
            lacking = np.maximum(lacking, gap)
    fewer = (lacking > 0) & ~unscored
    missing = tuple(comparison.match.only_in_base)
    gaps = tuple(map(str, matched.keys[unscored]))
    return KeyCoverage(comparison.match.n_keys_base, missing, gaps, allow_missing,
                       allow_missing or not (missing or gaps or fewer.any()),
                       tuple(map(str, matched.keys[fewer])), int(lacking[fewer].sum()))


def planning_power(lab, *, sequential: bool):
    """What the labels can detect: the fixed-sample design's power, or with ``sequential`` the sequence's own
    (:func:`~sgi_core.stats.margin_power.sequential_power`)."""
    return lab.sequential_power if sequential else lab.power


def _refuse_unreachable(power, max_increase: float, n_matched: int, upper: float) -> None:
    """Refuse a margin below what the labels could pass were the difference zero, with what it would need.

    A margin the observed interval already clears (``upper <= max_increase``) is never refused:
    the data have answered the question the plan asked.
    """
    if power is None or not max_increase < power.smallest_margin or upper <= max_increase:
        return
    needed = power.keys_needed(max_increase) if max_increase > 0 else -1
    reach = math.ceil(power.smallest_margin * 1000 - 1e-9) / 1000  # float noise must not add a step
    labelled = ("keys labelled in both runs" if power.design != "unpaired" else
                "labelled keys (none labelled in both runs)")
    beyond = f", more than the {n_matched} matched keys" if needed > n_matched else ""
    chance = ("in a typical labelling order" if power.design == "sequential" else
              f"{power.power:.0%} of the time")
    interval = "the confidence sequence" if power.design == "sequential" else "the increase's interval"
    more = (f"about {needed} keys labelled in both runs would be needed (for an unchanged run to pass "
            f"{chance}{beyond})" if needed > 0 else "no number of labelled keys is enough")
    raise SGIInputError(f"with {power.n_keys} {labelled} {interval} is about "
                        f"+/-{reach:.3f}: a margin of {max_increase:g} cannot pass; {more}, or a "
                        f"margin of at least {reach:.3f}",
                        hint="Label more keys in both runs (the Review page's two-runs mode), or raise "
                             "--max-rate-increase")


def rate_check(comparison, max_increase: float, *, sequential: bool = False) -> RateCheck:
    """Hold the labels' hallucination-rate increase to ``max_increase`` (see the module notes).

    Parameters
    ----------
    comparison : RunComparison
    max_increase : float >= 0
    sequential : bool, default False
        Read the confidence sequence (valid however the number of labels was chosen)
        instead of the fixed-sample interval (which assumes it was fixed in advance).

    Raises
    ------
    SGIInputError
        When the runs carry no labels, ``max_increase`` is not a finite number >= 0 or is
        below the smallest margin the labels could pass, or ``sequential`` without keys
        labelled in both runs.
    """
    max_increase = _finite_bound(max_increase, "--max-rate-increase")
    lab = comparison.labels
    if lab is None:
        mixed = comparison.match.mixed_label_keys
        raise SGIInputError(f"the hallucination-rate check needs labels of both runs"
                            f"{': ' + no_labels_sentence(mixed) if mixed else ''}",
                            hint=MIXED_LABELS_FIX if mixed else "Pass --labels FILE (the Review page's annotations of "
                                 "each run, or a table of labelled rows of both)")
    check_labelled_sample(lab.sample)
    if sequential and lab.sequential is None and lab.method.startswith("active"):
        raise SGIInputError("--sequential reads labels drawn uniformly at random, and these were drawn under an active "
                            "design (keys chosen where the predictor is unsure)",
                            hint="Drop --sequential: the active estimate's interval is valid at the budget the design "
                                 "drew, or draw a uniform sample (`sample --design uniform`)")
    if sequential and lab.sequential is None:
        raise SGIInputError("--sequential needs keys labelled in both runs (the sequence is of the paired difference)",
                            hint="Label the same keys in both runs, or drop --sequential")
    power = planning_power(lab, sequential=sequential)
    _refuse_unreachable(power, max_increase, comparison.match.n_matched,
                        lab.sequential.ci[1] if sequential else lab.ci[1])
    margin = power.smallest_margin if power is not None else math.nan
    if not sequential:
        shown = headline_rates(lab).lines[-1]  # the deciding estimate's rates: new - base adds up
        return RateCheck(lab.n_keys, shown.rate_base, shown.rate_new, lab.difference, lab.ci, lab.method, max_increase,
                         bool(lab.ci[1] <= max_increase), margin)
    seq = lab.sequential
    return RateCheck(seq.n, lab.rate_base, lab.rate_new, seq.estimate, seq.ci, seq.method, max_increase,
                     bool(seq.ci[1] <= max_increase), margin, True,
                     bool(seq.ci[1] <= max_increase or seq.ci[0] > max_increase))


def drop_checks(comparison, scores, max_drop: float, *, allow_unvalidated: bool = False) -> tuple[DropCheck, ...]:
    """Hold each of ``scores`` to ``max_drop``; an undefined interval fails.

    Raises
    ------
    SGIInputError
        A negative or non-finite ``max_drop``, a score the comparison does not hold, or a
        score not validated on these labels without ``allow_unvalidated``.
    """
    max_drop = _finite_bound(max_drop, "--max-drop")
    by_name = {d.score: d for d in comparison.scores}
    missing = [s for s in scores if s not in by_name]
    if missing:
        raise SGIInputError(f"score {', '.join(map(repr, missing))} is not in both runs",
                            hint=f"Scores of both runs: {', '.join(by_name)}")
    unvalidated = [by_name[s] for s in scores if not by_name[s].validated]
    if unvalidated and not allow_unvalidated:
        reasons = "; ".join(f"{d.score}: {d.validation}" for d in unvalidated)
        raise SGIInputError(f"not validated on these labels, so a drop says nothing about grounding ({reasons})",
                            hint="Label a sample of both runs (--labels) and gate on --max-rate-increase, or pass "
                                 "--allow-unvalidated to gate on the score anyway")
    return tuple(DropCheck(d.score, d.n_keys, d.mean_base, d.mean_new, d.difference, d.ci, max_drop,
                           bool(d.ci[0] >= -max_drop), d.validated, d.validation)
                 for d in (by_name[s] for s in scores))


def auroc_floor_checks(comparison, scores, min_auroc: float) -> tuple[AurocFloorCheck, ...]:
    """Each score's AUROC lower bound in each run against ``min_auroc``; an undefined bound fails.

    Raises
    ------
    SGIInputError
        Without labels, or with ``min_auroc`` outside [0, 1].
    """
    if not (math.isfinite(min_auroc) and 0.0 <= min_auroc <= 1.0):
        raise SGIInputError(f"--min-auroc must be in [0, 1]; got {min_auroc!r}")
    if comparison.labels is None:
        raise SGIInputError("--min-auroc needs labels of both runs to compute an AUROC",
                            hint="Pass --labels FILE, or drop --min-auroc")
    by_name = {d.score: d for d in comparison.scores}
    missing = [s for s in scores if s not in by_name]
    if missing:
        raise SGIInputError(f"score {', '.join(map(repr, missing))} is not in both runs",
                            hint=f"Scores of both runs: {', '.join(by_name)}")
    checks = []
    for score in scores:
        d = by_name[score]
        for run, auroc, ci in (("base", d.auroc_base, d.auroc_base_ci), ("new", d.auroc_new, d.auroc_new_ci)):
            checks.append(AurocFloorCheck(score, run, auroc, ci, float(min_auroc),
                                          bool(not math.isnan(ci[0]) and ci[0] >= min_auroc)))
    return tuple(checks)
