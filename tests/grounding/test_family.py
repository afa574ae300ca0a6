"""The grounding family in the registry: its option is generated from its declared resource, its columns per model."""

import argparse

import numpy as np
import pandas as pd
import pytest

from sgi_core.columns import grounding_columns
from sgi_core.detectors.registry import FAMILIES, RESOURCE_OPTIONS, DetectorInputs, per_row_family
from sgi_core.errors import SGIInputError
from sgi_core.io.triples import load_triples
from sgi_core.render.names import display_name
from sgi_core.scores import spec_for
from tests.conftest import SAMPLE_CSV


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("rows") / "rows.csv"
    pd.read_csv(SAMPLE_CSV).head(8).to_csv(path, index=False)
    return load_triples(path)


def test_the_family_declares_its_resource():
    family = per_row_family("grounding")
    assert "a grounding model" in family.needs and family.resource is RESOURCE_OPTIONS["a grounding model"]
    assert family.resource.flag == "--grounding-model" and family.protocol == "label-free"


def test_score_takes_the_declared_option_instead_of_a_flag():
    from sgi_core.commands import score

    parser = argparse.ArgumentParser()
    score.add_parser(parser.add_subparsers())
    args = parser.parse_args(["score", "in.csv", "-o", "out.csv", "--grounding-model", "a=x",
                              "--grounding-model", "y", "--claims"])
    assert args.grounding_model == ["a=x", "y"] and score._families(args) == ("claims", "grounding")
    with pytest.raises(SystemExit):
        parser.parse_args(["score", "in.csv", "-o", "out.csv", "--grounding"])


def test_columns_per_model_indexed_like_the_table(table, tiny_models):
    models = (tiny_models["bert_cen"], tiny_models["hhem"])
    computed = FAMILIES["grounding"].compute(DetectorInputs(table, resources={"grounding_models": models}))
    assert list(computed.columns.columns) == [*grounding_columns("bert_cen"), *grounding_columns("hhem")]
    assert computed.columns.index.equals(table.frame.index)
    assert [spec.name for spec in computed.scores] == ["grounding_bert_cen_min", "grounding_bert_cen_mean",
                                                       "grounding_hhem_min", "grounding_hhem_mean"]
    assert np.isfinite(computed.columns["grounding_hhem_min"]).all()


def test_without_a_model_or_with_two_of_one_name_it_is_refused(table, tiny_models):
    with pytest.raises(SGIInputError, match="needs a grounding model folder.*--grounding-model NAME=DIR"):
        FAMILIES["grounding"].compute(DetectorInputs(table))
    twice = (tiny_models["bert_cen"], tiny_models["bert_cen"])
    with pytest.raises(SGIInputError, match="two grounding models are named 'bert_cen'"):
        FAMILIES["grounding"].compute(DetectorInputs(table, resources={"grounding_models": twice}))


@pytest.mark.parametrize("column, label, kind", [
    ("grounding_nli_min", "grounding model nli: weakest sentence", "detector"),
    ("grounding_my_model_mean", "grounding model my_model: mean sentence", "detector"),
    ("grounding_nli_chunks", "grounding_nli_chunks (file column)", "column"),
])
def test_the_score_registry_names_grounding_columns(column, label, kind):
    assert (display_name(column), spec_for(column).kind, spec_for(column).higher_is) == (label, kind, "grounded")
