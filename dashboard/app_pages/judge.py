"""Judge: LLM-judged RAG metrics on a sample of rows, through any OpenAI-compatible endpoint."""

import streamlit as st

from dashboard import page, state
from dashboard.services import judging
from dashboard.views import texts

#: One line per metric of ``sgi_core.judge.METRICS``; every score is in [0, 1], higher = grounded.
METRIC_TEXT = {
    "answer_similarity": "how close the response is to a reference answer (the judge's 0-5 grade / 5).",
    "retrieval_precision": "share of the retrieved passages that are relevant to the question.",
    "augmentation_precision": "share of the relevant passages that the response uses.",
    "augmentation_accuracy": "share of all passages that the response uses.",
    "answer_consistency": "share of the response's statements supported by the passages; `_binary` is 1 when "
                          "every statement is.",
    "retrieval_k_recall": "share of the relevant passages that are ranked in the top k.",
    "groundedness": "P(yes) of one Yes/No question, is the response grounded in the passages, read from the "
                    "judge's token log-probabilities (guardian-style judges); the bare answer, 0 or 1, where the "
                    "endpoint gives none, as `judge_groundedness_source` says.",
}
NEEDS_TEXT = {"contexts": "retrieved passages", "reference": "reference answer"}
SAMPLE_TEXT = {judging.SAMPLE_FIRST: "the first N rows", judging.SAMPLE_RANDOM: "a random sample of N rows (seed 0)"}
DEFAULTS = {state.JUDGE_ENDPOINT: judging.default_endpoint(), state.JUDGE_MODEL: "gpt-4o-mini",
            state.JUDGE_METRICS: ["answer_consistency"], state.JUDGE_K: 3, state.JUDGE_SAMPLE: judging.SAMPLE_FIRST,
            state.JUDGE_CONCURRENCY: 4}

st.title("Judge")
st.write("Ask an LLM judge to grade each answer (after Tonic Validate's metrics) through any OpenAI-compatible "
         "endpoint: a hosted API, or vLLM, Ollama or llama.cpp on this machine. The grades become `judge_<metric>` "
         "columns (0 to 1, higher = grounded) with a `judge_status` per row, and go to the Detectors page beside SGI.")
try:
    key, table = page.current_table()
except page.SGIInputError as err:
    page.show_error(err)
    st.info("Fix the file or the column mapping on the Data page.")
    st.stop()
st.caption(f"File: {texts.plain(key.name)} · {table.n_rows:,} rows")
for name, value in {**DEFAULTS, judging.SESSION_KEY: "", state.JUDGE_SIZE: min(20, table.n_rows)}.items():
    st.session_state.setdefault(name, value)
st.session_state[state.JUDGE_SIZE] = min(st.session_state[state.JUDGE_SIZE], table.n_rows)

endpoint_col, model_col, key_col = st.columns([2, 1, 1])
endpoint_col.text_input("Endpoint (OpenAI-compatible base URL)", key=state.JUDGE_ENDPOINT, **state.PERSIST,
                        help="A local server: http://127.0.0.1:8000/v1 (vLLM), http://localhost:11434/v1 (Ollama), "
                             "http://127.0.0.1:8080/v1 (llama.cpp), or a hosted API such as https://api.openai.com/v1. "
                             "Plain http is allowed on this machine only.")
model_col.text_input("Judge model", key=state.JUDGE_MODEL, **state.PERSIST)
key_col.text_input("API key (this session only)", key=judging.SESSION_KEY, type="password", **state.PERSIST,
                   help="Kept in this browser session's memory, sent only to the endpoint at its left, never shown, "
                        "logged or saved.")
endpoint, model = st.session_state[state.JUDGE_ENDPOINT], st.session_state[state.JUDGE_MODEL]
session_key = st.session_state[judging.SESSION_KEY] or None
st.caption(judging.key_note(endpoint, session_key))
if st.button("Test connection", key=state.JUDGE_TEST_CONNECTION,
             help="One tiny chat request (a few tokens) to this endpoint and model."):
    try:
        answered = judging.check_connection(endpoint, model, session_key)
        st.success(f"Connected: {texts.plain(judging.endpoint_host(endpoint))} answered as model "
                   f"{texts.plain(answered)}.")
    except page.SGIInputError as err:
        page.show_error(err)

needs = judging.judge_metric_needs()
st.multiselect("Metrics", list(needs), key=state.JUDGE_METRICS, **state.PERSIST)
st.markdown("\n".join(f"- **{name}**: {METRIC_TEXT[name]}" + (f" Needs the {NEEDS_TEXT[needs[name]]} column."
                                                               if needs[name] else "") for name in needs))
extra = [judging.NONE_COLUMN, *judging.judge_input_columns(table)]
contexts_col, reference_col, k_col = st.columns(3)
contexts_col.selectbox("Retrieved passages column", extra, key=state.JUDGE_CONTEXTS, **state.PERSIST,
                       help="Per row, the passages in rank order: a JSON array or |-separated. The retrieval "
                            "metrics need it; the others read the context column as the one passage without it.")
