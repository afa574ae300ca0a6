"""Where the embedding models run: the device and backend settings of the sidebar, and what they resolve to."""

from __future__ import annotations

import os
import sys

import streamlit as st

from dashboard import state
from sgi_core.embedding import BACKENDS
from sgi_core.models.device import DEVICE_ENV, DEVICES, resolve_device

#: Environment variable naming the dashboard's starting embedding backend.
BACKEND_ENV = "SGI_BACKEND"


def default_device() -> str:
    """The device setting's value until one is chosen: ``$SGI_DEVICE``, else ``auto``."""
    return os.environ.get(DEVICE_ENV) or "auto"


def device_choices() -> list[str]:
    """Devices offered in the sidebar; ``$SGI_DEVICE`` is among them when it names one such as ``cuda:1``."""
    return list(dict.fromkeys([*DEVICES, default_device()]))


def default_backend() -> str:
    """The backend setting's value until one is chosen: ``$SGI_BACKEND``, else ``auto``."""
    return os.environ.get(BACKEND_ENV, "auto").strip().lower() or "auto"


def backend_choices() -> list[str]:
    """The backends the sidebar offers."""
    return list(dict.fromkeys([*BACKENDS, default_backend()]))


def chosen_backend() -> str:
    """What runs the embedding models (the sidebar setting); part of every data key, so scores follow it."""
    return state.chosen_backend(default_backend())


def chosen_device() -> str:
    """The device the embedding models load on (the sidebar setting); part of the encoder's cache key."""
    return state.chosen_device(default_device())


def known_device(device: str) -> str | None:
    """:func:`resolved_device`, or ``None`` while finding it out would import torch.

    Only ``cpu`` is known without torch; importing torch for ``auto``, ``cuda`` or
    ``mps`` costs about 200 MB and seconds, which a user opening an already scored
    file never needs. Once a model has loaded torch, the answer is given.
    """
    if device.strip().lower() != "cpu" and "torch" not in sys.modules:
        return None
    return resolved_device(device)


@st.cache_data(show_spinner=False)
def resolved_device(device: str) -> str:
    """Where torch runs the models for the setting ``device`` (``auto`` -> ``cuda``, ``mps`` or ``cpu``).

    Raises
    ------
    SGIInputError
        An unknown device, or one torch does not see on this machine.
    """
    return resolve_device(device)
