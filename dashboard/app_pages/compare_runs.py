"""Compare runs: which of two runs of the same inputs hallucinates less, by the labels, and how each score moved."""

import streamlit as st

from dashboard import local_files, page, services, state
from dashboard.services import compare_services, report_services, review_services
from dashboard.views import compare_charts, texts
from sgi_core.render import compare_figures

UPLOAD, PATH, PATH_ERROR = "compare.upload", "compare.path", "compare.path_error"
NEW_NAME, NEW_RAW, KEY_COLUMN = state.COMPARE_NEW_NAME, state.COMPARE_NEW_RAW, state.COMPARE_KEY
SCORE, TABLE, ROW = "compare.score", "compare.changed_table", "compare.row"
FILE_TYPES = ["csv", "tsv", "txt", "parquet", "pq", "jsonl", "ndjson", "json"]


def _on_upload() -> None:
    upload = st.session_state[UPLOAD]
    if upload is not None:
        st.session_state[NEW_NAME], st.session_state[NEW_RAW] = upload.name, upload.getvalue()


def _open_path() -> None:
    st.session_state[PATH_ERROR] = None
    if st.session_state[PATH].strip():
        try:
            path = local_files.local_file(st.session_state[PATH])
            st.session_state[NEW_NAME], st.session_state[NEW_RAW] = str(path), path
        except page.SGIInputError as err:
            st.session_state[PATH_ERROR] = texts.plain(err)


st.title("Compare runs")
st.write("Did a change (a prompt, a retriever, a model) make the answers less grounded? The **base** run is the "
         "file open on the Data page; the **new** run is a second file answering the same inputs. Rows are matched "
         "by a key (the question by default). **The labels decide**: each run's hallucination rate from its labels "
         "(the file's label column and the Review page's annotations of each file). A score's movement earns a word "
         "(improvement, regression) only where the score is shown to track the labels in both runs.")
data = page.scored_data()
st.caption(f"Base run: {texts.plain(data.key.name)} · model **{data.model}** (scores the new run when it carries "
           "no SGI)")
upload_col, path_col = st.columns(2)
upload_col.file_uploader("New run: upload a scored, judged or plain file", type=FILE_TYPES, key=UPLOAD,
                         on_change=_on_upload)
root = local_files.local_files_root()
if root is None:
    path_col.caption(f"Opening files on this machine by path is off; set `{local_files.LOCAL_FILES_ROOT_ENV}` to a "
                     "folder before starting the app to open the new run from under it.")
else:
    path_col.text_input(f"Or open the new run from a file under {texts.plain(root)} (a path)", key=PATH,
                        on_change=_open_path, placeholder=str(root / "new_run.parquet"))
if st.session_state.get(PATH_ERROR):
    st.error(st.session_state[PATH_ERROR])
if st.session_state.get(NEW_RAW) is None:
    st.info("Choose the new run above to compare it with the base run.")
    st.stop()

name, raw = st.session_state[NEW_NAME], st.session_state[NEW_RAW]
digest = state.source_digest(raw)
# What decides the new run's scores: its bytes, and the device and backend that embed it.
device, backend = services.chosen_device(), services.chosen_backend()
new_id = (digest, device, backend, data.key.context_strategy)
try:
    base, base_notes = compare_services.run_of_current_file(data.key, data.model, data.frame)
    new, new_notes = compare_services.new_run(name, digest, data.model, device, backend,
                                              data.key.context_strategy, raw)
    new, (new_in_file, new_annotated, new_disagree, new_targeted) = compare_services.new_run_labelled(name, digest,
                                                                                                     new)
except page.SGIInputError as err:
    page.show_error(err)
    st.stop()
columns = [c for c in base.frame.columns if c in set(new.frame.columns) and c not in base.scores]
if st.session_state.get(KEY_COLUMN) not in columns:
    st.session_state[KEY_COLUMN] = "question" if "question" in columns else columns[0]
st.selectbox("Match rows on", columns, key=KEY_COLUMN, **state.PERSIST,
             help="An id both runs carry, or the question text (the default). Kept when you leave the page; the "
                  "Review page's two-runs mode matches on it too.")
try:
    targeted = new_targeted + review_services.label_state(data.key).n_targeted
    result, matched, notes = compare_services.comparison(data.key, (*new_id, new_annotated, new_disagree), data.model,
                                                         st.session_state[KEY_COLUMN], not targeted, base, new)
except page.SGIInputError as err:
    page.show_error(err)
    st.stop()

