"""The Review page's two-runs mode: one matched key, the base and the new answer side by side, one label each.

The keys come from the random queue (a seeded order) or the active queue (the keys ``sample --baseline --design
active`` draws, each label keeping its key's probability); the estimate reads the labels under their design.
"""

from __future__ import annotations

import streamlit as st

from dashboard import page, state
from dashboard.app_pages import review_panel
from dashboard.services import paired_review
from dashboard.views import texts
from sgi_core.render.names import display_name

#: Differences of hallucination rate the estimate can be asked to decide.
EFFECTS = (0.02, 0.05, 0.1, 0.15, 0.2)


def _label(store, key: str, label: str, queue: str, design: dict | None) -> None:
    """Button callback: append the decision to the store of the run that gave the answer, and remember it for undo.

    ``queue`` is recorded with it, and ``design`` (the active queue's design and the key's probability).
    """
    decision_id = store.add(key, label, note="two-runs review", queue=queue, design=design,
                            annotator=st.session_state.get(state.REVIEW_ANNOTATOR, ""))
    st.session_state.setdefault(state.REVIEW_HISTORY, []).append((str(store.path), key, decision_id))


def _answer(column, title: str, store, key: str, text: str, decided: str | None, slot: str, at: int,
            queue: tuple) -> None:
    with column:
        st.markdown(f"**{title}**" + (f" (labelled {decided})" if decided else ""))
        st.text(text)
        buttons = st.columns(3)
        for button, label in zip(buttons, ("grounded", "hallucinated", "unsure")):
            button.button(label.capitalize(), key=review_panel.label_button_key(label, at, slot), on_click=_label,
                          args=(store, key, label, *queue), icon=review_panel.LABEL_ICONS[label], width="stretch",
                          type="primary" if decided == label else "secondary")


def _active_estimate(result) -> None:
    """The active sample's estimate once all its keys are labelled in both runs, as `compare --labels` reads it."""
    shift, drawn = result.shift, result.design.n_drawn
    if shift is None:
        st.caption(f"{result.n_labelled:,} of the {drawn:,} keys the active sample draws are labelled in both runs. "
                   "Its estimate appears once every one is: each label weighs 1 / the probability its key was drawn "
                   "with, which holds for the whole sample only (a key marked unsure needs a label too).")
        return
    cells = st.columns(3)
    cells[0].metric("Hallucination rate, base (active)", f"{shift.rate_base:.1%}")
    cells[1].metric("Hallucination rate, new (active)", f"{shift.rate_new:.1%}")
    cells[2].metric(f"New − base: {shift.verdict}", f"{shift.difference:+.3f}",
                    delta=f"[{shift.ci[0]:+.3f}, {shift.ci[1]:+.3f}]", delta_color="off",
                    help="95% interval, valid whatever the predictor is worth: every matched key enters through the "
                         "predictor's mapping to P(hallucinated), fitted out of fold, and each label weighs 1 / the "
                         "probability its key was drawn with.")
    st.caption(texts.plain(f"{shift.verdict} by the {shift.method} estimate (95% interval; {shift.n_keys:,} keys "
                           "labelled in both runs): the estimate `compare --labels` makes of the same sample."))


def _estimate(result, n_left: int) -> None:
    st.markdown("**What the labels say so far**")
    if result.design is not None:
        _active_estimate(result)
        return
    shift = result.shift
    if shift is None:
        st.caption("Label both answers to a few keys: the paired estimate appears once both runs have labels.")
        return
    cells = st.columns(3)
    # The labels' own rates on the keys labelled in both: their difference is the sequence's estimate.
    cells[0].metric("Hallucination rate, base (labels only)", f"{shift.labels_rate_base:.1%}")
    cells[1].metric("Hallucination rate, new (labels only)", f"{shift.labels_rate_new:.1%}")
    seq = shift.sequential
    if seq is None:
        cells[2].metric("New − base", "none yet", help="Needs keys labelled in both runs.")
    else:
        cells[2].metric(f"New − base: {shift.sequential_verdict}", f"{seq.estimate:+.3f}",
                        delta=f"[{seq.ci[0]:+.3f}, {seq.ci[1]:+.3f}]", delta_color="off",
                        help=f"95% {seq.method}: stop labelling whenever it is decided. The fixed-sample interval, "
                             f"valid only for a number of keys planned in advance: [{shift.ci[0]:+.3f}, "
                             f"{shift.ci[1]:+.3f}] ({shift.method})")
    st.caption(f"{shift.n_keys:,} keys labelled in both runs; {shift.base_only:,} hallucinated in the base run only, "
               f"{shift.new_only:,} in the new run only. The interval is a confidence sequence: it stays valid when "
               "you stop as soon as it excludes the change you care about.")
    effect = st.select_slider("Difference of hallucination rate to decide", EFFECTS, value=0.1,
                              key=state.REVIEW_PAIR_EFFECT, format_func=lambda e: f"{e:.0%}")
    needed = paired_review.keys_needed(shift, effect, n_left)
    if needed is not None and needed.n_more >= 0:
        capped = " (every key left: more cannot be labelled)" if needed.capped else ""
        st.caption(f"About {needed.n_more:,} more keys labelled in both runs{capped} would let McNemar's test "
                   f"detect a difference of {effect:.0%} (power {needed.power:.0%}, from the discordance seen so "
                   f"far, {needed.discordance:.0%} of keys; Connor 1987).")


