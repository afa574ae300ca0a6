"""A resource declared in RESOURCE_OPTIONS, with its family in FAMILIES, reaches every face with no other code
changed."""

import json

import pandas as pd
import pytest

from sgi_core.cli import build_parser, main
from sgi_core.detectors.registry import FAMILIES, RESOURCE_OPTIONS, DetectorFamily, FamilyScores
from sgi_core.detectors.resources import ResourceOption, ResourceSwitch
from sgi_core.scores import spec_for
from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import app, assert_clean, goto  # noqa: F401 (app is a fixture)

#: What the toy family was given, one entry per computation.
RECEIVED = []


class Toy:
    """A loaded toy model: a name and how loudly it was loaded."""

    def __init__(self, name: str, loud: bool):
        self.name, self.loud = name, loud


def load_toys(values, args):
    return tuple(Toy(name, args.toy_loud) for name in values)


def choose_toys(lines, switches, *, folder, backend):
    return tuple(lines), switches.get("toy_loud", False)


def load_choice(choice):
    names, loud = choice
    return tuple(Toy(name, loud) for name in names)


def _toy_scores(inputs):
    toys = inputs.resources.get("toy_models", ())
    RECEIVED.append(toys)
    lengths = inputs.table.frame["response"].str.len().astype(float)
    columns = pd.DataFrame({f"toy_{toy.name}": lengths for toy in toys}, index=inputs.table.frame.index)
    return FamilyScores(columns, scores=tuple(spec_for(column) for column in columns))


TOY = ResourceOption(
    "--toy-model", "NAME", "a toy model by name (repeatable)", field="toy_models",
    loader=f"{__name__}:load_toys", page_choice=f"{__name__}:choose_toys", page_loader=f"{__name__}:load_choice",
    switches=(ResourceSwitch("--toy-loud", "load the toy models loudly", "Load the toy models loudly"),),
    placeholder="toy-name", page_help="One name per line.")
FAMILY = DetectorFamily(name="toy", label="Toy models by name (label-free)", explanation="each response's length",
                        needs=("texts", "a toy model"), fitting="per row", scores=(), columns=(), compute=_toy_scores)


@pytest.fixture
def declared(monkeypatch):
    """The toy resource and its family, declared as any other."""
    monkeypatch.setitem(RESOURCE_OPTIONS, "a toy model", TOY)
    monkeypatch.setitem(FAMILIES, "toy", FAMILY)
    RECEIVED.clear()


def test_report_takes_the_option_and_the_family_receives_the_loaded_objects(declared, tmp_path):
    rows = tmp_path / "rows.csv"
    pd.read_csv(SAMPLE_CSV).head(40).to_csv(rows, index=False)
    out = tmp_path / "report.json"
    assert main(["report", str(rows), "--models", "hashing", "--toy-model", "X", "--toy-model", "Y", "--toy-loud",
                 "--n-boot", "0", "--json", str(out)]) == 0
    (toys,) = RECEIVED
    assert [(toy.name, toy.loud) for toy in toys] == [("X", True), ("Y", True)]
    shown = out.read_text()
    assert json.loads(shown) and '"toy_X"' in shown and '"toy_Y"' in shown


@pytest.mark.parametrize("command", ["score", "report", "compare", "gate"])
def test_the_option_and_its_switch_are_in_the_help_of_each_command(declared, command, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    shown = capsys.readouterr().out
    assert "--toy-model NAME" in shown and "--toy-loud" in shown and "--grounding-model" in shown


def test_score_chooses_the_family_by_the_resource_given(declared):
    args = build_parser().parse_args(["score", "in.csv", "-o", "out.csv", "--toy-model", "X"])
    from sgi_core.commands.score import _families

    assert _families(args) == ("toy",)


def test_the_detectors_page_draws_the_declared_widget(declared, app):  # noqa: F811
    goto(app, "detectors")
    assert_clean(app)
    area = app.text_area(key="detectors.resource.toy_models")
    assert area.label == FAMILY.label and area.placeholder == "toy-name"
    assert area.help == "a toy model by name (repeatable). One name per line."
    assert app.checkbox(key="detectors.resource.toy_models.toy_loud").label == "Load the toy models loudly"
    assert app.text_area(key="detectors.resource.grounding_models").label == FAMILIES["grounding"].label


def test_the_page_loads_the_toy_models_it_was_given(declared):
    from dashboard.services import detector_services

    choice = detector_services.resource_choice(TOY, "A\n\n B \n", {"toy_loud": True}, backend="auto")
    assert choice == (("A", "B"), True)
    assert [(toy.name, toy.loud) for toy in detector_services.loaded_resources((("toy_models", choice),))
            ["toy_models"]] == [("A", True), ("B", True)]
