"""The registered detector families on a scored table, judged like SGI: what ``report --detectors`` runs.

Every family of :data:`sgi_core.detectors.registry.FAMILIES` is computed, each score judged by
:func:`sgi_core.evaluation.judgement.judge_score`, and a ``combined`` detector shows what the geometry
adds to trivial features (:func:`detector_report` gives the protocol).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sgi_core.detectors.folds import question_groups
from sgi_core.detectors.registry import COMBINED, FAMILIES, DetectorInputs, score_specs
from sgi_core.embedding import EmbeddingCache, Encoder
from sgi_core.errors import SGIInputError
from sgi_core.evaluation.events_per_feature import withheld_reason
from sgi_core.evaluation.judgement import ScoreJudgement, judge_score
from sgi_core.evaluation.refit import REFIT_N_BOOT, RefitComparison, judge_combined, refit_auroc_difference
from sgi_core.io.triples import TripleTable
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.scores.baselines import response_length
from sgi_core.scores.oriented import oriented_scores
from sgi_core.scores.registry import BASELINES
from sgi_core.scores.selection import judged_scores
from sgi_core.stats.crossval import out_of_fold_probability
from sgi_core.stats.folds import crossfit_folds


@dataclass(frozen=True)
class DetectorReport(JsonResult):
    """Every computed detector of one model, and their out-of-fold combination.

    Attributes
    ----------
    model : str
    kinds : tuple of str
        The families computed (:data:`~sgi_core.detectors.registry.FAMILIES`).
    n_folds : int
        Question-group folds of the cross-fitted families and of ``combined``.
    detectors : dict of str -> ScoreJudgement
        Each judged score by its registry (oriented) name, as
        :attr:`~sgi_core.evaluation.report.EvaluationReport.judgements` keys it, in the chooser's order
        (:func:`~sgi_core.scores.selection.judged_scores`), then ``combined`` unless it is withheld;
        :func:`~sgi_core.evaluation.report.with_families` adds them to the file's report.
    combined_features : tuple of str
    withheld : dict of str -> str
        Each withheld score (``combined`` below the events-per-feature floor) and its
        reason; a withheld score has no judgement, no number and no verdict word.
    """

    model: str
    kinds: tuple[str, ...]
    n_folds: int
    detectors: dict[str, ScoreJudgement]
    combined_features: tuple[str, ...]
    withheld: dict[str, str] = field(default_factory=dict)


def check_kinds(kinds) -> tuple[str, ...]:
    """The family names ``kinds`` as a tuple, refused (before any model loads) when one is not registered."""
    kinds = tuple(kinds)
    unknown = [kind for kind in kinds if kind not in FAMILIES]
    if unknown:
        raise SGIInputError(f"unknown detector family {', '.join(map(repr, unknown))}",
                            hint=f"Choose among {', '.join(FAMILIES)}")
    return kinds


#: The families computed when none are named: every one that needs no resource the user must give.
DEFAULT_KINDS = tuple(name for name, family in FAMILIES.items() if family.resource is None)


def detector_scores(table: TripleTable, scored: pd.DataFrame, encoder: Encoder, *, kinds=DEFAULT_KINDS,
                    cache: EmbeddingCache | None = None, batch_size: int = 64, n_folds: int = 5,
                    seed: int = 0, resources: Mapping[str, tuple] | None = None,
                    ) -> tuple[pd.DataFrame, dict[str, np.ndarray], np.ndarray]:
    """Per-row judged scores of the families ``kinds`` on a scored table.

    ``resources`` are the loaded resources the families read, by field
    (:attr:`~sgi_core.detectors.registry.DetectorInputs.resources`; e.g. the ``grounding``
    family's models, whose judged scores are two per model).

    Returns
    -------
    scores : DataFrame
        Indexed like ``table.frame``: one column per judged score of each family, raw
        (as the family writes it; :class:`~sgi_core.scores.ScoreSpec`
        says how to orient it); NaN where a row could not be scored.
    leaky : dict of str -> ndarray
        The cross-fitted scores under the leaky protocol.
    folds : ndarray of int
        Question-group fold of each row, shared by every cross-fitted family; -1 for
        rows not scored.
    """
    kinds = check_kinds(kinds)
    labels = table.frame["label"].to_numpy(dtype=np.float64)
    groups = question_groups(table.frame)
    scorable = scored["sgi"].notna().to_numpy()
    folds = np.full(table.n_rows, -1, dtype=np.int64)
    folds[scorable] = crossfit_folds(groups[scorable], y_true=labels[scorable], n_folds=n_folds, seed=seed)
    inputs = DetectorInputs(table, encoder, cache=cache, batch_size=batch_size, labels=labels, folds=folds,
                            resources=resources or {})
    out = pd.DataFrame(index=table.frame.index)
    leaky = {}
    for kind in kinds:
        family = FAMILIES[kind]
        computed = family.compute(inputs)
        for spec in computed.scores or family.scores:
            out[spec.name] = computed.columns[spec.name].to_numpy(dtype=np.float64)
        leaky.update(computed.leaky)
    return out, leaky, folds


def detector_report(table: TripleTable, scored: pd.DataFrame, encoder: Encoder, *, model: str,
                    kinds=DEFAULT_KINDS, cache: EmbeddingCache | None = None, batch_size: int = 64,
                    n_folds: int = 5, n_boot: int = 1000, n_refit: int = REFIT_N_BOOT,
                    seed: int = 0, resources: Mapping[str, tuple] | None = None) -> tuple[DetectorReport, pd.DataFrame]:
    """Compute the families ``kinds`` and judge each score, and their combination, against the labels.

    Each score's intervals come from ``n_boot`` resamples; the combination's refit its
    logistic model in each of ``n_refit`` resamples (:func:`~sgi_core.evaluation.refit.judge_combined`),
    since it was fitted on the labels it is judged on. Below the events-per-feature
    floor over the rows it would be fitted on, the combination is withheld
    (``report.withheld["combined"]`` gives the reason).

    Returns
    -------
    report : DetectorReport
    scores : DataFrame
        The per-row scores, raw and by column name (:func:`detector_scores`) and, unless withheld, ``combined``
        (P(grounded) out of fold, NaN on unlabelled rows).

    Notes
    -----
    The families are those of :data:`sgi_core.detectors.registry.FAMILIES` (reference-set
    displacement detectors cross-fitted by question group, with the leaky protocol
    beside them; label-free claim-level support; ...). Every judged score goes through
    :func:`sgi_core.evaluation.judgement.judge_score`: AUROC and Cohen's d with their
    intervals and the length-matched AUROC. A ``combined`` detector is a logistic model
    over SGI, the three angles, the computed scores, response length and lexical
    groundedness, predicted out of fold on the same question-group folds as the
    cross-fitted families, so a user sees what the geometry adds to trivial features.
    Its intervals, and its paired comparison with any other score
    (:func:`compare_with_combined`), refit the combination in every bootstrap resample
    (:mod:`sgi_core.evaluation.refit`): it was fitted on the labels it is judged on. The
    cross-fitted families' scores enter it as computed; their own reference sets are not
    rebuilt in the resamples. With fewer than
    :data:`~sgi_core.evaluation.events_per_feature.MIN_EVENTS_PER_FEATURE` labelled rows of
    the smaller class per feature it is withheld: not fitted, not judged, no per-row
    column, and the report records why (:func:`~sgi_core.evaluation.events_per_feature.withheld_reason`).
    """
    scores, leaky, folds = detector_scores(table, scored, encoder, kinds=kinds, cache=cache,
                                           batch_size=batch_size, n_folds=n_folds, seed=seed,
                                           resources=resources)
    labels = table.frame["label"].to_numpy(dtype=np.float64)
    lengths = response_length(table.frame["response"])
    protocols = {spec.name: FAMILIES[kind].protocol for kind in kinds for spec in FAMILIES[kind].scores}
    # Each score by its family's spec; one named by its family's resources (a grounding model's) by the registry's.
    families = score_specs()
    specs = {spec.name: spec for spec in judged_scores((), score=None, trivial=False,
                                                       computed=[families.get(name, name) for name in scores.columns])}
    oriented = oriented_scores(scores, list(specs.values()))
    results = {}
    for spec in specs.values():
        name = spec.name
        results[spec.oriented_name] = judge_score(labels, oriented[spec.oriented_name], lengths=lengths,
                                    protocol=protocols.get(name, "label-free"),
                                    leaky_score=spec.oriented(leaky[name]) if name in leaky else None,
                                    n_boot=n_boot, seed=seed)
    features = combination_features(table, scored, scores)
    usable = ~np.isnan(labels) & (folds >= 0) & scored["sgi"].notna().to_numpy()
    withheld = withheld_reason(labels[usable], n_features=features.shape[1])
    if not withheld:
        scores[COMBINED.name], results[COMBINED.name] = _judged_combination(
            table, features, labels, usable, folds, lengths, n_folds=n_folds, n_boot=n_boot, n_refit=n_refit, seed=seed)
    report = DetectorReport(model, tuple(kinds), n_folds, results, tuple(features.columns),
                            {COMBINED.name: withheld} if withheld else {})
    return report, scores


def _judged_combination(table, features, labels, usable, folds, lengths, *, n_folds: int, n_boot: int, n_refit: int,
                        seed: int) -> tuple[np.ndarray, ScoreJudgement]:
    """``combined``'s out-of-fold probability on the ``usable`` rows (NaN elsewhere) and its refit judgement."""
    combined = np.full(len(labels), np.nan)
    if len(np.unique(labels[usable])) == 2 and len(np.unique(folds[usable])) > 1:
        combined[usable] = out_of_fold_probability(features.to_numpy()[usable], labels[usable], folds[usable],
                                                   seed=seed)
    else:
        warn_undefined("the combined detector needs labelled rows of both classes in two or more folds")
    return combined, judge_combined(labels, combined, features.to_numpy(), lengths=lengths,
                                    groups=question_groups(table.frame), n_splits=n_folds, n_boot=n_boot,
                                    n_refit=n_refit, seed=seed)


def combination_features(table: TripleTable, scored: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """What ``combined`` is fitted on: SGI, the three angles, the baselines, then the computed scores.

    The baselines are those of :data:`~sgi_core.scores.registry.BASELINES`.

    Each oriented and named as :func:`~sgi_core.scores.oriented.oriented_scores` gives it
    (``neg_theta_rc``, ``neg_response_length``): a logistic model is indifferent to a
    feature's sign.
    """
    names = ("sgi", "theta_qc", "theta_rq", "theta_rc", *BASELINES)
    features = oriented_scores(scored.assign(response=table.frame["response"].to_numpy(),
                                             context=table.frame["context"].to_numpy()), names)
    return features.set_axis(scores.index).join(scores.drop(columns="combined", errors="ignore"))


def compare_with_combined(table: TripleTable, scored: pd.DataFrame, scores: pd.DataFrame, other, *,
                          refitted: str = "a", n_folds: int = 5, n_boot: int = REFIT_N_BOOT,
                          seed: int = 0) -> RefitComparison:
    """``combined`` (a column of ``scores`` from :func:`detector_report`) against another oriented score.

    The combination was fitted on these labels, so DeLong's test, which holds both
    scores fixed, does not apply: :func:`~sgi_core.evaluation.refit.refit_auroc_difference`
    refits it in every resample, on the question groups and with the folds of
    :func:`detector_report` (``refitted`` says whether it is score A or B).

    Raises
    ------
    SGIInputError
        When ``scores`` has no ``combined`` column: :func:`detector_report` withheld it.
    """
    if COMBINED.name not in scores:
        raise SGIInputError("the combined detector was withheld, so there is nothing to compare with it",
                            hint="The report's 'withheld' says why; compare two scores that are not withheld")
    features = combination_features(table, scored, scores)
    return refit_auroc_difference(table.frame["label"].to_numpy(dtype=np.float64), scores["combined"].to_numpy(),
                                  features.to_numpy(), other, refitted=refitted, groups=question_groups(table.frame),
                                  n_splits=n_folds, n_boot=n_boot, seed=seed)
