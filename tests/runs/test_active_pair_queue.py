"""The Review page's two-runs active queue: the keys and probabilities `sample --baseline --design active` draws, and
its labels read from the annotations as `compare --labels` reads the sample file: the same estimate, or a refusal."""

import json
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.io.reading import read_table
from sgi_core.review.annotations import AnnotationStore, row_keys
from sgi_core.review.queues import paired_queue
from sgi_core.runs.active_labels import ACTIVE_METHOD
from sgi_core.runs.pairing import pair_runs
from sgi_core.runs.reading import read_run
from sgi_core.runs.review_designs import active_pair_queue, pair_estimate, pair_predictors, store_design
from tests.runs.test_design_labels import RUNS, fill, truth

BUDGET, SEED, PREDICTOR = 20, 7, "lexical_groundedness"


def read_pair():
    """The bundled runs matched on ``id``, read as ``sample`` reads them (no model: the predictor is a baseline)."""
    runs = [read_run(read_table(RUNS / f"{name}.csv", name=f"{name}.csv"), source=f"{name}.csv",
                     scorer=lambda table: table.frame, key="id") for name in ("base", "new")]
    return pair_runs(*runs, key="id")


@pytest.fixture(scope="module")
def pair():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # five responses without a content word: their overlap is NaN
        return read_pair()


@pytest.fixture(scope="module")
def queue(pair):
    return active_pair_queue(pair, budget=BUDGET, seed=SEED, predictor=PREDICTOR)


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample") / "to_label.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["sample", str(RUNS / "new.csv"), "--baseline", str(RUNS / "base.csv"), "--key", "id",
                     "--n", str(BUDGET), "--design", "active", "--predictor", PREDICTOR, "--seed", str(SEED),
                     "-o", str(out)]) == 0
    return out


def test_the_queue_draws_the_keys_and_probabilities_the_command_line_draws(pair, queue, sampled):
    drawn = pd.read_csv(sampled, dtype={"key": str})
    keys = pair.matched.keys[queue.rows].astype(str)
    assert len(queue.rows) == queue.design.n_drawn and queue.n_skipped == 0
    for run in ("base.csv", "new.csv"):
        assert sorted(keys) == sorted(drawn.loc[drawn["run"] == run, "key"])
    cli = dict(zip(drawn["key"], drawn["inclusion_probability"]))
    for position, key in zip(queue.rows, keys):
        record = queue.record(int(position))
        assert record["inclusion_probability"] == pytest.approx(cli[key], rel=1e-12)
        assert (record["design"], record["predictor"], record["seed"], record["budget"]) == ("active", PREDICTOR,
                                                                                             SEED, BUDGET)
    # The two-runs random queue's order, restricted to the drawn keys.
    nobody = np.zeros(len(pair.matched.keys), bool)
    order = paired_queue(nobody, nobody, seed=SEED, keys=pair.matched.keys).tolist()
    assert queue.rows.tolist() == [p for p in order if p in set(queue.rows.tolist())]


def test_keys_decided_in_both_runs_are_skipped_and_a_bad_predictor_says_why(pair, queue):
    base, new = (np.zeros(len(pair.matched.keys), bool) for _ in range(2))
    base[queue.rows[:3]] = True
    new[queue.rows[:2]] = True  # the third key's new answer is still to label: it stays
    fewer = active_pair_queue(pair, budget=BUDGET, seed=SEED, predictor=PREDICTOR, decided_base=base,
                              decided_new=new)
    assert fewer.rows.tolist() == queue.rows[2:].tolist() and fewer.n_skipped == 2
    with pytest.raises(SGIInputError, match="the predictor 'nope' is not a score column of both runs") as err:
        active_pair_queue(pair, budget=BUDGET, seed=SEED, predictor="nope")
    assert PREDICTOR in err.value.hint
    with pytest.raises(SGIInputError, match="the predictor 'neg_response_length' is not a probability"):
        active_pair_queue(pair, budget=BUDGET, seed=SEED, predictor="neg_response_length")


