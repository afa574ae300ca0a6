"""Detectors: the registered detector families, the file's own scores, and any two compared."""

import pandas as pd
import streamlit as st

from dashboard import page, services, state
from dashboard.services import confound_services, detector_services
from dashboard.views import detector_charts, texts
from sgi_core.render import figures
from sgi_core.render.names import curve_name

st.title("Detectors")
st.write("Other detectors beside SGI, judged the same way: the registered detector families (the seed's geometric "
         "detectors from the embeddings, claim-level support, unsupported specifics, ...), any numeric column of "
         "your file (an LLM judge's consistency score, RAGAS faithfulness, an NLI probability, ...), and a paired "
         "comparison of any two scores on the same rows.")
data, report = page.header(require_labels=True)


def resource_widgets(family, drawn: set) -> bool:
    """The widgets of a family's declared resource (a text area, a checkbox per switch), once; whether it was given."""
    resource = family.resource
    if resource.field not in drawn:
        drawn.add(resource.field)
        st.text_area(family.label, key=state.resource_key(resource.field), placeholder=resource.placeholder,
                     help=f"{resource.help}. {resource.page_help}", **state.PERSIST)
        for switch in resource.switches:
            st.checkbox(switch.label, key=state.resource_switch_key(resource.field, switch.name), **state.PERSIST)
    return bool((st.session_state.get(state.resource_key(resource.field)) or "").strip())


def resource_choices() -> tuple:
    """Each declared resource given on the page as ``(field, choice)``, read from its widgets.

    Raises
    ------
    SGIInputError
        A path that is not a folder under the local-files root, or a line the resource refuses.
    """
    options = {family.resource.field: family.resource for family in detector_services.FAMILIES.values()
               if family.resource is not None}
    choices = ((field, detector_services.resource_choice(
        option, st.session_state.get(state.resource_key(field)) or "",
        {switch.name: bool(st.session_state.get(state.resource_switch_key(field, switch.name)))
         for switch in option.switches}, backend=services.chosen_backend())) for field, option in options.items())
    return tuple((field, choice) for field, choice in choices if choice)


def computed_families() -> tuple[tuple, tuple]:
    """Checkboxes (or resource widgets) and button for the registered families; their table and ROC once computed."""
    st.subheader("Detector families computed here")
    families = detector_services.FAMILIES
    given, drawn = {}, set()
    for kind, family in families.items():
        if family.resource is not None:
            given[kind] = resource_widgets(family, drawn)
            continue
        st.session_state.setdefault(state.detector_family_key(kind), True)
        st.checkbox(family.label, key=state.detector_family_key(kind), help=f"Reads {', '.join(family.needs)}; "
                    f"fitted {family.fitting}.", **state.PERSIST)
    chosen = tuple(kind for kind in families
                   if (given[kind] if kind in given else st.session_state[state.detector_family_key(kind)]))
    clicked = st.button("Compute the detectors", disabled=not chosen, help="Families that read embeddings embed "
                        "every text they need: under a minute for a few hundred rows with MiniLM on a CPU, minutes "
                        "for thousands; a grounding model reads every (context chunk, response sentence) pair.")
    if clicked:
        try:
            resources = resource_choices()
        except page.SGIInputError as err:
            page.show_error(err)
            return (), ()
        st.session_state[state.DETECTOR_FAMILIES_RUN] = (data.key, data.model, chosen)
        st.session_state[state.RESOURCES_RUN] = (data.key, data.model, resources)
    kinds = state.detector_families_run(data.key, data.model)
    resources = state.resources_run(data.key, data.model)
    if not kinds:
        st.info("Choose the families and press **Compute the detectors**; they are computed only when asked.")
        return (), ()
    try:
        computed, _ = detector_services.embedding_detectors(data.key, data.model, kinds, data.table, data.frame,
                                                            resources)
        curves = detector_services.embedding_detector_curves(data.key, data.model, kinds, data.table, data.frame,
                                                             resources)
    except page.SGIInputError as err:
        page.show_error(err)
        return (), ()
    if clicked and detector_services.COMBINED.name in computed.detectors:
        st.session_state[state.COMPARE_B] = detector_services.COMBINED_LABEL
    detector_charts.detector_table(computed, report)
    for name, reason in computed.withheld.items():
        page.verdict(detector_services.WITHHELD, f"{detector_services.DETECTOR_NAMES[name]} {reason}")
    explained = " ".join(f"{families[kind].label}: {families[kind].explanation}." for kind in kinds)
    st.caption(
        "Scores oriented so that higher = grounded; d = grounded minus hallucinated (ddof=1); intervals are "
        "95% (percentile bootstrap; DeLong and the delta method above 100,000 labelled rows). "
        f"{explained} **The AUROC column is the honest one**: a cross-fitted detector scores each row with a "
        "reference set built only from the grounded rows of the other folds "
        f"({computed.n_folds} in all, split by question, so neither the row nor its question's other answer is in "
        "it). **Leaky**: the same detector with the scored row in its reference set, the protocol behind the "
        "method's published near-perfect numbers; shown only to see how much of that number is leakage, never a "
        "result. Combined: a logistic model over "
        f"{', '.join(computed.combined_features)}, predicted out of fold on the same folds; "
        f"{detector_charts.report_combined_note(computed)} "
        "Length-matched: AUROC after matching the two classes' response lengths (coarsened exact matching).")
    st.plotly_chart(figures.roc_figure({report.score_col: report.roc, **curves}), key="detectors.families_roc")
    return kinds, resources


