"""A grounding model's folder, read and checked before anything in it is loaded.

A folder is the only source of a grounding model: nothing is downloaded. Before
``transformers`` sees it, :func:`read_folder` checks that

- it is copied into a private folder (:func:`sgi_core.models.snapshot.snapshot_folder`), and
  every check below and the load read that copy, so nothing swapped in after the check loads;
  its fingerprint hashes the copied bytes;
- it holds ``config.json`` and weights in safetensors (``*.safetensors``). A folder whose
  weights are only pickles is refused unless the user consents with ``trust_model_code``
  (:mod:`sgi_core.models.pickles`);
- its JSON passes the embedding folders' trust check
  (:func:`sgi_core.models.trust.check_model_code`);
- :func:`check_config`, called once the adapter is known: ``config.json`` names no
  ``auto_map`` (code shipped with the model) and only model types and architectures that
  ``transformers`` defines, unless the adapter builds the model from ``transformers``' own
  classes (``"hhem"``), in which case the ``auto_map`` is never read. ``trust_remote_code``
  is never passed.

The optional manifest, :data:`MANIFEST_NAME`, is a small JSON object overriding what
is detected from ``config.json`` (:mod:`sgi_core.grounding.adapters` lists its keys).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sgi_core.errors import SGIInputError
from sgi_core.jsonio import loads_json
from sgi_core.models.pickles import weight_files

#: The optional file of a model folder that overrides what is detected from its ``config.json``.
MANIFEST_NAME = "sgi_grounding.json"

@dataclass(frozen=True)
class GroundingFolder:
    """A checked model folder.

    Attributes
    ----------
    path : Path
        The private copy that was checked and that loads.
    name : str
        The short name its columns carry (``grounding_<name>_min``).
    config : dict
        ``config.json``.
    manifest : dict
        :data:`MANIFEST_NAME`, or ``{}`` when the folder has none.
    weights : tuple of str
        The weight files loaded (relative names), safetensors unless consented otherwise.
    fingerprint : str
        The SHA-256 of the copied files' bytes: what the score cache is keyed by.
    source : Path
        The user's folder, resolved: what messages and records name.
    snapshot_files : tuple
        :attr:`~sgi_core.models.snapshot.FolderSnapshot.files` of the copy at ``path``.
    """

    path: Path
    name: str
    config: dict = field(repr=False)
    manifest: dict = field(repr=False)
    weights: tuple[str, ...]
    fingerprint: str
    source: Path
    snapshot_files: tuple = field(default=(), repr=False)

    @property
    def safetensors(self) -> bool:
        """Whether the weights are safetensors (nothing unpickled)."""
        return all(name.endswith(".safetensors") for name in self.weights)


def _json_object(path: Path, folder: Path) -> dict:
    try:
        value = loads_json(path.read_bytes(), allow_duplicate_keys=True)
    except (OSError, SGIInputError) as err:
        reason = err.message if isinstance(err, SGIInputError) else err
        raise SGIInputError(f"cannot read '{path.name}' of model folder '{folder}': {reason}") from None
    if not isinstance(value, dict):
        raise SGIInputError(f"'{path.name}' of model folder '{folder}' is not a JSON object",
                            hint="Give the folder of a transformers model (its config.json is an object)")
    return value


def known_architecture(name: str) -> bool:
    """Whether ``transformers`` defines the model class ``name`` (no other class is ever built)."""
    import transformers

    return isinstance(name, str) and name.isidentifier() and hasattr(transformers, name)


def _check_classes(folder: Path, config: dict, own_code: bool) -> None:
    """The model type and the tokenizer class must be ones transformers defines (else it fails deep inside)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    model_type = config.get("model_type")
    if not own_code and model_type not in CONFIG_MAPPING_NAMES:
        raise SGIInputError(f"the config.json of model folder '{folder}' names the model type {model_type!r}, which "
                            "transformers does not define", hint="Use a model of a transformers architecture")
    tokenizer_config = folder / "tokenizer_config.json"
    named = _json_object(tokenizer_config, folder).get("tokenizer_class") if tokenizer_config.is_file() else None
    if named is not None and not (known_architecture(named) and "Tokenizer" in named):
        raise SGIInputError(f"the tokenizer_config.json of model folder '{folder}' names the tokenizer class "
                            f"{named!r}, which is not a tokenizer transformers defines",
                            hint="Delete 'tokenizer_class' or name the tokenizer the model was saved with")


