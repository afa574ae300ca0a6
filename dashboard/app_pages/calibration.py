"""Calibration session: SGI as P(grounded), a flagging threshold saved and applied, and one judged on held-out rows."""

import functools
import math

import streamlit as st

from dashboard import page, services, state
from dashboard.services import calibration_services, confound_services
from dashboard.views import tables, texts
from sgi_core.render import figures

PRESETS = {"youden": "Youden's J (best recall - false-flag rate)", "target_recall": "reach a recall",
           "target_precision": "reach a precision", "cost": "cost of a missed hallucination"}
SESSION_UPLOAD = "calibration.session_upload"
SESSION_MESSAGE = "calibration.session_message"
PRESET_MESSAGE = "calibration.preset_message"
HOLDOUT_GROUPS = "calibration.holdout_groups"
HOLDOUT_RULE = "calibration.holdout_rule"
HOLDOUT_TARGET = "calibration.holdout_target"
HOLDOUT_COST = "calibration.holdout_cost"
POLICY_DOWNLOAD, POLICY_FORCE = "calibration.policy_download", "calibration.policy_force"


def number(value: float) -> str:
    """A rate as text; "undefined" where sgi_core gives NaN (e.g. precision when nothing is flagged)."""
    return "undefined" if math.isnan(value) else f"{value:.3f}"


st.title("Calibration session")
data, report = page.header()
missing = texts.labels_missing(report.n_valid, report.n_halluc)
if missing:
    st.info(missing)
    st.download_button("Download the scored file (CSV)", data=functools.partial(services.csv_bytes, data.frame),
                       file_name=page.download_name(data, "sgi_scores.csv"), mime="text/csv", on_click="ignore")
    st.stop()


def _forget_loaded_session() -> None:
    st.session_state.pop(state.CALIBRATION_LOADED, None)


st.subheader("1. Calibrator")
st.radio("Map SGI to P(grounded) with", ["platt", "isotonic", "minmax"], key=state.CALIBRATION_METHOD,
         horizontal=True, on_change=_forget_loaded_session, **state.PERSIST,
         format_func={"platt": "Platt (logistic)", "isotonic": "isotonic", "minmax": "min-max (the paper's)"}.get)
try:
    active = page.active_calibration(data)
    result = calibration_services.calibration(data.key, data.model, active.calibrator.method, data.frame)
except page.SGIInputError as err:
    page.show_error(err)
    st.stop()
st.caption(f"In use: {active.origin}. ECE, Brier and the diagram are measured on {result.n_eval:,} other labelled "
           "rows held out from the fit, so they are not flattered by fitting and scoring the same rows."
           + (f" The {report.n_degenerate:,} rows with degenerate geometry are left out of both: one SGI near 1e8 "
              "would flatten the fit." if report.n_degenerate else ""))
metrics = st.columns(3)
metrics[0].metric("ECE (10 equal-count bins)", f"{result.ece_quantile:.3f}", help="Expected calibration error: "
                  "average gap between predicted P(grounded) and the observed share grounded. 0 = perfect.")
metrics[1].metric("ECE (10 equal-width bins)", f"{result.ece_uniform:.3f}")
metrics[2].metric("Brier score", f"{result.brier:.3f}", help="Mean squared error of P(grounded); lower is better.")
left, right = st.columns(2)
left.plotly_chart(figures.reliability_figure(result), key=state.CALIBRATION_RELIABILITY)
right.plotly_chart(figures.decile_figure(result), key=state.CALIBRATION_DECILES)


def _apply_preset() -> None:
    method = st.session_state["calibration.preset"]
    target = st.session_state.get(state.CALIBRATION_TARGET) if method.startswith("target") else None
    cost = st.session_state.get(state.CALIBRATION_COST) if method == "cost" else None
    choice = calibration_services.choose_threshold(data.key, data.model, method, target, cost, data.frame)
    if choice.metrics is None:
        wanted = method.removeprefix("target_")
        st.session_state[PRESET_MESSAGE] = f"No threshold reaches a {wanted} of {target:g}; the threshold is unchanged."
    else:
        st.session_state[state.CALIBRATION_THRESHOLD] = choice.threshold
        st.session_state[PRESET_MESSAGE] = None


