"""One answer whatever the order: `compare`, `gate --baseline` and the review queues ignore the files' row order.

Every seeded draw (bootstrap replicates, cross-fitting folds, the random review queue)
follows a stable hash of the key or the sorted values, never the row positions: the same
rows and labels, shuffled, give the same JSON, the same gate lines and the same queue.
"""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.errors import SGIInputError
from sgi_core.review.annotations import row_keys
from sgi_core.review.queues import paired_queue, review_queue
from sgi_core.runs.comparison import paired_bootstrap_ci
from sgi_core.runs.matching import match_runs
from sgi_core.stats.effect_size import effect_size
from sgi_core.stats.folds import crossfit_folds
from sgi_core.stats.key_order import canonical_order, key_hash
from sgi_core.stats.ranking import roc_analysis
from tests.runs.test_compare_cli import scored_run

N = 90
N_LABELLED = 40
SHUFFLES = (1, 2, 3)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs of 90 questions where SGI tracks the labels; 40 keys labelled in both, one key answered twice."""
    folder = tmp_path_factory.mktemp("order")
    rng = np.random.default_rng(11)
    frames = {}
    for name, rate in (("base", 0.35), ("new", 0.25)):
        label = (rng.random(N) >= rate).astype(float)
        sgi = 1.0 + 0.3 * label + rng.normal(0, 0.15, N)
        run = scored_run(sgi, label=label, responses=[f"{name} answer {i}" for i in range(N)])
        run.loc[N_LABELLED:, "label"] = np.nan
        # A key with two rows: its mean must not depend on which comes first.
        frames[name] = pd.concat([run, run.iloc[[3]].assign(sgi=run["sgi"].iloc[3] + 0.123456789)],
                                 ignore_index=True)
    return folder, frames


def write(folder, name: str, frame: pd.DataFrame, shuffle: int | None):
    shown = frame if shuffle is None else frame.sample(frac=1.0, random_state=shuffle)
    path = folder / f"{name}_{shuffle}.csv"
    shown.to_csv(path, index=False)
    return path


def compare_dict(folder, base, new, capsys) -> tuple[dict, str]:
    out = folder / "comparison.json"
    assert main(["compare", str(base), str(new), "--n-boot", "300", "--json", str(out)]) == 0
    return json.loads(out.read_text()), capsys.readouterr().out


def test_compare_gives_the_same_result_and_headline_for_shuffled_rows_of_either_file(runs, capsys):
    folder, frames = runs
    reference, text = compare_dict(folder, write(folder, "base", frames["base"], None),
                                   write(folder, "new", frames["new"], None), capsys)
    assert reference["labels"]["method"].startswith("prediction-powered")
    assert reference["match"]["averaged_base"] == 1 and reference["match"]["averaged_new"] == 1
    for shuffle in SHUFFLES:
        for shuffled in (("base",), ("new",), ("base", "new")):
            paths = [write(folder, name, frames[name], shuffle if name in shuffled else None)
                     for name in ("base", "new")]
            result, shown = compare_dict(folder, *paths, capsys)
            assert result == reference, (shuffle, shuffled)
            assert shown == text
            assert result["labels"]["rate_base"] == reference["labels"]["rate_base"]


def test_gate_baseline_prints_the_same_lines_for_shuffled_rows(runs, capsys):
    folder, frames = runs
    outputs = set()
    for shuffle in (None, *SHUFFLES):
        paths = [write(folder, name, frames[name], shuffle) for name in ("base", "new")]
        code = main(["gate", str(paths[1]), "--baseline", str(paths[0]), "--n-boot", "300",
                     "--max-rate-increase", "0.3", "--score", "sgi", "--max-drop", "0.5"])
        outputs.add((code, capsys.readouterr().out))
    assert len(outputs) == 1
    code, lines = outputs.pop()
    assert code in (0, 1) and "hallucination rate" in lines


def test_matched_keys_come_in_their_hash_order_whatever_the_row_order():
    base = pd.DataFrame({"q": list("abcdef"), "sgi": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    new = base.assign(sgi=base["sgi"] + 1.0)
    first = match_runs(base, new, key="q", scores=["sgi"])
    assert first.keys.tolist() == list(np.array(list("abcdef"), dtype=object)[canonical_order(list("abcdef"))])
    shuffled = match_runs(base.iloc[::-1], new.iloc[[2, 0, 5, 1, 4, 3]], key="q", scores=["sgi"])
    assert shuffled.keys.tolist() == first.keys.tolist()
    assert shuffled.base["sgi"].tolist() == first.base["sgi"].tolist()
    # The first rows map back to each input table's own positions.
    assert base.iloc[::-1]["q"].to_numpy()[shuffled.first_row_base].tolist() == shuffled.keys.tolist()
    assert new.iloc[[2, 0, 5, 1, 4, 3]]["q"].to_numpy()[shuffled.first_row_new].tolist() == shuffled.keys.tolist()


def test_keys_in_one_run_only_are_listed_sorted():
    base = pd.DataFrame({"q": ["z", "a", "m", "b"], "sgi": 1.0})
    new = pd.DataFrame({"q": ["y", "b", "c"], "sgi": 1.0})
    match = match_runs(base, new, key="q", scores=["sgi"]).match
    assert (match.only_in_base, match.only_in_new) == (("a", "m", "z"), ("c", "y"))


def test_the_key_hash_is_stable_seeded_and_positional_only_in_ties():
    keys = np.array(["k1", "k2", "k3", "k4", "k5"], dtype=object)
    hashes = key_hash(keys)
    assert hashes.dtype == np.uint64 and len(set(hashes.tolist())) == 5
    # Each key's hash is its own: another set of keys around it does not move it.
    assert key_hash(["k3"])[0] == hashes[2]
    assert key_hash(keys, seed=1).tolist() != hashes.tolist()
    # Order of the sorted hashes, computed independently of canonical_order.
    assert keys[canonical_order(keys)].tolist() == sorted(keys.tolist(), key=lambda k: int(key_hash([k])[0]))
    # The same key twice: its two positions in order.
    assert canonical_order(["x", "x"]).tolist() == [0, 1]
    with pytest.raises(SGIInputError, match="The 'seed' parameter of key_hash must be an int >= 0"):
        key_hash(keys, seed=-1)


def test_bootstrap_intervals_do_not_depend_on_the_order_of_the_values():
    rng = np.random.default_rng(3)
    y = (rng.random(120) > 0.4).astype(float)
    score = y + rng.normal(0, 1.0, 120)
    order = rng.permutation(120)
    assert roc_analysis(y[order], score[order], n_boot=200).auroc_ci == roc_analysis(y, score, n_boot=200).auroc_ci
    assert effect_size(y[order], score[order], n_boot=200).cohens_d_ci == effect_size(y, score, n_boot=200).cohens_d_ci
    # Sorted resamples keep the negation symmetry: a score's negation has the mirrored interval.
    lo, hi = roc_analysis(y, -score, n_boot=200).auroc_ci
    assert (1 - hi, 1 - lo) == pytest.approx(roc_analysis(y, score, n_boot=200).auroc_ci, abs=1e-12)
    d = rng.normal(0.1, 1.0, 50)
    assert paired_bootstrap_ci(d[::-1], n_boot=300) == paired_bootstrap_ci(d, n_boot=300)
    # The law is unchanged: on a symmetric toy sample the interval is centred on its mean.
    lo, hi = paired_bootstrap_ci([-1.0, 1.0] * 20, n_boot=2000)
    assert lo == pytest.approx(-hi, abs=0.03)


def test_crossfit_folds_follow_the_group_values_not_their_first_appearance():
    groups = np.repeat([f"question {i}" for i in range(12)], 2)
    y = np.tile([1.0, 0.0], 12)
    folds = crossfit_folds(groups, y_true=y, n_folds=3, seed=4)
    order = np.random.default_rng(0).permutation(len(groups))
    shuffled = crossfit_folds(groups[order], y_true=y[order], n_folds=3, seed=4)
    assert dict(zip(groups[order], shuffled)) == dict(zip(groups, folds))
    assert sorted(set(folds.tolist())) == [0, 1, 2]


def test_the_random_queue_follows_the_row_keys():
    frame = pd.DataFrame({"question": [f"q{i}" for i in range(30)], "context": "c", "response": "r"})
    keys = row_keys(frame)
    queue = review_queue(30, strategy="random", seed=2, keys=keys)
    order = np.random.default_rng(1).permutation(30)
    shuffled = review_queue(30, strategy="random", seed=2, keys=keys[order])
    assert keys[order][shuffled.rows].tolist() == keys[queue.rows].tolist()
    assert review_queue(30, strategy="random", seed=3, keys=keys).rows.tolist() != queue.rows.tolist()
    score = np.linspace(0, 1, 30)
    stratified = review_queue(30, strategy="stratified", score=score, seed=2, keys=keys)
    again = review_queue(30, strategy="stratified", score=score[order], seed=2, keys=keys[order])
    assert keys[order][again.rows].tolist() == keys[stratified.rows].tolist()
    with pytest.raises(SGIInputError, match="the queue was given 29 keys for 30 rows"):
        review_queue(30, strategy="random", keys=keys[:29])


def test_the_paired_queue_follows_the_matched_keys():
    keys = np.array([f"key {i}" for i in range(10)], dtype=object)
    decided = np.zeros(10, dtype=bool)
    decided_both = decided.copy()
    decided_both[[1, 4]] = True
    queue = paired_queue(decided_both, decided_both, seed=0, keys=keys)
    assert keys[queue].tolist() == [k for k in keys[canonical_order(keys)] if k not in ("key 1", "key 4")]
    order = np.arange(10)[::-1]
    again = paired_queue(decided_both[order], decided_both[order], seed=0, keys=keys[order])
    assert keys[order][again].tolist() == keys[queue].tolist()
