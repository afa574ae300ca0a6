"""A report to share: one self-contained HTML file of a file's evaluation, or of a comparison of two runs.

Drawn from the same result objects as the Overview and Compare runs pages, with the same
figure builders (:mod:`sgi_core.render.figures`, :mod:`dashboard.views.compare_charts`), the
same words (:mod:`sgi_core.render`) and the same tables; it computes nothing. The file
opens offline in any browser: the chart library is inlined once, every figure is inline
JSON, there is no font, image or script from anywhere else, and every text from the data
(file names, column names, cells) is HTML-escaped.
"""

from __future__ import annotations

import html

import pandas as pd

from sgi_core.render.compare_figures import paired_figure
from sgi_core.render.figures import plottable, roc_figure, score_histogram
from sgi_core.render.names import curve_name, display_name
from sgi_core.render.numbers import format_ci
from sgi_core.render.runs import auroc_frame, deltas_frame, labels_headline, reconciliation
from sgi_core.render.tables import judgements_table
from sgi_core.render.verdict import confound_text, verdict_text

#: Rows drawn at most in a chart of one mark per row (the pages' sample size).
CHART_ROWS = 20_000
_STYLE = ("body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1100px;margin:2em auto;"
          "padding:0 1em;color:#222}table{border-collapse:collapse;margin:0.6em 0;font-size:0.9em}"
          "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f3f3f3}"
          "td:first-child,th:first-child{text-align:left}.verdict{padding:0.6em 1em;border-left:4px solid #d95f02;"
          "background:#fff7ee}.verdict.success{border-color:#1b9e77;background:#effaf5}.note{color:#555}"
          "h2{margin-top:1.6em;border-bottom:1px solid #ddd}h1,h2,h3,p,li{overflow-wrap:anywhere}"
          # A wide table scrolls inside its box instead of pushing the page wider; long text cells wrap.
          ".table-box{max-width:100%;overflow-x:auto}td{overflow-wrap:anywhere;max-width:28em}"
          ".js-plotly-plot{max-width:100%}")


def _escape(text) -> str:
    return html.escape(str(text), quote=True)


def figure_block(fig) -> str:
    # Margins grow to fit the tick labels and axis titles, which a fixed margin clips.
    import plotly.io as pio

    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return pio.to_html(fig, include_plotlyjs=False, full_html=False, config={"displaylogo": False})


def table_block(frame: pd.DataFrame) -> str:
    table = frame.to_html(index=False, escape=True, na_rep="n/a", float_format=lambda x: f"{x:.4g}", border=0)
    return f'<div class="table-box">{table}</div>'


def paragraphs(lines, css: str = "") -> str:
    cls = f' class="{css}"' if css else ""
    return "".join(f"<p{cls}>{_escape(line)}</p>" for line in lines if line)


def document(title: str, provenance: dict, body: str) -> str:
    """The whole file: the chart library once, the provenance table, then ``body`` (already escaped HTML)."""
    from plotly.offline import get_plotlyjs

    rows = "".join(f"<tr><th>{_escape(k)}</th><td>{_escape(v)}</td></tr>" for k, v in provenance.items())
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_escape(title)}</title>"
            f"<style>{_STYLE}</style><script type=\"text/javascript\">{get_plotlyjs()}</script></head><body>"
            f"<h1>{_escape(title)}</h1><table class=\"provenance\">{rows}</table>{body}</body></html>")


