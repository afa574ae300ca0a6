"""Evaluate one labelled table with several models: what ``python -m sgi_core report`` runs."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from sgi_core.data import TripleTable
from sgi_core.detector_report import DetectorReport, detector_report
from sgi_core.embedding import EmbeddingCache, ProgressCallback, load_encoder
from sgi_core.results import JsonResult
from sgi_core.evaluation.agreement import AgreementResult, cross_model_agreement
from sgi_core.evaluation.baselines import response_length
from sgi_core.evaluation.length_matched import LengthMatchedResult, length_matched_auroc
from sgi_core.long_context import TruncationResult, truncation_report
from sgi_core.evaluation.report import EvaluationReport, evaluate
from sgi_core.evaluation.tables import baselines_table, format_ci, table1, table2, table3, table5
from sgi_core.scoring import score_table


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
    length_matched : dict of str -> LengthMatchedResult
        Each model's SGI AUROC with the classes matched on response length.
    detectors : dict of str -> DetectorReport
        Each model's other detectors, when asked for.
    """

    source: str
    reports: dict[str, EvaluationReport]
    truncation: dict[str, TruncationResult]
    agreement: AgreementResult | None
    length_matched: dict[str, LengthMatchedResult]
    detectors: dict[str, DetectorReport]

    def to_report_json(self) -> dict:
        """``{"source", "models": {name: {headline numbers..., "truncation", "report"}}, "baselines", "agreement"}``."""
        models = {}
        baselines = {}
        for name, rep in self.reports.items():
            matched = self.length_matched[name]
            models[name] = {
                **rep.summary(),
                "length_matched_auroc": matched.to_dict()["auroc"],
                "length_matched_auroc_ci": matched.to_dict()["auroc_ci"],
                "length_matched": matched.to_dict(),
                "truncation": self.truncation[name].to_dict(),
                "report": rep.to_dict(),
            }
            if name in self.detectors:
                models[name]["detectors"] = self.detectors[name].to_dict()["detectors"]
            for base in rep.baselines:
                key = f"theta_rq_{name}" if base.name == "theta_rq" else base.name
                baselines.setdefault(key, base.to_dict())
        return {
            "source": self.source,
            "models": models,
            "baselines": baselines,
            "agreement": self.agreement.to_dict() if self.agreement else None,
        }

    def _intervals(self) -> str:
        """How Table 1's intervals were computed: ``d: <method>; AUROC: <method>`` with the resamples."""
        def described(method: str, n_boot: int) -> str:
            return f"{method}, {n_boot} resamples" if method == "percentile bootstrap" else method

        methods = dict.fromkeys(
            f"d: {described(r.effect_size.ci_method, r.effect_size.n_boot)}; "
            f"AUROC: {described(r.roc.ci_method, r.roc.n_boot)}" for r in self.reports.values())
        return " / ".join(methods)

    def to_text(self) -> str:
        """Tables 1, 2, 3 and 5 in the paper's layout, the baselines and the length verdict."""
        fmt = {"float_format": lambda x: f"{x:.3f}", "index": False}
        parts = [f"Source: {self.source}", "", f"Table 1. SGI by label (valid - hallucinated), 95% CIs ({self._intervals()})",
                 table1(self.reports).to_string(**fmt)]
        for name, rep in self.reports.items():
            left_out = (f"; means and d leave out the {rep.n_degenerate} rows with degenerate geometry (n_degenerate), "
                        "counted in n and AUROC" if rep.n_degenerate else "")
            parts += ["", f"Table 2 ({name}). SGI within theta(q,c) terciles (edges over all rows{left_out})",
                      table2(rep).to_string(**fmt),
                      "", f"Table 3 ({name}). SGI within character-length terciles (equal thirds by rank{left_out})",
                      table3(rep).to_string(**fmt)]
        parts += ["", "Table 5. Each angle alone, Cohen's d valid - hallucinated", table5(self.reports).to_string(**fmt),
                  "", "Baselines beside SGI (every score oriented higher = grounded)",
                  baselines_table(self.reports).to_string(**fmt), "", "Does SGI add signal beyond response length?"]
        for name, rep in self.reports.items():
            verdict = rep.beyond_length.verdict if rep.beyond_length else "not computed (no response column)"
            parts.append(f"  {name}: {verdict}")
        parts += ["", "SGI's AUROC with the classes matched on response length (coarsened exact matching)"]
        for name, matched in self.length_matched.items():
            parts.append(f"  {name}: {matched.auroc:.3f} {format_ci(matched.auroc_ci)} against {matched.plain_auroc:.3f} "
                         f"unmatched ({matched.n_used} rows in {matched.n_bins - matched.n_bins_dropped} length bins, "
                         f"{matched.n_dropped} in bins holding one class left out)")
        parts += ["", "Contexts longer than the model reads (truncated)"]
        for name, trunc in self.truncation.items():
            if trunc.max_seq_length is None:
                parts.append(f"  {name}: unknown (no tokenizer)")
            else:
                parts.append(f"  {name}: {trunc.n_truncated} of {trunc.n_texts} contexts exceed "
                             f"{trunc.max_seq_length} tokens (longest {trunc.max_tokens:.0f})")
        if self.agreement is not None:
            pearson, spearman = self.agreement.to_frames()
            parts += ["", f"Cross-model agreement of per-row SGI ({self.agreement.n_rows} rows): mean off-diagonal "
                      f"Pearson {self.agreement.mean_offdiag_pearson:.3f}, "
                      f"Spearman {self.agreement.mean_offdiag_spearman:.3f}",
                      "Spearman:", spearman.to_string(float_format=lambda x: f"{x:.3f}")]
        for report in self.detectors.values():
            parts += ["", report.to_text()]
        notes = [f"  {name}: {note}" for name, rep in self.reports.items() for note in rep.notes]
        if notes:
            parts += ["", "Notes", *notes]
        return "\n".join(parts)


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
        (:data:`sgi_core.detector_report.KINDS`); their per-row scores join the
        scored frames.
    load_options : dict, optional
        Keyword arguments of :func:`~sgi_core.embedding.load_encoder` (device, ...).

    Returns
    -------
    comparison : ModelComparison
    scored : dict of str -> DataFrame
        Each model's scored frame.
    """
    reports, truncation, scored, matched, detectors = {}, {}, {}, {}, {}
    lengths = response_length(table.frame["response"])
    for name in models:
        encoder = load_encoder(name, **(load_options or {}))
        cache = EmbeddingCache(encoder.model_id) if use_cache else None
        progress: ProgressCallback | None = progress_for(name) if progress_for else None
        scored[name] = score_table(table, encoder, cache=cache, batch_size=batch_size, progress=progress)
        reports[name] = evaluate(scored[name], n_boot=n_boot, seed=seed)
        truncation[name] = truncation_report(encoder, table.frame["context"])
        matched[name] = length_matched_auroc(scored[name]["label"], scored[name]["sgi"], lengths, n_boot=n_boot,
                                             seed=seed)
        if detector_kinds:
            detectors[name], per_row = detector_report(table, scored[name], encoder, model=name, kinds=detector_kinds,
                                                       cache=cache, batch_size=batch_size, n_boot=n_boot, seed=seed)
            scored[name] = scored[name].join(per_row)
    degenerate = {n: f["sgi_status"].astype(str).str.startswith("degenerate").to_numpy() for n, f in scored.items()}
    agreement = (cross_model_agreement({n: f["sgi"].to_numpy() for n, f in scored.items()}, degenerate=degenerate)
                 if len(models) > 1 else None)
    return ModelComparison(table.source, reports, truncation, agreement, matched, detectors), scored