def check_config(folder: Path, config: dict, *, own_code: bool, shown: Path | None = None) -> None:
    """Refuse code shipped with the model and classes transformers lacks, unless the adapter builds its own.

    ``own_code`` is the adapter's (:attr:`~sgi_core.grounding.adapters.base.AdapterKind.own_code`):
    such an adapter builds the network from transformers' classes and never reads ``auto_map``.
    ``folder`` is the checked copy; ``shown`` the folder messages name.
    """
    shown = folder if shown is None else shown
    try:
        _check_config(folder, config, own_code)
    except SGIInputError as err:
        raise SGIInputError(err.message.replace(str(folder), str(shown)), hint=err.hint) from None


def _check_config(folder: Path, config: dict, own_code: bool) -> None:
    _check_classes(folder, config, own_code)
    if "auto_map" in config and not own_code:
        raise SGIInputError(
            f"the config.json of model folder '{folder}' names code shipped with the model (auto_map), "
            "which is never run", hint="Use a folder whose architecture transformers defines; for an HHEM-class "
                                       f"model write {MANIFEST_NAME} with {{\"adapter\": \"hhem\"}}")
    architectures = config.get("architectures") or []
    if not isinstance(architectures, list):
        raise SGIInputError(f"'architectures' in the config.json of model folder '{folder}' is not a list")
    unknown = [name for name in architectures if not known_architecture(name)]
    if unknown and not own_code:
        raise SGIInputError(f"model folder '{folder}' declares the architecture '{unknown[0]}', which transformers "
                            "does not define", hint="Use a model of a transformers architecture "
                                                    "(BERT, RoBERTa, DeBERTa-v2, ModernBERT, T5 classes)")


def read_folder(path: str | Path, *, name: str | None = None, trust_model_code: bool = False,
                snapshot=None) -> GroundingFolder:
    """Check a grounding model folder and read its config and manifest (nothing is loaded).

    Parameters
    ----------
    path : path-like
        A local folder.
    name : str, optional
        Its short name (default: :func:`default_name`).
    trust_model_code : bool
        The user's consent to unpickle ``.bin``/``.ckpt``/``.pt`` weights and to load a
        folder the JSON trust check refuses. ``auto_map`` code is refused regardless.
    snapshot : FolderSnapshot, optional
        A snapshot of ``path`` another process made and :func:`~sgi_core.models.snapshot.reuse_snapshot`
        verified: checked and loaded in place, not copied again.

    Raises
    ------
    SGIInputError
        No such folder, no ``config.json``, unreadable JSON, pickle-only weights without
        consent, or a bad short name.
    """
    from sgi_core.models.snapshot import snapshot_folder
    from sgi_core.models.trust import check_model_code

    if "\0" in str(path):
        raise SGIInputError(f"the model folder path {str(path)!r} holds a NUL byte", hint="Give the folder's path")
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise SGIInputError(f"no model folder at '{path}'",
                            hint="Give the path of a local folder holding config.json and *.safetensors")
    folder = folder.resolve()
    name = default_name(folder) if name is None else name
    if not name or not all(ch.isalnum() or ch == "_" for ch in name):
        raise SGIInputError(f"the grounding model name {name!r} may hold only letters, digits and '_'",
                            hint="Name it on the command line as NAME=DIR, e.g. --grounding-model nli=./models/nli")
    snapshot = snapshot_folder(folder) if snapshot is None else snapshot
    with snapshot.checking() as copy:
        if not (copy / "config.json").is_file():
            raise SGIInputError(f"model folder '{copy}' has no config.json",
                                hint="Give the folder a transformers model was saved to (save_pretrained)")
        check_model_code(copy, trust_model_code=trust_model_code)
        config = _json_object(copy / "config.json", copy)
        manifest = _json_object(copy / MANIFEST_NAME, copy) if (copy / MANIFEST_NAME).is_file() else {}
        weights = weight_files(copy, trust_model_code=trust_model_code)
    checked = GroundingFolder(copy, name, config, manifest, weights, snapshot.fingerprint, folder, snapshot.files)
    snapshot.bind(checked)
    return checked


def default_name(folder: str | Path) -> str:
    """A folder's short name: its name with every character but letters, digits and '_' written '_'.

    Examples
    --------
    >>> default_name("models/deberta-v3-base.mnli")
    'deberta_v3_base_mnli'
    """
    return re.sub(r"\W", "_", Path(folder).name)


def parse_model_option(text: str) -> tuple[str | None, str]:
    """``NAME=DIR`` or ``DIR`` (as ``--grounding-model`` takes it) -> ``(name or None, dir)``.

    Examples
    --------
    >>> parse_model_option("nli=models/deberta")
    ('nli', 'models/deberta')
    >>> parse_model_option("models/deberta")
    (None, 'models/deberta')
    """
    name, sep, rest = text.partition("=")
    if sep and name and all(ch.isalnum() or ch == "_" for ch in name):
        return name, rest
    return None, text
