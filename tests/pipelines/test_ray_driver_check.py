"""A Ray driver with no self-test to run checks a grounding folder without building its network."""

import argparse

import numpy as np
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.grounding.options import load_from_arguments
from sgi_core.grounding.runtime import load_grounding_model
from sgi_core.pipelines.ray_models import checked_models
from tests.grounding.tiny_models import NLI_ORDERS, classifier_folder

PREMISES = ["Paris is the capital of France.", "The river is long."]
HYPOTHESES = ["Paris is in France.", "The river is short."]


@pytest.fixture(scope="module")
def nli_folder(tmp_path_factory):
    return classifier_folder(tmp_path_factory.mktemp("models") / "nli", "bert", NLI_ORDERS["cen"])


def test_a_checked_folder_has_the_loaded_ones_fingerprint_and_no_network(nli_folder):
    checked = load_grounding_model(nli_folder, backend="torch", self_test=False, network=False)
    loaded = load_grounding_model(nli_folder, backend="torch", self_test=False)
    assert checked.network is None and checked.session is None and loaded.network is not None
    assert checked.folder.fingerprint == loaded.folder.fingerprint
    assert (checked.adapter, checked.max_length) == (loaded.adapter, loaded.max_length)
    with pytest.raises(SGIInputError, match="checked, not loaded"):
        checked.support(PREMISES, HYPOTHESES)
    with pytest.raises(ValueError, match="self-test needs the network"):
        load_grounding_model(nli_folder, network=False)


def test_an_actor_loads_what_a_checking_driver_saw_and_scores_as_a_full_load(nli_folder):
    driver = load_grounding_model(nli_folder, backend="torch", self_test=False, network=False)
    (spec,) = checked_models({"grounding_models": (driver,)}, backend="torch", trust_model_code=False)
    actor = spec.load("cpu")
    reference = load_grounding_model(nli_folder, backend="torch", self_test=False)
    assert actor.folder.fingerprint == driver.folder.fingerprint
    np.testing.assert_allclose(actor.support(PREMISES, HYPOTHESES), reference.support(PREMISES, HYPOTHESES),
                               rtol=0, atol=1e-6)


@pytest.mark.parametrize(("engine", "built"), [("ray", False), ("local", True)])
def test_only_a_ray_driver_without_self_test_skips_the_network(nli_folder, engine, built):
    args = argparse.Namespace(engine=engine, no_self_test=True, trust_model_code=False, device="cpu",
                              backend="torch")
    (model,) = load_from_arguments([f"nli={nli_folder}"], args)
    assert (model.network is not None) == built and not model.self_test.ran


def test_a_ray_driver_with_the_self_test_builds_the_network_and_runs_it(nli_folder):
    args = argparse.Namespace(engine="ray", no_self_test=False, trust_model_code=False, device="cpu", backend="torch")
    # The tiny model's random weights fail the self-test: it ran, on a network.
    with pytest.raises(SGIInputError, match="does not separate entailments from contradictions"):
        load_from_arguments([f"nli={nli_folder}"], args)


def test_an_actor_beside_the_driver_reads_its_checked_copy_in_place(nli_folder):
    driver = load_grounding_model(nli_folder, backend="torch", self_test=False, network=False)
    (spec,) = checked_models({"grounding_models": (driver,)}, backend="torch", trust_model_code=False)
    assert spec.snapshot == str(driver.folder.path) and spec.snapshot_files
    actor = spec.load("cpu")
    assert actor.folder.path == driver.folder.path and actor.folder.source == driver.folder.source
    del actor
    assert (driver.folder.path / "config.json").is_file()  # the driver's copy outlives the actor's model


def test_a_changed_copy_is_not_read_and_the_actor_copies_the_folder_and_checks_it(nli_folder, tmp_path):
    import shutil

    driver = load_grounding_model(nli_folder, backend="torch", self_test=False, network=False)
    (spec,) = checked_models({"grounding_models": (driver,)}, backend="torch", trust_model_code=False)
    config = driver.folder.path / "config.json"
    config.write_bytes(config.read_bytes())  # the same bytes written again: not provably unchanged
    actor = spec.load("cpu")
    assert actor.folder.path != driver.folder.path and actor.folder.fingerprint == driver.folder.fingerprint
    # The user's folder changed too: refused, as without a copy to read.
    changed = tmp_path / "nli"
    shutil.copytree(nli_folder, changed)
    moved = load_grounding_model(changed, backend="torch", self_test=False, network=False)
    (moved_spec,) = checked_models({"grounding_models": (moved,)}, backend="torch", trust_model_code=False)
    (changed / "extra.txt").write_text("new")
    config = moved.folder.path / "config.json"
    config.write_bytes(config.read_bytes())
    with pytest.raises(SGIInputError, match="changed after it was checked"):
        moved_spec.load("cpu")
