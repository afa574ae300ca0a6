"""``gate --baseline``: a margin the labels cannot pass is refused, a reachable one decides; keys count whole.

The refusal's numbers are checked against the paired design's formulas computed here from
the files (Connor 1987): half-width ``z sqrt(psi / n)`` and ``ceil((z + z_0.8)^2 psi / M^2)`` keys.
"""

import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sgi_core.cli import main
from tests.runs.test_compare_cli import scored_run

N = 150


def labelled_runs(tmp_path, rate_base, rate_new, *, n=N, seed=5, name="runs"):
    """Two runs of ``n`` questions, every key labelled in both runs, hallucinating at the given rates."""
    rng = np.random.default_rng(seed)
    paths = {}
    for side, rate in (("base", rate_base), ("new", rate_new)):
        label = (rng.random(n) >= rate).astype(float)
        path = tmp_path / f"{name}_{side}.csv"
        scored_run(rng.normal(1.0, 0.1, n), label=label, responses=[f"{side} answer {i}" for i in range(n)]
                   ).to_csv(path, index=False)
        paths[side] = path
    return paths


def balanced_runs(tmp_path, *, n=N, flips=20):
    """Two runs with equal rates: the new run swaps ``flips`` grounded keys and ``flips`` hallucinated ones."""
    base = (np.arange(n) % 3 != 0).astype(float)
    new = base.copy()
    new[np.flatnonzero(base == 1.0)[:flips]] = 0.0
    new[np.flatnonzero(base == 0.0)[:flips]] = 1.0
    paths = {}
    for side, label in (("base", base), ("new", new)):
        paths[side] = tmp_path / f"balanced_{side}.csv"
        scored_run(np.linspace(0.9, 1.1, n), label=label, responses=[f"{side} answer {i}" for i in range(n)]
                   ).to_csv(paths[side], index=False)
    return paths


def partly_labelled(paths, n_labelled, name):
    """Copies of two runs whose labels are kept on their first ``n_labelled`` rows only."""
    out = {}
    for side, path in paths.items():
        frame = pd.read_csv(path)
        frame.loc[n_labelled:, "label"] = np.nan
        out[side] = path.with_name(f"{name}_{side}.csv")
        frame.to_csv(out[side], index=False)
    return out


def gate(paths, *extra):
    return main(["gate", str(paths["new"]), "--baseline", str(paths["base"]), "--n-boot", "200", *extra])


def discordance(paths) -> float:
    base, new = (pd.read_csv(paths[side])["label"].to_numpy() for side in ("base", "new"))
    return float(np.mean(base != new))


def test_a_margin_the_labels_cannot_pass_is_refused_with_the_keys_it_would_need(tmp_path, capsys):
    paths = labelled_runs(tmp_path, 0.3, 0.3)
    psi = discordance(paths)
    z, z_power = stats.norm.ppf(0.975), stats.norm.ppf(0.8)
    half = z * math.sqrt(psi / N)
    assert gate(paths, "--max-rate-increase", "0.02") == 2
    err = capsys.readouterr().err
    reach = math.ceil(half * 1000) / 1000
    needed = math.ceil((z + z_power) ** 2 * psi / 0.02 ** 2)
    assert (f"with {N} keys labelled in both runs the increase's interval is about +/-{reach:.3f}: a margin of 0.02 "
            f"cannot pass; about {needed} keys labelled in both runs would be needed") in err
    assert f"or a margin of at least {reach:.3f}" in err
    # Just below the reach is refused; at the reach the gate decides.
    assert gate(paths, "--max-rate-increase", f"{reach - 0.002:.3f}") == 2
    capsys.readouterr()
    assert gate(paths, "--max-rate-increase", f"{reach:.3f}") in (0, 1)


