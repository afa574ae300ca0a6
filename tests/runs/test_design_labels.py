"""A sample's labels read back under their design: the round trip, the active estimate, and every refusal."""

import math
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.runs.active_labels import ACTIVE_METHOD, active_label_shift
from sgi_core.runs.design_labels import SAMPLE_COLUMNS, recorded_design, verified_pair_design
from sgi_core.runs.labels import label_shift
from tests.conftest import REPO

RUNS = REPO / "sample_data" / "runs"


def truth() -> dict:
    sample = pd.read_csv(REPO / "sample_data" / "halueval_qa_sample.csv")
    return dict(zip(zip(sample["question"], sample["response"]), sample["label"]))


def write_runs(folder: Path, *, strength: float = 0.733, seed: int = 1) -> dict:
    """The bundled runs with ``model_prob``, a noisy P(grounded) of the true label (AUROC about 0.85)."""
    labels, rng, paths = truth(), np.random.default_rng(seed), {}
    for name in ("base", "new"):
        frame = pd.read_csv(RUNS / f"{name}.csv")
        y = np.array([labels[(q, r)] for q, r in zip(frame["question"], frame["response"])])
        frame["model_prob"] = expit(strength * (2 * y - 1) + rng.normal(0, 1, len(y)))
        paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


def draw(tmp_path, *extra, seed=3, design="active") -> tuple[dict, Path]:
    paths = write_runs(tmp_path)
    out = tmp_path / "sample.csv"
    code = main(["sample", str(paths["new"]), "--baseline", str(paths["base"]), "--n", "40", "--design", design,
                 "--predictor", "model_prob", "--seed", str(seed), "-o", str(out), *extra])
    assert code == 0
    return paths, out


def fill(path: Path) -> Path:
    labels, sample = truth(), pd.read_csv(path)
    sample["label"] = [labels[(q, r)] for q, r in zip(sample["question"], sample["response"])]
    filled = path.with_name("filled.csv")
    sample.to_csv(filled, index=False)
    return filled


def read_pair(paths, labels):
    from sgi_core.commands.run_files import read_runs

    args = SimpleNamespace(labels=list(labels), label_positive=None, key="question", hallucinated_high=[],
                           precision="fp32", context_strategy="joined")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_runs(args, (paths["base"], paths["new"]), lambda table: table.frame, "none")


