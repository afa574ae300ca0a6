"""The verdict on one file: which detector, if any, beats the best trivial score here.

A detector is only useful where it beats what costs nothing to compute, each trivial score taken
in the direction that separates best on this file; :func:`file_verdict` gives the standings and
the paired test.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from sgi_core.results import Estimate, JsonResult, UndefinedStatisticWarning
from sgi_core.stats.checks import as_labels, as_scores
from sgi_core.stats.paired import delong_test
from sgi_core.stats.ranking import roc_analysis


@dataclass(frozen=True)
class ScoreStanding(JsonResult):
    """One score's AUROC against chance.

    Attributes
    ----------
    name : str
    auroc : Estimate
        Grounded positive, in the direction used (``flipped`` for a trivial score), with its
        interval and how the interval was made.
    standing : {"separates", "near chance", "inverted", "undefined"}
    trivial : bool
    flipped : bool
        A trivial score taken in the opposite of its stated direction, because that
        separates better on this file.
    """

    name: str
    auroc: Estimate
    standing: str
    trivial: bool
    flipped: bool


@dataclass(frozen=True)
class Comparison(JsonResult):
    """A detector against the best trivial score (DeLong's paired test).

    Attributes
    ----------
    detector, trivial : str
    difference : float
        ``AUROC(detector) - AUROC(trivial)`` on the rows both score.
    ci : (float, float)
    p_value : float
    outcome : {"beats", "no clear difference", "loses", "undefined"}
    """

    detector: str
    trivial: str
    difference: float
    ci: tuple[float, float]
    p_value: float
    outcome: str


@dataclass(frozen=True)
class Verdict(JsonResult):
    """What this file's numbers say about its detectors.

    Attributes
    ----------
    scores : tuple of ScoreStanding
        Detectors first (in the order given), then the trivial scores.
    best_trivial : str or None
        Name of the trivial score with the highest AUROC here; None without one.
    comparisons : tuple of Comparison
        One per detector, against ``best_trivial``.
    winners : tuple of str
        Detectors that beat the best trivial score.
    """

    scores: tuple[ScoreStanding, ...]
    best_trivial: str | None
    comparisons: tuple[Comparison, ...]
    winners: tuple[str, ...]

    def standing(self, name: str) -> ScoreStanding:
        """The :class:`ScoreStanding` of the score called ``name``."""
        for score in self.scores:
            if score.name == name:
                return score
        raise KeyError(name)


def standing_of(auroc_ci: tuple[float, float]) -> str:
    """``"separates"``, ``"near chance"``, ``"inverted"`` or ``"undefined"`` from an AUROC interval.

    Examples
    --------
    >>> standing_of((0.7, 0.8)), standing_of((0.48, 0.56)), standing_of((0.2, 0.3)), standing_of((math.nan, 0.6))
    ('separates', 'near chance', 'inverted', 'undefined')
    """
    lo, hi = auroc_ci
    if math.isnan(lo) or math.isnan(hi):
        return "undefined"
    if lo > 0.5:
        return "separates"
    return "inverted" if hi < 0.5 else "near chance"


def _outcome(ci: tuple[float, float]) -> str:
    if math.isnan(ci[0]):
        return "undefined"
    if ci[0] > 0.0:
        return "beats"
    return "loses" if ci[1] < 0.0 else "no clear difference"


def file_verdict(y_true, detectors: dict, trivial: dict, *, n_boot: int = 1000, seed: int = 0,
                 rocs: dict | None = None) -> Verdict:
    """Judge each detector against chance and against the best trivial score of this file.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled.
    detectors : dict of str to array_like of shape (n,)
        Detector scores, higher = grounded (orient them first); their direction is
        taken as given, so a detector pointing the wrong way shows as inverted.
    trivial : dict of str to array_like of shape (n,)
        Trivial scores, higher = grounded as stated; each is flipped when the other
        direction separates better here.
    n_boot, seed
        Resamples of the AUROC intervals (:func:`~sgi_core.stats.ranking.roc_analysis`).
    rocs : dict of str to RocResult, optional
        Scores already judged (a :class:`~sgi_core.evaluation.judgement.ScoreJudgement`'s
        ``roc``, of the same values as stated and the same ``n_boot`` and ``seed``): their
        ROC analysis is taken as it is, not computed again.

    Returns
    -------
    Verdict
        Undefined parts (one class, a class of one row) are NaN with the standing
        ``"undefined"``; the warnings are left to the caller's report.

    Notes
    -----
    A detector (SGI, or any score column judged beside it) is only useful where it beats
    what costs nothing to compute. The trivial scores (response length, word overlap with
    the context, the response-question angle alone) are each taken in the direction that
    separates best **on this file** (response length may mean grounded either way), so
    the bar is the best a trivial rule reaches here, not on another data set.

    For every score the verdict records its AUROC (grounded positive) with its 95%
    interval and its standing:

    * ``"separates"``: the interval lies above 0.5;
    * ``"near chance"``: the interval holds 0.5;
    * ``"inverted"``: the interval lies below 0.5 (the score ranks hallucinated rows
      higher: it points the wrong way, or its direction was given wrongly);
    * ``"undefined"``: no AUROC (one class) or no interval (``n_boot=0``, tiny class).

    Each detector is compared with the best trivial score by DeLong's paired test
    (DeLong, DeLong & Clarke-Pearson 1988) on the rows both score: ``"beats"`` when the
    interval of ``AUROC(detector) - AUROC(trivial)`` lies above 0, ``"loses"`` below 0,
    ``"no clear difference"`` otherwise.

    Examples
    --------
    >>> y = [1, 1, 1, 1, 0, 0, 0, 0]
    >>> v = file_verdict(y, {"sgi": [8, 7, 6, 5, 4, 3, 2, 1]}, {"length": [1, 2, 3, 4, 5, 6, 8, 7]}, n_boot=0)
    >>> v.best_trivial, v.standing("length").flipped, v.standing("length").auroc.value
    ('length', True, 1.0)
    """
    labels = as_labels(y_true)
    rocs = rocs or {}

    def roc_of(name, values):
        return rocs[name] if name in rocs else roc_analysis(labels, values, n_boot=n_boot, seed=seed)

    oriented = {}
    standings = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        for name, values in detectors.items():
            oriented[name] = as_scores(values, name=name, n=len(labels))
            roc = roc_of(name, oriented[name])
            standings.append(ScoreStanding(name, Estimate(roc.auroc, roc.auroc_ci, roc.ci_method),
                                           standing_of(roc.auroc_ci), False, False))
        for name, values in trivial.items():
            stated = as_scores(values, name=name, n=len(labels))
            roc = roc_of(name, stated)
            flipped = bool(roc.auroc < 0.5)
            # AUROC(-s) = 1 - AUROC(s), ties counting 1/2; the same resamples give the mirrored interval.
            auc, ci = (1.0 - roc.auroc, (1.0 - roc.auroc_ci[1], 1.0 - roc.auroc_ci[0])) if flipped else (
                roc.auroc, roc.auroc_ci)
            oriented[name] = -stated if flipped else stated
            standings.append(ScoreStanding(name, Estimate(auc, ci, roc.ci_method), standing_of(ci), True, flipped))
        defined = [s for s in standings if s.trivial and not math.isnan(s.auroc.value)]
        best = max(defined, key=lambda s: s.auroc.value).name if defined else None
        comparisons = []
        if best is not None:
            for name in detectors:
                test = delong_test(labels, oriented[name], oriented[best])
                comparisons.append(Comparison(name, best, test.difference, test.ci, test.p_value, _outcome(test.ci)))
    winners = tuple(c.detector for c in comparisons if c.outcome == "beats")
    return Verdict(tuple(standings), best, tuple(comparisons), winners)


def report_verdict(report, frame, *, families=None, family_scores=None, baselines=None, n_boot: int = 1000,
                   seed: int = 0) -> Verdict:
    """:func:`file_verdict` of a file from its :class:`~sgi_core.evaluation.report.EvaluationReport`, made after its
    detector families.

    The verdict reads the report's judgements alone (:attr:`~sgi_core.evaluation.report.EvaluationReport.held_fixed`,
    in that order): the score, the other scores judged beside it (the detector families' among them, so a
    family's score can beat the best trivial score) and the trivial scores, each with the ROC analysis of its
    judgement, never computed again. ``combined`` is left out: it was fitted on the labels the verdict reads,
    and DeLong's test holds a score fixed.

    Parameters
    ----------
    report : EvaluationReport
    frame : DataFrame
        The scored frame the report was made from (``label``, the score, the texts).
    families : dict of str to ScoreJudgement, optional
        The detector families' judgements (:attr:`~sgi_core.detectors.report.DetectorReport.detectors`),
        added to ``report`` by :func:`~sgi_core.evaluation.report.with_families` when it does not hold
        them yet.
    family_scores : DataFrame, optional
        The families' raw per-row values (:func:`~sgi_core.detectors.report.detector_report`'s
        scores), indexed like ``frame``; needed for a family's score that ``frame`` does not carry.
    baselines : DataFrame, optional
        The trivial scores' oriented values (:func:`~sgi_core.scores.oriented.oriented_scores`)
        when the caller has them; computed otherwise.
    n_boot, seed : int
        The report's settings.
    """
    from sgi_core.evaluation.report import with_families
    from sgi_core.scores.oriented import oriented_scores
    from sgi_core.scores.registry import spec_for

    report = with_families(report, families or {})
    given = {} if baselines is None else {name: baselines[name] for name in report.baselines if name in baselines}
    computed = oriented_scores(frame, [name for name in report.baselines if name not in given])
    trivial = {name: (given[name] if name in given else computed[name]).to_numpy(dtype=float)
               for name in report.baselines}
    holders = [holder for holder in (family_scores, frame) if holder is not None]

    def values(name):
        spec = spec_for(name)
        return spec.oriented(next(holder for holder in holders if spec.name in holder.columns)[spec.name])

    scores = {report.score_col: frame[report.score_col].to_numpy(dtype=float),
              **{name: values(name) for name in report.held_fixed if name != report.score_col
                 and name not in report.baselines}}
    return file_verdict(frame["label"].to_numpy(), scores, trivial, n_boot=n_boot, seed=seed, rocs=report.rocs)
