"""Models: the same rows scored by several embedding models, side by side."""

import streamlit as st

from dashboard import page, services, state
from dashboard.services import model_services
from dashboard.views import tables, texts
from sgi_core.render import figures

st.title("Models")
data = page.scored_data()
models = list(data.frames)
if len(models) < 2:
    names, unavailable = services.model_choices()
    st.info(f"Only **{models[0]}** has scored this file. Choose two or more models on the Data page to compare "
            f"them here (available: {', '.join(names)}).")
    if unavailable:
        st.caption("Not installed here:\n" + "\n".join(f"- **{m.name}**: {m.how_to_get}" for m in unavailable))
    st.stop()

st.subheader("SGI by label, per model (the paper's Table 1)")
reports = {name: services.report(data.key, name, frame) for name, frame in data.frames.items()}
tables.models_table(reports)
first = next(iter(reports.values()))
missing = texts.labels_missing(first.n_valid, first.n_halluc)
if missing:
    st.info(missing)

st.subheader("Do the models agree row by row?")
agreement = model_services.agreement(data.key, tuple(models), data.frames)
cols = st.columns(2)
cols[0].metric("Mean Pearson r between models", f"{agreement.mean_offdiag_pearson:.3f}")
cols[1].metric("Mean Spearman ρ between models", f"{agreement.mean_offdiag_spearman:.3f}")
left, right = st.columns(2)
left.plotly_chart(figures.correlation_heatmap(agreement.names, agreement.pearson, title="Pearson r of per-row SGI"),
                  key=state.MODELS_PEARSON)
right.plotly_chart(figures.correlation_heatmap(agreement.names, agreement.spearman,
                                              title="Spearman ρ of per-row SGI"), key=state.MODELS_SPEARMAN)
left_out = (f"; the {agreement.n_degenerate:,} rows with degenerate geometry under a model are left out, since one "
            "SGI near 1e8 would decide Pearson's r alone" if agreement.n_degenerate else "")
st.caption(f"Over the {agreement.n_rows:,} rows every model scored{left_out}. Pearson's r weighs how far apart the "
           "scores are, Spearman's ρ only their order: a gap between them means a few rows far out drive r.")

pick_a, pick_b = st.columns(2)
model_a = pick_a.selectbox("Model A", models, index=0, key=state.MODELS_A)
model_b = pick_b.selectbox("Model B", models, index=1, key=state.MODELS_B)
pairs = data.frame[["input_row", "label"]].copy()
for name in {model_a, model_b}:
    pairs[name] = data.frames[name]["sgi"].to_numpy()
ordinary = figures.ordinary_rows(data.frames[model_a]) & figures.ordinary_rows(data.frames[model_b])
st.plotly_chart(figures.model_scatter(pairs[ordinary], model_a, model_b, log_x=page.log_axes()),
                key=state.MODELS_SCATTER)
if not ordinary.all():
    n_hidden = len(ordinary) - figures.n_ordinary(data.frames[model_a], data.frames[model_b])
    st.caption(f"{n_hidden:,} rows with a degenerate or missing SGI under either model are not drawn.")
