"""Refuse model folders that would make sentence-transformers import code of their own.

sentence-transformers builds a model from the classes named in its ``modules.json``
(key ``type``) and in the modules' JSON configs (a Router's ``types``, a
WordEmbeddings' ``tokenizer_class``). A class outside the ``sentence_transformers.``
namespace is imported, from a ``.py`` file in the folder or from any importable
module, even with ``trust_remote_code=False``: loading such a folder runs its code.
A Dense module's ``activation_function`` is imported and called whenever it starts
with ``torch.``, so any ``torch.*`` callable named there runs at load: only the
``torch.nn`` activation classes of :data:`TORCH_ACTIVATIONS` pass.
:func:`check_model_code` lists those class references before anything loads and
refuses them unless the user opted in.
"""

from __future__ import annotations

import re
from pathlib import Path

from sgi_core.errors import SGIInputError
from sgi_core.jsonio import loads_json

TRUSTED_PREFIX = "sentence_transformers."
_REF_KEYS = ("type", "types", "tokenizer_class")
# Imported and called (with no argument) by sentence-transformers' Dense.load; every string there is a reference.
_CALLABLE_KEYS = ("activation_function",)
_ACTIVATIONS = {
    "torch.nn.modules.activation": (
        "CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid",
        "LogSoftmax", "Mish", "PReLU", "RReLU", "ReLU", "ReLU6", "SELU", "SiLU", "Sigmoid", "Softmax", "Softmax2d",
        "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink"),
    "torch.nn.modules.linear": ("Identity",),
}
#: The ``torch.nn`` activation classes a Dense module may name, by their full and their ``torch.nn.`` names.
TORCH_ACTIVATIONS = frozenset(f"{where}.{name}" for module, names in _ACTIVATIONS.items()
                              for where in (module, "torch.nn") for name in names)
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
# Read by the Rust tokenizers library as data; their "type" tags are never imported.
_DATA_FILES = {"tokenizer.json", "vocab.json"}

OPT_IN_HINT = "If you trust the folder's code, pass --trust-model-code (trust_model_code=True)"


def _read_json(path: Path, folder: Path):
    # A model folder may come from anywhere: its JSON is read as any input is.
    try:
        return loads_json(path.read_bytes(), allow_duplicate_keys=True)
    except (OSError, SGIInputError) as err:
        reason = err.message if isinstance(err, SGIInputError) else err
        raise SGIInputError(f"cannot read '{path.relative_to(folder)}' of model folder '{folder}': {reason}") from None


def _dotted_refs(node, out: list[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _REF_KEYS:
                values = value.values() if isinstance(value, dict) else [value]
                out.extend(v for v in values if isinstance(v, str) and _DOTTED.match(v))
            elif key in _CALLABLE_KEYS and isinstance(value, str):
                out.append(value)
            _dotted_refs(value, out)
    elif isinstance(node, list):
        for value in node:
            _dotted_refs(value, out)


def class_references(folder: str | Path) -> list[tuple[str, str]]:
    """``(file, class reference)`` for every class the folder names for import.

    Reads ``modules.json`` and the JSON files directly inside each module's folder.

    Raises
    ------
    SGIInputError
        If ``modules.json`` is malformed or a module's path leaves the folder.

    Examples
    --------
    >>> import json, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     modules = [{"idx": 0, "name": "0", "path": "", "type": "evil_module.Evil"}]
    ...     _ = (Path(tmp) / "modules.json").write_text(json.dumps(modules))
    ...     class_references(tmp)
    [('modules.json', 'evil_module.Evil')]
    """
    root = Path(folder).resolve()
    refs: list[tuple[str, str]] = []
    module_dirs = [root]
    if (root / "modules.json").is_file():
        modules = _read_json(root / "modules.json", root)
        if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
            raise SGIInputError(f"'modules.json' of model folder '{root}' is not a list of modules")
        found: list[str] = []
        _dotted_refs(modules, found)
        refs.extend(("modules.json", ref) for ref in found)
        for module in modules:
            path = (root / str(module.get("path", ""))).resolve()
            if not path.is_relative_to(root):
                raise SGIInputError(f"module path '{module.get('path')}' in '{root / 'modules.json'}' leaves the folder")
            if path.is_dir() and path not in module_dirs:
                module_dirs.append(path)
    for module_dir in module_dirs:
        for path in sorted(module_dir.glob("*.json")):
            if path.name in _DATA_FILES or path == root / "modules.json":
                continue
            found = []
            _dotted_refs(_read_json(path, root), found)
            refs.extend((path.relative_to(root).as_posix(), ref) for ref in found)
    return refs


def check_model_code(folder: str | Path, *, trust_model_code: bool = False) -> None:
    """Refuse a folder naming classes outside ``sentence_transformers.`` (or activations outside
    :data:`TORCH_ACTIVATIONS`), unless trusted.

    Parameters
    ----------
    folder : path-like
        A local sentence-transformers model folder.
    trust_model_code : bool
        The user's opt-in to import whatever the folder names.

    Raises
    ------
    SGIInputError
        Naming the first untrusted class, the file that names it and how to opt in.
    """
    if trust_model_code:
        return
    untrusted = [(file, ref) for file, ref in class_references(folder)
                 if not ref.startswith(TRUSTED_PREFIX) and ref not in TORCH_ACTIVATIONS]
    if untrusted:
        file, ref = untrusted[0]
        more = f" (and {len(untrusted) - 1} more)" if len(untrusted) > 1 else ""
        raise SGIInputError(
            f"model folder '{folder}' would import code of its own: '{file}' names module '{ref}'{more}, "
            f"outside '{TRUSTED_PREFIX}'",
            hint=OPT_IN_HINT,
        )
