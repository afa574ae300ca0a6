"""What the Review page draws: one row explained, the labelling controls, agreement, import and export.

Text from the data is drawn with ``st.text`` or inside a dataframe, never as Markdown
or HTML; every number comes from an sgi_core result through
:mod:`dashboard.services.review_services`.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import devices, page, state
from dashboard.services import geometry_services, review_services
from dashboard.views import geometry_charts, texts
from sgi_core.review.annotations import MAX_NOTE_CHARS, AnnotationStore
from sgi_core.columns import is_ordinary

QUEUE_NAMES = {"random": "random (seeded)", "stratified": "stratified over the score's deciles",
               "uncertain": "most uncertain (SGI near the threshold or P(grounded) near 0.5)",
               "disagreement": "most disagreement between two scores",
               "false_alarms": "worst false alarms: labelled grounded, lowest score",
               "missed_hallucinations": "worst misses: labelled hallucinated, highest score"}
LABEL_WORDS = {1.0: "grounded", 0.0: "hallucinated"}
LABEL_ICONS = {"grounded": ":material/check_circle:", "hallucinated": ":material/report:", "unsure": ":material/help:"}


def _support_colour(support: float) -> str:
    """Green for support above 0.5, amber below, the stronger the further from 0.5."""
    if support is None or math.isnan(support):
        return ""
    strength = min(abs(support - 0.5) * 2, 1.0)
    rgb = "27, 158, 119" if support >= 0.5 else "217, 95, 2"
    return f"background-color: rgba({rgb}, {0.15 + 0.6 * strength:.2f})"


def sentences(model: str, row) -> None:
    """Every response sentence shaded by its support in the context, its best-supporting context sentence beside it."""
    try:
        scored = review_services.sentence_support(model, row["question"], row["context"], row["response"],
                                                  devices.chosen_backend())
    except page.SGIInputError as err:
        page.show_error(err)
        return
    if scored.empty:
        st.caption("No sentence to score: the question, context or response is empty.")
        return
    table = scored[["sentence", "support", "context_piece"]].rename(
        columns={"sentence": "response sentence", "context_piece": "best-supporting context sentence"})
    styled = table.style.map(_support_colour, subset=["support"]).apply(
        lambda col: [_support_colour(s) for s in table["support"]], subset=["response sentence"]).format(
        {"support": "{:.3f}"})
    st.dataframe(styled, hide_index=True, width="stretch")
    st.caption("Support = cosine of the sentence and its nearest context sentence (sgi_core.detectors.claims). "
               "Green above 0.5, amber below; the deeper, the further from 0.5.")


def judge(table, row, position: int) -> None:
    """The judge's grades of the row, where the file has judge columns, and its statements where they are cached."""
    columns = [c for c in table.frame.columns if str(c).startswith("judge_") and c not in ("judge_model",
                                                                                          "judge_prompt_version")]
    if not columns:
        return
    cells = page.take_rows(table.frame[[*columns, *(["judge_model"] if "judge_model" in table.frame else [])]],
                           [position]).iloc[0]
    st.markdown("**The judge on this row** (higher = grounded)")
    model = cells.get("judge_model")
    statements = None if model is None or pd.isna(model) else review_services.judge_statements(row, str(model))
    if statements:
        st.dataframe(pd.DataFrame({"judge's statement": [text for text, _ in statements],
                                   "verdict": ["supported" if ok else "unsupported" for _, ok in statements]}),
                     hide_index=True)
    verdict = cells.get("judge_answer_consistency_binary")
    if verdict is not None and not pd.isna(verdict):
        st.write("Every statement supported by the passages." if float(verdict) == 1.0 else
                 "At least one statement **not supported** by the passages.")
    # A dataframe shows its cells as literal text: nothing to escape.
    st.dataframe(pd.DataFrame({"judge column": columns, "value": [str(cells[c]) for c in columns]}), hide_index=True)


def geometry(data, row) -> None:
    """SGI, the three angles and the row's canonical triangle."""
    metrics = st.columns(4)
    for column, (name, value) in zip(metrics, (("SGI", row["sgi"]), ("θ(q,c)", row["theta_qc"]),
                                               ("θ(r,q)", row["theta_rq"]), ("θ(r,c)", row["theta_rc"]))):
        column.metric(name, "not scored" if pd.isna(value) else f"{float(value):.3f}")
    if not is_ordinary(row["sgi_status"]):
        st.caption(f"No triangle: {texts.plain(row['sgi_status'])}.")
        return
    try:
        r_xy = review_services.row_triangle(row["theta_qc"], row["theta_rq"], row["theta_rc"])
    except page.SGIInputError as err:
        page.show_error(err)
        return
    # The point is drawn unlabelled so that the chart does not tell the reviewer the answer.
    shown = pd.DataFrame([row])[["input_row", "sgi", "response"]].assign(label=np.nan)
    figure = geometry_charts.triangle_figure(r_xy, shown, geometry_services.sgi_isolines())
    figure.update_layout(height=420, title="This row's canonical triangle (q at (0, 0), c at (1, 0))")
    st.plotly_chart(figure, key="review.triangle")


def profile(data, position: int) -> None:
    """The row's value and percentile in the file on every score."""
    result = review_services.profile(data.key, data.model, position, data.table, data.frame)
    st.dataframe(pd.DataFrame({"score": list(result.values), "this row": list(result.values.values()),
                               "percentile in the file": list(result.percentiles.values())}),
                 hide_index=True, column_config={"this row": st.column_config.NumberColumn(format="%.3f"),
                                                 "percentile in the file": st.column_config.NumberColumn(
                                                     format="%.0f")})