def label(pair, queue, positions, folder, *, design=True, probability=1.0):
    """Each run's store holding the true label of ``positions``' answers, and the pair with those labels joined."""
    answers, matched, stores = truth(), pair.matched, []
    joined = {}
    for side, run, first in (("base", pair.base, matched.first_row_base), ("new", pair.new, matched.first_row_new)):
        rows = run.frame.iloc[first]
        y = np.array([answers[(q, r)] for q, r in zip(rows["question"], rows["response"])], dtype=float)
        keys, store = row_keys(rows), AnnotationStore(folder / f"{side}.jsonl")
        for position in positions:
            record = queue.record(int(position))
            record["inclusion_probability"] *= probability
            store.add(keys[position], "grounded" if y[position] else "hallucinated", queue="active" if design else
                      "random", design=record if design else None)
        labelled = np.full(len(y), np.nan)
        labelled[list(positions)] = y[list(positions)]
        joined[side] = labelled
        stores.append((store.path.name, store.current(), keys))
    matched = replace(matched, base=matched.base.assign(label=joined["base"]),
                      new=matched.new.assign(label=joined["new"]))
    return replace(pair, matched=matched), stores


def test_the_estimate_is_the_one_compare_prints_for_the_sample_once_every_drawn_key_is_labelled(pair, queue, sampled,
                                                                                                tmp_path):
    some, stores = label(pair, queue, queue.rows[:5], tmp_path / "some")
    waiting = pair_estimate(some, stores)
    assert waiting.shift is None and waiting.n_labelled == 5 and waiting.design.n_drawn == len(queue.rows)
    np.testing.assert_array_equal(waiting.design.pi, queue.design.pi)
    everything, stores = label(pair, queue, queue.rows, tmp_path / "all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        done = pair_estimate(everything, stores)
        report = tmp_path / "comparison.json"
        assert main(["compare", str(RUNS / "base.csv"), str(RUNS / "new.csv"), "--key", "id", "--model", "hashing",
                     "--n-boot", "0", "--labels", str(fill(sampled)), "--json", str(report)]) == 0
    cli = json.loads(report.read_text())["labels"]
    shift = done.shift
    assert shift.method.startswith(f"{ACTIVE_METHOD}, predictor {PREDICTOR}, {len(queue.rows)} keys; planned +/-")
    assert shift.method == cli["method"] and shift.sequential is None
    assert (shift.difference, *shift.ci) == pytest.approx((cli["difference"], *cli["ci"]), rel=1e-12)
    assert (shift.rate_base, shift.rate_new) == pytest.approx((cli["rate_base"], cli["rate_new"]), rel=1e-12)


def test_labels_whose_design_cannot_be_verified_are_refused(pair, queue, tmp_path):
    outside = int(np.setdiff1d(np.arange(len(pair.matched.keys)), queue.rows)[0])
    active, stores = label(pair, queue, queue.rows[:4], tmp_path / "active")
    _, plain = label(pair, queue, [outside], tmp_path / "plain", design=False)
    mixed = [(name, pd.concat([current, other]), keys) for (name, current, keys), (_, other, _) in zip(stores, plain)]
    with pytest.raises(SGIInputError, match=r"8 labels of the matched keys were given on the active queue and carry "
                                            r"its design, 2 on another queue without one \(base.jsonl: 4 with a "
                                            r"design, 1 without; new.jsonl") as err:
        store_design(mixed)
    assert "one queue" in err.value.hint
    _, edited = label(pair, queue, queue.rows[:4], tmp_path / "edited", probability=0.5)
    with pytest.raises(SGIInputError, match="4 labelled keys of base.csv carry a probability other than the one"):
        pair_estimate(active, edited)
    _, other = label(pair, active_pair_queue(pair, budget=BUDGET, seed=SEED + 1, predictor=PREDICTOR),
                     queue.rows[:4], tmp_path / "other")
    with pytest.raises(SGIInputError, match="2 different designs"):
        store_design([(name, pd.concat([current, more]), keys) for (name, current, keys), (_, more, _) in
                      zip(stores, other)])
    assert store_design([(name, current.iloc[:0], keys) for name, current, keys in stores]) is None


def test_the_predictors_offered_are_the_probability_columns_of_both_runs(pair):
    offered = pair_predictors(pair)
    assert PREDICTOR in offered and "neg_response_length" not in offered
    assert set(offered) <= set(pair.matched.scores)


def test_a_sample_too_small_for_an_interval_says_nothing_is_detectable_yet(pair, tmp_path):
    small = active_pair_queue(pair, budget=4, seed=SEED, predictor=PREDICTOR)
    labelled, stores = label(pair, small, small.rows, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shift = pair_estimate(labelled, stores).shift
    assert "no interval" in shift.method and all(np.isnan(shift.ci))
    assert shift.power.smallest_margin == np.inf
