"""Evaluate one labelled table with several models: what ``python -m sgi_core report`` runs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from sgi_core.columns import DEFAULT_CONTEXT_STRATEGY
from sgi_core.detectors.report import DetectorReport, detector_report
from sgi_core.embedding import EmbeddingCache, ProgressCallback, backend_used, load_encoder
from sgi_core.evaluation.report import EvaluationReport, evaluate, with_families
from sgi_core.evaluation.verdict import Verdict, report_verdict
from sgi_core.io.triples import TripleTable
from sgi_core.long_context import TruncationResult, truncation_report
from sgi_core.results import JsonResult
from sgi_core.scores.registry import SCORES
from sgi_core.scoring import score_table
from sgi_core.stats.correlation import AgreementResult, cross_model_agreement

#: Parts of a judgement left out of the report JSON (the curve and the full results behind its headline numbers).
JUDGEMENT_DETAILS = ("roc", "effect", "length_matched")


@dataclass(frozen=True)
class ModelComparison(JsonResult):
    """Reports of several models on the same rows.

    Attributes
    ----------
    source : str
    reports : dict of str -> EvaluationReport
    truncation : dict of str -> TruncationResult
        Contexts each model truncates.
    agreement : AgreementResult or None
        Per-row SGI correlations; None with one model.
    detectors : dict of str -> DetectorReport
        Each model's other detectors, when asked for.
    verdicts : dict of str -> Verdict
        Each model's SGI, the other scores its report judged and its detector families' scores
        against the file's best trivial score (:func:`~sgi_core.evaluation.verdict.report_verdict`,
        made after the families, reusing every judgement).
    backends : dict of str -> str
        What ran each model (:func:`~sgi_core.embedding.backend_used`).
    """

    source: str
    reports: dict[str, EvaluationReport]
    truncation: dict[str, TruncationResult]
    agreement: AgreementResult | None
    detectors: dict[str, DetectorReport]
    verdicts: dict[str, Verdict]
    backends: dict[str, str]

    def to_report_json(self) -> dict:
        """``{"source", "models": {name: {headline numbers..., "truncation", "report"}}, "baselines", "agreement"}``."""
        models = {}
        baselines = {}
        for name, rep in self.reports.items():
            matched = rep.length_matched
            models[name] = {
                **rep.summary(),
                "length_matched_auroc": matched.to_dict()["auroc"],
                "length_matched_auroc_ci": matched.to_dict()["auroc_ci"],
                "length_matched": matched.to_dict(),
                "truncation": self.truncation[name].to_dict(),
                "report": rep.to_dict(),
            }
            models[name]["verdict"] = self.verdicts[name].to_dict()
            if name in self.detectors:
                # Each judgement's headline numbers; its curves and full results are in the page's objects.
                models[name]["detectors"] = {
                    score: {k: v for k, v in judged.items() if k not in JUDGEMENT_DETAILS}
                    for score, judged in self.detectors[name].to_dict()["detectors"].items()}
                # A score withheld below the events-per-feature floor: its reason, never a number.
                models[name]["detectors"].update(
                    {score: {"withheld": reason} for score, reason in self.detectors[name].withheld.items()})
            for base, judged in rep.baselines.items():
                key = f"theta_rq_{name}" if base == "theta_rq" else base
                # The headline numbers; curves and full results are in "report".
                baselines.setdefault(key, {"name": base, "description": SCORES[base].description,
                                           **{k: v for k, v in judged.to_dict().items() if k not in JUDGEMENT_DETAILS}})
        return {
            "source": self.source,
            "models": models,
            "baselines": baselines,
            "agreement": self.agreement.to_dict() if self.agreement else None,
        }



def compare_models(
    table: TripleTable,
    models: list[str],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    batch_size: int = 64,
    use_cache: bool = True,
    progress_for=None,
    detector_kinds: tuple[str, ...] = (),
    load_options: dict | None = None,
    context_strategy: str = DEFAULT_CONTEXT_STRATEGY,
    resources: Mapping[str, tuple] | None = None,
    declared=(),
) -> tuple[ModelComparison, dict[str, pd.DataFrame]]:
    """Score ``table`` with each model (through the embedding cache) and evaluate SGI.

    Parameters
    ----------
    table : TripleTable
    models : list of str
        Model names for :func:`sgi_core.embedding.load_encoder`.
    n_boot, seed : int
        Bootstrap settings of every interval.
    batch_size : int
    use_cache : bool, default True
        Read and write the embedding cache (``EmbeddingCache(encoder.model_id)``).
    progress_for : callable, optional
        ``progress_for(model_name)`` returns a progress callback for that model.
    detector_kinds : tuple of str
        Detector families to compute and judge per model
        (:data:`sgi_core.detectors.registry.FAMILIES`); their per-row scores join the
        scored frames.
    load_options : dict, optional
        Keyword arguments of :func:`~sgi_core.embedding.load_encoder` (device, ...).
    context_strategy : {"joined", "mean", "nearest"}, default "joined"
        How each context becomes one embedding (:func:`~sgi_core.scoring.score_table`).
    resources : mapping of str -> tuple, optional
        The loaded resources the detector families read, by field
        (:attr:`~sgi_core.detectors.registry.DetectorInputs.resources`).
    declared : iterable of ScoreSpec
        Columns of the table declared as detectors (:func:`~sgi_core.scores.selection.declared_spec`),
        judged in each model's report and entered in its verdict.

    Returns
    -------
    comparison : ModelComparison
    scored : dict of str -> DataFrame
        Each model's scored frame.
    """
    reports, truncation, scored, detectors, verdicts, backends = {}, {}, {}, {}, {}, {}
    for name in models:
        encoder = load_encoder(name, **(load_options or {}))
        backends[name] = backend_used(encoder)
        cache = EmbeddingCache(encoder.model_id) if use_cache else None
        progress: ProgressCallback | None = progress_for(name) if progress_for else None
        scored[name] = score_table(table, encoder, context_strategy=context_strategy, cache=cache,
                                   batch_size=batch_size, progress=progress)
        reports[name] = evaluate(scored[name], n_boot=n_boot, seed=seed, declared=declared)
        truncation[name] = truncation_report(encoder, table.frame["context"], passages=table.passages,
                                             context_strategy=context_strategy)
        if detector_kinds:
            detectors[name], per_row = detector_report(table, scored[name], encoder, model=name, kinds=detector_kinds,
                                                       cache=cache, batch_size=batch_size, n_boot=n_boot, seed=seed,
                                                       resources=resources)
            scored[name] = scored[name].join(per_row)
            # The one report holds the families' judgements: the text, the JSON, the HTML and the verdict read it.
            reports[name] = with_families(reports[name], detectors[name].detectors)
        # Made once the families are computed, so that a family's score can beat the best trivial score.
        verdicts[name] = report_verdict(reports[name], scored[name], family_scores=scored[name], n_boot=n_boot,
                                        seed=seed)
    degenerate = {n: f["sgi_status"].astype(str).str.startswith("degenerate").to_numpy() for n, f in scored.items()}
    agreement = (cross_model_agreement({n: f["sgi"].to_numpy() for n, f in scored.items()}, degenerate=degenerate)
                 if len(models) > 1 else None)
    return ModelComparison(table.source, reports, truncation, agreement, detectors, verdicts, backends), scored
