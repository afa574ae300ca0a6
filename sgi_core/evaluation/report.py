"""One file judged once: every selected score's judgement by registry name, the strata, the confounds and the notes.

:func:`evaluate` judges each score the chooser (:mod:`sgi_core.scores.selection`) names for a scored
frame into :attr:`EvaluationReport.judgements`; :func:`with_declared` and :func:`with_families` add
declared columns and the detector families' judgements without judging anything twice. The verdict,
the tables, the curves, both HTML reports and the pages read that one result.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.evaluation.beyond_length import BeyondLengthResult, beyond_length
from sgi_core.evaluation.judgement import ScoreJudgement, judge_score
from sgi_core.evaluation.strata import StrataResult, length_strata, theta_qc_strata
from sgi_core.results import JsonResult, UndefinedStatisticWarning
from sgi_core.scores.baselines import response_length
from sgi_core.scores.oriented import oriented_scores
from sgi_core.scores.registry import TRIVIAL, spec_for
from sgi_core.scores.selection import judged_scores, trivial_names
from sgi_core.stats.checks import as_labels, as_scores, inputs_checked, validates_inputs
from sgi_core.stats.effect_size import AngleEffectsResult, EffectSizeResult, angle_effects
from sgi_core.stats.length_matched import LengthMatchedResult
from sgi_core.stats.ranking import RocResult

#: Texts whose character lengths are stratified, in the paper's Table 3 order.
LENGTH_COLUMNS = ("question", "context", "response")
#: Angle columns a scored frame carries (radians), checked once with the score.
ANGLE_COLUMNS = ("theta_qc", "theta_rq", "theta_rc")


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
    judgements : dict of str -> ScoreJudgement
        Each judged score by registry (oriented) name, each once: ``score_col`` first (its
        AUROC, d and length-matched AUROC), then the trivial scores the frame allows
        (:func:`~sgi_core.scores.selection.trivial_names`, without length matching), then
        :attr:`detectors` (declared and carried columns; the detector families' scores and
        ``combined`` last once :func:`with_families` has added them), all oriented higher =
        grounded. Read :attr:`effect_size`, :attr:`roc`, :attr:`length_matched`,
        :attr:`baselines`, :attr:`detectors` and :attr:`held_fixed` from here.
    theta_qc_strata : StrataResult or None
        None when the frame has no ``theta_qc`` column.
    length_strata : tuple of StrataResult
        Question, context and response character-length strata (those present).
    angle_effects : AngleEffectsResult or None
        None without ``theta_rq`` / ``theta_rc`` columns.
    beyond_length : BeyondLengthResult or None
        None without a ``response`` column.
    """

    score_col: str
    n_rows: int
    n_scored: int
    n_valid: int
    n_halluc: int
    n_degenerate: int
    notes: tuple[str, ...]
    judgements: dict[str, ScoreJudgement]
    theta_qc_strata: StrataResult | None
    length_strata: tuple[StrataResult, ...]
    angle_effects: AngleEffectsResult | None
    beyond_length: BeyondLengthResult | None

    @property
    def effect_size(self) -> EffectSizeResult:
        """The score's effect size (degenerate rows left out)."""
        return self.judgements[self.score_col].effect

    @property
    def roc(self) -> RocResult:
        """The score's ROC analysis."""
        return self.judgements[self.score_col].roc

    @property
    def length_matched(self) -> LengthMatchedResult | None:
        """The score's AUROC with the classes matched on response length; None without a ``response`` column."""
        return self.judgements[self.score_col].length_matched

    @property
    def baselines(self) -> dict[str, ScoreJudgement]:
        """The trivial scores' judgements by name, in :data:`~sgi_core.scores.registry.TRIVIAL` order."""
        return {name: judged for name, judged in self.judgements.items() if name != self.score_col and name in TRIVIAL}

    @property
    def detectors(self) -> dict[str, ScoreJudgement]:
        """The other scores judged beside the score, by oriented name: the declared columns, then the registered,
        judge and grounding-model columns the frame carries (:func:`~sgi_core.scores.selection.judged_scores`)."""
        return {name: judged for name, judged in self.judgements.items()
                if name != self.score_col and name not in TRIVIAL}

    @property
    def held_fixed(self) -> dict[str, ScoreJudgement]:
        """The judgements the verdict reads, in its order: the score, the other scores but those fitted on the labels
        they are judged on (``combined``: a paired test holds both scores fixed), then the trivial scores."""
        fitted = {name for name in self.detectors if spec_for(name).family == "combined"}
        return {self.score_col: self.judgements[self.score_col],
                **{name: judged for name, judged in self.detectors.items() if name not in fitted},
                **self.baselines}

    @property
    def rocs(self) -> dict[str, RocResult]:
        """Every judged score's ROC analysis by name (the curves, and what the verdict reuses)."""
        return {name: judged.roc for name, judged in self.judgements.items()}

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


