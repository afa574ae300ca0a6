"""Overview: does SGI separate grounded from hallucinated answers here, and does it beat trivial baselines?"""

import math

import streamlit as st

from dashboard import page, services, state
from dashboard.services import confound_services, report_services
from dashboard.views import tables, texts
from sgi_core.render import figures

LENGTH_MATCHED = "AUROC, length-matched"
REPORT_DOWNLOAD = state.OVERVIEW_REPORT
LENGTH_MATCHED_HELP = ("AUROC after giving grounded and hallucinated rows the same response-length distribution "
                       "(coarsened exact matching on length bins): the length confound controlled. 0.5 = SGI "
                       "separates nothing that length does not.")


ASYMPTOTIC_NOTE = (f" Above {services.BOOTSTRAP_MAX_ROWS:,} labelled rows the intervals come from closed forms "
                   "instead of 1,000 bootstrap resamples, with which they agree to the third decimal at that size.")


def number(value: float, spec: str) -> str:
    """A statistic as text; "undefined" where sgi_core gives NaN."""
    return "undefined" if math.isnan(value) else f"{value:{spec}}"


def interval_words(result) -> str:
    """How a result's interval was computed, as the result records it."""
    if result.ci_method == "percentile bootstrap":
        return f"percentile bootstrap of {result.n_boot:,} resamples"
    return {"DeLong": "DeLong's variance", "delta method": "delta method"}.get(result.ci_method, result.ci_method)


def length_matched_sentence(result) -> str:
    """What the length-matched AUROC is, how it was made and what it cost in rows."""
    if math.isnan(result.auroc):
        summary = "Length-matched AUROC undefined: no response-length bin holds both grounded and hallucinated rows."
    else:
        summary = (f"Length-matched AUROC {result.auroc:.3f} {tables.interval(result.auroc_ci, in_text=True)} against "
                   f"{result.plain_auroc:.3f} unmatched: the length confound controlled, what is left is separation "
                   "that response length cannot explain (0.5 = none).")
    return (f"{summary} Method: {result.method} ({result.n_bins} bins; rows reweighted so both labels share the "
            f"bins' distribution); {result.n_used:,} rows used, {result.n_dropped:,} dropped in "
            f"{result.n_bins_dropped} bins holding one label only. Interval: {interval_words(result)}.")


st.title("Overview")
data, report = page.header()
es, roc = report.effect_size, report.roc

counts = st.columns(4)
counts[0].metric("Rows", f"{report.n_rows:,}")
counts[1].metric("Scored", f"{report.n_scored:,}")
counts[2].metric("Labelled grounded", f"{report.n_valid:,}")
counts[3].metric("Labelled hallucinated", f"{report.n_halluc:,}")

labelled = texts.labels_missing(report.n_valid, report.n_halluc)
if labelled is None:
    matched = confound_services.length_matched(data.key, data.model, data.frame)
    sgi_matched = matched["sgi"]
    stats = st.columns(5)
    stats[0].metric("Mean SGI, grounded", f"{es.mean_valid:.3f}", help=f"SD {es.sd_valid:.3f}")
    stats[1].metric("Mean SGI, hallucinated", f"{es.mean_halluc:.3f}", help=f"SD {es.sd_halluc:.3f}")
    stats[2].metric("Cohen's d", f"{es.cohens_d:+.2f}", help=texts.D_HELP)
    stats[3].metric("AUROC", f"{roc.auroc:.3f}", help=texts.AUROC_HELP)
    stats[4].metric(LENGTH_MATCHED, number(sgi_matched.auroc, ".3f"), help=LENGTH_MATCHED_HELP)
    st.caption(f"95% intervals: d {tables.interval(es.cohens_d_ci, '+.2f', in_text=True)} ({interval_words(es)}), "
               f"AUROC {tables.interval(roc.auroc_ci, in_text=True)} ({interval_words(roc)}); Welch p = "
               f"{es.welch_p:.2g}." + ASYMPTOTIC_NOTE * (roc.ci_method == "DeLong"))
    st.caption(length_matched_sentence(sgi_matched))
