"""Review: label your own rows one at a time from a queue, each row explained; agreement and labels still needed."""

import streamlit as st

from dashboard import page, state
from dashboard.app_pages import review_pairs_panel, review_panel
from dashboard.services import active_review, label_exchange_services, review_services
from dashboard.views import texts
from sgi_core.render import names

st.title("Review")
st.write("Label your own rows: every page then measures the detectors on them. Rows come one at a time from the "
         "queue you pick; each is explained by its sentences' similarity to the context, its geometry and where it "
         "stands in the file. Labels are saved as you give them, keyed by the row's question, context and response "
         "texts, so the same rows in CSV or Parquet, in any order, find them again.")

data = page.scored_data()
mode = st.radio("Review", ["one file", "two runs"], key=state.REVIEW_MODE, horizontal=True, **state.PERSIST,
                format_func={"one file": "this file's rows",
                             "two runs": "two runs side by side (this file and the Compare runs page's new run)"}.get)
if mode == "two runs":
    review_pairs_panel.paired_mode(data)
    st.stop()
labels = review_services.label_state(data.key)
store = review_services.annotation_store(data.key)

st.session_state.setdefault(state.LABEL_SOURCE, "both")
st.radio("Labels every page uses", review_services.LABEL_SOURCES, key=state.LABEL_SOURCE, horizontal=True,
         **state.PERSIST, format_func={"file": "file's label column", "annotations": "annotations",
                                       "both": "both, where they agree"}.get)
st.caption(review_services.label_source_line(data).capitalize())
for message in labels.damaged:
    st.warning(texts.plain(message), icon=":material/warning:")
if labels.annotations.n_labels and not labels.annotations.n_matched:
    st.warning(f"None of the {labels.annotations.n_labels:,} labelled rows in the annotations file is in this file: "
               "it holds labels of other data.")
for match in label_exchange_services.labels_elsewhere(data.key, data.table, store):
    review_panel.labels_elsewhere(data, match)

label_tab, agreement_tab, files_tab = st.tabs(["Label rows", "Agreement and labels needed", "Import / export"])

with label_tab:
    scores = review_services.queue_scores(data.key, data.model, data.table, data.frame)
    controls = st.columns(4)
    strategy = controls[0].selectbox("Queue", active_review.QUEUES, key=state.REVIEW_STRATEGY, **state.PERSIST,
                                     format_func=review_panel.QUEUE_NAMES.get)
    score = controls[1].selectbox("Score the queue follows", list(scores), key=state.REVIEW_SCORE, **state.PERSIST,
                                  format_func=names.display_name)
    second = controls[2].selectbox("Second score (disagreement queue)", [s for s in scores if s != score],
                                   key=state.REVIEW_SECOND_SCORE, disabled=strategy != "disagreement",
                                   format_func=names.display_name)
    seed = int(controls[3].number_input("Seed", min_value=0, value=0, step=1, key=state.REVIEW_SEED, **state.PERSIST))
    if strategy == "active":
        review_panel.active_controls(data, scores)
    elif strategy != "random":
        st.caption("This queue is not a random order: the labels it gives are saved with its name, and the Compare "
                   "runs page and `compare` make no prediction-powered estimate from them (it needs a random sample). "
                   "Every other statistic uses them.")
    people = st.columns(2)
    people[0].text_input("Annotator (optional)", key=state.REVIEW_ANNOTATOR, **state.PERSIST,
                         max_chars=review_services.MAX_NOTE_CHARS)
    target = int(people[1].number_input("Target number of labels", min_value=1, value=100, step=10,
                                        key=state.REVIEW_TARGET, **state.PERSIST))
    n_done = labels.n_labelled
    st.progress(min(n_done / target, 1.0), text=f"{n_done:,} of {target:,} rows labelled" + (
        f" ({labels.n_unsure:,} more marked unsure: no label, not counted)" if labels.n_unsure else ""))

    focus = st.session_state.get(state.REVIEW_FOCUS)
    position, design = None, None
    if focus is not None and focus["done"] < len(focus["rows"]):
        position = focus["rows"][focus["done"]]
        st.info(f"Reviewing the rows where {focus['what']} disagree: {focus['done'] + 1:,} of {len(focus['rows']):,}.")
        if st.button("Back to the queue", key="review.leave_focus"):
            st.session_state.pop(state.REVIEW_FOCUS)
            st.rerun()
    else:
        threshold = st.session_state.get(state.CALIBRATION_THRESHOLD) if strategy == "uncertain" else None
        probability, origin = None, None
        if strategy == "uncertain" and threshold is None:
            try:
                calibration = page.active_calibration(data)
                probability = calibration.calibrator.predict(scores[review_services.UNCERTAIN_SCORE])
                origin = calibration.origin
            except page.SGIInputError:
                pass
        if strategy == "uncertain":
            score = review_services.UNCERTAIN_SCORE
            st.caption(f"Most uncertain on SGI: nearest the threshold {threshold:.3f} set on the Calibration "
                       "session page." if threshold is not None else
                       f"Most uncertain on SGI: P(grounded) nearest 0.5 ({origin})." if origin else
                       "Most uncertain needs a threshold (Calibration session page) or labels to calibrate SGI.")
        try:
            budget = active_review.active_budget(data.key, target, data.table)
            order = (active_review.active_queue(data.key, st.session_state.get(state.REVIEW_PREDICTOR), float(budget),
                                                seed, data.table) if strategy == "active" else
                     review_services.queue(data.key, data.model, strategy, seed, score, second, threshold, origin,
                                           scores, data.frame["label"].to_numpy(), probability, data.table))
        except page.SGIInputError as err:
            page.show_error(err)
            st.stop()
        remaining = order.rows[~labels.annotated[order.rows]]
        if not len(remaining):
            st.success("Every row this queue holds is labelled." if len(order.rows) else "This queue holds no row.")
        else:
            position = int(remaining[0])
            if strategy == "active":
                design = order.record(position)
                st.caption(f"Active sample, seed {seed}: {len(remaining):,} of its {order.design.n_drawn:,} keys "
                           f"left; this row was drawn with probability {design['inclusion_probability']:.3f}.")
            else:
                st.caption(f"Queue: {review_panel.QUEUE_NAMES[strategy]}, seed {seed}: {len(remaining):,} rows left"
                           + (f"; {order.n_left_out:,} rows without the label it needs." if order.n_left_out else "."))
    if position is not None:
        review_panel.row_panel(data, labels, store, position, design)

