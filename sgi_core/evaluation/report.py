"""One model's full evaluation of a scored frame: every statistic the paper reports, and the confounds.

:func:`evaluate` takes the output of :func:`sgi_core.scoring.score_table` (or any
frame with a label column and a score column) and returns an
:class:`EvaluationReport`: effect size, ROC, the theta(q,c) strata (Table 2),
length strata of question, context and response (Table 3; the response strata
hold SGI's AUROC within response-length strata), the angle effects (Table 5), the
trivial baselines with their ROC curves, whether the score adds anything beyond
response length, and its AUROC with the classes matched on response length.
Caveats met on the way (one class, undefined strata, degenerate rows) are kept as
``notes``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.evaluation.baselines import (
    BASELINE_DESCRIPTIONS,
    BeyondLengthResult,
    baseline_scores,
    beyond_length,
    response_length,
)
from sgi_core.evaluation.judgement import judge_score
from sgi_core.evaluation.strata import StrataResult, length_strata, theta_qc_strata
from sgi_core.results import JsonResult, UndefinedStatisticWarning
from sgi_core.stats.checks import as_labels, as_scores, inputs_checked, validates_inputs
from sgi_core.stats.effect_size import AngleEffectsResult, EffectSizeResult, angle_effects
from sgi_core.stats.length_matched import LengthMatchedResult
from sgi_core.stats.ranking import RocResult

#: Texts whose character lengths are stratified, in the paper's Table 3 order.
LENGTH_COLUMNS = ("question", "context", "response")
#: Angle columns a scored frame carries (radians), checked once with the score.
ANGLE_COLUMNS = ("theta_qc", "theta_rq", "theta_rc")


@dataclass(frozen=True)
class BaselineResult(JsonResult):
    """A baseline score (higher = grounded) judged by :func:`~sgi_core.evaluation.judgement.judge_score`.

    ``auroc``, ``auroc_ci``, ``cohens_d`` and ``cohens_d_ci`` are its judgement; ``roc``
    is the judgement's ROC analysis (curve and interval), computed once.
    """

    name: str
    description: str
    auroc: float
    auroc_ci: tuple[float, float]
    cohens_d: float
    cohens_d_ci: tuple[float, float]
    roc: RocResult


@dataclass(frozen=True)
class EvaluationReport(JsonResult):
    """Everything :func:`evaluate` measures for one score column.

    Attributes
    ----------
    score_col : str
    n_rows, n_scored : int
        Rows in the frame; rows with a score.
    n_valid, n_halluc : int
        Scored rows labelled grounded / hallucinated.
    n_degenerate : int
        Scored rows whose ``sgi_status`` says the geometry is degenerate. They are
        left out of ``effect_size`` (means and d: a response equal to its context
        has an unbounded SGI that would swamp both) and kept in every rank
        statistic (AUROC, strata, thresholds), which such values cannot distort.
    notes : tuple of str
        Why some parts are NaN, and other caveats.
    effect_size : EffectSizeResult
    roc : RocResult
    theta_qc_strata : StrataResult or None
        None when the frame has no ``theta_qc`` column.
    length_strata : tuple of StrataResult
        Question, context and response character-length strata (those present).
    angle_effects : AngleEffectsResult or None
        None without ``theta_rq`` / ``theta_rc`` columns.
    baselines : tuple of BaselineResult
    beyond_length : BeyondLengthResult or None
        None without a ``response`` column.
    length_matched : LengthMatchedResult or None
        The score's AUROC with the classes matched on response length; None without a
        ``response`` column.
    """

    score_col: str
    n_rows: int
    n_scored: int
    n_valid: int
    n_halluc: int
    n_degenerate: int
    notes: tuple[str, ...]
    effect_size: EffectSizeResult
    roc: RocResult
    theta_qc_strata: StrataResult | None
    length_strata: tuple[StrataResult, ...]
    angle_effects: AngleEffectsResult | None
    baselines: tuple[BaselineResult, ...]
    beyond_length: BeyondLengthResult | None
    length_matched: LengthMatchedResult | None = None

    def summary(self) -> dict:
        """The headline numbers (Table 1 row), JSON-safe."""
        es, roc = self.effect_size.to_dict(), self.roc.to_dict()
        return {
            "n": self.n_scored,
            "n_valid": self.n_valid,
            "n_halluc": self.n_halluc,
            f"{self.score_col}_mean_valid": es["mean_valid"],
            f"{self.score_col}_mean_halluc": es["mean_halluc"],
            "cohens_d": es["cohens_d"],
            "cohens_d_ci": es["cohens_d_ci"],
            "hedges_g": es["hedges_g"],
            "welch_p": es["welch_p"],
            "auroc": roc["auroc"],
            "auroc_ci": roc["auroc_ci"],
        }

    def strata_by_name(self, name: str) -> StrataResult:
        """The length strata of ``question``, ``context`` or ``response``."""
        for strata in self.length_strata:
            if strata.name == name:
                return strata
        raise KeyError(name)


def _baselines(scores: pd.DataFrame, labels: np.ndarray, *, n_boot: int, seed: int) -> tuple[BaselineResult, ...]:
    out = []
    for name in scores.columns:
        values = scores[name].to_numpy(dtype=np.float64)
        judged = judge_score(labels, values, lengths=None, n_boot=n_boot, seed=seed)
        out.append(BaselineResult(name, BASELINE_DESCRIPTIONS[name], judged.auroc, judged.auroc_ci, judged.cohens_d,
                                  judged.cohens_d_ci, judged.roc))
    return tuple(out)


@validates_inputs
def evaluate(scored_frame: pd.DataFrame, *, score_col: str = "sgi", n_boot: int = 1000, seed: int = 0,
             baselines: pd.DataFrame | None = None) -> EvaluationReport:
    """Evaluate one score column against the labels of a scored frame.

    Parameters
    ----------
    scored_frame : DataFrame
        Needs ``label`` (1 grounded, 0 hallucinated, NaN unlabelled) and
        ``score_col`` (higher = grounded; NaN = not scored). Uses, when present,
        ``theta_qc``, ``theta_rq``, ``theta_rc``, ``question``, ``context``,
        ``response`` and ``sgi_status``.
    score_col : str, default "sgi"
    n_boot : int, default 1000
        Bootstrap resamples for the intervals of d, AUROC and the length-matched
        AUROC. Above :data:`~sgi_core.stats.bootstrap.BOOTSTRAP_MAX_ROWS`
        labelled rows the intervals are asymptotic instead (DeLong's for AUROC, the
        delta method's for d and the length-matched statistics); each result's
        ``ci_method`` and ``n_boot`` say which.
    seed : int, default 0
    baselines : DataFrame, optional
        :func:`~sgi_core.evaluation.baselines.baseline_scores` of ``scored_frame``
        when the caller already has it (the word-overlap baseline is the slowest
        part on millions of rows); computed here otherwise.

    Returns
    -------
    EvaluationReport
        Works on unlabelled and one-class frames: the label parts are NaN and
        ``notes`` says why (one :class:`UndefinedStatisticWarning` sums them up).

    Examples
    --------
    >>> frame = pd.DataFrame({"label": [1, 1, 1, 0, 0, 0], "sgi": [1.3, 1.1, 1.2, 0.8, 1.0, 0.9]})
    >>> report = evaluate(frame, n_boot=0)
    >>> report.summary()["auroc"], round(report.summary()["cohens_d"], 6)
    (1.0, 3.0)
    """
    missing = [c for c in ("label", score_col) if c not in scored_frame.columns]
    if missing:
        raise SGIInputError(
            f"evaluation needs the columns {', '.join(missing)}",
            column=missing[0],
            hint="Score the file first (python -m sgi_core score) and keep its label column",
        )
    labels = as_labels(scored_frame["label"], name="label")
    scores = as_scores(scored_frame[score_col], name=score_col)
    has = set(scored_frame.columns)
    angles_of = {name: as_scores(scored_frame[name], name=name) for name in ANGLE_COLUMNS if name in has}
    scored = ~np.isnan(scores)
    degenerate = np.zeros(len(scores), dtype=bool)
    if "sgi_status" in has:
        degenerate = scored & scored_frame["sgi_status"].astype(str).str.startswith("degenerate").to_numpy()
    n_degenerate = int(degenerate.sum())

    with warnings.catch_warnings(record=True) as caught, inputs_checked():
        warnings.simplefilter("always", UndefinedStatisticWarning)
        # The score is judged as every score is (judge_score): AUROC, d and the length-matched AUROC at once.
        lengths_of_responses = response_length(scored_frame["response"]) if "response" in has else None
        judged = judge_score(labels, scores, lengths=lengths_of_responses, degenerate=degenerate, n_boot=n_boot,
                             seed=seed)
        es, roc, matched = judged.effect, judged.roc, judged.length_matched
        qc = (theta_qc_strata(angles_of["theta_qc"], labels, scores, degenerate=degenerate)
              if "theta_qc" in angles_of else None)
        lengths = tuple(
            length_strata(response_length(scored_frame[name]), labels, scores, name=name, degenerate=degenerate)
            for name in LENGTH_COLUMNS
            if name in has
        )
        angles = (angle_effects(angles_of["theta_rq"], angles_of["theta_rc"], labels)
                  if {"theta_rq", "theta_rc"} <= set(angles_of) else None)
        if {"response", "context"} <= has:
            baselines = _baselines(baseline_scores(scored_frame) if baselines is None else baselines, labels,
                                   n_boot=n_boot, seed=seed)
        else:
            baselines = ()
        beyond = (
            beyond_length(
                response_length(scored_frame["response"]), scores, labels, seed=seed,
                score_name="SGI" if score_col == "sgi" else score_col,
            )
            if "response" in has
            else None
        )
    notes = []
    for warning in caught:
        if issubclass(warning.category, UndefinedStatisticWarning):
            if str(warning.message) not in notes:
                notes.append(str(warning.message))
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if n_degenerate:
        notes.append(f"{n_degenerate} scored rows have degenerate geometry (see sgi_status); they are left out of "
                     "the means and Cohen's d (overall and in every stratum), and kept in the counts and AUROCs")
    if notes:
        warnings.warn(
            f"evaluation of '{score_col}' has {len(notes)} caveat{'s' * (len(notes) != 1)}; the first: {notes[0]}",
            UndefinedStatisticWarning,
            stacklevel=2,
        )
    return EvaluationReport(
        score_col=score_col,
        n_rows=len(scored_frame),
        n_scored=int(scored.sum()),
        n_valid=int((scored & (labels == 1.0)).sum()),
        n_halluc=int((scored & (labels == 0.0)).sum()),
        n_degenerate=n_degenerate,
        notes=tuple(notes),
        effect_size=es,
        roc=roc,
        theta_qc_strata=qc,
        length_strata=lengths,
        angle_effects=angles,
        baselines=baselines,
        beyond_length=beyond,
        length_matched=matched,
    )