def test_a_reachable_margin_passes_an_unchanged_run_and_fails_a_rise(tmp_path, capsys):
    same = labelled_runs(tmp_path, 0.3, 0.3, seed=11, name="same")
    rise = labelled_runs(tmp_path, 0.2, 0.55, seed=11, name="rise")
    assert gate(same, "--max-rate-increase", "0.2") == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("PASS hallucination rate: upper 95% bound")
    assert gate(rise, "--max-rate-increase", "0.2") == 1
    assert capsys.readouterr().out.splitlines()[1].startswith("FAIL hallucination rate: upper 95% bound")


def test_sequential_reading_is_decided_only_when_the_sequence_excludes_the_margin(tmp_path, capsys):
    fall = labelled_runs(tmp_path, 0.6, 0.1, seed=2, name="fall")
    rise = partly_labelled(labelled_runs(tmp_path, 0.3, 0.4, seed=11, name="rise"), 100, "rise100")
    assert gate(fall, "--max-rate-increase", "0.2", "--sequential") == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert line.startswith("PASS hallucination rate: upper bound of the sequence -0.")
    assert "betting confidence sequence without replacement over 150 keys (Waudby-Smith and Ramdas 2024" in line
    # A slight rise, 100 of 150 keys labelled in both: the fixed interval passes 0.25, the sequence (valid however
    # the 100 were chosen) is not decided yet.
    assert gate(rise, "--max-rate-increase", "0.25") == 0
    assert gate(rise, "--max-rate-increase", "0.25", "--sequential") == 1
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith("FAIL hallucination rate: not decided yet, the sequence holds 0.25 (new - base ")
    assert main(["gate", str(rise["new"]), "--baseline", str(rise["base"]), "--min-auroc", "0.1", "--sequential"]) == 2
    assert "--sequential reads the hallucination-rate check: it needs --max-rate-increase X" in capsys.readouterr().err


def test_with_every_key_labelled_the_sequence_is_the_difference_itself(tmp_path, capsys):
    same = balanced_runs(tmp_path)
    assert gate(same, "--max-rate-increase", "0.01", "--sequential") == 0
    assert "upper bound of the sequence +0.000 <= 0.01 allowed (new - base +0.000 [+0.000, +0.000]" in \
        capsys.readouterr().out


def test_sequential_refusal_and_keys_needed_come_from_the_sequence(tmp_path, capsys):
    from sgi_core.stats.margin_power import sequential_power

    same = partly_labelled(balanced_runs(tmp_path), 60, "same60")
    base, new = (pd.read_csv(same[side])["label"].to_numpy()[:60] for side in ("base", "new"))
    expected = sequential_power(int(((base == 1) & (new == 0)).sum()), int(((base == 0) & (new == 1)).sum()), 60,
                                N)
    reach = math.ceil(expected.smallest_margin * 1000 - 1e-9) / 1000
    needed = expected.keys_needed(0.2)
    assert 60 < needed <= N
    assert gate(same, "--max-rate-increase", "0.2", "--sequential") == 2
    err = capsys.readouterr().err
    assert (f"with 60 keys labelled in both runs the confidence sequence is about +/-{reach:.3f}: a margin of 0.2 "
            f"cannot pass; about {needed} keys labelled in both runs would be needed (for an unchanged run to pass "
            "in a typical labelling order)") in err
    # Read as a fixed sample, the interval of the same labels already clears 0.2.
    assert gate(same, "--max-rate-increase", "0.2") == 0


def test_a_margin_the_observed_interval_already_clears_is_not_refused(tmp_path, capsys):
    # A 50-point fall with 30 keys labelled in both: 0.05 is below what 30 keys can plan for, but the data clear it.
    fall = partly_labelled(labelled_runs(tmp_path, 0.6, 0.1, seed=2, name="fall"), 30, "fall30")
    assert gate(fall, "--max-rate-increase", "0.05") == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("PASS hallucination rate: upper 95% bound of the "
                                                              "increase -0.")
    assert gate(fall, "--max-rate-increase", "0.05", "--sequential") == 0
    # An unchanged pair at the same margin is still refused: the plan cannot be met, and the data do not meet it.
    same = partly_labelled(balanced_runs(tmp_path), 30, "same30")
    assert gate(same, "--max-rate-increase", "0.05") == 2