def _load_session(key, frame, models: list) -> None:
    upload = st.session_state[SESSION_UPLOAD]
    if upload is None:
        return
    try:
        session = calibration_services.read_session(upload.getvalue(), source=upload.name)
        if session.model not in models:
            raise page.SGIInputError(f"the session was tuned on scores of model '{session.model}'",
                                source=upload.name, hint="Add that model on the Data page, then load it again")
    except page.SGIInputError as err:
        st.session_state[SESSION_MESSAGE] = ("error", texts.plain(err))
        return
    st.session_state[state.CALIBRATION_LOADED] = session.to_dict()
    st.session_state[state.CALIBRATION_METHOD] = session.calibrator["method"]
    st.session_state[state.CALIBRATION_THRESHOLD] = session.threshold
    st.session_state[state.MODEL_SHOWN] = session.model
    other_data = session.fingerprint != calibration_services.fingerprint(key, frame)
    st.session_state[SESSION_MESSAGE] = ("success", f"Loaded the session saved {texts.plain(session.created)}: "
                                         f"{texts.plain(session.calibrator['method'])} calibrator, threshold "
                                         f"{session.threshold:.4f}." + (
                                             " It was tuned on different data (another run, or other rows): its "
                                             "threshold and calibrator apply as they are, and the numbers below are "
                                             "this file's." if other_data else ""))


@st.fragment
def threshold_panel() -> None:
    """Redrawn alone when the slider or a preset moves, so the page above is not recomputed."""
    grid, n_thresholds = calibration_services.threshold_grid(data.key, data.model, figures.CURVE_POINTS, data.frame)
    lowest, highest = calibration_services.threshold_range(data.key, data.model, data.frame)
    if state.CALIBRATION_THRESHOLD not in st.session_state:
        st.session_state[state.CALIBRATION_THRESHOLD] = calibration_services.choose_threshold(
            data.key, data.model, "youden", None, None, data.frame).threshold
    st.session_state[state.CALIBRATION_THRESHOLD] = min(max(st.session_state[state.CALIBRATION_THRESHOLD], lowest),
                                                        highest)

    preset_col, target_col, button_col = st.columns([2, 1, 1], vertical_alignment="bottom")
    preset = preset_col.selectbox("Preset", list(PRESETS), format_func=PRESETS.get, key=state.CALIBRATION_PRESET,
                                  **state.PERSIST)
    if preset.startswith("target"):
        target_col.number_input("target", 0.01, 1.0, 0.9, 0.01, key=state.CALIBRATION_TARGET, **state.PERSIST)
    elif preset == "cost":
        target_col.number_input("cost ratio (missed / false flag)", 0.1, 100.0, 5.0, 0.5, key=state.CALIBRATION_COST,
                                **state.PERSIST)
    button_col.button("Apply preset", on_click=_apply_preset, width="stretch")
    if st.session_state.get(PRESET_MESSAGE):
        st.warning(st.session_state[PRESET_MESSAGE])

    threshold = st.slider("Flag a row as hallucinated when SGI is below", lowest, highest,
                          key=state.CALIBRATION_THRESHOLD, step=(highest - lowest) / 1000 or 0.001, format="%.4f",
                          **state.PERSIST)
    metrics = calibration_services.threshold_metrics(data.frame, threshold)
    probability = calibration_services.p_grounded(active.calibrator, threshold)
    st.caption(f"At this threshold the calibrator gives P(grounded) = {probability:.3f}. "
               "Positive class = hallucinated: recall is the share of hallucinated rows flagged. The slider runs from "
               f"the lowest SGI to the {calibration_services.THRESHOLD_UPPER_QUANTILE:.0%} quantile ({highest:.4f}), "
               "so a few extreme rows cannot squeeze it.")
    cols = st.columns(5)
    for col, (name, value) in zip(cols, [("Precision", metrics.precision), ("Recall", metrics.recall),
                                         ("F1", metrics.f1), ("Flag rate", metrics.flag_rate),
                                         ("Accuracy", metrics.accuracy)]):
        col.metric(name, f"{value:.3f}")
    left, right = st.columns(2)
    left.plotly_chart(figures.confusion_figure(metrics), key=state.CALIBRATION_CONFUSION)
    right.plotly_chart(figures.threshold_curves(grid, threshold, x_range=(lowest, highest), log_x=page.log_axes()),
                       key=state.CALIBRATION_CURVES)
    if n_thresholds > len(grid):
        right.caption(f"Drawn through {len(grid):,} of the {n_thresholds:,} thresholds; the metrics above use "
                      "every row.")

    st.subheader("3. Save, load and download")
    save_col, download_col = st.columns(2)
    # Built when clicked: fingerprinting every row of a big file takes seconds.
    session_json = functools.partial(calibration_services.session_json, data.key, data.model, active.calibrator,
                                     threshold, data.frame)
    save_col.download_button("Save this session (JSON)", data=session_json,
                              file_name=page.download_name(data, "sgi_calibration_session.json"),
                              mime="application/json", on_click="ignore")
    download_col.download_button(
        "Download the scored file with P(grounded) and flags (CSV)",
        data=functools.partial(calibration_services.flagged_csv, data.frame, active.calibrator, threshold),
        file_name=page.download_name(data, "sgi_scores_flagged.csv"), mime="text/csv", on_click="ignore")


