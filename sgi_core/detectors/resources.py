"""The resources a detector family reads that the user gives by name (a model folder), each declared once.

A :class:`ResourceOption` in :data:`RESOURCE_OPTIONS` says how a resource is given and loaded; the
commands' options, the library's ``resources`` keyword, a scored file's record and the Detectors page's
widgets are all made from it, so that adding one is its entry, its loaders, its family and its tests.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass


def _attribute(flag: str) -> str:
    """A command-line flag as the attribute argparse gives it: ``--no-self-test`` -> ``no_self_test``."""
    return flag.lstrip("-").replace("-", "_")


def _call(reference: str, *args, **kwargs):
    """Call the function a ``"module:function"`` reference names, importing its module only now."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)(*args, **kwargs)


@dataclass(frozen=True)
class ResourceSwitch:
    """A ``store_true`` flag that changes how a resource loads, and its checkbox on the Detectors page.

    Attributes
    ----------
    flag : str
        The command-line flag, e.g. ``"--no-self-test"``; its value travels under :attr:`name`.
    help : str
        The flag's help.
    label : str
        The page checkbox's text.
    """

    flag: str
    help: str
    label: str

    @property
    def name(self) -> str:
        """The flag as an identifier (``no_self_test``): its attribute of the parsed arguments, its key on the page."""
        return _attribute(self.flag)


@dataclass(frozen=True)
class ResourceOption:
    """A resource the user gives by name, from which its command-line option, its plumbing and its page widget are made.

    A family that needs such a resource is chosen by giving it (``--grounding-model DIR``),
    not by a ``--<family>`` flag. Each loader is a ``"module:function"`` reference, imported
    only when called, so that reading the registry imports no model stack.

    Attributes
    ----------
    flag, metavar, help : str
        The repeatable command-line option (``--grounding-model NAME=DIR``).
    field : str
        The key under which the loaded objects travel: :attr:`DetectorInputs.resources`, the
        library's ``resources`` keyword, and the record of a scored file (:attr:`provenance`).
    loader : str
        ``loader(values, args) -> tuple``: the option's values, in order, and the parsed
        arguments (:attr:`switches`, ``--device``, ``--backend``, ``--trust-model-code``), to the loaded objects.
    page_choice : str
        ``page_choice(lines, switches, *, folder, backend) -> tuple``: the page's non-blank lines,
        each switch's value by :attr:`ResourceSwitch.name`, the function resolving a typed folder
        under the local-files root, and the sidebar's backend, to a hashable choice (``()`` when none).
    page_loader : str
        ``page_loader(choice) -> tuple``: a choice to the loaded objects.
    switches : tuple of ResourceSwitch
        Extra flags, each a checkbox on the page.
    placeholder : str
        The page's text area shows it while empty.
    page_help : str
        What the page's help adds to :attr:`help`.
    provenance : str
        ``provenance(loaded) -> str``: the JSON text a scored file records under :attr:`field`
        (``""``: nothing recorded).
    """

    flag: str
    metavar: str
    help: str
    field: str
    loader: str
    page_choice: str
    page_loader: str
    switches: tuple[ResourceSwitch, ...] = ()
    placeholder: str = ""
    page_help: str = ""
    provenance: str = ""

    @property
    def dest(self) -> str:
        """The option's attribute of the parsed arguments (``grounding_model``)."""
        return _attribute(self.flag)

    def load(self, values, args) -> tuple:
        """The objects the command line's ``values`` name, loaded with the parsed ``args``."""
        return tuple(_call(self.loader, list(values), args))

    def choose(self, lines, switches: Mapping[str, bool], *, folder: Callable, backend: str = "auto") -> tuple:
        """The page's hashable choice of the lines and switches given (``()`` when no line names anything)."""
        given = tuple(filter(None, (line.strip() for line in lines)))
        return _call(self.page_choice, given, dict(switches), folder=folder, backend=backend) if given else ()

    def load_choice(self, choice: tuple) -> tuple:
        """The objects a page's choice names, loaded (``()`` for none)."""
        return tuple(_call(self.page_loader, choice)) if choice else ()

    def record(self, loaded: tuple) -> str:
        """What a scored file records of the loaded objects (:attr:`provenance`)."""
        return _call(self.provenance, loaded)


#: The resources of :data:`sgi_core.detectors.registry.NEEDS` that the user gives by name, each with its option.
RESOURCE_OPTIONS = {
    "a grounding model": ResourceOption(
        "--grounding-model", "NAME=DIR",
        "a local grounding model folder (NLI cross-encoder, MiniCheck-, HHEM- or LettuceDetect-class; safetensors, "
        "nothing downloaded) whose P(supported) per response sentence, best over context chunks, is added as "
        "grounding_NAME_min and grounding_NAME_mean (repeatable; NAME defaults to the folder's name)",
        field="grounding_models",
        loader="sgi_core.grounding.options:load_from_arguments",
        page_choice="sgi_core.grounding.options:page_choice",
        page_loader="sgi_core.grounding.options:load_choice",
        switches=(ResourceSwitch(
            "--no-self-test",
            "load grounding models without the check that plain entailments score above plain contradictions "
            "(for models trained on another task); recorded in the scored file",
            "Skip the grounding models' self-test (models trained on another task)"),),
        placeholder="nli=models/deberta-v3-mnli",
        page_help="One folder per line, under the folder the app may open files from; safetensors only, nothing "
                  "downloaded.",
        provenance="sgi_core.grounding.family:provenance"),
}


def recorded_resources() -> tuple[str, ...]:
    """The fields of the resources a scored file records (:attr:`ResourceOption.provenance`)."""
    return tuple(option.field for option in RESOURCE_OPTIONS.values() if option.provenance)


def resource_option(field: str) -> ResourceOption:
    """The declared resource whose loaded objects travel under ``field``.

    Raises
    ------
    KeyError
        For a field no resource declares.
    """
    for option in RESOURCE_OPTIONS.values():
        if option.field == field:
            return option
    raise KeyError(f"no declared resource travels as '{field}'")
