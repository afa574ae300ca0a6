"""Retrieval and generation judged together: Recall@K, MRR, diagnosis, SGI by retrieval hit.

The paper leaves open whether SGI still separates grounded from hallucinated
answers when the retrieved context is not the relevant one. With ranked retrieved
ids and relevant ids per row this report answers it directly: SGI's d and AUROC
among rows whose top ``K`` holds a relevant document (hit) and among those whose
top ``K`` does not (miss).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.evaluation.strata import StrataResult, group_strata
from sgi_core.results import JsonResult
from sgi_core.retrieval import DEFAULT_KS, RetrievalResult, diagnose, retrieval_metrics_from_frame
from sgi_core.stats.checks import as_scores, validates_inputs

#: SGI at or above which a response counts as grounded in the diagnosis: equal
#: angles to question and context.
DEFAULT_GROUNDED_THRESHOLD = 1.0


@dataclass(frozen=True)
class RetrievalReport(JsonResult):
    """Retrieval metrics beside SGI.

    Attributes
    ----------
    metrics : RetrievalResult
    k : int
        The K of the diagnosis and of the hit / miss split.
    grounded_threshold : float
        SGI from which a response counts as grounded in the diagnosis.
    diagnosis : tuple of dict
        Rows of :func:`sgi_core.retrieval.diagnose` (diagnosis, meaning, n, share).
    sgi_by_hit : StrataResult
        SGI's separation among retrieval misses and hits (labelled rows).
    """

    metrics: RetrievalResult
    k: int
    grounded_threshold: float
    diagnosis: tuple[dict, ...]
    sgi_by_hit: StrataResult

    def diagnosis_frame(self) -> pd.DataFrame:
        return pd.DataFrame(list(self.diagnosis))


@validates_inputs
def retrieval_report(frame: pd.DataFrame, *, score_col: str = "sgi", k: int = 5, ks=DEFAULT_KS,
                     grounded_threshold: float = DEFAULT_GROUNDED_THRESHOLD,
                     source: str = "<input>") -> RetrievalReport | None:
    """Retrieval metrics, diagnosis and SGI by hit for a scored frame.

    Parameters
    ----------
    frame : DataFrame
        A scored frame with ``label``, the score column and id-list columns
        (``retrieved_ids`` and ``relevant_ids`` or their aliases).
    score_col : str, default "sgi"
    k : int, default 5
    ks : sequence of int
        The K of Recall@K.
    grounded_threshold : float, default 1.0
    source : str
        File name for error messages.

    Returns
    -------
    RetrievalReport or None
        None when the frame has no id-list columns.
    """
    metrics = retrieval_metrics_from_frame(frame, ks=tuple(sorted({*ks, k})), source=source)
    if metrics is None:
        return None
    scores = as_scores(frame[score_col], name=score_col)
    grounded = np.nan_to_num(scores, nan=-np.inf) >= grounded_threshold
    diagnosis = diagnose(metrics, grounded, k=k)
    sgi_by_hit = group_strata(metrics.hits(k), frame["label"].to_numpy(dtype=np.float64), scores,
                              group_names={0.0: "miss", 1.0: "hit"}, name=f"retrieval hit@{k}")
    return RetrievalReport(metrics, k, float(grounded_threshold),
                           tuple(diagnosis.to_dict(orient="records")), sgi_by_hit)
