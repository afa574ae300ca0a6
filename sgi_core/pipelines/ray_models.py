"""Grounding models on Ray actors: checked once on the driver, loaded again by each actor.

The driver's check (:func:`sgi_core.grounding.runtime.load_grounding_model`) becomes a
:class:`CheckedModel` record; each actor loads from the driver's copy where
:func:`~sgi_core.models.snapshot.reuse_snapshot` proves it unchanged, else from its own copy,
refused unless its fingerprint is the driver's: a folder changed after the check scores no row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from sgi_core.errors import SGIInputError
from sgi_core.grounding.selftest import SelfTest

#: The resource field (:attr:`sgi_core.detectors.resources.ResourceOption.field`) whose objects actors can load.
GROUNDING_FIELD = "grounding_models"


@dataclass(frozen=True)
class CheckedModel:
    """What an actor needs to load a grounding model the driver checked.

    Attributes
    ----------
    name : str
        The model's short name (its columns are ``grounding_<name>_*``).
    source : str
        The user's folder; on a cluster, a path every machine sees.
    fingerprint : str
        The content fingerprint of the folder the driver checked.
    backend : str
        The grounding backend asked for (``auto``, ``torch`` or ``onnx``): each actor resolves
        it on its own device (``auto`` is ONNX Runtime on a CPU actor, torch on a GPU actor).
    self_test : SelfTest
        The driver's self-test, recorded with every actor's model.
    trust_model_code : bool
        The user's consent to unpickle weights, as given to the driver.
    snapshot : str
        The driver's private copy of the folder ("" for none).
    snapshot_files : tuple
        Its files' names, digests and stat keys once written
        (:attr:`~sgi_core.models.snapshot.FolderSnapshot.files`).
    """

    name: str
    source: str
    fingerprint: str
    backend: str
    self_test: SelfTest
    trust_model_code: bool = False
    snapshot: str = ""
    snapshot_files: tuple = ()

    def load(self, device: str | None):
        """The model loaded on ``device`` from the driver's copy where it is provably unchanged, else from
        :attr:`source`, refused unless its fingerprint is the driver's.

        Raises
        ------
        SGIInputError
            When the folder's content changed since the driver checked it, or it no longer loads.
        """
        from sgi_core.grounding.runtime import load_grounding_model
        from sgi_core.models.snapshot import reuse_snapshot

        def unchanged():
            return reuse_snapshot(self.snapshot, self.snapshot_files, self.fingerprint, source=self.source) \
                if self.snapshot else None

        reused = unchanged()
        model = load_grounding_model(self.source, name=self.name, trust_model_code=self.trust_model_code,
                                     device=device, backend=self.backend, self_test=False, snapshot=reused)
        if reused is not None and unchanged() is None:
            raise SGIInputError(f"the checked copy of the grounding model folder '{self.source}' changed while it "
                                "loaded", source=self.source, hint="Leave the model's files alone while it scores, "
                                                                   "and run again")
        if model.folder.fingerprint != self.fingerprint:
            raise SGIInputError(f"the grounding model folder '{self.source}' changed after it was checked: its "
                                f"content fingerprint is {model.folder.fingerprint}, the checked one "
                                f"{self.fingerprint}", source=self.source,
                                hint="Leave the folder unchanged while it scores, and run again")
        return replace(model, self_test=self.self_test)


def checked_models(resources: Mapping[str, tuple], *, backend: str, trust_model_code: bool) -> tuple[CheckedModel, ...]:
    """The :class:`CheckedModel` of each grounding model in ``resources`` (loaded and checked on the driver).

    ``backend`` is the embedding backend, which names the grounding models' as the local
    engine reads it (:func:`~sgi_core.grounding.onnx_network.grounding_backend`).

    Raises
    ------
    SGIInputError
        For a resource other than grounding models, which actors cannot load.
    """
    other = sorted(field for field, loaded in resources.items() if loaded and field != GROUNDING_FIELD)
    if other:
        raise SGIInputError(f"the resources {', '.join(other)} cannot be loaded by Ray actors",
                            hint="Score them without --engine ray")
    from sgi_core.grounding.onnx_network import grounding_backend

    return tuple(CheckedModel(model.name, str(model.folder.source), model.folder.fingerprint,
                              grounding_backend(backend), model.self_test, trust_model_code, str(model.folder.path),
                              model.folder.snapshot_files)
                 for model in resources.get(GROUNDING_FIELD, ()))