def file_columns() -> None:
    """The file's numeric columns as detectors: ROC, correlation with SGI, combination, calibration, threshold."""
    st.subheader("Scores from the file's columns")
    columns = confound_services.score_columns(data.key, data.table)
    if not columns:
        st.info("This file has no numeric column besides the mapped ones. Add a column with another detector's "
                "score per row (e.g. `judge_score`) to compare it with SGI here.")
        return
    st.multiselect("Detector score columns", columns, key=state.DETECTOR_COLUMNS, **state.PERSIST)
    for column in st.session_state.get(state.DETECTOR_COLUMNS) or ():
        st.radio(f"In {texts.plain(column)}, high values mean", ["grounded", "hallucinated"], horizontal=True,
                 key=state.detector_direction_key(column), **state.PERSIST)
    specs = state.detector_specs()
    if not specs:
        st.info("Pick one or more columns above.")
        return
    try:
        comparison = services.detector_comparison(data.key, data.model, specs, data.table, data.frame)
    except page.SGIInputError as err:
        page.show_error(err)
        return
    first = comparison.names[0]
    names = {"detector": "score", "auroc": "AUROC", "auroc_ci_lo": "95% CI from", "auroc_ci_hi": "95% CI to",
             f"spearman_with_{first}": f"Spearman with {curve_name(first)}", "cv_auroc": "cross-validated AUROC",
             "cohens_d": "Cohen's d", "length_matched_auroc": "length-matched AUROC"}
    shown = comparison.to_frame()
    st.dataframe(shown.assign(detector=shown["detector"].map(curve_name)).rename(columns=names), hide_index=True,
                 column_config={name: st.column_config.NumberColumn(format="%.3f")
                                for name in list(names.values())[1:]})
    st.caption(f"Scores oriented so that higher = grounded. Cross-validated AUROC: a logistic model on each score "
               f"alone and on all together, {comparison.n_splits} folds over the {comparison.n:,} labelled rows every "
               "score covers (out-of-fold predictions, same folds for all, a question's rows always in one fold). A "
               "low Spearman correlation with a useful AUROC means the signals are complementary. For the combination, "
               f"{detector_charts.comparison_combined_note(comparison)}")
    page.verdict(comparison.level, comparison.verdict)
    st.plotly_chart(figures.roc_figure(comparison.rocs), key="detectors.roc")

    st.markdown("**Calibration and threshold of each column**")
    method = st.session_state.get(state.CALIBRATION_METHOD, "platt")
    rows = []
    for column, higher_is in specs:
        calibration = services.detector_calibration(data.key, column, higher_is, method, data.table)
        m = services.detector_threshold(data.key, column, higher_is, data.table).metrics
        rows.append({"score": column, "high means": higher_is, "ECE (equal-frequency bins)": calibration.ece_quantile,
                     "Brier": calibration.brier, "Youden threshold": m.threshold, "precision": m.precision,
                     "recall": m.recall, "F1": m.f1, "flag rate": m.flag_rate})
    st.dataframe(pd.DataFrame(rows), hide_index=True,
                 column_config={name: st.column_config.NumberColumn(format="%.3f") for name in rows[0] if
                                name not in ("score", "high means")})
    st.caption(f"Calibrator: {method} (chosen on the Calibration session page), fitted on half the labelled rows and "
               "measured on the other half. Threshold on the oriented score; a row below it is flagged as "
               "hallucinated, and precision / recall count hallucinated rows as the positives.")
    shown = st.selectbox("Reliability diagram of", [column for column, _ in specs], key=state.DETECTOR_CALIBRATION)
    st.plotly_chart(figures.reliability_figure(services.detector_calibration(data.key, shown, dict(specs)[shown],
                                                                             method, data.table)),
                    key="detectors.reliability")