def decide(store, key: str, label: str) -> None:
    """Button callback: append the decision with the note and annotator, remember its id and store, and move on."""
    # The queue is recorded so that labels from a targeted queue are never taken for a random sample.
    focus = st.session_state.get(state.REVIEW_FOCUS)
    queue = "disagreement" if focus is not None else st.session_state.get(state.REVIEW_STRATEGY, "")
    decision_id = store.add(key, label, note=st.session_state.get(state.REVIEW_NOTE, ""),
                            annotator=st.session_state.get(state.REVIEW_ANNOTATOR, ""), queue=queue)
    st.session_state.setdefault(state.REVIEW_HISTORY, []).append((str(store.path), key, decision_id))
    st.session_state[state.REVIEW_NOTE] = ""
    if focus is not None:
        focus["done"] += 1


def undo() -> None:
    """Button callback: retract this session's latest decision by its id, in the store it was written to.

    Decisions given since by others (another tab, another annotator) on the same row stay.
    """
    history = st.session_state.get(state.REVIEW_HISTORY) or []
    if history:
        path, key, decision_id = history.pop()
        AnnotationStore(Path(path)).retract(key, decision_id, annotator=st.session_state.get(state.REVIEW_ANNOTATOR,
                                                                                             ""))
        focus = st.session_state.get(state.REVIEW_FOCUS)
        if focus is not None and focus["done"]:
            focus["done"] -= 1


def buttons(store, key: str) -> None:
    """Grounded / hallucinated / unsure / undo, and the note."""
    st.text_input("Note (optional, saved with the label)", key=state.REVIEW_NOTE, max_chars=MAX_NOTE_CHARS)
    columns = st.columns(4)
    for column, label in zip(columns, ("grounded", "hallucinated", "unsure")):
        column.button(label.capitalize(), key=f"review.{label}", on_click=decide, args=(store, key, label),
                      icon=LABEL_ICONS[label], width="stretch")
    history = st.session_state.get(state.REVIEW_HISTORY)
    elsewhere = texts.plain(Path(history[-1][0]).name) if history and history[-1][0] != str(store.path) else None
    columns[3].button("Undo my last label", key="review.undo", on_click=undo, disabled=not history, width="stretch",
                      help=f"Your last label was given in another file's annotations ({elsewhere}); undo takes it "
                           "back there." if elsewhere else
                           "Takes back the last label you gave in this session, and nothing anyone else gave.")


def row_panel(data, labels, store, position: int) -> None:
    """One row: its texts as plain text, the labelling controls, and why it may or may not be grounded."""
    row = page.take_rows(data.frame, [position]).iloc[0]
    key = review_services.key_of_row(row)
    st.subheader(f"Row {int(row['input_row']):,} of the file")
    own_id = review_services.row_id(data.table, position)
    if own_id is not None:
        st.caption(f"{texts.plain(own_id[0])}: {texts.plain(own_id[1])} (the file's own id column)")
    decided = labels.decisions[labels.decisions["key"] == key]
    if len(decided):
        st.caption(f"Labelled {decided['label'].iloc[0]} before; a new label replaces it.")
    buttons(store, key)
    left, right = st.columns(2)
    with left:
        st.markdown("**Question**")
        st.text(row["question"])
        st.markdown("**Context**")
        st.text(row["context"])
    with right:
        st.markdown("**Response**")
        st.text(row["response"])
        judge(data.table, row, position)
    st.markdown("**Each response sentence against the context**")
    sentences(data.model, row)
    geometry_column, profile_column = st.columns(2)
    with geometry_column:
        geometry(data, row)
    with profile_column:
        st.markdown("**Where this row stands in the file**")
        profile(data, position)


def disagreements(data, result, names: tuple, first, second, what: str) -> None:
    """Kappa with its interval, the rows where the two disagree, and a button to review them."""
    if result.n < 2:
        st.info(f"Needs rows labelled by both {texts.plain(names[0])} and {texts.plain(names[1])}: {result.n} so far.")
        return
    lo, hi = result.kappa_ci
    cells = st.columns(3)
    cells[0].metric("Cohen's kappa", "undefined" if math.isnan(result.kappa) else f"{result.kappa:.3f}",
                    help="1 = perfect agreement, 0 = what chance gives, below 0 = worse than chance.")
    cells[1].metric("Rows both labelled", f"{result.n:,}")
    cells[2].metric("Rows where they disagree", f"{result.n_disagree:,}")
    if not math.isnan(lo):
        st.caption(f"95% interval [{lo:.3f}, {hi:.3f}] (Fleiss, Cohen & Everitt's large-sample variance); "
                   f"observed agreement {result.observed_agreement:.3f}, by chance {result.chance_agreement:.3f}.")
    if not result.n_disagree:
        return
    rows = np.asarray(result.disagree_rows, dtype=np.int64)
    shown = page.take_rows(data.frame[["input_row", "question", "response"]], rows)
    st.dataframe(shown.assign(**{names[0]: [LABEL_WORDS[first[i]] for i in rows],
                                 names[1]: [LABEL_WORDS[second[i]] for i in rows]}), hide_index=True, height=240)
    if st.button(f"Review these {result.n_disagree:,} rows", key=f"review.focus.{what}"):
        st.session_state[state.REVIEW_FOCUS] = {"rows": rows.tolist(), "done": 0, "what": texts.plain(what)}
        st.rerun()
