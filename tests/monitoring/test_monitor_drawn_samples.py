"""``monitor --labels`` with a sample drawn by ``sample``: a verified uniform one re-validates, an active one is
refused."""

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


def test_an_active_sample_is_refused_with_where_it_is_read(tmp_path, policy, capsys):  # noqa: F811
    run, labels = _drawn(tmp_path, _rows(400, 0.3, 4), "active", 60)
    code, out = _monitor(capsys, run, "--policy", policy, "--db", tmp_path / "h.sqlite", "--labels", labels)
    assert code == 2 and "drawn under the active design (seed 5)" in out.err
    assert "active samples are read by compare and gate --baseline" in out.err


def test_a_uniform_sample_with_edited_probabilities_is_refused(tmp_path, policy, capsys):  # noqa: F811
    run, labels = _drawn(tmp_path, _rows(400, 0.3, 4), "uniform", 130)
    edited = pd.read_csv(labels)
    edited.loc[0, "inclusion_probability"] = 0.9
    edited.to_csv(labels, index=False)
    code, out = _monitor(capsys, run, "--policy", policy, "--db", tmp_path / "h.sqlite", "--labels", labels)
    assert code == 2 and "carry a probability other than the one their seed, budget and predictor give" in out.err