def test_compare_says_what_change_the_labels_can_detect(tmp_path, capsys):
    paths = labelled_runs(tmp_path, 0.3, 0.3)
    html = tmp_path / "comparison.html"
    assert main(["compare", str(paths["base"]), str(paths["new"]), "--n-boot", "200", "--html", str(html)]) == 0
    printed = capsys.readouterr().out
    half = math.ceil(stats.norm.ppf(0.975) * math.sqrt(discordance(paths) / N) * 1000) / 1000
    detectable = f"detectable change: about +/-{half:.3f} with {N} keys labelled in both runs"
    assert detectable in printed
    assert "the interval above assumes the number of labelled keys was fixed in advance" in printed
    assert detectable in html.read_text(encoding="utf-8")


def test_a_key_counts_as_scored_only_when_all_its_rows_are(tmp_path, capsys):
    # Each key twice in both runs; the new run leaves the second row of every key unscored (an empty response).
    keys = 300
    ids = np.repeat(np.arange(keys), 2)
    base = scored_run(np.tile([1.2, 0.9], keys), label=1.0, responses=[f"answer {i}" for i in range(2 * keys)])
    base.insert(0, "id", ids)
    new = base.copy()
    new.loc[1::2, ["response", "theta_rq", "theta_rc", "sgi"]] = ["", np.nan, np.nan, np.nan]
    new.loc[1::2, "sgi_status"] = "not scored: empty response"
    paths = {"base": tmp_path / "base.csv", "new": tmp_path / "new.csv"}
    base.to_csv(paths["base"], index=False)
    new.to_csv(paths["new"], index=False)
    code = gate(paths, "--key", "id", "--score", "sgi", "--max-drop", "0", "--allow-unvalidated",
                "--max-rate-increase", "0.02")
    lines = capsys.readouterr().out.splitlines()
    assert code == 1, lines
    assert lines[0].startswith("FAIL keys: 0 of 300 base keys are missing from the new run; 0 are unscored there; "
                               "300 have fewer scored rows there than in the base run (300 rows unscored): ")
    assert lines[0].endswith(" and 290 more")
    assert gate(paths, "--key", "id", "--score", "sgi", "--max-drop", "0.5", "--allow-unvalidated",
                "--allow-missing-keys") == 0
    assert capsys.readouterr().out.startswith("PASS keys: ")


def mixed_label_run(tmp_path, keys: int = 40):
    """A run whose every key has two rows, one labelled grounded and one hallucinated."""
    run = scored_run(np.tile([1.2, 0.9], keys), label=np.tile([1.0, 0.0], keys),
                     responses=[f"answer {i}" for i in range(2 * keys)])
    run.insert(0, "id", np.repeat(np.arange(keys), 2))
    path = tmp_path / "run.csv"
    run.to_csv(path, index=False)
    return path


def test_compare_names_keys_whose_rows_carry_both_labels(tmp_path, capsys):
    keys = 40
    path = mixed_label_run(tmp_path, keys)
    run = pd.read_csv(path)
    assert main(["compare", str(path), str(path), "--key", "id", "--n-boot", "100"]) == 0
    printed = capsys.readouterr().out
    assert f"labels: {keys} keys carry both labels (their rows disagree) and are left out" in printed
    assert "labels: none in either run" not in printed
    # An unlabelled key is not a key with both labels.
    run.loc[run["id"] < 10, "label"] = np.nan
    run.loc[(run["id"] >= 10) & (run["id"] < 20), "label"] = 1.0
    run.to_csv(path, index=False)
    assert main(["compare", str(path), str(path), "--key", "id", "--n-boot", "100"]) == 0
    assert re.search(r"\n  20 keys carry both labels \(their rows disagree\) and are left out", capsys.readouterr().out)


