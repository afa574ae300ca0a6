"""Imported detector scores beside SGI, and a cross-validated combination of them.

Any numeric column of a file (an LLM judge, RAGAS faithfulness, an NLI probability) is oriented
higher = grounded, judged as SGI is, and combined with the others out of fold
(:func:`compare_detectors` gives the protocol).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from sgi_core.errors import SGIInputError
from sgi_core.evaluation.events_per_feature import WITHHELD, withheld_reason
from sgi_core.evaluation.judgement import ScoreJudgement, judge_score
from sgi_core.evaluation.refit import (
    HELD_FIXED,
    REFIT_CI_NAME,
    REFIT_MAX_ROWS,
    REFIT_N_BOOT,
    percentile_interval,
    rank_auroc,
    refit_replicates,
)
from sgi_core.results import Estimate, JsonResult, warn_undefined
from sgi_core.scores.registry import SCORES, spec_for
from sgi_core.stats.checks import as_labels, as_scores, check_int, validates_inputs
from sgi_core.stats.crossval import out_of_fold_probabilities
from sgi_core.stats.folds import crossfit_folds
from sgi_core.stats.paired import delong_test
from sgi_core.stats.ranking import RocResult, roc_analysis, separation_floor

#: The combination's row in :meth:`DetectorComparison.to_frame`: the registry's out-of-fold combined score.
COMBINED_NAME = SCORES["combined"].name


def numeric_score_columns(frame: pd.DataFrame, *, exclude=()) -> list[str]:
    """Columns whose non-empty cells are all numbers, candidates for detector scores.

    Identifier-like columns (integers only, one distinct value per row) are left out.
    """
    found = []
    for col in frame.columns:
        if col in exclude:
            continue
        series = frame[col]
        text = series.astype(str).str.strip()
        filled = series[series.notna() & (text != "")]
        if filled.empty:
            continue
        numbers = pd.to_numeric(filled, errors="coerce")
        if numbers.isna().any():
            continue
        is_id = bool((numbers == numbers.round()).all() and numbers.nunique() == len(numbers))
        if not is_id:
            found.append(col)
    return found


@dataclass(frozen=True)
class DetectorComparison(JsonResult):
    """Detectors alone and combined, on the rows that every detector scored.

    Attributes
    ----------
    judgements : dict of str -> ScoreJudgement
        Each detector judged alone (:func:`~sgi_core.evaluation.judgement.judge_score`), by its
        registry (oriented, higher = grounded) name in the order given, the first usually SGI:
        the same container, and the same objects, as the report's
        :attr:`~sgi_core.evaluation.report.EvaluationReport.judgements`.
    n : int
        Labelled rows scored by every detector.
    n_splits : int
    spearman_with_first : dict of str -> float
        Spearman correlation of each detector with the first over all rows both scored
        (labelled or not); 1.0 for the first.
    cv_auroc_alone : dict of str -> float
        Out-of-fold AUROC of the logistic pipeline on each detector alone.
    cv_auroc_combined : float
        Out-of-fold AUROC of the pipeline on all detectors together; NaN when withheld.
    combined_roc : RocResult
        ROC of the out-of-fold combined probability; its interval refits the
        combination in each resample (``ci_method`` says how it was made). Empty
        when withheld.
    gain : Estimate
        ``cv_auroc_combined - max(cv_auroc_alone)`` with its interval, every model refitted
        in each resample (above :data:`~sgi_core.evaluation.refit.REFIT_MAX_ROWS` rows:
        DeLong's, the fits held fixed); NaN interval without resamples (``n_boot=0``).
    level : {"gain", "none", "undefined", "withheld"}
        The verdict as data: ``"gain"`` when the combination beats the best single
        detector by at least :data:`NEGLIGIBLE_COMBINED_GAIN` and the gain's interval
        (when computed) leaves out 0; ``"withheld"`` below the events-per-feature floor
        (:func:`~sgi_core.evaluation.events_per_feature.withheld_reason`), with no
        verdict word.
    verdict : str
        One sentence; when withheld, the reason alone.
    """

    judgements: dict[str, ScoreJudgement]
    n: int
    n_splits: int
    spearman_with_first: dict[str, float]
    cv_auroc_alone: dict[str, float]
    cv_auroc_combined: float
    combined_roc: RocResult
    gain: Estimate
    level: str
    verdict: str

    @property
    def names(self) -> tuple[str, ...]:
        """The detectors' names, in order."""
        return tuple(self.judgements)

    @property
    def rocs(self) -> dict[str, RocResult]:
        """Each detector's ROC analysis by name (its judgement's), then the combination's unless it is withheld."""
        rocs = {name: judged.roc for name, judged in self.judgements.items()}
        return rocs if self.withheld else {**rocs, COMBINED_NAME: self.combined_roc}

    @property
    def combined_name(self) -> str:
        """The combination's score name (:data:`COMBINED_NAME`), as its row and curve are keyed."""
        return COMBINED_NAME

    @property
    def withheld(self) -> str:
        """Why the combination is withheld (below the events-per-feature floor), or ``""`` when it is not."""
        return self.verdict if self.level == WITHHELD else ""

    def to_frame(self) -> pd.DataFrame:
        """One row per detector by score name, then the combination (:data:`COMBINED_NAME`).

        The combination's row holds its numbers, or when it is withheld its reason in ``note``.
        """
        first = self.names[0]
        rows = [{"detector": name, "auroc": judged.auroc, "auroc_ci_lo": judged.auroc_ci[0],
                 "auroc_ci_hi": judged.auroc_ci[1], "spearman_with_" + first: self.spearman_with_first[name],
                 "cv_auroc": self.cv_auroc_alone[name], "cohens_d": judged.cohens_d,
                 "length_matched_auroc": judged.length_matched_auroc}
                for name, judged in self.judgements.items()]
        if self.withheld:
            rows.append({"detector": COMBINED_NAME, "note": self.withheld})
        else:
            rows.append({"detector": COMBINED_NAME, "auroc": self.combined_roc.auroc,
                         "auroc_ci_lo": self.combined_roc.auroc_ci[0], "auroc_ci_hi": self.combined_roc.auroc_ci[1],
                         "cv_auroc": self.cv_auroc_combined})
        return pd.DataFrame(rows)


#: Out-of-fold AUROC gain under which the combination is said not to help.
NEGLIGIBLE_COMBINED_GAIN = 0.005


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    both = ~np.isnan(a) & ~np.isnan(b)
    if both.sum() < 3 or np.ptp(a[both]) == 0 or np.ptp(b[both]) == 0:
        return math.nan
    return float(spearmanr(a[both], b[both]).statistic)


def _verdict(names, alone, combined, gain_ci) -> str:
    # The sentence names each score by its spec's label (a file's column as the file's, negated where it was).
    names = [spec_for(name).label for name in names]
    best = int(np.nanargmax(alone))
    gain = combined - alone[best]
    numbers = ", ".join(f"{n} {a:.3f}" for n, a in zip(names, alone))
    head = (f"Combined AUROC {combined:.3f} against {numbers} alone (out of fold)")
    if gain < NEGLIGIBLE_COMBINED_GAIN:
        return f"{head}: the combination does not beat {names[best]} alone."
    if gain_ci[0] <= 0:
        return (f"{head}: the gain of {gain:+.3f} over {names[best]} is not shown; its interval refitting the models, "
                f"[{gain_ci[0]:+.3f}, {gain_ci[1]:+.3f}], holds 0.")
    return f"{head}: the combination beats every detector alone by {gain:+.3f} over {names[best]}."


def _refit_intervals(features, y, groups, combined_prob, alone_probs, *, n_boot: int, n_splits: int, seed: int):
    """The combination's ROC with its refit interval, and the refit interval of its gain over the best model alone
    with how it was made."""
    if n_boot == 0:
        return roc_analysis(y, combined_prob, n_boot=0), (math.nan, math.nan), ""
    if len(y) > REFIT_MAX_ROWS:
        roc = roc_analysis(y, combined_prob, n_boot=n_boot, seed=seed)
        best = int(np.argmax([roc_auc_score(y, prob) for prob in alone_probs]))
        return (replace(roc, ci_method=roc.ci_method + HELD_FIXED),
                delong_test(y, combined_prob, alone_probs[best]).ci, "DeLong" + HELD_FIXED)
    k = features.shape[1]
    replicates = refit_replicates(features, y, groups=groups, column_sets=[*([j] for j in range(k)), range(k)],
                                  n_splits=n_splits, n_boot=min(n_boot, REFIT_N_BOOT), seed=seed)
    aurocs = np.array([[rank_auroc(y[rows], prob) for prob in probs] for rows, probs in replicates]).reshape(-1, k + 1)
    roc = roc_analysis(y, combined_prob, n_boot=0)
    roc = replace(roc, auroc_ci=separation_floor(roc.auroc, roc.n_pos, roc.n_neg, percentile_interval(aurocs[:, -1]),
                                                 confidence=0.95),
                  ci_method=REFIT_CI_NAME, n_boot=len(replicates))
    return roc, percentile_interval(aurocs[:, -1] - aurocs[:, :-1].max(axis=1)), REFIT_CI_NAME


@validates_inputs
def compare_detectors(scores: dict, y_true, *, lengths=None, groups=None, n_splits: int = 5, n_boot: int = 1000,
                      seed: int = 0, judgements: dict | None = None) -> DetectorComparison:
    """Compare detector scores alone and combined.

    Parameters
    ----------
    scores : dict of str -> array_like of shape (n,)
        Oriented scores (higher = grounded) by registry name, e.g. ``{"sgi": ..., "neg_judge_halluc": ...}``.
        NaN = row not scored by that detector.
    y_true : array_like of shape (n,)
        1 = grounded, 0 = hallucinated, NaN = unlabelled.
    n_splits : int, default 5
    n_boot : int, default 1000
        Resamples of each interval; the combination's refit at most
        :data:`~sgi_core.evaluation.refit.REFIT_N_BOOT` of them.
    lengths : array_like of shape (n,), optional
        Response lengths: each detector then also gets its length-matched AUROC.
    groups : array_like of shape (n,), optional
        Question group of each row (:func:`sgi_core.detectors.folds.question_groups`):
        the folds never split one. Without it every row is its own group.
    seed : int, default 0
    judgements : dict of str -> ScoreJudgement, optional
        Scores of ``scores`` already judged (an
        :attr:`~sgi_core.evaluation.report.EvaluationReport.judgements` entry: the same
        values, ``n_boot`` and ``seed``): taken as they are, never judged again. Each
        other score is judged once (:func:`~sgi_core.evaluation.judgement.judge_score`).

    Returns
    -------
    DetectorComparison
        Cross-validated parts are NaN, with a warning, when a class has fewer
        labelled rows than ``n_splits``. With fewer than
        ``MIN_EVENTS_PER_FEATURE * len(scores)`` rows of the smaller class the
        combination is not fitted: its parts are NaN, ``level`` is ``"withheld"`` and
        ``verdict`` the reason; each score alone is judged as ever.

    Notes
    -----
    A detector score is any numeric column a file carries (an LLM judge's answer
    consistency, RAGAS faithfulness, an NLI probability, ...). It is first oriented so
    that **higher = grounded** (a score where higher means hallucinated is negated), and
    then gets the same ROC, calibration and threshold tools as SGI.

    Each score alone is judged by :func:`sgi_core.evaluation.judgement.judge_score`, as
    SGI's other detectors are. The combination is a later stage: a logistic regression
    (grounded = 1) on the oriented scores, each mapped to normal quantiles on the
    training fold so that SGI's rare huge values (response = context) do not dominate.
    Its AUROC is measured out of fold on folds that never split a question group
    (:func:`sgi_core.detectors.folds.crossfit_folds`, the folds of the cross-fitted
    detectors), the same folds as each score alone through the same pipeline, so the
    comparison is like for like. Having been fitted on the labels it is judged on, the
    combination gets intervals that refit it in every bootstrap resample
    (:mod:`sgi_core.evaluation.refit`): its AUROC's, and that of its gain over the best
    detector alone, which must leave out 0 before the verdict calls it a gain. With fewer
    than :data:`~sgi_core.evaluation.events_per_feature.MIN_EVENTS_PER_FEATURE` rows of the
    smaller class per score it is not fitted at all but withheld
    (:mod:`sgi_core.evaluation.events_per_feature`), its reason in place of its numbers.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([1.0, 0.0], 200)
    >>> res = compare_detectors({"a": y + rng.normal(size=400), "b": y + rng.normal(size=400)}, y, n_boot=0)
    >>> res.gain.value > 0.02, list(res.judgements)
    (True, ['a', 'b'])
    """
    if len(scores) < 1:
        raise SGIInputError("compare_detectors needs at least one score")
    n_splits = check_int(n_splits, "n_splits", "compare_detectors", minimum=2)
    labels = as_labels(y_true)
    names = tuple(scores)
    matrix = np.column_stack([as_scores(scores[name], name=name, n=len(labels)) for name in names])
    spearman = {name: _spearman(matrix[:, 0], matrix[:, j]) for j, name in enumerate(names)}
    length_values = None if lengths is None else as_scores(lengths, name="lengths", n=len(labels))
    known = judgements or {}
    judgements = {name: known[name] if name in known else
                  judge_score(labels, matrix[:, j], lengths=length_values, n_boot=n_boot, seed=seed)
                  for j, name in enumerate(names)}
    group_ids = np.arange(len(labels)) if groups is None else np.asarray(groups).ravel()
    if len(group_ids) != len(labels):
        raise SGIInputError(f"'groups' has {len(group_ids)} values but 'y_true' has {len(labels)}", column="groups")

    keep = ~np.isnan(labels) & ~np.isnan(matrix).any(axis=1)
    y = labels[keep]
    features = matrix[keep]
    n_min = int(min((y == 1).sum(), (y == 0).sum()))
    nan_roc = RocResult.undefined(int((y == 1).sum()), int((y == 0).sum()), 0)
    if n_min < n_splits:
        warn_undefined(f"combining detectors needs at least {n_splits} labelled rows of each class; "
                       f"the smaller class has {n_min}")
        return DetectorComparison(judgements, int(keep.sum()), n_splits, spearman, dict.fromkeys(names, math.nan),
                                  math.nan, nan_roc, Estimate(math.nan), "undefined",
                                  f"undefined: too few labelled rows ({n_min} in the smaller class)")
    folds = crossfit_folds(group_ids[keep], y_true=y, n_folds=n_splits, seed=seed)
    withheld = withheld_reason(y, n_features=len(names))
    column_sets = [[j] for j in range(len(names))] + ([] if withheld else [range(len(names))])
    probs = out_of_fold_probabilities(features, y, folds, column_sets, seed=seed)
    alone_probs = probs[:len(names)]
    alone = np.array([roc_auc_score(y, prob) for prob in alone_probs])
    cv_alone = {name: float(value) for name, value in zip(names, alone)}
    if withheld:
        return DetectorComparison(judgements, len(y), n_splits, spearman, cv_alone, math.nan, nan_roc,
                                  Estimate(math.nan), WITHHELD, withheld)
    combined_prob = probs[-1]
    combined = float(roc_auc_score(y, combined_prob))
    combined_roc, gain_ci, gain_method = _refit_intervals(features, y, group_ids[keep], combined_prob, alone_probs,
                                                          n_boot=n_boot, n_splits=n_splits, seed=seed)
    gain = float(combined - alone.max())
    return DetectorComparison(
        judgements=judgements,
        n=len(y),
        n_splits=n_splits,
        spearman_with_first=spearman,
        cv_auroc_alone=cv_alone,
        cv_auroc_combined=combined,
        combined_roc=combined_roc,
        gain=Estimate(gain, gain_ci, gain_method),
        level="gain" if gain >= NEGLIGIBLE_COMBINED_GAIN and not gain_ci[0] <= 0 else "none",
        verdict=_verdict(names, alone, combined, gain_ci),
    )
