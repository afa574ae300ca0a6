"""The Review page's two-runs mode: one matched key, the base and the new answer side by side, one label each."""

from __future__ import annotations

import streamlit as st

from dashboard import page, state
from dashboard.app_pages import review_panel
from dashboard.services import paired_review
from dashboard.views import texts

#: Differences of hallucination rate the estimate can be asked to decide.
EFFECTS = (0.02, 0.05, 0.1, 0.15, 0.2)


def _label(store, key: str, label: str) -> None:
    """Button callback: append the decision to the store of the run that gave the answer, and remember it for undo."""
    decision_id = store.add(key, label, note="two-runs review", queue="random",
                            annotator=st.session_state.get(state.REVIEW_ANNOTATOR, ""))
    st.session_state.setdefault(state.REVIEW_HISTORY, []).append((str(store.path), key, decision_id))


def _answer(column, title: str, store, key: str, text: str, decided: str | None, slot: str, at: int) -> None:
    with column:
        st.markdown(f"**{title}**" + (f" (labelled {decided})" if decided else ""))
        st.text(text)
        buttons = st.columns(3)
        for button, label in zip(buttons, ("grounded", "hallucinated", "unsure")):
            button.button(label.capitalize(), key=review_panel.label_button_key(label, at, slot), on_click=_label,
                          args=(store, key, label), icon=review_panel.LABEL_ICONS[label], width="stretch",
                          type="primary" if decided == label else "secondary")


def _estimate(shift, n_left: int) -> None:
    st.markdown("**What the labels say so far**")
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


def paired_mode(data) -> None:
    """Label the base and the new run's answers to one key at a time, in a seeded random order."""
    try:
        pair = paired_review.open_pair(data)
    except page.SGIInputError as err:
        page.show_error(err)
        return
    if pair is None:
        st.info("Open the new run on the Compare runs page first: this mode labels its answers beside this file's.")
        return
    labels = paired_review.pair_labels(pair)
    seed = int(st.number_input("Seed of the random order", min_value=0, value=0, step=1, key=state.REVIEW_SEED,
                               **state.PERSIST))
    left = paired_review.order(pair, labels, seed)
    st.caption(f"Base: this file; new: {texts.plain(pair.new_name)}. Keys in a random order (seed {seed}), so the "
               "keys labelled in both runs are a random sample, as the estimates assume. Labels go to each file's "
               f"own annotations; {len(left):,} of {len(pair.matched.keys):,} matched keys left.")
    try:
        _estimate(paired_review.estimate(pair, labels, seed), len(left))
    except page.SGIInputError as err:
        page.show_error(err)
    if not len(left):
        st.success("Both answers to every matched key are labelled.")
        return
    at = int(left[0])
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
            at)
    _answer(new_col, "New run's answer", pair.new_store, pair.new_keys[at], new_row["response"], shown[1], "new", at)
    st.button("Undo my last label", key="review.pair.undo", on_click=review_panel.undo,
              disabled=not st.session_state.get(state.REVIEW_HISTORY),
              help="Takes back the last label you gave in this session, in the run's file it went to.")