st.subheader("2. Threshold")
threshold_panel()

st.file_uploader("Load a saved session (JSON)", type=["json"], key=SESSION_UPLOAD, on_change=_load_session,
                 args=(data.key, data.frame, list(data.frames)))
if st.session_state.get(SESSION_MESSAGE):
    kind, message = st.session_state[SESSION_MESSAGE]
    (st.error if kind == "error" else st.success)(message)

st.subheader("4. A threshold that holds on new data")
st.write("The threshold above is chosen and judged on the same rows, which flatters it. Here it is chosen on a "
         "development half of the labelled rows and judged on the other, held-out half; rows that belong together "
         "stay on one side, so the two answers to one question never sit on both.")
group_choices = confound_services.keep_together_choices(data.table)
split_col, rule_col, value_col = st.columns([2, 2, 1], vertical_alignment="bottom")
group_column = split_col.selectbox("Keep together", group_choices, key=HOLDOUT_GROUPS, **state.PERSIST,
                                   format_func=lambda c: "rows with the same question" if c == "question" else c)
rule = rule_col.selectbox("Threshold rule on the development half", list(PRESETS), format_func=PRESETS.get,
                          key=HOLDOUT_RULE, **state.PERSIST)
target = cost = None
if rule.startswith("target"):
    target = value_col.number_input("target", 0.01, 1.0, 0.9, 0.01, key=HOLDOUT_TARGET, **state.PERSIST)
elif rule == "cost":
    cost = value_col.number_input("cost ratio", 0.1, 100.0, 5.0, 0.5, key=HOLDOUT_COST, **state.PERSIST)
try:
    made_by = confound_services.scored_with(data.key, data.model)
    policy, holdout = confound_services.holdout_policy(data.key, data.model, made_by, group_column,
                                                       active.calibrator.method, rule, target, cost, data.frame)
except page.SGIInputError as err:
    page.show_error(err)
    st.info("Keeping whole groups of a column with few groups on one side can leave a half with one label only: "
            "keep rows together by pair id or by question instead, or choose another rule.")
    st.stop()
held = holdout.heldout
cells = st.columns(3)
for cell, (name, value, ci) in zip(cells, [("Held-out precision", held.precision, holdout.precision_ci),
                                           ("Held-out recall", held.recall, holdout.recall_ci),
                                           ("Held-out flag rate", held.flag_rate, holdout.flag_rate_ci)]):
    cell.metric(name, number(value), help=f"95% Wilson interval {tables.interval(ci, in_text=True)}")
together = "question" if group_column == "question" else texts.plain(group_column)
setting = f" {target:g}" if target is not None else f" {cost:g}" if cost is not None else ""
st.caption(f"Flag SGI < {holdout.threshold:.4f}: chosen on {holdout.n_dev:,} development rows by the rule "
           f"'{PRESETS[rule]}{setting}', judged on {holdout.n_heldout:,} held-out rows (rows with the same "
           f"{together} on one side). 95% Wilson intervals: precision "
           f"{tables.interval(holdout.precision_ci, in_text=True)}, recall "
           f"{tables.interval(holdout.recall_ci, in_text=True)}, flag rate "
           f"{tables.interval(holdout.flag_rate_ci, in_text=True)}. On the development half: "
           f"precision {number(holdout.dev.precision)}, recall {number(holdout.dev.recall)}, flag rate "
           f"{number(holdout.dev.flag_rate)}.")
refusal = confound_services.policy_refusal(data.key, data.model, data.frame)
if refusal:
    st.warning(f"No policy is offered: {refusal}. `gate --write-policy` refuses it too (unless `--force`).")
if not refusal or st.checkbox("Offer the policy anyway (a coin-flip threshold)", key=POLICY_FORCE):
    st.download_button("Download the policy (JSON)", data=confound_services.policy_json(policy),
                       file_name=page.download_name(data, "policy.json"), mime="application/json", on_click="ignore",
                       key=POLICY_DOWNLOAD)
st.markdown(f"The policy holds this threshold, a {policy.calibrator['method']} calibrator fitted on the development "
            "half and the held-out precision and recall. In a CI pipeline, `python -m sgi_core gate FILE --policy "
            "policy.json` exits 1 when a new labelled file's precision or recall falls short of them by more than its "
            "own sampling error (add `--min-auroc X` to also demand a lower 95% AUROC bound of X).")