@validates_inputs
def evaluate(scored_frame: pd.DataFrame, *, score_col: str = "sgi", n_boot: int = 1000, seed: int = 0,
             baselines: pd.DataFrame | None = None, declared=()) -> EvaluationReport:
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
        :func:`~sgi_core.scores.oriented.oriented_scores` of ``scored_frame``'s
        baselines when the caller already has them (the word-overlap baseline is the
        slowest part on millions of rows); computed here otherwise.
    declared : iterable of ScoreSpec or str
        Columns of the frame declared as detectors (``report --detector``, the pages' detector
        columns; text as :func:`~sgi_core.scores.selection.declared_spec` reads it). They, and
        the registered, judge and grounding-model score columns the frame carries (the
        chooser, :func:`~sgi_core.scores.selection.judged_scores`; the angles are read in the
        angle effects), are each oriented by their spec and judged as the score is, length
        matching included, under their oriented names (:attr:`EvaluationReport.detectors`).

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
        judgements = {score_col: judge_score(labels, scores, lengths=lengths_of_responses, degenerate=degenerate,
                                             n_boot=n_boot, seed=seed)}
        qc = (theta_qc_strata(angles_of["theta_qc"], labels, scores, degenerate=degenerate)
              if "theta_qc" in angles_of else None)
        lengths = tuple(
            length_strata(response_length(scored_frame[name]), labels, scores, name=name, degenerate=degenerate)
            for name in LENGTH_COLUMNS
            if name in has
        )
        angles = (angle_effects(angles_of["theta_rq"], angles_of["theta_rc"], labels)
                  if {"theta_rq", "theta_rc"} <= set(angles_of) else None)
        trivial = [name for name in trivial_names(has) if name != score_col]
        given = baselines if baselines is not None else pd.DataFrame(index=scored_frame.index)
        oriented = oriented_scores(scored_frame, [name for name in trivial if name not in given.columns])
        for name in trivial:
            values = (given if name in given.columns else oriented)[name].to_numpy(dtype=np.float64)
            judgements[name] = judge_score(labels, values, lengths=None, n_boot=n_boot, seed=seed)
        judgements.update(_judged_columns(scored_frame, labels, lengths_of_responses, judgements, score_col=score_col,
                                          declared=declared, n_boot=n_boot, seed=seed))
        beyond = (beyond_length(lengths_of_responses, scores, labels, seed=seed, score_name=score_col)
                  if "response" in has else None)
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
        judgements=judgements,
        theta_qc_strata=qc,
        length_strata=lengths,
        angle_effects=angles,
        beyond_length=beyond,
    )


def _judged_columns(frame: pd.DataFrame, labels, lengths, judged: dict, *, score_col: str, declared, n_boot: int,
                    seed: int) -> dict:
    """Judgements of the chooser's columns of ``frame`` (declared ones included), in its order, each one ``judged``
    holds under its oriented name kept as it is."""
    has = set(frame.columns)
    trivial = set(trivial_names(has))
    out = {}
    for spec in judged_scores(has, score=score_col, trivial=False, declared=declared):
        if spec.name in trivial or spec.kind == "angle" or spec.oriented_name == score_col:
            continue
        out[spec.oriented_name] = judged.get(spec.oriented_name) or judge_score(
            labels, spec.oriented(spec.raw_values(frame)), lengths=lengths, n_boot=n_boot, seed=seed)
    return out


def with_declared(report: EvaluationReport, scored_frame: pd.DataFrame, declared, *, n_boot: int = 1000,
                  seed: int = 0) -> EvaluationReport:
    """``report`` (:func:`evaluate` of ``scored_frame``) as :func:`evaluate` would give it with ``declared``: the
    same judgements, in the same order, each one ``report`` holds kept, not made again (a declared direction
    replaces a column's own, as in the chooser).

    Examples
    --------
    >>> frame = pd.DataFrame({"label": [1, 1, 1, 0, 0, 0], "sgi": [1.3, 1.1, 1.2, 0.8, 1.0, 0.9],
    ...                       "mine": [0.1, 0.3, 0.2, 0.9, 0.7, 0.8]})
    >>> base = evaluate(frame, n_boot=0)
    >>> both = with_declared(base, frame, ["mine:hallucinated"], n_boot=0)
    >>> both.judgements["sgi"] is base.judgements["sgi"], round(both.judgements["neg_mine"].auroc, 3)
    (True, 1.0)
    """
    labels = as_labels(scored_frame["label"], name="label")
    lengths = response_length(scored_frame["response"]) if "response" in scored_frame.columns else None
    core = [report.score_col, *(name for name in trivial_names(scored_frame.columns) if name != report.score_col)]
    with inputs_checked():
        columns = _judged_columns(scored_frame, labels, lengths, report.judgements, score_col=report.score_col,
                                  declared=declared, n_boot=n_boot, seed=seed)
    return replace(report, judgements={**{name: report.judgements[name] for name in core if name in report.judgements},
                                       **columns})


def with_families(report: EvaluationReport, families: Mapping[str, ScoreJudgement]) -> EvaluationReport:
    """``report`` with the detector families' judgements among its own, so that the verdict reads them beside the rest.

    ``families`` is :attr:`~sgi_core.detectors.report.DetectorReport.detectors` (registry names,
    made on the rows of ``report`` with its ``n_boot`` and ``seed``). Nothing is judged again: a
    family's score the report already holds (its column carried by the file) takes the family's
    judgement in place, the others follow in the chooser's order
    (:func:`~sgi_core.scores.selection.judged_scores`), ``combined`` last.

    Examples
    --------
    >>> frame = pd.DataFrame({"label": [1, 1, 1, 0, 0, 0], "sgi": [1.3, 1.1, 1.2, 0.8, 1.0, 0.9]})
    >>> base = evaluate(frame, n_boot=0)
    >>> lsgi = judge_score(frame["label"], [3, 2, 1, 0, 5, 4], lengths=None, protocol="crossfit", n_boot=0)
    >>> merged = with_families(base, {"lsgi": lsgi})
    >>> list(merged.judgements), merged.judgements["lsgi"] is lsgi
    (['sgi', 'lsgi'], True)
    """
    if not families:
        return report
    ordered = judged_scores((), score=None, trivial=False, computed=[spec_for(name) for name in families])
    judgements = {name: families.get(name, judged) for name, judged in report.judgements.items()}
    judgements.update({spec.oriented_name: families[spec.oriented_name] for spec in ordered
                       if spec.oriented_name not in judgements})
    return replace(report, judgements=judgements)