def compare(kinds: tuple, resources: tuple) -> None:
    """Two scores on the same rows: the AUROC difference, McNemar at Youden thresholds, the rows they disagree on most.

    The difference is tested by DeLong's test between fixed scores, by the refit bootstrap against the combined
    detector (fitted on these labels), as :func:`dashboard.services.detector_services.paired_comparison` chooses.
    """
    st.subheader("Compare two scores")
    specs = state.detector_specs()
    try:
        scores = detector_services.comparable_scores(data.key, data.model, specs, kinds, data.table, data.frame,
                                                     resources)
    except page.SGIInputError as err:
        page.show_error(err)
        return
    names = list(scores)
    defaults = ((state.COMPARE_A, detector_services.SGI_LABEL), (state.COMPARE_B, detector_services.LENGTH_LABEL))
    for key, default in defaults:
        if st.session_state.get(key) not in names:
            st.session_state[key] = default
    left, right = st.columns(2)
    name_a = left.selectbox("Score A", names, key=state.COMPARE_A, **state.PERSIST)
    name_b = right.selectbox("Score B", names, key=state.COMPARE_B, **state.PERSIST)
    if name_a == name_b:
        st.info("Choose two different scores.")
        return
    test, youden, mcnemar, disagreements = detector_services.paired_comparison(
        data.key, data.model, specs, kinds, name_a, name_b, data.table, data.frame, resources)
    metrics, caption = detector_charts.difference_metrics(test)
    for col, (label, value) in zip(st.columns(len(metrics)), metrics):
        col.metric(label, value)
    st.caption(caption)

    st.markdown("**McNemar's test at each score's Youden threshold**")
    if detector_services.COMBINED_LABEL in (name_a, name_b):
        st.info("McNemar's test is not run with the combined detector: its model and its threshold would both be "
                "fitted on the labels that test them.")
    elif mcnemar is None:
        st.info("One of the two scores has no Youden threshold here, so McNemar's test cannot be run.")
    else:
        left, right = st.columns([1, 2])
        left.dataframe(detector_charts.mcnemar_frame(mcnemar))
        right.write(f"A flags rows below {youden[0].threshold:.4g} (accuracy {mcnemar.accuracy_a:.3f}); B below "
                    f"{youden[1].threshold:.4g} (accuracy {mcnemar.accuracy_b:.3f}). Exact McNemar p = "
                    f"{mcnemar.p_value:.3g} on the {mcnemar.a_only_right + mcnemar.b_only_right:,} rows that only one "
                    "of them decides right.")

    st.markdown("**Rows where they disagree most**")
    table = detector_charts.disagreement_frame(disagreements, data.frame, scores[name_a], scores[name_b])
    event = detector_charts.disagreement_table(table, key=state.COMPARE_TABLE)
    st.caption("Percentile of each score among the rows both score (1 = most grounded); A − B > 0 where A finds the "
               "row more grounded than B does. Click a row, or choose it below, to open it in the Explorer.")
    chosen = st.selectbox("Open in the Explorer", table["row"].tolist(), index=None, key=state.COMPARE_ROW,
                          placeholder="Choose a row", format_func=lambda row: f"row {row}")
    clicked = event.selection.rows
    row = int(table["row"].iloc[clicked[0]]) if clicked else chosen
    if row is not None:
        source = page.file_row(data.frame, row)
        state.pick_triple(int(row), source["question"], source["context"], source["response"])
        st.switch_page("app_pages/explorer.py")


kinds, resources = computed_families()
file_columns()
compare(kinds, resources)