def test_compare_sequential_headlines_the_sequence_and_labels_the_rest_secondary(tmp_path, capsys):
    rise = partly_labelled(labelled_runs(tmp_path, 0.3, 0.4, seed=11, name="rise"), 100, "rise100")
    assert main(["compare", str(rise["base"]), str(rise["new"]), "--n-boot", "100", "--sequential"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("hallucination rate (labels)"))
    assert lines[start].startswith("hallucination rate (labels): no clear change by the confidence sequence, "
                                   "new - base [-0.")
    assert "over 100 of 150 matched keys labelled in both runs (95% betting confidence sequence without " \
           "replacement over 150 keys" in lines[start]
    assert lines[start + 1].startswith("  keys read in a fixed order (a hash of each row's texts)")
    body = [line for line in lines[start + 2:] if line.startswith("  ")]
    assert body[0].startswith("  secondary, valid only at a number of labelled keys fixed in advance: ")
    assert [line.split(":")[0] for line in body[1:3]] == ["  secondary, labels only", "  secondary, prediction-powered"]
    assert not any("read the confidence sequence instead" in line for line in lines)
    assert any(line.startswith("  detectable change: about +/-0.150 with 100 keys labelled in both runs of 150 "
                               "(the sequence's bound") for line in lines)
    # Decided: the interval is the answer, and the estimate at the stop is said to be biased away from zero.
    fall = partly_labelled(labelled_runs(tmp_path, 0.6, 0.1, seed=2, name="fall"), 40, "fall40")
    assert main(["compare", str(fall["base"]), str(fall["new"]), "--n-boot", "100", "--sequential"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("hallucination rate (labels)"))
    assert lines[start].startswith("hallucination rate (labels): improvement by the confidence sequence")
    assert lines[start + 2].startswith("  the answer is the interval [-0.")
    assert "is biased away from zero (here -0." in lines[start + 2]


def test_the_sequence_reads_the_same_whatever_the_files_row_order(tmp_path):
    from sgi_core.runs.comparison import compare_runs
    from sgi_core.runs.matching import match_runs

    paths = labelled_runs(tmp_path, 0.4, 0.2, seed=8)
    base, new = (pd.read_csv(paths[side]) for side in ("base", "new"))
    readings = []
    for seed in (0, 1):
        shuffled = [frame.sample(frac=1.0, random_state=seed) for frame in (base, new)]
        matched = match_runs(*shuffled, key="question", scores=["sgi"])
        readings.append(compare_runs(matched, n_boot=50).labels.sequential)
    assert readings[0] == readings[1] and readings[0].n == N


def test_unpaired_labels_are_held_to_what_two_independent_samples_can_show(tmp_path):
    from sgi_core.errors import SGIInputError
    from sgi_core.policy.baseline_gate import rate_check
    from sgi_core.runs.comparison import compare_runs
    from sgi_core.runs.matching import match_runs

    rng = np.random.default_rng(2)
    label = (rng.random(120) > 0.3).astype(float)
    base = pd.DataFrame({"id": np.arange(120), "sgi": rng.normal(size=120), "label": np.where(np.arange(120) < 60,
                                                                                             label, np.nan)})
    new = base.assign(label=np.where(np.arange(120) >= 60, label, np.nan))
    comparison = compare_runs(match_runs(base, new, key="id", scores=["sgi"]), n_boot=50)
    power = comparison.labels.power
    pooled = label.mean()
    assert power.design == "unpaired"
    assert power.smallest_margin == pytest.approx(stats.norm.ppf(0.975) * math.sqrt(pooled * (1 - pooled) / 30))
    with pytest.raises(SGIInputError, match=r"with 120 labelled keys \(none labelled in both runs\) the increase's "
                                            r"interval is about \+/-0\.1\d\d: a margin of 0\.05 cannot pass"):
        rate_check(comparison, 0.05)
    assert rate_check(comparison, 0.3).max_increase == 0.3
