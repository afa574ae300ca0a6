"""Grounding models and claims on a local Ray: the local engine's values, row for row, and its record."""

import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.columns import grounding_columns
from sgi_core.detectors.columns import CLAIM_COLUMNS
from sgi_core.errors import SGIInputError
from sgi_core.grounding.runtime import load_grounding_model
from sgi_core.grounding.selftest import SelfTest
from sgi_core.io.scored import scored_with
from sgi_core.pipelines.ray_models import CheckedModel, checked_models
from sgi_core.pipelines.ray_rows import ORDER_KEY
from sgi_core.pipelines.ray_scorer import actor_pool
from tests.conftest import SAMPLE_CSV
from tests.grounding.tiny_models import NLI_ORDERS, classifier_folder

ray = pytest.importorskip("ray")

SHARD_ROWS = (14, 10)
EMPTY_RESPONSE_ROW = 3  # 1-based row of the first shard whose response is blank


@pytest.fixture(scope="module")
def ray_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("ray-cache")


@pytest.fixture(scope="module")
def local_ray(ray_cache):
    # The actors' cache folder is set when Ray starts: their processes do not see a test's environment.
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"SGI_CACHE_DIR": str(ray_cache / "embeddings")}})
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def nli_folder(tmp_path_factory):
    return classifier_folder(tmp_path_factory.mktemp("models") / "nli", "bert", NLI_ORDERS["cen"])


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    folder = tmp_path_factory.mktemp("grounding-shards")
    sample = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    sample.loc[EMPTY_RESPONSE_ROW - 1, "response"] = "  "
    start = 0
    for i, n in enumerate(SHARD_ROWS):
        sample.iloc[start : start + n].to_csv(folder / f"part-{i}.csv", index=False)
        start += n
    return folder


def flags(folder):
    return ["--model", "hashing", "--grounding-model", f"nli={folder}", "--no-self-test", "--claims",
            "--batch-size", "4", "--no-cache"]


@pytest.fixture(scope="module")
def ray_run(local_ray, shards, nli_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("ray-out") / "scored"
    assert main(["score", str(shards), "-o", str(out), "--engine", "ray", "--chunk-rows", "6",
                 "--num-actors", "2", *flags(nli_folder)]) == 0
    return out, pd.read_parquet(out).sort_values(list(ORDER_KEY)).reset_index(drop=True)


def test_every_row_has_the_local_engines_values(ray_run, shards, nli_folder, tmp_path):
    _, rows = ray_run
    compared = [*grounding_columns("nli"), *CLAIM_COLUMNS, "theta_qc", "theta_rq", "theta_rc", "sgi"]
    for shard, n in enumerate(SHARD_ROWS):
        local = tmp_path / f"local-{shard}.parquet"
        assert main(["score", str(shards / f"part-{shard}.csv"), "-o", str(local), *flags(nli_folder)]) == 0
        reference = pd.read_parquet(local)
        mine = rows[rows["input_shard"] == shard].reset_index(drop=True)
        assert mine["input_row"].tolist() == list(range(1, n + 1)) == reference["input_row"].tolist()
        assert mine["sgi_status"].tolist() == reference["sgi_status"].tolist()
        for column in compared:
            np.testing.assert_allclose(mine[column].to_numpy(float), reference[column].to_numpy(float),
                                       rtol=0, atol=1e-6, equal_nan=True, err_msg=column)
    blank = rows[(rows["input_shard"] == 0) & (rows["input_row"] == EMPTY_RESPONSE_ROW)]
    assert np.isnan(blank["grounding_nli_min"]).all() and (blank["grounding_nli_chunks"] == 0).all()
    assert np.isfinite(rows["grounding_nli_min"]).sum() == sum(SHARD_ROWS) - 1


def test_every_file_records_the_backend_and_fingerprint_the_local_engine_records(ray_run, shards, nli_folder,
                                                                                 tmp_path):
    out, _ = ray_run
    local = tmp_path / "local.parquet"
    assert main(["score", str(shards / "part-0.csv"), "-o", str(local), *flags(nli_folder)]) == 0
    expected = scored_with(local)
    files = sorted(out.glob("*.parquet"))
    assert files
    for path in files:
        record = scored_with(path)
        assert record == expected
    model = json.loads(expected["grounding_models"])[0]
    assert (model["backend"], model["self_test"]["ran"]) == ("onnx", False)
    assert model["fingerprint"] == load_grounding_model(nli_folder, self_test=False).folder.fingerprint


def test_the_pair_cache_is_written_by_the_actors_and_read_on_a_rerun(local_ray, shards, nli_folder, ray_cache,
                                                                     tmp_path):
    args = ["--engine", "ray", "--model", "hashing", "--grounding-model", f"nli={nli_folder}", "--no-self-test",
            "--num-actors", "1"]
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["score", str(shards), "-o", str(first), *args]) == 0
    cached = sorted(ray_cache.rglob("grounding-nli-*.sqlite"))
    assert cached, "the actors wrote no pair cache"
    sizes = [path.stat().st_size for path in cached]
    assert main(["score", str(shards), "-o", str(second), *args]) == 0
    assert [path.stat().st_size for path in cached] == sizes
    a, b = (pd.read_parquet(p).sort_values(list(ORDER_KEY))["grounding_nli_mean"].to_numpy() for p in (first, second))
    np.testing.assert_array_equal(a, b)


def test_a_folder_changed_after_the_check_is_refused_by_the_actor(nli_folder):
    checked = CheckedModel("nli", str(nli_folder), "folder:" + "0" * 64, "torch", SelfTest.not_run())
    with pytest.raises(SGIInputError, match="changed after it was checked"):
        checked.load("cpu")


def test_the_actor_keeps_the_drivers_self_test_and_fingerprint(nli_folder):
    driver = load_grounding_model(nli_folder, backend="torch", self_test=False)
    (spec,) = checked_models({"grounding_models": (driver,)}, backend="onnx-int8", trust_model_code=False)
    assert (spec.backend, spec.fingerprint) == ("onnx", driver.folder.fingerprint)
    loaded = spec.load("cpu")
    assert loaded.folder.fingerprint == driver.folder.fingerprint and loaded.self_test is spec.self_test
    with pytest.raises(SGIInputError, match="cannot be loaded by Ray actors"):
        checked_models({"reference_sets": ("x",)}, backend="auto", trust_model_code=False)


def test_the_actor_pool_holds_the_clusters_cpus(local_ray):
    assert actor_pool(None, None, None) == (2, {"num_cpus": 1})
    assert actor_pool(None, 2, None) == (1, {"num_cpus": 2})
    assert actor_pool(3, 1, "cpu") == (3, {"num_cpus": 1})
    with pytest.raises(SGIInputError, match="'cpus_per_actor' parameter of score_with_ray must be an int >= 1"):
        actor_pool(None, 0, None)
