"""What ``python -m sgi_core report`` prints: the paper's tables and everything judged beside SGI.

Each function reads one result object and returns plain text; nothing is computed
here but layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from sgi_core.render.names import display_name
from sgi_core.render.numbers import format_ci, frame_text
from sgi_core.render.tables import baselines_table, table1, table2, table3, table5
from sgi_core.render.truncation import truncation_text
from sgi_core.render.verdict import verdict_text

if TYPE_CHECKING:
    from sgi_core.detectors.report import DetectorReport
    from sgi_core.evaluation.detectors import DetectorComparison
    from sgi_core.evaluation.retrieval_report import RetrievalReport
    from sgi_core.pipelines.model_comparison import ModelComparison


def _interval_methods(comparison: ModelComparison) -> str:
    """How Table 1's intervals were computed: ``d: <method>; AUROC: <method>`` with the resamples."""
    def described(method: str, n_boot: int) -> str:
        return f"{method}, {n_boot} resamples" if method == "percentile bootstrap" else method

    methods = dict.fromkeys(
        f"d: {described(r.effect_size.ci_method, r.effect_size.n_boot)}; "
        f"AUROC: {described(r.roc.ci_method, r.roc.n_boot)}" for r in comparison.reports.values())
    return " / ".join(methods)


def comparison_text(comparison: ModelComparison) -> str:
    """Tables 1, 2, 3 and 5 in the paper's layout, the baselines, the length verdict and the notes."""
    reports = comparison.reports
    parts = [f"Source: {comparison.source}", "",
             f"Table 1. SGI by label (valid - hallucinated), 95% CIs ({_interval_methods(comparison)})",
             frame_text(table1(reports))]
    for name, rep in reports.items():
        left_out = (f"; means and d leave out the {rep.n_degenerate} rows with degenerate geometry (n_degenerate), "
                    "counted in n and AUROC" if rep.n_degenerate else "")
        parts += ["", f"Table 2 ({name}). SGI within theta(q,c) terciles (edges over all rows{left_out})",
                  frame_text(table2(rep)),
                  "", f"Table 3 ({name}). SGI within character-length terciles (equal thirds by rank{left_out})",
                  frame_text(table3(rep))]
    parts += ["", "Table 5. Each angle alone, Cohen's d valid - hallucinated", frame_text(table5(reports)),
              "", "Baselines beside SGI (every score oriented higher = grounded)",
              frame_text(baselines_table(reports)), "", "Does SGI add signal beyond response length?"]
    for name, rep in reports.items():
        verdict = rep.beyond_length.verdict if rep.beyond_length else "not computed (no response column)"
        parts.append(f"  {name}: {verdict}")
    parts += ["", "Verdict: does a detector beat the best trivial score of this file? (as the Overview words it)"]
    for name, verdict in comparison.verdicts.items():
        if verdict.best_trivial is None:
            parts.append(f"  {name}: no trivial score is defined on this file (labels of both classes needed)")
            continue
        _, headline, notes = verdict_text(verdict)
        parts += [f"  {name}: {headline}", *(f"    {note}" for note in notes)]
    parts += ["", "SGI's AUROC with the classes matched on response length (coarsened exact matching)"]
    for name, matched in ((name, rep.length_matched) for name, rep in reports.items()):
        parts.append(f"  {name}: {matched.auroc:.3f} {format_ci(matched.auroc_ci)} against {matched.plain_auroc:.3f} "
                     f"unmatched ({matched.n_used} rows in {matched.n_bins - matched.n_bins_dropped} length bins, "
                     f"{matched.n_dropped} in bins holding one class left out)")
    parts += ["", "Contexts longer than the model reads (truncated)"]
    for name, trunc in comparison.truncation.items():
        if trunc.max_seq_length is None:
            parts.append(f"  {name}: unknown (no tokenizer)")
        else:
            parts.append(f"  {name}: {truncation_text(trunc, name)[1]}")
    agreement = comparison.agreement
    if agreement is not None:
        _, spearman = agreement.to_frames()
        parts += ["", f"Cross-model agreement of per-row SGI ({agreement.n_rows} rows): mean off-diagonal "
                  f"Pearson {agreement.mean_offdiag_pearson:.3f}, Spearman {agreement.mean_offdiag_spearman:.3f}",
                  "Spearman:", frame_text(spearman, index=True)]
    for report in comparison.detectors.values():
        parts += ["", detector_report_text(report)]
    notes = [f"  {name}: {note}" for name, rep in reports.items() for note in rep.notes]
    if notes:
        parts += ["", "Notes", *notes]
    return "\n".join(parts)


def detector_report_text(report: DetectorReport) -> str:
    """One model's computed detectors: AUROC and length-matched AUROC with intervals, the leaky AUROC, d.

    A withheld score (the combination below the events-per-feature floor) shows its reason in ``note``, no number.
    """
    rows = [{"detector": name, "protocol": s.protocol, "auroc": s.auroc, "auroc_ci": format_ci(s.auroc_ci),
             "auroc_leaky": s.auroc_leaky, "length_matched": s.length_matched_auroc,
             "length_matched_ci": format_ci(s.length_matched_auroc_ci), "cohens_d": s.cohens_d}
            for name, s in report.detectors.items()]
    rows += [{"detector": name, "note": reason} for name, reason in report.withheld.items()]
    return (f"Detectors beyond SGI ({report.model}; reference sets from other question groups, "
            f"{report.n_folds} folds; auroc_leaky lets the reference set hold the scored row)\n"
            f"{frame_text(pd.DataFrame(rows), na_rep='')}\n"
            f"combined = out-of-fold logistic model over {', '.join(report.combined_features)}")


def _named(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its ``detector`` column (score names) drawn as display names."""
    return frame.assign(detector=frame["detector"].map(display_name))


def detector_comparison_text(comparison: DetectorComparison) -> str:
    """Declared detector columns beside SGI: one row per detector, the combination, the verdict."""
    return (f"Detectors beside SGI ({comparison.n} labelled rows, {comparison.n_splits}-fold CV)\n"
            f"{frame_text(_named(comparison.to_frame()), na_rep='')}\n{comparison.verdict}")


def retrieval_text(report: RetrievalReport) -> str:
    """Recall@K and MRR, the diagnosis table and SGI's separation by retrieval hit."""
    m = report.metrics
    recall = ", ".join(f"Recall@{k} {v:.3f}" for k, v in m.recall_at_k.items())
    lines = [f"Retrieval over {m.n_queries - m.n_without_relevant} judged queries "
             f"({m.n_without_relevant} without relevant ids): {recall}, MRR {m.mrr:.3f}",
             "", f"Diagnosis (top {report.k}; grounded = SGI >= {report.grounded_threshold:g})",
             frame_text(report.diagnosis_frame()),
             "", f"SGI separation by retrieval hit@{report.k}",
             frame_text(report.sgi_by_hit.to_frame())]
    return "\n".join(lines)
