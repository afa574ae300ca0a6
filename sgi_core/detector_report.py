"""The seed's other detectors on a scored table, judged like SGI: what ``report --detectors`` runs.

Two families (see :mod:`sgi_core.detectors`):

- ``reference``: displacement consistency, expected response deviation,
  displacement magnitude, tangent space residual and LSGI, each scored out of fold
  (cross-fitting by question group) and, for comparison only, under the leaky
  protocol whose reference set holds the scored row (``auroc_leaky``);
- ``claims``: the weakest and the mean response sentence's support in the context
  (label-free).

Each score gets AUROC with its bootstrap interval, Cohen's d and the length-matched
AUROC. A ``combined`` detector is a logistic model over SGI, the three angles, the
computed detectors, response length and lexical groundedness, predicted out of fold
on the same question-group folds as the reference detectors, so a user sees what the
geometry adds to trivial features.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.data import TripleTable
from sgi_core.detectors import REFERENCE_DETECTORS, claim_scores, crossfit_folds, question_groups, reference_scores
from sgi_core.embedding import EmbeddingCache, Encoder
from sgi_core.errors import SGIInputError
from sgi_core.evaluation import effect_size, roc_analysis
from sgi_core.evaluation.baselines import lexical_groundedness, response_length
from sgi_core.evaluation.crossval import out_of_fold_probability
from sgi_core.evaluation.length_matched import length_matched_auroc
from sgi_core.render.numbers import format_ci
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.scoring import embed_table

#: Detector families ``report --detectors`` accepts.
KINDS = ("reference", "claims")
#: Claim-level scores reported (the issue's names; the sentence-SGI columns stay in ``score`` output).
CLAIM_DETECTORS = ("claim_min_support", "claim_mean_support")
#: Features of the combined detector besides the computed detectors.
BASE_FEATURES = ("sgi", "theta_qc", "theta_rq", "theta_rc", "response_length", "lexical_groundedness")


@dataclass(frozen=True)
class DetectorScore(JsonResult):
    """One detector judged against the labels (scores oriented high = grounded).

    Attributes
    ----------
    protocol : str
        ``"crossfit"`` (out of fold), ``"label-free"`` or ``"combined (out of fold)"``.
    auroc, auroc_ci : float, (float, float)
        Grounded positive, percentile bootstrap interval.
    cohens_d : float
        Valid minus hallucinated, ddof=1.
    auroc_leaky : float
        The same detector under the leaky protocol (reference set holding the scored
        row); NaN for detectors that need no reference set.
    length_matched_auroc, length_matched_auroc_ci : float, (float, float)
        AUROC after coarsened exact matching on response length.
    """

    protocol: str
    auroc: float
    auroc_ci: tuple[float, float]
    cohens_d: float
    auroc_leaky: float
    length_matched_auroc: float
    length_matched_auroc_ci: tuple[float, float]


@dataclass(frozen=True)
class DetectorReport(JsonResult):
    """Every computed detector of one model, and their out-of-fold combination."""

    model: str
    kinds: tuple[str, ...]
    n_folds: int
    detectors: dict[str, DetectorScore]
    combined_features: tuple[str, ...]

    def to_text(self) -> str:
        rows = [{"detector": name, "protocol": s.protocol, "auroc": s.auroc, "auroc_ci": format_ci(s.auroc_ci),
                 "auroc_leaky": s.auroc_leaky, "length_matched": s.length_matched_auroc, "cohens_d": s.cohens_d}
                for name, s in self.detectors.items()]
        table = pd.DataFrame(rows).to_string(index=False, float_format=lambda x: f"{x:.3f}", na_rep="")
        return (f"Detectors beyond SGI ({self.model}; reference sets from other question groups, "
                f"{self.n_folds} folds; auroc_leaky lets the reference set hold the scored row)\n{table}\n"
                f"combined = out-of-fold logistic model over {', '.join(self.combined_features)}")


def _judge(name: str, protocol: str, labels, values, lengths, *, n_boot: int, seed: int,
           leaky=None) -> DetectorScore:
    roc = roc_analysis(labels, values, n_boot=n_boot, seed=seed)
    es = effect_size(labels, values, n_boot=0)
    matched = length_matched_auroc(labels, values, lengths, n_boot=n_boot, seed=seed)
    leaky_auroc = roc_analysis(labels, leaky, n_boot=0).auroc if leaky is not None else math.nan
    return DetectorScore(protocol, roc.auroc, roc.auroc_ci, es.cohens_d, leaky_auroc, matched.auroc,
                         matched.auroc_ci)


def detector_scores(table: TripleTable, scored: pd.DataFrame, encoder: Encoder, *, kinds=KINDS,
                    cache: EmbeddingCache | None = None, batch_size: int = 64, n_folds: int = 5,
                    seed: int = 0) -> tuple[pd.DataFrame, dict[str, np.ndarray], np.ndarray]:
    """Per-row detector scores of a scored table.

    Returns
    -------
    scores : DataFrame
        Indexed like ``table.frame``: one column per reference detector (out of fold)
        and per claim score; NaN where a row could not be scored.
    leaky : dict of str -> ndarray
        The reference detectors under the leaky protocol.
    folds : ndarray of int
        Fold of each row (question groups never split), -1 for rows not scored.
    """
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown:
        raise SGIInputError(f"unknown detector family {', '.join(map(repr, unknown))}",
                            hint=f"Choose among {', '.join(KINDS)}")
    n = table.n_rows
    labels = table.frame["label"].to_numpy(dtype=np.float64)
    groups = question_groups(table.frame)
    out = pd.DataFrame(index=table.frame.index)
    leaky, folds = {}, np.full(n, -1, dtype=np.int64)
    if "reference" in kinds:
        q_emb, c_emb, r_emb, scorable = embed_table(table, encoder, cache=cache, batch_size=batch_size)
        rows = np.flatnonzero(scorable)
        honest = reference_scores(q_emb, c_emb, r_emb, labels[rows], groups[rows], n_folds=n_folds, seed=seed)
        dishonest = reference_scores(q_emb, c_emb, r_emb, labels[rows], groups[rows], protocol="leaky")
        folds[rows] = honest.fold
        for name in REFERENCE_DETECTORS:
            out[name] = np.nan
            out.loc[scorable, name] = honest.scores[name]
            leaky[name] = np.full(n, np.nan)
            leaky[name][rows] = dishonest.scores[name]
    else:
        ok = scored["sgi"].notna().to_numpy()
        folds[ok] = crossfit_folds(groups[ok], y_true=labels[ok], n_folds=n_folds, seed=seed)
    if "claims" in kinds:
        claims = claim_scores(table.frame, encoder, cache=cache, batch_size=batch_size)
        for name in CLAIM_DETECTORS:
            out[name] = claims[name].to_numpy()
    return out, leaky, folds


def detector_report(table: TripleTable, scored: pd.DataFrame, encoder: Encoder, *, model: str, kinds=KINDS,
                    cache: EmbeddingCache | None = None, batch_size: int = 64, n_folds: int = 5,
                    n_boot: int = 1000, seed: int = 0) -> tuple[DetectorReport, pd.DataFrame]:
    """Compute the detectors of ``kinds`` and judge each one, and their combination, against the labels.

    Returns
    -------
    report : DetectorReport
    scores : DataFrame
        The per-row scores (:func:`detector_scores`) and ``combined`` (P(grounded)
        out of fold, NaN on unlabelled rows).
    """
    scores, leaky, folds = detector_scores(table, scored, encoder, kinds=kinds, cache=cache,
                                           batch_size=batch_size, n_folds=n_folds, seed=seed)
    labels = table.frame["label"].to_numpy(dtype=np.float64)
    lengths = response_length(table.frame["response"])
    results = {}
    for name in scores.columns:
        protocol = "crossfit" if name in REFERENCE_DETECTORS else "label-free"
        results[name] = _judge(name, protocol, labels, scores[name].to_numpy(), lengths, n_boot=n_boot, seed=seed,
                               leaky=leaky.get(name))
    features = pd.DataFrame({
        "sgi": scored["sgi"].to_numpy(dtype=np.float64), "theta_qc": scored["theta_qc"].to_numpy(dtype=np.float64),
        "theta_rq": scored["theta_rq"].to_numpy(dtype=np.float64),
        "theta_rc": scored["theta_rc"].to_numpy(dtype=np.float64), "response_length": lengths,
        "lexical_groundedness": lexical_groundedness(table.frame["response"], table.frame["context"]),
    }, index=scores.index).join(scores)
    usable = ~np.isnan(labels) & (folds >= 0) & scored["sgi"].notna().to_numpy()
    combined = np.full(len(labels), np.nan)
    if len(np.unique(labels[usable])) == 2 and len(np.unique(folds[usable])) > 1:
        combined[usable] = out_of_fold_probability(features.to_numpy()[usable], labels[usable], folds[usable])
    else:
        warn_undefined("the combined detector needs labelled rows of both classes in two or more folds")
    scores["combined"] = combined
    results["combined"] = _judge("combined", "combined (out of fold)", labels, combined, lengths, n_boot=n_boot,
                                 seed=seed)
    report = DetectorReport(model, tuple(kinds), n_folds, results, tuple(features.columns))
    return report, scores