reference_col.selectbox("Reference answer column", extra, key=state.JUDGE_REFERENCE, **state.PERSIST)
k_col.number_input("k of retrieval_k_recall", min_value=1, max_value=100, key=state.JUDGE_K, **state.PERSIST)
how_col, size_col, concurrency_col = st.columns(3)
how_col.radio("Rows to judge", list(SAMPLE_TEXT), format_func=SAMPLE_TEXT.get, key=state.JUDGE_SAMPLE, **state.PERSIST)
size_col.number_input("N", min_value=1, max_value=table.n_rows, key=state.JUDGE_SIZE, **state.PERSIST)
concurrency_col.number_input("Requests at once", min_value=1, max_value=32, key=state.JUDGE_CONCURRENCY,
                             **state.PERSIST)

metrics = st.session_state[state.JUDGE_METRICS]
columns = {role: None if st.session_state[k] == judging.NONE_COLUMN else st.session_state[k]
           for role, k in (("contexts", state.JUDGE_CONTEXTS), ("reference", state.JUDGE_REFERENCE))}
if not metrics:
    st.info("Choose one or more metrics.")
    st.stop()
for role, what in NEEDS_TEXT.items():
    users = [name for name in metrics if needs[name] == role]
    if users and columns[role] is None:
        st.info(f"{', '.join(users)} need{'s' if len(users) == 1 else ''} the {what} column: choose it above.")
        st.stop()

try:
    rows, plan = judging.judge_plan(table, endpoint, model, metrics, contexts_column=columns["contexts"],
                                     reference_column=columns["reference"], k=st.session_state[state.JUDGE_K],
                                     how=st.session_state[state.JUDGE_SAMPLE], size=st.session_state[state.JUDGE_SIZE])
    guess = judging.judge_estimate(plan)
except page.SGIInputError as err:
    page.show_error(err)
    st.stop()

st.subheader("What a run sends")
for slot, label, value in zip(st.columns(4), ("Rows to judge", "Requests", "Already in the cache", "Input tokens"),
                              (guess.n_judged_rows, guess.n_requests, guess.n_cached, guess.input_tokens)):
    slot.metric(label, f"{value:,}")
st.caption("Input tokens are estimated as characters / 4 over the requests not yet cached; the replies, and one "
           "retry per malformed answer, come on top. Answers are cached on disk as they arrive, so a stopped run "
           "resumes where it stopped and nothing is paid for twice.")

if st.button("Run the judge", key=state.JUDGE_RUN, type="primary", disabled=guess.n_judged_rows == 0):
    bar = page.ProgressBar("Judged", "rows")

    def report(done: int, total: int, tokens: int) -> None:
        bar(done, total, note=f" · {tokens:,} tokens")

    try:
        judged, summary = judging.judge_sample(plan, rows, table.n_rows, endpoint, model, progress=report,
                                                session_key=session_key,
                                                concurrency=st.session_state[state.JUDGE_CONCURRENCY])
    except page.SGIInputError as err:
        page.show_error(err)
        st.stop()
    name, raw = judging.judged_file(key.name, key.digest, state.raw_file()[1], judged)
    state.add_columns_to_file(name, raw)
    st.session_state[state.JUDGE_RESULT] = {
        "digest": state.data_digest(), "columns": judged,
        "summary": f"{summary.n_ok:,} of {summary.n_rows:,} sampled rows judged ok · {summary.n_sent:,} requests "
                   f"sent, {summary.n_cached:,} answers from the cache, {summary.tokens:,} tokens.",
        "bare_answers": summary.n_from_answer}
    st.rerun()

result = st.session_state.get(state.JUDGE_RESULT)
if result is not None and result["digest"] == key.digest:
    st.subheader("Last run")
    st.success(result["summary"])
    if result.get("bare_answers"):
        st.warning(f"The endpoint gave no token log-probabilities for {result['bare_answers']:,} rows: their "
                   "Yes/No score is the bare answer, 0 or 1, not P(yes), so they rank only as two ties "
                   "(`judge_groundedness_source` says `answer` there). Serve the judge where the chat API returns "
                   "logprobs (vLLM, llama.cpp, Ollama) to rank them.")
    st.write(f"The judged file, **{texts.plain(key.name)}**, is now the current file: every row is kept, with the "
             "judge columns added. Pick them as detector scores on the Detectors page.")
    st.page_link("app_pages/detectors.py", label="Compare the judge with SGI on the Detectors page",
                 icon=":material/arrow_forward:")
    st.download_button("Download the judged file (Parquet)", state.raw_file()[1], file_name=key.name)
    judged = result["columns"]
    st.dataframe(judged[judged["judge_status"] != judging.NOT_SAMPLED], height=300)