def file_report(report, verdict, frame: pd.DataFrame, matched: dict, provenance: dict) -> str:
    """One file's evaluation as the Overview shows it.

    Parameters
    ----------
    report : EvaluationReport
        The file's one judged report (the detector families' judgements in it when they were
        computed, :func:`~sgi_core.evaluation.report.with_families`): every curve and table row
        is one of its judgements.
    verdict : Verdict or None
        The file verdict (None without labels of both classes).
    frame : DataFrame
        The scored rows (the histogram draws at most :data:`CHART_ROWS`, the first rows).
    matched : dict of str -> LengthMatchedResult
        The length-matched AUROCs by score name.
    provenance : dict
        What the report is of (:func:`sgi_core.render.provenance.provenance`).
    """
    es, roc = report.effect_size, report.roc
    parts = ["<h2>What the labels say about SGI</h2>"]
    counts = {"rows": report.n_rows, "scored": report.n_scored, "labelled grounded": report.n_valid,
              "labelled hallucinated": report.n_halluc}
    parts.append(table_block(pd.DataFrame([counts])))
    if report.n_valid and report.n_halluc:
        parts.append(table_block(pd.DataFrame([{
            "mean SGI grounded": es.mean_valid, "mean SGI hallucinated": es.mean_halluc, "Cohen's d": es.cohens_d,
            "d 95% CI": format_ci(es.cohens_d_ci, "+.2f"), "AUROC": roc.auroc, "AUROC 95% CI": format_ci(roc.auroc_ci),
            "AUROC interval": roc.ci_method}])))
    if verdict is not None and verdict.best_trivial is not None:
        level, headline, notes = verdict_text(verdict)
        parts.append(f'<div class="verdict {"success" if level == "success" else ""}">'
                     f"{paragraphs([headline, *notes])}</div>")
        parts.append(paragraphs([confound_text(verdict)]))
    shown = plottable(frame).head(CHART_ROWS)
    parts.append(figure_block(score_histogram(shown)))
    if len(plottable(frame)) > CHART_ROWS:
        parts.append(paragraphs([f"The histogram draws the first {CHART_ROWS:,} of {len(plottable(frame)):,} rows; "
                                  "every statistic uses every row."], "note"))
    if report.n_valid and report.n_halluc:
        # The curves and the rows are the report's judgements: drawn, never computed again.
        parts += ["<h2>ROC curves: SGI, the other scores and the trivial scores</h2>",
                  figure_block(roc_figure(report.rocs))]
        scores = judgements_table(report)
        parts.append(table_block(scores.assign(score=scores["score"].map(curve_name)).rename(columns={
            "description": "what it measures", "auroc": "AUROC", "auroc_ci": "AUROC 95% CI", "cohens_d": "Cohen's d"})))
        parts += ["<h2>With response lengths matched</h2>", table_block(pd.DataFrame([{
            "score": curve_name(name), "AUROC": m.auroc,
            "95% CI": format_ci(m.auroc_ci), "unmatched AUROC": m.plain_auroc, "rows used": m.n_used}
            for name, m in matched.items()]))]
        if report.beyond_length is not None:
            parts.append(paragraphs([f"Beyond response length: {report.beyond_length.verdict}"]))
    if report.theta_qc_strata is not None:
        parts += ["<h2>SGI within theta(q,c) terciles</h2>", table_block(_strata_frame(report.theta_qc_strata))]
    for strata in report.length_strata:
        parts += [f"<h2>SGI within {strata.name} length terciles</h2>", table_block(_strata_frame(strata))]
    if report.notes:
        parts += ["<h2>Caveats from the statistics</h2>", paragraphs(report.notes, "note")]
    return document(f"SGI report: {provenance.get('file', '')}", provenance, "".join(parts))


def _strata_frame(strata) -> pd.DataFrame:
    return pd.DataFrame([{"stratum": s.label, "range": f"{s.lo:.4g} to {s.hi:.4g}", "rows": s.n,
                          "grounded": s.n_valid, "hallucinated": s.n_halluc, "Cohen's d": s.cohens_d,
                          "d 95% CI": format_ci(s.cohens_d_ci, "+.2f"), "AUROC": s.auroc,
                          "AUROC 95% CI": format_ci(s.auroc_ci)} for s in strata.strata])


def comparison_report(comparison, matched, provenance: dict) -> str:
    """Two runs compared as the Compare runs page shows them: the labels first, the scores with their validation."""
    parts = ["<h2>Which run hallucinates less: the labels</h2>", paragraphs([labels_headline(comparison)])]
    parts += ["<h2>How each score moved</h2>", paragraphs(reconciliation(comparison), "note")]
    deltas = deltas_frame(comparison).assign(score=lambda f: f["score"].map(display_name))
    parts.append(table_block(deltas))
    aurocs = auroc_frame(comparison)
    if aurocs is not None and aurocs["p_value"].notna().any():
        parts += ["<h3>Did a score's AUROC change (DeLong's test)?</h3>",
                  table_block(aurocs.assign(score=lambda f: f["score"].map(display_name)))]
    parts.append("<h2>Each key, base against new</h2>")
    keys = min(len(matched.keys), CHART_ROWS)
    for score in matched.scores:
        points = pd.DataFrame({"key": matched.keys[:keys], "base": matched.base[score].to_numpy()[:keys],
                               "new": matched.new[score].to_numpy()[:keys]})
        parts.append(figure_block(paired_figure(points, score)))
    if len(matched.keys) > CHART_ROWS:
        parts.append(paragraphs([f"Each chart draws the first {CHART_ROWS:,} of {len(matched.keys):,} keys."], "note"))
    return document(f"Run comparison: {provenance.get('base', '')} against {provenance.get('new', '')}", provenance,
                    "".join(parts))