with agreement_tab:
    st.subheader("The file's labels against the annotations")
    version = labels.path + review_services.store_version(store)
    result = review_services.kappa(data.key, "file", version, labels.file_label, labels.annotations.label)
    review_panel.disagreements(data, result, ("file label", "annotation"), labels.file_label,
                               labels.annotations.label, "the file's labels and the annotations")
    st.subheader("A judge's verdicts against the annotations")
    verdicts = review_services.judge_verdict_columns(data.table)
    if not verdicts:
        st.caption("No judge verdict column (0/1, such as judge_answer_consistency_binary) in this file: the Judge "
                   "page adds them.")
    else:
        column = st.selectbox("Judge verdict column (1 = grounded)", verdicts, key="review.judge_column")
        judged = review_services.verdict_labels(data.table, column)
        result = review_services.kappa(data.key, column, version, judged, labels.annotations.label)
        review_panel.disagreements(data, result, ("judge", "annotation"), judged, labels.annotations.label,
                                   f"the judge's {column} and the annotations")
    st.subheader("How many more labels")
    half_width = st.number_input("Wanted half-width of the AUROC's 95% interval", min_value=0.005, max_value=0.5,
                                 value=0.05, step=0.005, format="%.3f", key=state.REVIEW_HALF_WIDTH, **state.PERSIST)
    more_score = st.selectbox("Score", list(scores), key="review.more_score")
    more = review_services.more_labels(data.key, data.model, more_score, float(half_width), labels.n_left,
                                       data.frame["label"].to_numpy(), scores[more_score])
    if more.n_needed < 0:
        st.info("Needs at least 2 labelled rows of each class to estimate.")
    else:
        cells = st.columns(3)
        cells[0].metric("AUROC half-width now", f"±{more.half_width:.3f}", help=f"AUROC {more.auroc:.3f}")
        cells[1].metric("Labelled rows needed", f"{more.n_needed:,}")
        cells[2].metric("More labels needed", f"{more.n_more:,}")
        st.caption(f"From DeLong's variance on the {more.n_labelled:,} labelled rows so far ({more.n_grounded:,} "
                   f"grounded, {more.n_hallucinated:,} hallucinated): variance ∝ 1/n at this class balance. An "
                   "estimate: new rows must resemble the ones labelled. Rows marked unsure count as unlabelled.")
        if more.capped:
            st.info(f"Only {more.n_left:,} rows are left to label, fewer than the target needs: labelling all of them "
                    f"would give about ±{more.half_width_all:.3f}, not ±{more.target_half_width:.3f}.")

with files_tab:
    st.write(f"Annotations of this file are kept in `{labels.path}` (readable by you only), one line per decision.")
    # Both downloads are built only when clicked (a callable), not on every run of the page.
    exports = st.columns(2)
    exports[0].download_button("Export the annotations (JSON Lines)", data=label_exchange_services.export_jsonl(store),
                               file_name=store.path.name, mime="application/x-ndjson",
                               disabled=not review_services.has_annotations(store),
                               key=state.REVIEW_EXPORT, on_click="ignore",
                               help="Every decision as it was given, undos included: imports back here.")
    exports[1].download_button("Export this file's labelled rows (CSV)", mime="text/csv", on_click="ignore",
                               data=label_exchange_services.export_table(labels, data.table, store),
                               file_name=f"{store.path.stem}_labels.csv", disabled=not labels.n_annotated,
                               key=state.REVIEW_EXPORT_TABLE,
                               help="key, the file's id column, question, context, response, label, note, annotator "
                                    "and time of each row with a label in force (unsure: an empty label). Reads in any "
                                    "spreadsheet; imports back here or with --labels.")
    upload = st.file_uploader("Import labels: an annotations file, or a table (CSV, Parquet, JSON Lines) with "
                              "question, context, response and label columns", key="review.import",
                              type=["jsonl", "csv", "tsv", "parquet", "json"])
    if upload is not None and st.button("Import these labels", key="review.import_button"):
        try:
            done = label_exchange_services.import_labels(data.key, data.table, upload.name, upload.getvalue())
            st.success(f"{done.n_matched:,} of {done.n_labels:,} labels matched rows of this file: {done.n_added:,} "
                       f"added ({done.n_replaced:,} replacing another label), {done.n_already:,} already in force. "
                       f"Left out: {done.n_unmatched:,} of other data, {done.n_conflicting:,} conflicting, "
                       f"{done.n_unsure:,} unsure.")
        except page.SGIInputError as err:
            page.show_error(err)
