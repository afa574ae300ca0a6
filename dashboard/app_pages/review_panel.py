"""What the Review page draws: one row explained, the labelling controls, agreement, import and export.

Text from the data is drawn with ``st.text`` or inside a dataframe, never as Markdown
or HTML; every number comes from an sgi_core result through
:mod:`dashboard.services.review_services` and :mod:`dashboard.services.evidence_services`.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import devices, page, state
from dashboard.services import (
    active_review,
    evidence_services,
    geometry_services,
    label_exchange_services,
    review_services,
)
from dashboard.views import evidence, geometry_charts, texts
from sgi_core.render.names import display_name

QUEUE_NAMES = {"random": "random (seeded)", "stratified": "stratified over the score's deciles",
               "uncertain": "most uncertain (SGI near the threshold or P(grounded) near 0.5)",
               "disagreement": "most disagreement between two scores",
               "false_alarms": "worst false alarms: labelled grounded, lowest score",
               "missed_hallucinations": "worst misses: labelled hallucinated, highest score",
               "active": "active (more labels where a predictor is unsure)"}
LABEL_WORDS = {1.0: "grounded", 0.0: "hallucinated"}
LABEL_ICONS = {"grounded": ":material/check_circle:", "hallucinated": ":material/report:", "unsure": ":material/help:"}


def label_button_key(label: str, row, slot: str = "") -> str:
    """Session key of a label button, one per row: a button pressed on one row is a new widget on the next.

    ``row`` names the row (its file row, or the matched key's place in two-runs mode) and
    ``slot`` the answer in two-runs mode (``"base"`` or ``"new"``).
    """
    return f"review.{f'pair.{slot}.' if slot else ''}{label}.{row}"


def sentences(data, row, position: int) -> None:
    """Every response sentence shaded by its similarity's percentile in the file, its nearest context sentence by it."""
    backend = devices.chosen_backend()
    try:
        scored, supports = evidence_services.sentence_evidence(data, row, position, backend)
    except page.SGIInputError as err:
        page.show_error(err)
        return
    if scored.empty:
        st.caption("No sentence to score: the question, context or response is empty.")
        return
    st.dataframe(evidence.evidence_table(scored), hide_index=True, width="stretch")
    st.caption(evidence.evidence_caption(supports))
    roc = evidence_services.weakest_sentence_roc(data.key, data.model, backend, supports,
                                                 data.frame["label"].to_numpy())
    st.caption(evidence.weakest_line(roc))
    grounding_sentences(data, row, position)


def grounding_sentences(data, row, position: int) -> None:
    """Each grounding model computed on the Detectors page: every sentence's best chunk and P(supported)."""
    grounding = dict(state.resources_run(data.key, data.model)).get("grounding_models")
    if not grounding:
        return
    try:
        found = evidence_services.grounding_evidence(grounding, row["context"], row["response"],
                                                     evidence_services.passages_of_row(data.table, data.frame,
                                                                                       position))
    except page.SGIInputError as err:
        page.show_error(err)
        return
    for name, scored in found.items():
        st.markdown(f"**Grounding model {texts.plain(name)}**")
        st.dataframe(evidence.grounding_table(scored), hide_index=True, width="stretch")
    st.caption("P(supported) = the model's probability that the chunk supports the sentence, the best over the "
               "context's chunks; a token classifier's marked spans are the response's words it reads as unsupported "
               "(P(hallucinated) >= 0.5).")


def context(passages: tuple, text: str) -> None:
    """The context as plain text; passages apart, numbered, when the row has more than one."""
    if len(passages) <= 1:
        st.text(text)
        return
    for number, passage in enumerate(passages, start=1):
        with st.container(border=True):
            st.caption(f"Passage {number} of {len(passages)}")
            st.text(passage)


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
    for column, (name, value) in zip(metrics, ((display_name("sgi"), row["sgi"]), ("θ(q,c)", row["theta_qc"]),
                                               ("θ(r,q)", row["theta_rq"]), ("θ(r,c)", row["theta_rc"]))):
        column.metric(name, "not scored" if pd.isna(value) else f"{float(value):.3f}")
    if not review_services.has_triangle(row["sgi_status"]):
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


def decide(store, key: str, label: str, position: int, design: dict | None = None) -> None:
    """Button callback: append the decision with the note and annotator, remember its id and store, and move on.

    The row's key and position come with the button (its ``args``), never from what the
    page shows when the click arrives: a click on a row's button while the page is already
    drawing the next one labels the row it was drawn for, and moves a focus list on only
    when that row is the one in focus. ``design``: the active queue's design and the row's
    inclusion probability, kept with the decision.
    """
    # The queue is recorded so that labels from a targeted queue are never taken for a random sample.
    focus = st.session_state.get(state.REVIEW_FOCUS)
    queue = "disagreement" if focus is not None else st.session_state.get(state.REVIEW_STRATEGY, "")
    current = st.session_state.get(state.REVIEW_NOTE_KEY) == key
    decision_id = store.add(key, label, note=st.session_state.get(state.REVIEW_NOTE, "") if current else "",
                            annotator=st.session_state.get(state.REVIEW_ANNOTATOR, ""), queue=queue,
                            design=design if focus is None else None)
    st.session_state.setdefault(state.REVIEW_HISTORY, []).append((str(store.path), key, decision_id))
    if current:
        st.session_state[state.REVIEW_NOTE] = ""
    if focus is not None and focus["done"] < len(focus["rows"]) and focus["rows"][focus["done"]] == position:
        focus["done"] += 1


def undo() -> None:
    """Button callback: retract this session's latest decision by its id, in the store it was written to.

    Decisions given since by others (another tab, another annotator) on the same row stay.
    """
    history = st.session_state.get(state.REVIEW_HISTORY) or []
    if history:
        path, key, decision_id = history.pop()
        review_services.retract(path, key, decision_id, annotator=st.session_state.get(state.REVIEW_ANNOTATOR, ""))
        focus = st.session_state.get(state.REVIEW_FOCUS)
        if focus is not None and focus["done"]:
            focus["done"] -= 1


def buttons(store, key: str, row, position: int, design: dict | None = None) -> None:
    """Grounded / hallucinated / unsure (keyed by ``row``, :func:`label_button_key`) / undo, and the note.

    Each button carries the row's key and position; the note typed goes with the row it
    was typed under (:data:`~dashboard.state.REVIEW_NOTE_KEY`).
    """
    if st.session_state.get(state.REVIEW_NOTE_KEY) != key:
        st.session_state[state.REVIEW_NOTE] = ""
        st.session_state[state.REVIEW_NOTE_KEY] = key
    st.text_input("Note (optional, saved with the label)", key=state.REVIEW_NOTE,
                  max_chars=review_services.MAX_NOTE_CHARS)
    columns = st.columns(4)
    for column, label in zip(columns, ("grounded", "hallucinated", "unsure")):
        column.button(label.capitalize(), key=label_button_key(label, row), on_click=decide,
                      args=(store, key, label, position, design), icon=LABEL_ICONS[label], width="stretch")
    history = st.session_state.get(state.REVIEW_HISTORY)
    elsewhere = texts.plain(Path(history[-1][0]).name) if history and history[-1][0] != str(store.path) else None
    columns[3].button("Undo my last label", key="review.undo", on_click=undo, disabled=not history, width="stretch",
                      help=f"Your last label was given in another file's annotations ({elsewhere}); undo takes it "
                           "back there." if elsewhere else
                           "Takes back the last label you gave in this session, and nothing anyone else gave.")


def row_panel(data, labels, store, position: int, design: dict | None = None) -> None:
    """One row: its texts as plain text, the labelling controls, and why it may or may not be grounded.

    ``design``: where the row comes from the active queue, its design and inclusion probability, saved with the label.
    """
    row = page.take_rows(data.frame, [position]).iloc[0]
    key = review_services.key_of_row(row)
    st.subheader(f"Row {int(row['input_row']):,} of the file")
    own_id = review_services.row_id(data.table, position)
    if own_id is not None:
        st.caption(f"{texts.plain(own_id[0])}: {texts.plain(own_id[1])} (the file's own id column)")
    decided = labels.decision(position)
    if decided is not None:
        st.caption(f"Labelled {decided} before; a new label replaces it.")
    buttons(store, key, int(row["input_row"]), position, design)
    left, right = st.columns(2)
    with left:
        st.markdown("**Question**")
        st.text(row["question"])
        st.markdown("**Context**")
        context(evidence_services.passages_of_row(data.table, data.frame, position), row["context"])
    with right:
        st.markdown("**Response**")
        st.text(row["response"])
        judge(data.table, row, position)
    st.markdown("**Each response sentence against the context**")
    sentences(data, row, position)
    geometry_column, profile_column = st.columns(2)
    with geometry_column:
        geometry(data, row)
    with profile_column:
        st.markdown("**Where this row stands in the file**")
        profile(data, position)


def _copy_labels(data, path: str) -> None:
    """Button callback: import the decisions another annotation file holds on this file's rows."""
    done = label_exchange_services.copy_labels_from(data.key, data.table, path)
    st.toast(f"{done.n_added:,} labels copied from {Path(path).name} ({done.n_already:,} already here).")


def labels_elsewhere(data, match) -> None:
    """Say where this file's rows are labelled under another file name, and offer to copy the labels here."""
    name = texts.plain(Path(match.path).name)
    st.info(f"{match.n_rows:,} rows of this file have decisions in the annotations of {name} ({match.n_labelled:,} "
            "labelled grounded or hallucinated): the same texts, opened before under another file name (a trace "
            "export, a copy in another format). Copy them here to use them on every page of this file.")
    st.button(f"Copy the labels from {name}", key=f"review.copy.{match.path}", on_click=_copy_labels,
              args=(data, match.path))


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


def active_controls(data, scores: dict) -> None:
    """The active queue's predictor, and what its labels are: the target number is the sample's expected size."""
    columns = active_review.predictor_columns(data.table, scores)
    if not columns:
        st.info("The active queue draws where a predictor is unsure, so it needs a probability column in the file "
                "(values in [0, 1], higher = grounded: a grounding model's or a judge's P(grounded)); this file has "
                "none. Score it with a grounding model (`python -m sgi_core score FILE -o scored.parquet "
                "--grounding-model NAME=DIR`) or a judge, or use another queue.")
        st.stop()
    predictor = st.selectbox("Predictor (a probability column, higher = grounded)", columns,
                             key=state.REVIEW_PREDICTOR, **state.PERSIST, format_func=display_name)
    target = active_review.active_budget(data.key, st.session_state.get(state.REVIEW_TARGET, 100), data.table)
    seed = st.session_state.get(state.REVIEW_SEED, 0)
    st.caption(f"The keys `python -m sgi_core sample FILE --design active --predictor {predictor} --n {target} "
               f"--seed {seed}` draws (the target number of labels below, at most the file's keys, is --n): more where "
               "the predictor is unsure, "
               "each with the probability it was drawn with. Every label given here keeps that probability, and the "
               "exported table (Import / export) is a --labels file that `compare` and `monitor` weigh back by it. "
               "The pages reading the annotations take these labels as not a random sample.")
