"""From the command line: `sample --design active`, its labels filled in, and `compare --labels` weighs them."""

import json

import pandas as pd
import pytest

from sgi_core.cli import main
from tests.runs.test_design_labels import fill, write_runs


@pytest.fixture()
def drawn(tmp_path):
    paths = write_runs(tmp_path)
    out = tmp_path / "to_label.csv"
    assert main(["sample", str(paths["new"]), "--baseline", str(paths["base"]), "--key", "id", "--n", "40",
                 "--design", "active", "--predictor", "model_prob", "--seed", "11", "-o", str(out)]) == 0
    return paths, fill(out)


def test_compare_reads_an_active_sample_by_its_design(drawn, tmp_path, capsys):
    paths, filled = drawn
    report = tmp_path / "comparison.json"
    assert main(["compare", str(paths["base"]), str(paths["new"]), "--key", "id", "--model", "hashing",
                 "--n-boot", "0", "--labels", str(filled), "--json", str(report)]) == 0
    out = capsys.readouterr().out
    n_keys = len(pd.read_csv(filled)) // 2
    assert (f"active (inverse-probability-weighted prediction-powered), predictor model_prob, {n_keys} keys"
            in out)
    labels = json.loads(report.read_text())["labels"]
    assert labels["sequential"] is None and labels["ci"][0] < labels["difference"] < labels["ci"][1]


def test_compare_refuses_a_sample_whose_probabilities_were_edited(drawn, capsys):
    paths, filled = drawn
    sample = pd.read_csv(filled)
    sample["inclusion_probability"] = sample["inclusion_probability"] * 1.5
    sample.to_csv(filled, index=False)
    assert main(["compare", str(paths["base"]), str(paths["new"]), "--key", "id", "--model", "hashing",
                 "--n-boot", "0", "--labels", str(filled)]) == 2
    assert "carry a probability other than the one their seed, budget and predictor give" in capsys.readouterr().err


def test_a_sample_drawn_on_other_runs_is_refused(drawn, capsys):
    paths, filled = drawn
    other = pd.read_csv(paths["new"])
    other["model_prob"] = other["model_prob"] ** 2  # another predictor: other uncertainties, other probabilities
    other.to_csv(paths["new"], index=False)
    assert main(["compare", str(paths["base"]), str(paths["new"]), "--key", "id", "--model", "hashing",
                 "--n-boot", "0", "--labels", str(filled)]) == 2
    assert "the labels cannot be used under their design active (seed 11" in capsys.readouterr().err


def test_gate_holds_the_new_run_to_a_margin_by_the_active_estimate(drawn, capsys):
    paths, filled = drawn
    options = ["--key", "id", "--model", "hashing", "--n-boot", "0", "--labels", str(filled)]
    assert main(["gate", str(paths["new"]), "--baseline", str(paths["base"]), *options,
                 "--max-rate-increase", "0.3"]) == 0
    out = capsys.readouterr().out
    assert "PASS hallucination rate" in out and "active (inverse-probability-weighted prediction-powered)" in out
    # The runs swapped (the design is the same: it is symmetric in the runs), the rate rises: a margin far below
    # the active interval's half-width is refused.
    assert main(["gate", str(paths["base"]), "--baseline", str(paths["new"]), *options,
                 "--max-rate-increase", "0.001"]) == 2
    assert "a margin of 0.001 cannot pass" in capsys.readouterr().err


def test_gate_sequential_on_an_active_sample_says_the_design_is_why(drawn, capsys):
    paths, filled = drawn
    assert main(["gate", str(paths["new"]), "--baseline", str(paths["base"]), "--key", "id", "--model", "hashing",
                 "--n-boot", "0", "--labels", str(filled), "--max-rate-increase", "0.3", "--sequential"]) == 2
    err = capsys.readouterr().err
    assert "drawn under an active design" in err and "needs keys labelled in both runs" not in err
