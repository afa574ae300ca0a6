"""The grounding models as a declared resource: the loaders that ``RESOURCE_OPTIONS["a grounding model"]`` names.

The command line gives each model as ``--grounding-model NAME=DIR`` (or ``DIR``), the
Detectors page as one such line per model; both load with
:func:`sgi_core.grounding.runtime.load_grounding_model`, self-tested unless
``--no-self-test`` (the page's box) says otherwise, on
:func:`sgi_core.grounding.onnx_network.grounding_backend` of the embedding backend
(``onnx`` when the embeddings run on ``onnx-int8``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping


def load_from_arguments(values: list[str], args) -> tuple:
    """Each ``--grounding-model`` folder, checked, loaded (``--device``, ``--backend``) and self-tested, in order.

    Raises
    ------
    SGIInputError
        From :func:`~sgi_core.grounding.folder.parse_model_option` and
        :func:`~sgi_core.grounding.runtime.load_grounding_model`.
    """
    from sgi_core.grounding.folder import parse_model_option
    from sgi_core.grounding.onnx_network import grounding_backend
    from sgi_core.grounding.runtime import load_grounding_model

    backend = grounding_backend(getattr(args, "backend", "auto"))
    # Ray's actors load the folder themselves: with no self-test to run, the driver only checks it.
    network = not args.no_self_test or getattr(args, "engine", "local") != "ray"
    return tuple(load_grounding_model(folder, name=name, trust_model_code=args.trust_model_code,
                                      device=getattr(args, "device", None), backend=backend,
                                      self_test=not args.no_self_test, network=network)
                 for name, folder in map(parse_model_option, values))


def page_choice(lines: tuple[str, ...], switches: Mapping[str, bool], *, folder: Callable,
                backend: str = "auto") -> tuple:
    """The page's lines (one ``NAME=DIR`` or ``DIR`` each) as ``(((name, folder), ...), self_test, backend)``.

    ``folder`` resolves a typed path to a folder under the local-files root;
    ``backend`` is the sidebar's embedding backend.

    Raises
    ------
    SGIInputError
        A line that names no model, or a path ``folder`` refuses.
    """
    from sgi_core.grounding.folder import default_name, parse_model_option
    from sgi_core.grounding.onnx_network import grounding_backend

    folders = []
    for line in lines:
        name, where = parse_model_option(line)
        path = folder(where)
        folders.append((name or default_name(path), str(path)))
    return tuple(folders), not switches.get("no_self_test", False), grounding_backend(backend)


def load_choice(choice: tuple) -> tuple:
    """The grounding models of a :func:`page_choice`, loaded and checked.

    Each folder must still be the one that was checked when chosen: a path of the choice is
    resolved, so a folder since replaced by a link (to anywhere) no longer resolves to itself.

    Raises
    ------
    SGIInputError
        A folder replaced by a link since it was chosen; from
        :func:`sgi_core.grounding.runtime.load_grounding_model`.
    """
    from pathlib import Path

    from sgi_core.errors import SGIInputError
    from sgi_core.grounding.runtime import load_grounding_model

    folders, self_test, backend = choice
    for _, path in folders:
        if str(Path(path).resolve()) != path:
            raise SGIInputError(f"the model folder '{path}' was replaced by a link after it was chosen",
                                hint="Give the folder again on the page")
    return tuple(load_grounding_model(path, name=name, backend=backend, self_test=self_test) for name, path in folders)