def _queue(pair, labels: dict, seed: int):
    """The queue's controls and the matched keys left on it, with what a label given on it records."""
    n_keys = len(pair.matched.keys)
    controls = st.columns(3)
    queue = controls[0].selectbox("Queue", paired_review.QUEUES, key=state.REVIEW_PAIR_QUEUE, **state.PERSIST,
                                  format_func=review_panel.QUEUE_NAMES.get)
    if queue == "random":
        left = paired_review.order(pair, labels, seed)
        st.caption(f"Keys in a random order (seed {seed}), so the keys labelled in both runs are a random sample, as "
                   f"the estimates assume. {len(left):,} of {n_keys:,} matched keys left.")
        return left, None
    predictors = paired_review.predictor_columns(pair)
    if not predictors:
        st.warning("The active queue needs a probability column in both runs (a grounding model's or a judge's "
                   "P(grounded)) to draw from; these runs share none.")
        return None, None
    predictor = controls[1].selectbox("Predictor (a probability column of both runs, higher = grounded)", predictors,
                                      key=state.REVIEW_PAIR_PREDICTOR, **state.PERSIST, format_func=display_name)
    target = int(controls[2].number_input("Target number of labels", min_value=1, max_value=n_keys,
                                          value=min(40, n_keys), step=10, key=state.REVIEW_PAIR_TARGET,
                                          **state.PERSIST))
    drawn = paired_review.active_queue(pair, predictor, float(target), seed)
    left = drawn.rows[~(labels["decided_base"] & labels["decided_new"])[drawn.rows]]
    st.caption(texts.plain(f"The keys `python -m sgi_core sample NEW --baseline BASE --key "
                           f"{pair.matched.match.key} --design active --predictor {predictor} --n {target} --seed "
                           f"{seed}` draws: more where the predictor is unsure of the paired difference, each with "
                           "the probability it was drawn with, which both answers' labels keep. "
                           f"{len(left):,} of its {drawn.design.n_drawn:,} keys left")
               + (f"; this key was drawn with probability {drawn.record(int(left[0]))['inclusion_probability']:.3f}."
                  if len(left) else "."))
    return left, drawn


def paired_mode(data) -> None:
    """Label the base and the new run's answers to one key at a time, from the random or the active queue."""
    try:
        pair = paired_review.open_pair(data)
    except page.SGIInputError as err:
        page.show_error(err)
        return
    if pair is None:
        st.info("Open the new run on the Compare runs page first: this mode labels its answers beside this file's.")
        return
    labels = paired_review.pair_labels(pair)
    seed = int(st.number_input("Seed of the queue's order", min_value=0, value=0, step=1, key=state.REVIEW_SEED,
                               **state.PERSIST))
    st.caption(f"Base: this file; new: {texts.plain(pair.new_name)}. Labels go to each file's own annotations.")
    try:
        left, drawn = _queue(pair, labels, seed)
    except page.SGIInputError as err:
        page.show_error(err)
        return
    if left is None:
        return
    try:
        _estimate(paired_review.estimate(pair, labels, seed), len(left))
    except page.SGIInputError as err:
        page.show_error(err)
    if not len(left):
        st.success("Both answers to every key of this queue are labelled.")
        return
    at = int(left[0])
    queue = ("random", None) if drawn is None else ("active", drawn.record(at))
    names = {1.0: "grounded", 0.0: "hallucinated"}
    base_row = page.take_rows(pair.base_frame, [pair.matched.first_row_base[at]]).iloc[0]
    new_row = page.take_rows(pair.new_frame, [pair.matched.first_row_new[at]]).iloc[0]
    st.subheader("One question, two answers")
    st.caption(f"Matched on {texts.plain(pair.matched.match.key)}: {texts.plain(str(pair.matched.keys[at])[:120])}")
    st.markdown("**Question**")
    st.text(base_row["question"])
    with st.expander("Context of each run"):
        st.text(base_row["context"])
        if new_row["context"] != base_row["context"]:
            st.markdown("**New run's context**")
            st.text(new_row["context"])
    base_col, new_col = st.columns(2)
    decided = [labels["decided_base"][at], labels["decided_new"][at]]
    shown = [names.get(labels["label_base"][at], "unsure") if decided[0] else None,
             names.get(labels["label_new"][at], "unsure") if decided[1] else None]
    _answer(base_col, "Base run's answer", pair.base_store, pair.base_keys[at], base_row["response"], shown[0], "base",
            at, queue)
    _answer(new_col, "New run's answer", pair.new_store, pair.new_keys[at], new_row["response"], shown[1], "new", at,
            queue)
    st.button("Undo my last label", key="review.pair.undo", on_click=review_panel.undo,
              disabled=not st.session_state.get(state.REVIEW_HISTORY),
              help="Takes back the last label you gave in this session, in the run's file it went to.")
