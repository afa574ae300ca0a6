"""Keys labelled in both runs must be a sample of the keys, not the keys whose answers did not change."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sgi_core.cli import main
from sgi_core.runs.label_sample import labelled_sample
from tests.policy.test_gate_margin import mixed_label_run
from tests.runs.test_compare_cli import scored_run

N, UNCHANGED = 150, 85
TEXTS = ["question", "context", "response", "label"]


@pytest.fixture
def release(tmp_path):
    """A new run that changed 65 of 150 answers and hallucinates on 21 more keys, and the base release's labels."""
    rng = np.random.default_rng(3)
    base_label = (rng.random(N) >= 0.3).astype(float)
    new_label = base_label.copy()
    changed = np.arange(UNCHANGED, N)
    new_label[changed[base_label[changed] == 1.0][:21]] = 0.0
    responses = [f"answer {i}" for i in range(N)]
    base = scored_run(rng.normal(1.0, 0.1, N), label=base_label, responses=responses)
    new = scored_run(rng.normal(1.0, 0.1, N), label=new_label,
                     responses=responses[:UNCHANGED] + [f"changed answer {i}" for i in changed])
    for name, run in (("base", base), ("new", new)):
        run.assign(label=np.nan).to_csv(tmp_path / f"{name}.csv", index=False)
    base[TEXTS].to_csv(tmp_path / "release_labels.csv", index=False)
    sample = rng.choice(N, 60, replace=False)
    pd.concat([base[TEXTS].iloc[sample], new[TEXTS].iloc[sample]]).to_csv(tmp_path / "sample_labels.csv", index=False)
    return tmp_path, float((1 - new_label).mean() - (1 - base_label).mean()), int(np.isin(sample, changed).sum())


def paths(folder, labels):
    return [str(folder / "new.csv"), "--baseline", str(folder / "base.csv"), "--labels", str(folder / labels)]


@pytest.mark.parametrize("sequential", [[], ["--sequential"]])
def test_a_release_labels_file_cannot_pass_a_regression(release, capsys, sequential):
    folder, rise, _ = release
    assert rise == pytest.approx(0.14)
    assert main(["gate", *paths(folder, "release_labels.csv"), "--max-rate-increase", "0.10", "--n-boot", "100",
                 *sequential]) == 2
    err = capsys.readouterr().err
    assert ("the keys labelled in both runs are not a sample of the keys: 0 of the 65 keys whose answer changed are "
            "labelled in both runs (0 in the new run; a random sample of 85 keys would hold about 37)") in err
    assert "Label a random sample of the new run's answers, the changed ones included" in err


def test_compare_refuses_the_release_labels_and_counts_the_changed_keys_of_a_sample(release, capsys):
    folder, _, changed_in_sample = release
    args = [str(folder / "base.csv"), str(folder / "new.csv"), "--n-boot", "100", "--labels"]
    assert main(["compare", *args, str(folder / "release_labels.csv")]) == 2
    assert "0 of the 65 keys whose answer changed are labelled in both runs" in capsys.readouterr().err
    assert main(["compare", *args, str(folder / "sample_labels.csv")]) == 0
    assert (f"  {changed_in_sample} of the 65 keys whose answer changed are labelled in both runs "
            f"({changed_in_sample} in the new run; a random sample of 60 keys would hold about 26)"
            ) in capsys.readouterr().out


def test_the_p_value_is_the_doubled_smaller_tail_of_the_hypergeometric_law():
    # 40 keys, 12 changed, 15 labelled in both of which 1 changed: tails summed from math.comb.
    k, c, n, x = 40, 12, 15, 1
    pmf = [math.comb(c, i) * math.comb(k - c, n - i) / math.comb(k, n) for i in range(n + 1)]
    expected = min(1.0, 2 * min(sum(pmf[:x + 1]), sum(pmf[x:])))
    changed = np.arange(k) < c
    both = np.zeros(k, bool)
    both[[0, *range(c, c + n - 1)]] = True
    res = labelled_sample(changed, np.ones(k, bool), both)
    assert (res.n_changed, res.n_labelled_both, res.n_changed_labelled_both) == (c, n, x)
    assert res.p_value == pytest.approx(expected) and res.representative is (expected >= 0.01)
    assert res.p_value == pytest.approx(min(1.0, 2 * stats.hypergeom(k, c, n).cdf(x)))
    # Nothing changed, or every key: no test, nothing to refuse.
    assert math.isnan(labelled_sample(np.zeros(k, bool), both, both).p_value)
    assert labelled_sample(np.ones(k, bool), both, both).representative


def test_gate_and_compare_say_the_same_of_keys_that_carry_both_labels(tmp_path, capsys):
    path = mixed_label_run(tmp_path)
    assert main(["compare", str(path), str(path), "--key", "id", "--n-boot", "100"]) == 0
    said = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("labels: "))
    assert main(["gate", str(path), "--baseline", str(path), "--key", "id", "--max-rate-increase", "0.1",
                 "--n-boot", "100"]) == 2
    err = capsys.readouterr().err
    assert said.removeprefix("labels: ") in err
    assert "40 keys carry both labels (their rows disagree) and are left out" in err
