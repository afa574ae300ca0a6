"""Evaluate one labelled table with several models: what ``python -m sgi_core report`` runs."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from sgi_core.data import TripleTable
from sgi_core.embedding import EmbeddingCache, ProgressCallback, load_encoder
from sgi_core.results import JsonResult
from sgi_core.evaluation.agreement import AgreementResult, cross_model_agreement
from sgi_core.long_context import TruncationResult, truncation_report
from sgi_core.evaluation.report import EvaluationReport, evaluate
from sgi_core.evaluation.tables import baselines_table, table1, table2, table3, table5
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
    """

    source: str
    reports: dict[str, EvaluationReport]
    truncation: dict[str, TruncationResult]
    agreement: AgreementResult | None

    def to_report_json(self) -> dict:
        """``{"source", "models": {name: {headline numbers..., "truncation", "report"}}, "baselines", "agreement"}``."""
        models = {}
        baselines = {}
        for name, rep in self.reports.items():
            models[name] = {
                **rep.summary(),
                "truncation": self.truncation[name].to_dict(),
                "report": rep.to_dict(),
            }
            for base in rep.baselines:
                key = f"theta_rq_{name}" if base.name == "theta_rq" else base.name
                baselines.setdefault(key, base.to_dict())
        return {
            "source": self.source,
            "models": models,
            "baselines": baselines,
            "agreement": self.agreement.to_dict() if self.agreement else None,
        }

    def to_text(self) -> str:
        """Tables 1, 2, 3 and 5 in the paper's layout, the baselines and the length verdict."""
        fmt = {"float_format": lambda x: f"{x:.3f}", "index": False}
        parts = [f"Source: {self.source}", "", "Table 1. SGI by label (valid - hallucinated), bootstrap 95% CIs",
                 table1(self.reports).to_string(**fmt)]
        for name, rep in self.reports.items():
            parts += ["", f"Table 2 ({name}). SGI within theta(q,c) terciles (edges over all rows)",
                      table2(rep).to_string(**fmt),
                      "", f"Table 3 ({name}). SGI within character-length terciles (equal thirds by rank)",
                      table3(rep).to_string(**fmt)]
        parts += ["", "Table 5. Each angle alone, Cohen's d valid - hallucinated", table5(self.reports).to_string(**fmt),
                  "", "Baselines beside SGI (every score oriented higher = grounded)",
                  baselines_table(self.reports).to_string(**fmt), "", "Does SGI add signal beyond response length?"]
        for name, rep in self.reports.items():
            verdict = rep.beyond_length.verdict if rep.beyond_length else "not computed (no response column)"
            parts.append(f"  {name}: {verdict}")
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

    Returns
    -------
    comparison : ModelComparison
    scored : dict of str -> DataFrame
        Each model's scored frame.
    """
    reports, truncation, scored = {}, {}, {}
    for name in models:
        encoder = load_encoder(name)
        cache = EmbeddingCache(encoder.model_id) if use_cache else None
        progress: ProgressCallback | None = progress_for(name) if progress_for else None
        scored[name] = score_table(table, encoder, cache=cache, batch_size=batch_size, progress=progress)
        reports[name] = evaluate(scored[name], n_boot=n_boot, seed=seed)
        truncation[name] = truncation_report(encoder, table.frame["context"])
    agreement = cross_model_agreement({n: f["sgi"].to_numpy() for n, f in scored.items()}) if len(models) > 1 else None
    return ModelComparison(table.source, reports, truncation, agreement), scored