match = result.match
cols = st.columns(4)
cols[0].metric("Keys matched", f"{match.n_matched:,}")
cols[1].metric("Only in base", f"{len(match.only_in_base):,}")
cols[2].metric("Only in new", f"{len(match.only_in_new):,}")
cols[3].metric("Keys averaged (base / new)", f"{match.averaged_base:,} / {match.averaged_new:,}")
if match.only_in_base or match.only_in_new:
    with st.expander("Keys in one run only (left out of every paired number)"):
        st.dataframe({"only in base": list(match.only_in_base)}, hide_index=True)
        st.dataframe({"only in new": list(match.only_in_new)}, hide_index=True)
if match.averaged_base or match.averaged_new:
    st.caption("Keys with several rows in a run count once: their scores (and labels) are averaged per key.")
for note in dict.fromkeys([*(f"base run: {n}" for n in base_notes), *(f"new run: {n}" for n in new_notes), *notes]):
    st.caption(f"Note: {texts.plain(note)}")

st.subheader("Which run hallucinates less: the labels")
st.caption(f"New run labels: {new_in_file:,} in its file, {new_annotated:,} annotated on the Review page (open the new "
           f"file there to label it){f', {new_disagree:,} disagreeing left unlabelled' if new_disagree else ''}. "
           "Base run labels: as the Data page's caption says.")
if targeted:
    st.caption(f"{targeted:,} labelled rows come from a Review queue that is not a random order (most uncertain, "
               "disagreement, ...): the labels are compared as they are, and no prediction-powered estimate is made, "
               "since it needs a random sample. The two-runs mode of the Review page labels in a random order.")
if result.labels is None:
    st.warning("Neither run has labels on matched keys, so nothing here says which run is more grounded. Label a "
               "random sample of both runs on the Review page (open each file there), then come back.")
else:
    compare_charts.labels_metrics(compare_services.headline_rates(result.labels), result.labels.verdict)
    st.markdown(texts.plain(compare_services.labels_headline(result)))

st.subheader("How each score moved")
deltas = compare_services.deltas_frame(result)
shown = compare_charts.delta_table(deltas)
st.caption(f"new − base over the keys scored in both; interval: bootstrap over keys ({result.n_boot:,} resamples); "
           "Wilcoxon signed-rank p, Holm-adjusted across the scores; AUROC of each score on each run's labelled "
           "keys. A score says improvement or regression only when its AUROC's 95% interval lies above 0.5 in both "
           "runs; otherwise *not validated*, with the reason.")
for line in compare_services.reconciliation(result):
    st.warning(texts.plain(line))
downloads = st.columns(2)
downloads[0].download_button("Download the table (CSV)", services.csv_bytes(shown), file_name="run_comparison.csv",
                             mime="text/csv")
downloads[1].download_button("Download the report (HTML)",
                             report_services.comparison_report(data, name, result, matched),
                             file_name="run_comparison.html", mime="text/html", on_click="ignore",
                             key=state.COMPARE_REPORT)
if result.labels is not None:
    aurocs = compare_services.auroc_frame(result)
    if aurocs["p_value"].notna().any():
        st.caption("Did a score's AUROC change between the runs (DeLong's test)?")
        compare_charts.auroc_table(aurocs)

st.subheader("Each key, base against new")
drawn = min(match.n_matched, compare_services.CHART_KEYS)
st.caption(f"One point per matched key ({drawn:,} of {match.n_matched:,} drawn); under the dotted line the score is "
           "lower in the new run on that key.")
for pair in range(0, len(matched.scores), 2):
    for slot, score in zip(st.columns(2), matched.scores[pair:pair + 2]):
        slot.plotly_chart(compare_figures.paired_figure(compare_services.paired_points(matched, score), score),
                          key=f"compare.paired.{score}")

st.subheader("Keys that changed most")
score = st.selectbox("Score", matched.scores, format_func=compare_charts.score_name, key=SCORE)
changes = compare_services.changed_keys(data.key, new_id, data.model, st.session_state[KEY_COLUMN], score, matched)
rows = data.frame["input_row"].to_numpy()[list(changes.row_base)].tolist()
event = st.dataframe(compare_charts.changed_keys_table(changes, rows), hide_index=True, on_select="rerun",
                     selection_mode="single-row", key=TABLE)
chosen = st.selectbox("Open in the Explorer (the base run's row)", rows, index=None, key=ROW,
                      placeholder="Choose a row", format_func=lambda row: f"row {row}")
clicked = event.selection.rows
row = rows[clicked[0]] if clicked else chosen
if row is not None:
    source = page.file_row(data.frame, row)
    state.pick_triple(int(row), source["question"], source["context"], source["response"])
    st.switch_page("app_pages/explorer.py")
