"""Rows whose response equals the context (SGI near 1e8): out of every mean, d and Pearson's r, in every count and
AUROC."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sgi_core.cli import main
from sgi_core.embedding import load_encoder
from sgi_core.evaluation import evaluate
from sgi_core.io.triples import load_triples
from sgi_core.render.tables import table2, table3
from sgi_core.scoring import score_table
from sgi_core.stats.correlation import cross_model_agreement
from sgi_core.stats.thresholds import robust_range, threshold_range
from tests.conftest import SAMPLE_CSV

#: Rows (0-based) whose response is replaced by their context: both labels among them.
COPIED = list(range(0, 90, 9))


def with_copied_context(path) -> pd.DataFrame:
    frame = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).head(90)
    frame.loc[COPIED, "response"] = frame.loc[COPIED, "context"]
    frame.to_csv(path, index=False)
    return frame


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    path = tmp_path_factory.mktemp("degenerate") / "copied.csv"
    with_copied_context(path)
    return score_table(load_triples(path), load_encoder("hashing"))


def test_copied_context_rows_are_degenerate_with_huge_sgi(scored):
    status = scored["sgi_status"].astype(str)
    assert status.iloc[COPIED].str.startswith("degenerate: response equals context").all()
    assert (scored["sgi"].iloc[COPIED] > 1e6).all()
    assert set(scored["label"].iloc[COPIED]) == {0.0, 1.0}


def test_theta_qc_strata_means_leave_degenerate_rows_out(scored):
    with pytest.warns(UserWarning):
        report = evaluate(scored, n_boot=0)
    degenerate = scored["sgi_status"].str.startswith("degenerate").to_numpy()
    theta, sgi, label = (scored[c].to_numpy() for c in ("theta_qc", "sgi", "label"))
    strata = report.theta_qc_strata.strata
    assert sum(s.n_degenerate for s in strata) == len(COPIED)
    for k, stratum in enumerate(strata):
        member = (theta <= stratum.hi) & ((theta > stratum.lo) if k else (theta >= stratum.lo))
        assert stratum.n == member.sum()
        for mean, cls in ((stratum.mean_valid, 1.0), (stratum.mean_halluc, 0.0)):
            expected = sgi[member & (label == cls) & ~degenerate].mean()
            assert mean == pytest.approx(expected, rel=1e-12) and mean < 10
        valid, halluc = sgi[member & (label == 1.0)], sgi[member & (label == 0.0)]
        # AUROC keeps the degenerate rows: it reads only their order.
        assert stratum.auroc == pytest.approx(stats.mannwhitneyu(valid, halluc).statistic / (len(valid) * len(halluc)))


def test_strata_do_not_move_when_the_degenerate_scores_do(scored):
    degenerate = scored["sgi_status"].str.startswith("degenerate").to_numpy()
    with pytest.warns(UserWarning):
        first = evaluate(scored, n_boot=0)
        # Ten times larger keeps their order (and every AUROC); a mean or d that read them would move.
        second = evaluate(scored.assign(sgi=np.where(degenerate, 10 * scored["sgi"], scored["sgi"])), n_boot=0)
    assert second.theta_qc_strata.to_dict() == first.theta_qc_strata.to_dict()
    assert [s.to_dict() for s in second.length_strata] == [s.to_dict() for s in first.length_strata]
    for frame in (table2(first), table3(first)):
        assert np.isfinite(frame[["mean_valid", "mean_halluc"]].to_numpy(dtype=float)).all()
        assert (frame["mean_valid"] < 10).all() and not (frame["cohens_d"].abs() >= 10).any()
        assert frame["n_degenerate"].sum() == len(COPIED) * (3 if "text" in frame else 1)


def test_report_text_and_json_say_the_degenerate_rows_are_left_out(tmp_path, capsys):
    path = tmp_path / "copied.csv"
    with_copied_context(path)
    out = tmp_path / "report.json"
    assert main(["report", str(path), "--models", "hashing,hashing-16", "--n-boot", "0", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.count(f"means and d leave out the {len(COPIED)} rows with degenerate geometry") == 4
    data = json.loads(out.read_text())
    scores = {name: score_table(load_triples(path), load_encoder(name)) for name in ("hashing", "hashing-16")}
    for name, model in data["models"].items():
        frame = scores[name]
        ordinary = ~frame["sgi_status"].str.startswith("degenerate")
        strata = [*[model["report"]["theta_qc_strata"]], *model["report"]["length_strata"]]
        for stratum in (s for group in strata for s in group["strata"]):
            assert math.isfinite(stratum["mean_valid"]) and math.isfinite(stratum["mean_halluc"])
            assert stratum["mean_valid"] <= frame.loc[ordinary, "sgi"].max()
        assert model["sgi_mean_valid"] == pytest.approx(frame.loc[ordinary & (frame["label"] == 1), "sgi"].mean())
    # Pearson's r without the degenerate rows of either model, as scipy computes it on the rest.
    keep = np.ones(90, dtype=bool)
    for frame in scores.values():
        keep &= ~frame["sgi_status"].str.startswith("degenerate").to_numpy()
    r = stats.pearsonr(scores["hashing"]["sgi"][keep], scores["hashing-16"]["sgi"][keep]).statistic
    rho = stats.spearmanr(scores["hashing"]["sgi"][keep], scores["hashing-16"]["sgi"][keep]).statistic
    assert data["agreement"]["mean_offdiag_pearson"] == pytest.approx(r, rel=1e-9)
    assert data["agreement"]["mean_offdiag_spearman"] == pytest.approx(rho, rel=1e-9)
    assert data["agreement"]["n_degenerate"] == 90 - keep.sum() and data["agreement"]["n_rows"] == keep.sum()
    assert f"Pearson {r:.3f}" in text


def test_agreement_pearson_is_scipys_on_the_ordinary_rows():
    rng = np.random.default_rng(3)
    a = rng.normal(1.0, 0.2, 50)
    b = a + rng.normal(0.0, 0.1, 50)
    a[[4, 9]], b[[4, 9]] = 1e8, 3e7
    marks = np.zeros(50, dtype=bool)
    marks[[4, 9]] = True
    res = cross_model_agreement({"a": a, "b": b}, degenerate={"a": marks})
    assert res.mean_offdiag_pearson == pytest.approx(stats.pearsonr(a[~marks], b[~marks]).statistic, rel=1e-12)
    assert res.mean_offdiag_spearman == pytest.approx(stats.spearmanr(a[~marks], b[~marks]).statistic, rel=1e-12)
    assert (res.n_rows, res.n_degenerate) == (48, 2)
    assert cross_model_agreement({"a": a, "b": b}).mean_offdiag_pearson > 0.99  # what the two rows alone do


def test_agreement_refuses_marks_for_an_unknown_model():
    with pytest.raises(Exception, match="degenerate rows are given for 'c', which is not a model with 3 scores"):
        cross_model_agreement({"a": [1.0, 2.0, 3.0], "b": [1.0, 2.0, 4.0]}, degenerate={"c": [True, False, False]})


def test_robust_range_against_numpy_quantiles():
    values = np.r_[np.linspace(0.5, 2.0, 198), 24.8, 1.5e8]
    span = robust_range(values, coverage=0.98)
    assert (span.lo, span.hi) == pytest.approx(tuple(np.quantile(values, [0.01, 0.99])))
    assert (span.n_below, span.n_above) == (2, 2)
    logged = robust_range(values, coverage=1.0, log=True)
    assert (logged.lo, logged.hi) == pytest.approx((np.log10(0.5), 8 + np.log10(1.5)))
    assert threshold_range(values, upper_quantile=0.99) == pytest.approx((0.5, np.quantile(values, 0.99)))
    with pytest.raises(Exception, match=r"The 'coverage' parameter of robust_range must be in \(0, 1\]. Got 0 instead"):
        robust_range(values, coverage=0)


def test_group_d_leaves_degenerate_rows_out_and_keeps_them_in_the_auroc(scored):
    from sgi_core.evaluation import group_analysis
    from sgi_core.stats.effect_size import effect_size

    degenerate = scored["sgi_status"].str.startswith("degenerate").to_numpy()
    groups = np.where(np.arange(len(scored)) < 45, "first half", "second half")
    result = group_analysis(scored["label"], scored["sgi"], groups, n_boot=0, degenerate=degenerate)
    for group in result.groups:
        rows = groups == group.group
        typical = rows & ~degenerate
        expected = effect_size(scored["label"][typical], scored["sgi"][typical], n_boot=0).cohens_d
        assert group.cohens_d == pytest.approx(expected, rel=1e-12) and abs(group.cohens_d) < 10
        assert group.n_valid + group.n_halluc == rows.sum()
