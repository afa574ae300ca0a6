"""Explorer: one triple's angles, SGI, calibrated probability and triangle bounds, live as it is edited."""

import streamlit as st

from dashboard import page, services, state
from dashboard.services import calibration_services
from dashboard.views import texts
from sgi_core.render import figures
from sgi_core.render.names import display_name

st.title("Explorer")
st.write("Pick a row of the data (or click a point on the Geometry page), or type your own triple. "
         "Edit the response and press Ctrl+Enter (or click outside the box) to see SGI move.")

data = page.scored_data()
frame = data.frame


def _open_row() -> None:
    row = page.file_row(frame, st.session_state[state.EXPLORER_ROW])
    state.pick_triple(int(row["input_row"]), row["question"], row["context"], row["response"])


if state.EXPLORER_ROW not in st.session_state:
    st.session_state[state.EXPLORER_ROW] = int(frame["input_row"].iloc[0])
    _open_row()
st.number_input(f"Row of the file (1 to {len(frame):,})", min_value=1, max_value=len(frame), step=1,
                key=state.EXPLORER_ROW, on_change=_open_row, **state.PERSIST)
source = page.file_row(frame, st.session_state[state.EXPLORER_ROW])
label = figures.label_names([source["label"]])[0]
st.caption(f"Row {source['input_row']} is labelled **{label}**; its SGI in the scored file is {source['sgi']:.4f} "
           f"({texts.plain(source['sgi_status'])}). Typing here does not change the file.")

question = st.text_area("Question", key=state.EXPLORER_TEXTS["question"], height=80, **state.PERSIST)
context = st.text_area("Context", key=state.EXPLORER_TEXTS["context"], height=140, **state.PERSIST)
response = st.text_area("Response", key=state.EXPLORER_TEXTS["response"], height=80, **state.PERSIST)

try:
    # The row's own passages while its context is unchanged; typed text is split at its blank lines.
    passages = services.row_passages_of(source) if context == source["context"] else None
    scores = services.triple_score(data.model, question, context, response, backend=services.chosen_backend(),
                                   context_strategy=data.key.context_strategy, passages=passages)
except page.SGIInputError as err:
    page.show_error(err)
    st.stop()

cols = st.columns(5)
cols[0].metric(display_name("theta_rq"), f"{scores.theta_rq:.4f} rad")
cols[1].metric("θ(r,c) response-context", f"{scores.theta_rc:.4f} rad")
cols[2].metric("θ(q,c) question-context", f"{scores.theta_qc:.4f} rad")
cols[3].metric("SGI = θ(r,q) / θ(r,c)", f"{scores.sgi:.4f}")
try:
    active = page.active_calibration(data)
    probability = calibration_services.p_grounded(active.calibrator, scores.sgi)
    cols[4].metric("P(grounded)", f"{probability:.3f}", help=f"Calibrator: {active.origin}.")
except page.SGIInputError as err:
    cols[4].metric("P(grounded)", "n/a", help=f"No calibrator: {err}")

st.plotly_chart(figures.bounds_figure(scores), key=state.EXPLORER_BOUNDS)
st.caption(f"The spherical triangle inequality keeps θ(r,q) between |θ(q,c) - θ(r,c)| and θ(q,c) + θ(r,c), so for "
           f"this context and θ(r,c) SGI can only lie in [{scores.sgi_lower:.3f}, {scores.sgi_upper:.3f}]. "
           "The closer the context is to the question, the tighter this range squeezes SGI toward 1.")
shown, shown_note = page.drawn(figures.plottable(frame))
st.plotly_chart(figures.position_figure(shown, scores.sgi, log_x=page.log_axes()), key=state.EXPLORER_POSITION)
if shown_note:
    st.caption(shown_note)
percentile = services.sgi_percentile(data.key, data.model, scores.sgi, frame)
st.caption(f"This triple's SGI is at or above that of {percentile:.1f}% of the scored rows of the file.")
