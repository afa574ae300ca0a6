"""Monitor: this file as a new run of a saved policy: corrected hallucination rate, shift check, run history."""

import functools

import streamlit as st

from dashboard import page, state
from dashboard.services import monitor_services
from dashboard.views import monitor_views, texts
from sgi_core.render import monitor_report

POLICY_UPLOAD, POLICY_JSON = "monitor.policy_upload", "monitor.policy_json"
PICKED_RUN, RECORDED = "monitor.picked_run", "monitor.recorded"

st.title("Monitor")
st.write("Hold this file, a new run of your system, to a saved policy (the Calibration page's download or `gate "
         "--write-policy`): its hallucination rate from the labels of a seeded random sample of it (the corrected "
         "rate, which assumes only the rate changed, beside it), whether the run moved beyond that rate, and the "
         "policy's runs over time. `python -m sgi_core monitor RUN --policy P` "
         "does the same in a cron job and writes to the same history.")
data = page.scored_data()


def _load_policy() -> None:
    upload = st.session_state[POLICY_UPLOAD]
    if upload is None:
        return
    try:
        st.session_state[POLICY_JSON] = monitor_services.read_policy(upload.getvalue(), upload.name)
    except page.SGIInputError as err:
        st.session_state[POLICY_JSON] = None
        page.show_error(err)


st.file_uploader("Policy (JSON)", type=["json"], key=POLICY_UPLOAD, on_change=_load_policy)
policy_json = st.session_state.get(POLICY_JSON)
if not policy_json:
    st.info("Load a policy to hold this run to it.")
    st.stop()
try:
    summary = monitor_services.summary(data.key, data.model, policy_json, data.frame)
except page.SGIInputError as err:
    page.show_error(err)
    st.stop()

headline, corrected = summary.headline, summary.corrected
cells = st.columns(4)
cells[0].metric("Hallucination rate", monitor_views.headline_value(headline),
                help=(f"95% interval {monitor_views.rate_interval(headline.ci)}: {texts.plain(headline.method)}"
                      if headline.verified else "Known only from labels of the seeded random sample of this run."))
cells[1].metric("If only the rate changed", monitor_views.rate_value(corrected),
                help=f"Corrected rate, 95% interval {monitor_views.rate_interval(corrected.ci)}. "
                     f"{monitor_views.ASSUMPTION}")
cells[2].metric("Flag share (raw)", f"{corrected.flag_share:.1%}",
                help=f"95% Wilson interval {monitor_views.rate_interval(corrected.flag_share_ci)}: true flags and "
                     "false alarms mixed")
cells[3].metric("Verdict", summary.status)
(st.success if summary.status == "holds" else st.warning)(
    monitor_views.sentence(texts.plain(monitor_views.status_line(summary))))
st.write(monitor_views.sentence(texts.plain(monitor_views.rate_sentence(summary))))
st.caption(" ".join(monitor_views.sentence(texts.plain(text)) for text in (
    monitor_views.assumed_rate_sentence(summary), monitor_views.flag_sentence(summary)))
    + " " + monitor_views.ASSUMPTION)
if summary.answering_note:
    st.warning(monitor_views.sentence(texts.plain(summary.answering_note)))
(st.warning if summary.shift.detected or summary.shift.unchecked else st.success)(
    monitor_views.sentence(texts.plain(monitor_views.shift_sentence(summary))))
st.write(monitor_views.sentence(texts.plain(monitor_views.validation_sentence(summary))))
for line in monitor_views.limit_lines(summary):
    st.warning(texts.plain(line))
todo = monitor_views.what_to_do(summary)
if todo:
    st.info(monitor_views.sentence("what to do: " + texts.plain(todo)))


def _open_review() -> None:
    st.session_state[state.REVIEW_STRATEGY] = "random"
    st.session_state[state.REVIEW_SEED] = summary.plan.seed
    st.session_state[state.REVIEW_TARGET] = max(summary.plan.size, 1)


if st.button(f"Label the seeded random sample of {max(summary.plan.size, 1):,} rows on the Review page",
             on_click=_open_review):
    st.switch_page("app_pages/review.py")

st.subheader("Shift tests of this run")
st.dataframe(monitor_views.shift_frame(summary.shift.tests), hide_index=True)
st.caption(f"{texts.plain(summary.shift.method)}; the mixture's rate ranges over "
           f"{monitor_views.rate_interval(summary.shift.rate_range)}.")

st.subheader("Flagged rows")
st.dataframe(monitor_services.flagged_rows(data.key, data.model, policy_json, data.frame), hide_index=True)

st.subheader("History of this policy")
st.caption(f"Runs recorded in {texts.plain(monitor_services.database_path())} under policy {summary.policy_id}.")
if st.button("Record this run in the history"):
    st.session_state[RECORDED] = monitor_services.record(summary, data.key, data.model)
if st.session_state.get(RECORDED):
    st.success(f"Recorded as run {st.session_state[RECORDED]}.")
recorded = monitor_services.history(summary.policy_id)
runs = list(recorded.runs)
for damaged in recorded.damaged:
    st.warning(f"Skipped a damaged row of the history: {texts.plain(damaged)}.")
history = monitor_views.history_frame(runs)
# Built when clicked, from values bound now: the builder runs outside the session.
st.download_button("Download the report (HTML)", mime="text/html", on_click="ignore", key="monitor.report",
                   file_name=page.download_name(data, "sgi_monitor_report.html"),
                   data=functools.partial(monitor_report.monitor_report, summary, history,
                                          monitor_services.report_facts(data.key, data.model, summary)))
if not runs:
    st.info("No run of this policy is recorded yet.")
    st.stop()
st.plotly_chart(monitor_views.history_figure(history), key="monitor.history")
picked = st.selectbox("Run", [run.id for run in runs], index=len(runs) - 1, key=PICKED_RUN,
                      format_func=lambda i: f"run {i}: " + next(f"{r.recorded} · {r.file} · {r.status}"
                                                                for r in runs if r.id == i))
chosen = next(run for run in runs if run.id == picked)
st.dataframe(monitor_views.shift_frame(chosen.summary["shift"]["tests"]), hide_index=True)
