"""Rates that add up: each named estimate (labels only, prediction-powered) shows both runs' rates and new - base
of them."""

import re

import numpy as np
import pytest

from sgi_core.cli import main
from sgi_core.runs.comparison import compare_runs
from sgi_core.runs.headline_rates import (
    LABELS_ONLY,
    PREDICTION_POWERED,
    headline_rates,
)
from sgi_core.runs.matching import match_runs
from sgi_core.runs.rates import paired_rate_difference
from tests.runs.test_compare_cli import scored_run

N, N_LABELLED = 90, 40
LINE = re.compile(r"^  (labels only|prediction-powered): base ([\d.]+)%, new ([\d.]+)%, new - base ([+-][\d.]+) ")


def sampled_runs():
    """Two runs of 90 questions where SGI tracks the labels; the first 40 keys labelled in both."""
    rng = np.random.default_rng(21)
    frames, labels = [], []
    for name, rate in (("base", 0.45), ("new", 0.25)):
        label = (rng.random(N) >= rate).astype(float)
        frames.append(scored_run(1.0 + 0.3 * label + rng.normal(0, 0.15, N),
                                 label=np.where(np.arange(N) < N_LABELLED, label, np.nan),
                                 responses=[f"{name} answer {i}" for i in range(N)]))
        labels.append(label[:N_LABELLED])
    return frames, labels


def test_each_line_adds_up_and_the_labels_line_is_the_paired_labels_alone():
    (base, new), (label_base, label_new) = sampled_runs()
    shift = compare_runs(match_runs(base, new, key="question", scores=["sgi"]), n_boot=100).labels
    assert shift.method.startswith(PREDICTION_POWERED)
    labels, powered = headline_rates(shift).lines
    assert (labels.name, powered.name) == (LABELS_ONLY, PREDICTION_POWERED)
    oracle = paired_rate_difference(1 - label_base, 1 - label_new)
    assert (labels.rate_base, labels.rate_new) == pytest.approx((oracle.rate_base, oracle.rate_new))
    assert labels.difference == pytest.approx(oracle.difference) and labels.ci == pytest.approx(oracle.ci)
    assert labels.n_keys == N_LABELLED
    for line in (labels, powered):
        assert line.difference == pytest.approx(line.rate_new - line.rate_base, abs=1e-12)
    # The prediction-powered line: the base run's PPI++ rate and the paired estimate the verdict reads.
    assert (powered.rate_base, powered.difference, powered.ci) == (shift.rate_base, shift.difference, shift.ci)
    assert powered.own_rate_new == shift.rate_new
    assert type(headline_rates(shift)).from_dict(headline_rates(shift).to_dict()) == headline_rates(shift)


def test_a_fully_labelled_comparison_has_one_line_equal_to_its_estimate():
    (base, new), _ = sampled_runs()
    base, new = base.head(N_LABELLED), new.head(N_LABELLED)
    shift = compare_runs(match_runs(base, new, key="question", scores=["sgi"]), n_boot=100).labels
    (line,) = headline_rates(shift).lines
    assert (line.rate_base, line.rate_new, line.ci) == (shift.rate_base, shift.rate_new, shift.ci)
    assert line.difference == pytest.approx(shift.difference, abs=1e-12)


def test_compare_prints_named_lines_whose_differences_are_the_differences_of_their_rates(tmp_path, capsys):
    (base, new), (label_base, label_new) = sampled_runs()
    base.to_csv(tmp_path / "base.csv", index=False)
    new.to_csv(tmp_path / "new.csv", index=False)
    assert main(["compare", str(tmp_path / "base.csv"), str(tmp_path / "new.csv"), "--n-boot", "100"]) == 0
    printed = [LINE.match(line) for line in capsys.readouterr().out.splitlines()]
    lines = {m.group(1): tuple(map(float, m.groups()[1:])) for m in printed if m}
    assert set(lines) == {"labels only", "prediction-powered"}
    for rate_base, rate_new, difference in lines.values():
        # Rates printed to 0.1%, the difference to 0.001.
        assert difference == pytest.approx((rate_new - rate_base) / 100, abs=0.0015)
    oracle = paired_rate_difference(1 - label_base, 1 - label_new)
    assert lines["labels only"][:2] == pytest.approx((100 * oracle.rate_base, 100 * oracle.rate_new), abs=0.05)
    assert lines["labels only"][2] == pytest.approx(oracle.difference, abs=0.0005)
