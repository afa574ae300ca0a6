"""The options of every declared resource (:data:`sgi_core.detectors.registry.RESOURCE_OPTIONS`).

Each resource adds its repeatable option (``--grounding-model NAME=DIR``) and its
switches (``--no-self-test``); its loader reads them with the rest of the command's
options (``--device``, ``--backend``, ``--trust-model-code``).
"""

from __future__ import annotations

import argparse

from sgi_core.detectors.registry import RESOURCE_OPTIONS


def add_resource_options(p: argparse.ArgumentParser) -> None:
    """Add each declared resource's option and switches."""
    for option in RESOURCE_OPTIONS.values():
        p.add_argument(option.flag, action="append", default=[], metavar=option.metavar, help=option.help)
        for switch in option.switches:
            p.add_argument(switch.flag, action="store_true", help=switch.help)


def given_resources(args) -> dict[str, tuple]:
    """Each resource given on the command line, loaded: field -> loaded objects, in order (``{}`` when none).

    Raises
    ------
    SGIInputError
        From the resource's loader (a folder that is not a model, a failed self-test, ...).
    """
    return {option.field: option.load(values, args) for option in RESOURCE_OPTIONS.values()
            if (values := getattr(args, option.dest, None))}