def test_the_sample_file_has_one_row_per_run_and_drawn_key(tmp_path):
    _, out = draw(tmp_path)
    sample = pd.read_csv(out)
    assert tuple(sample.columns) == SAMPLE_COLUMNS
    assert sample["label"].isna().all() and set(sample["design"]) == {"active"} and set(sample["seed"]) == {3}
    assert sample["run"].value_counts().to_dict() == {"base.csv": len(sample) // 2, "new.csv": len(sample) // 2}
    assert 25 <= len(sample) // 2 <= 55  # about 40 keys: Bernoulli draws, sd about 5


def test_the_same_seed_draws_the_same_keys_whatever_the_row_order(tmp_path):
    paths, out = draw(tmp_path)
    for path in paths.values():
        pd.read_csv(path).sample(frac=1.0, random_state=0).to_csv(path, index=False)
    again = tmp_path / "again.csv"
    main(["sample", str(paths["new"]), "--baseline", str(paths["base"]), "--n", "40", "--design", "active",
          "--predictor", "model_prob", "--seed", "3", "-o", str(again)])
    first, second = (pd.read_csv(p).sort_values(["run", "key"]).reset_index(drop=True) for p in (out, again))
    pd.testing.assert_frame_equal(first, second)


def test_a_filled_sample_is_verified_and_estimated_actively(tmp_path):
    paths, out = draw(tmp_path)
    filled = fill(out)
    pair = read_pair(paths, [filled])
    design = verified_pair_design([filled], pair)
    assert design.design == "active" and design.n_drawn == len(pd.read_csv(out)) // 2
    shift = active_label_shift(label_shift(pair.matched), pair.matched, design)
    assert shift.method.startswith(f"{ACTIVE_METHOD}, predictor model_prob, {design.n_drawn} keys; planned +/-0.")
    assert shift.power.design == "active"
    assert shift.power.smallest_margin == pytest.approx((shift.ci[1] - shift.ci[0]) / 2)
    assert shift.sequential is None and shift.sequential_power is None and shift.sample is None
    assert math.isnan(shift.mcnemar_p)
    assert shift.ci[0] < shift.difference < shift.ci[1]
    assert shift.labels_difference == pytest.approx(shift.labels_rate_new - shift.labels_rate_base)
    # The bundled runs' true difference over their 150 keys: 38 - 59 hallucinated.
    assert abs(shift.difference - (38 - 59) / 150) < 0.2


def test_a_uniform_sample_keeps_the_prediction_powered_estimate(tmp_path):
    paths, out = draw(tmp_path, design="uniform")
    filled = fill(out)
    pair = read_pair(paths, [filled])
    design = verified_pair_design([filled], pair)
    before = label_shift(pair.matched)
    after = active_label_shift(before, pair.matched, design)
    assert after.ci == before.ci and after.method == f"{before.method}; uniform sample, seed 3"


def test_labels_without_a_design_are_not_a_design(tmp_path):
    assert recorded_design([RUNS / "labels_sample.csv"]) is None


def edited(out: Path, change) -> Path:
    sample = pd.read_csv(fill(out))
    change(sample)
    path = out.with_name("edited.csv")
    sample.to_csv(path, index=False)
    return path


def _set_first(column, value):
    """Set ``column`` on the first base row whose response differs from the new run's (a row of its own)."""
    def change(sample):
        own = sample.groupby("key")["response"].transform("nunique") > 1
        row = sample.index[own & (sample["run"] == "base.csv")][0]
        sample[column] = sample[column].astype(object)
        sample.loc[row, column] = value
    return change


@pytest.mark.parametrize(("change", "message"), [
    (_set_first("inclusion_probability", 0.5),
     r"1 labelled keys of \S*base.csv carry a probability other than the one their seed, budget and predictor give"),
    (_set_first("label", np.nan), "keys the design draws have no label in"),
    (_set_first("seed", 99), "the labels come from 2 different designs"),
    (_set_first("design", np.nan), "labelled rows without their design"),
])
def test_labels_that_break_their_design_are_refused(tmp_path, change, message):
    paths, out = draw(tmp_path)
    path = edited(out, change)
    with pytest.raises(SGIInputError, match=message):
        verified_pair_design([path], read_pair(paths, [path]))


def test_a_labelled_key_the_design_did_not_draw_is_refused(tmp_path):
    paths, out = draw(tmp_path)
    sample = pd.read_csv(fill(out))
    drawn = set(sample["key"])
    base = pd.read_csv(paths["base"])
    other = base[~base["question"].isin(drawn)].iloc[:1]
    labels = truth()
    row = sample.iloc[:1].assign(key=other["question"].iloc[0], question=other["question"].iloc[0],
                                 context=other["context"].iloc[0], response=other["response"].iloc[0],
                                 label=labels[(other["question"].iloc[0], other["response"].iloc[0])])
    path = tmp_path / "extra.csv"
    pd.concat([sample, row]).to_csv(path, index=False)
    with pytest.raises(SGIInputError, match="1 labelled keys are not drawn by the design"):
        verified_pair_design([path], read_pair(paths, [path]))


def test_design_columns_missing_or_mixed_with_plain_labels_are_refused(tmp_path):
    paths, out = draw(tmp_path)
    filled = fill(out)
    with pytest.raises(SGIInputError, match=r"mixed with labels without one \(.*labels_sample.csv\)"):
        recorded_design([filled, RUNS / "labels_sample.csv"])
    partial = tmp_path / "partial.csv"
    pd.read_csv(filled).drop(columns=["budget"]).to_csv(partial, index=False)
    with pytest.raises(SGIInputError, match="carry a design's columns but not budget"):
        recorded_design([partial])


def test_the_command_line_refuses_a_score_that_is_no_probability(tmp_path, capsys):
    paths = write_runs(tmp_path)
    code = main(["sample", str(paths["base"]), "--n", "20", "--design", "active", "--predictor",
                 "neg_response_length", "-o", str(tmp_path / "s.csv")])
    assert code == 2 and "'neg_response_length' is not a probability" in capsys.readouterr().err
    assert not (tmp_path / "s.csv").exists()


def test_one_run_sample_and_its_plan(tmp_path, capsys):
    paths = write_runs(tmp_path)
    out = tmp_path / "one.csv"
    assert main(["sample", str(paths["base"]), "--n", "30", "--design", "active", "--predictor", "model_prob",
                 "--half-width", "0.1", "-o", str(out)]) == 0
    sample = pd.read_csv(out)
    assert set(sample["run"]) == {"base.csv"} and sample["key"].str.fullmatch("[0-9a-f]{32}").all()
    assert "for +/-0.1 on the hallucination rate with uniform sampling" in capsys.readouterr().out


def test_one_run_labels_are_verified_and_give_the_active_rate(tmp_path):
    from sgi_core.io.reading import read_table
    from sgi_core.review.annotations import row_keys
    from sgi_core.review.label_sources import join_label_sets, read_label_source
    from sgi_core.runs.active_labels import active_run_rate
    from sgi_core.runs.design_labels import verified_run_design
    from sgi_core.runs.reading import read_run

    paths = write_runs(tmp_path)
    out = tmp_path / "one.csv"
    main(["sample", str(paths["base"]), "--n", "40", "--design", "active", "--predictor", "model_prob", "--seed", "5",
          "-o", str(out)])
    filled = fill(out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = read_run(read_table(paths["base"]), source="base.csv", scorer=lambda table: table.frame)
    frame = run.frame.assign(label=join_label_sets(row_keys(run.frame), [read_label_source(filled)]).label)
    design = verified_run_design([filled], frame, source="base.csv")
    assert design.n_drawn == len(pd.read_csv(out))
    rate = active_run_rate(frame, design)
    assert rate.n_labelled == design.n_drawn and rate.ci[0] < rate.estimate < rate.ci[1]
    assert abs(rate.estimate - 59 / 150) < 0.2  # the bundled base run hallucinates on 59 of 150 questions
    blanked = pd.read_csv(filled)
    blanked.loc[0, "label"] = np.nan
    blanked.to_csv(filled, index=False)
    frame = run.frame.assign(label=join_label_sets(row_keys(run.frame), [read_label_source(filled)]).label)
    with pytest.raises(SGIInputError, match="1 keys the design draws have no label in base.csv"):
        verified_run_design([filled], frame, source="base.csv")


def test_a_comparison_takes_the_design_of_its_labels_and_only_then(tmp_path):
    from sgi_core.runs.active_labels import design_comparison
    from sgi_core.runs.comparison import compare_runs

    paths, out = draw(tmp_path)
    filled = fill(out)
    pair = read_pair(paths, [filled])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = compare_runs(pair.matched, n_boot=0)
        active = design_comparison(comparison, pair, [filled])
    assert active.labels.method.startswith(ACTIVE_METHOD) and active.scores == comparison.scores
    plain = read_pair(paths, [RUNS / "labels_sample.csv"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = compare_runs(plain.matched, n_boot=0)
    assert design_comparison(comparison, plain, [RUNS / "labels_sample.csv"]) is comparison


def test_a_policys_calibrator_draws_on_any_score_and_must_be_given_back(tmp_path):
    from sgi_core.policy.file import policy_to_json
    from sgi_core.policy.making import make_policy

    halueval = pd.read_csv(REPO / "sample_data" / "halueval_qa_sample.csv")
    policy = make_policy(halueval["label"].to_numpy(float), -halueval["response"].str.len().to_numpy(float),
                         model="minilm", score_column="neg_response_length", seed=0)[0]
    policy_path = tmp_path / "policy.json"
    policy_path.write_text(policy_to_json(policy))
    paths = write_runs(tmp_path)
    by_policy = tmp_path / "by_policy.csv"
    assert main(["sample", str(paths["new"]), "--baseline", str(paths["base"]), "--n", "40", "--design", "active",
                 "--policy", str(policy_path), "-o", str(by_policy)]) == 0
    assert set(pd.read_csv(by_policy)["predictor"]) == {"neg_response_length"}
    filled = fill(by_policy)
    pair = read_pair(paths, [filled])
    assert verified_pair_design([filled], pair, policy=policy).predictor == "neg_response_length"
    with pytest.raises(SGIInputError, match="'neg_response_length' is not a probability"):
        verified_pair_design([filled], pair)
