"""``monitor --labels`` with a sample drawn by ``sample``: a verified uniform one re-validates as a random sample, an
active one weighted by its design."""

import json

import numpy as np
import pandas as pd

from sgi_core.cli import main
from tests.monitoring.test_monitor_cli import _monitor, _rows, policy  # noqa: F401  (the fixture)


def _drawn(tmp_path, frame, design, n):
    """``sample RUN --design DESIGN`` on the run, its label column filled in from the run's own labels."""
    run, out = tmp_path / "run.csv", tmp_path / f"{design}.csv"
    frame.assign(model_prob=np.clip(1.0 - frame["sgi"] / 2.0, 0.01, 0.99)).drop(columns="label").to_csv(run,
                                                                                                        index=False)
    options = ["--predictor", "model_prob"] if design == "active" else []
    assert main(["sample", str(run), "--n", str(n), "--design", design, "--seed", "5", *options, "-o", str(out)]) == 0
    drawn = pd.read_csv(out)
    truth = dict(zip(frame["question"], frame["label"]))
    drawn.assign(label=drawn["question"].map(truth)).to_csv(out, index=False)
    return run, out


def test_a_uniform_sample_drawn_by_sample_re_validates_the_run(tmp_path, policy, capsys):  # noqa: F811
    frame = _rows(400, 0.3, 4)
    run, labels = _drawn(tmp_path, frame, "uniform", 130)
    capsys.readouterr()
    code, out = _monitor(capsys, run, "--policy", policy, "--db", tmp_path / "h.sqlite", "--labels", labels,
                         "--rate-half-width", "0.1", "--json")
    result = json.loads(out.out)
    n_labelled = len(pd.read_csv(labels))
    assert result["revalidation"]["n_labelled"] == n_labelled and result["headline_rate"]["verified"]
    assert "rows of a uniform random sample drawn by `sample` (seed 5)" in result["headline_rate"]["method"]
    assert code in (0, 1, 3) and result["labels_refused"] == ""


def test_an_active_sample_re_validates_the_run_weighted_by_its_design(tmp_path, policy, capsys):  # noqa: F811
    frame = _rows(400, 0.3, 4)
    run, labels = _drawn(tmp_path, frame, "active", 120)
    capsys.readouterr()
    code, out = _monitor(capsys, run, "--policy", policy, "--db", tmp_path / "h.sqlite", "--labels", labels,
                         "--rate-half-width", "0.1", "--json")
    result = json.loads(out.out)
    drawn = pd.read_csv(labels)
    assert result["labels_refused"] == "" and result["headline_rate"]["verified"] and code in (0, 1, 3)
    assert result["revalidation"]["n_labelled"] == len(drawn)
    method = result["headline_rate"]["method"]
    assert f"rows of an active sample drawn by `sample` (seed 5): active (inverse-probability-weighted " \
           f"prediction-powered), predictor model_prob, {len(drawn)} keys" in method
    assert "1 / inclusion probability; Poisson bootstrap" in result["revalidation"]["weighting"]
    # The rate is the one-run active estimate of the same labels, read by the library directly.
    from sgi_core.runs.active_labels import active_run_rate
    from sgi_core.runs.design_labels import verified_run_design

    joined = pd.read_csv(run).assign(label=frame["label"].where(frame["question"].isin(drawn["question"])))
    design = verified_run_design([labels], joined, source=str(run))
    assert abs(result["headline_rate"]["estimate"] - active_run_rate(joined, design).estimate) < 1e-12


def test_an_active_sample_too_small_for_a_rate_interval_is_refused_saying_why(tmp_path, policy, capsys):  # noqa: F811
    run, labels = _drawn(tmp_path, _rows(400, 0.3, 4), "active", 12)
    capsys.readouterr()
    code, out = _monitor(capsys, run, "--policy", policy, "--db", tmp_path / "h.sqlite", "--labels", labels,
                         "--rate-half-width", "0.45", "--json")
    result = json.loads(out.out)
    assert code == 4 and not result["headline_rate"]["verified"] and result["revalidation"] is None
    assert result["labels_refused"].startswith("the active sample gives no interval of the run's rate")


def test_a_uniform_sample_with_edited_probabilities_is_refused(tmp_path, policy, capsys):  # noqa: F811
    run, labels = _drawn(tmp_path, _rows(400, 0.3, 4), "uniform", 130)
    edited = pd.read_csv(labels)
    edited.loc[0, "inclusion_probability"] = 0.9
    edited.to_csv(labels, index=False)
    code, out = _monitor(capsys, run, "--policy", policy, "--db", tmp_path / "h.sqlite", "--labels", labels)
    assert code == 2 and "carry a probability other than the one their seed, budget and predictor give" in out.err