else:
    st.info(labelled + " Or label rows yourself on the **Review** page, one at a time: every page then uses them.")

threshold = st.session_state.get(state.CALIBRATION_THRESHOLD)
shown, shown_note = page.drawn(figures.plottable(data.frame))
st.plotly_chart(figures.score_histogram(shown, threshold=threshold, log_x=page.log_axes()),
                key=state.OVERVIEW_HISTOGRAM)
if shown_note:
    st.caption(shown_note)
st.caption("Dashed line: the threshold set on the Calibration session page (rows left of it are flagged)."
           if threshold is not None else "Set a flagging threshold on the Calibration session page to see it here.")
if report.n_degenerate:
    st.caption(f"{report.n_degenerate:,} rows with degenerate geometry (see the Data page) are left out of the "
               "histogram, whose axis their extreme SGI would squash, and out of the means and Cohen's d, which their "
               "extreme values would swamp; the rank statistics (AUROC) include them.")

page.truncation_note(data)

if labelled is None:
    st.subheader("SGI against this file's trivial scores")
    # The one judged report: the declared columns and the families computed on the Detectors page among its scores.
    judged_on = (data.key, data.model, state.detector_specs(), data.table, data.frame,
                 state.detector_families_run(data.key, data.model), state.resources_run(data.key, data.model))
    judged = confound_services.judged_report(*judged_on)
    verdict = confound_services.file_verdict(*judged_on)
    if verdict.best_trivial is not None:
        level, headline, notes = texts.verdict_text(verdict)
        # A detector near chance or inverted is a finding about the file, not a failure of the page: amber.
        (st.success if level == "success" else st.warning)(texts.plain(headline))
        for note in notes:
            st.warning(texts.plain(note))
        st.write(texts.confound_text(verdict))
    curves = judged.rocs
    st.multiselect("Other score columns of your file to compare (e.g. an LLM-judge score); say what their high "
                   "values mean, and see them combined with SGI, on the Detectors page",
                   confound_services.score_columns(data.key, data.table), key=state.DETECTOR_COLUMNS,
                   **state.PERSIST)
    st.plotly_chart(figures.roc_figure(curves), key=state.OVERVIEW_ROC)
    longest = max(len(curve.fpr) for curve in curves.values())
    if longest > figures.CURVE_POINTS:
        st.caption(f"Each curve is drawn through at most {figures.CURVE_POINTS:,} of its points (the longest has "
                   f"{longest:,}); the AUROCs use every row.")
    tables.judgements_table(judged)
    st.markdown("**With response lengths matched.** Each score's AUROC once grounded and hallucinated rows have "
                "the same response-length distribution, so length can no longer do the separating; 0.5 = nothing "
                "beyond length. Response length itself is left out: matching on it removes it by construction.")
    tables.length_matched_table(matched)
    if report.beyond_length is not None:
        st.caption(f"SGI beside response length in cross-validated logistic models ({report.beyond_length.n_splits} "
                   f"folds, {report.beyond_length.n:,} labelled rows): {texts.plain(report.beyond_length.verdict)} "
                   "These AUROCs are of out-of-fold predictions, so they differ a little from the table's AUROCs of "
                   "the raw scores.")

st.download_button("Download the report (HTML)", report_services.file_report(data),
                   file_name=page.download_name(data, "report.html"), mime="text/html", on_click="ignore",
                   key=REPORT_DOWNLOAD, help="One self-contained file: these numbers, the verdict and the charts, "
                                             "opening offline in any browser.")

if report.notes:
    with st.expander(f"{len(report.notes)} caveat{'s' * (len(report.notes) != 1)} from the statistics"):
        for note in report.notes:
            st.markdown(f"- {texts.plain(note)}")
