"""Refuse model folders that would make a loader import code the user did not opt in to.

sentence-transformers builds a model from the classes its JSON files name, and imports each one,
from a ``.py`` file in the folder or from any importable module, even with
``trust_remote_code=False``: loading such a folder runs its code. Every route it takes reads a
string from a JSON file:

- ``type`` of each entry of a ``modules.json`` (the top one, and one in any sub-folder);
- ``types`` of a Router's config, whose keys are sub-folders loaded the same way, Routers and
  nested modules included;
- ``tokenizer_class`` of a WordEmbeddings config;
- ``activation_function`` of a Dense config and a cross-encoder's ``activation_fn`` /
  ``sbert_ce_default_activation_function``, each imported and called.

Loader keyword blocks (:data:`LOADER_KWARG_KEYS`: ``model_kwargs`` and its kin) are passed to
transformers' ``from_pretrained`` and can lift its protections (``"weights_only": false`` unpickles
anything): a block naming a key outside :data:`HARMLESS_LOADER_KEYS` is refused. A file a folder
names (a ``*_file`` key, a shard of a ``weight_map``) must be a relative name inside the folder.

A transformers config's ``auto_map`` (the folder's own modelling code) is read only when remote
code is trusted, which the workbench allows only with the user's opt-in; otherwise transformers
refuses such a folder unless it knows the architecture itself (as the grounding adapters, which
build HHEM's head themselves, do).

:func:`check_model_code` reads every JSON file of the folder, at any depth, and holds each such
string to an allow-list of exact full names (:data:`ALLOWED_REFERENCES`): the module classes of
sentence-transformers and the ``torch.nn`` activations (:data:`TORCH_ACTIVATIONS`). A class key's
bare name with no dot (``"BertTokenizer"``, a rope-scaling ``"linear"``) is also accepted: no loader
can import a module from it; a callable key must name an allowed activation exactly. Nothing is
skipped for its shape: ``"evil.Evil "`` (a trailing blank), a list, a number or the
``repo--module.Class`` form are all refused. The check runs before anything loads and is lifted
only by the user's opt-in (``--trust-model-code``).
"""

from __future__ import annotations

from pathlib import Path

from sgi_core.errors import SGIInputError
from sgi_core.jsonio import loads_json
from sgi_core.models.snapshot import DATA_JSON_FILES, MAX_CHECKED_JSON_BYTES

#: Keys whose string values a loader imports as a class (``types`` holds a mapping of them).
CLASS_KEYS = ("type", "types", "tokenizer_class")
#: Keys whose string values a loader imports and calls.
CALLABLE_KEYS = ("activation_function", "activation_fn", "sbert_ce_default_activation_function")
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
_MODULES = ("Asym", "BoW", "CLIPModel", "CNN", "Dense", "Dropout", "LSTM", "LayerNorm", "Normalize", "Pooling",
            "Router", "StaticEmbedding", "Transformer", "WeightedLayerPooling", "WordEmbeddings", "WordWeights")
_SPARSE = ("Asym", "Dense", "MLMTransformer", "Router", "SparseAutoEncoder", "SparseStaticEmbedding", "SpladePooling",
           "Transformer")
_TOKENIZERS = ("PhraseTokenizer", "TransformersTokenizerWrapper", "WhitespaceTokenizer", "WordTokenizer")
_ST = "sentence_transformers"
#: The module classes of sentence-transformers, by each name a saved model uses for them: the public
#: packages (``sentence_transformers.models.Pooling``) and the defining modules of release 5
#: (``sentence_transformers.sentence_transformer.modules.pooling.Pooling``).
_ST_CLASSES = {
    f"{_ST}.models": _MODULES,
    f"{_ST}.sentence_transformer.modules": _MODULES,
    f"{_ST}.models.tokenizer": _TOKENIZERS,
    f"{_ST}.base.modules": ("Dense", "Router", "Transformer"),
    f"{_ST}.base.modules.dense": ("Dense",),
    f"{_ST}.base.modules.router": ("Router",),
    f"{_ST}.base.modules.transformer": ("Transformer",),
    f"{_ST}.cross_encoder.modules": ("Asym", "Dense", "LogitScore", "Router", "Transformer"),
    f"{_ST}.cross_encoder.modules.logit_score": ("LogitScore",),
    f"{_ST}.sparse_encoder.models": _SPARSE,
    f"{_ST}.sparse_encoder.modules": _SPARSE,
    f"{_ST}.sparse_encoder.modules.mlm_transformer": ("MLMTransformer",),
    f"{_ST}.sparse_encoder.modules.sparse_auto_encoder": ("SparseAutoEncoder",),
    f"{_ST}.sparse_encoder.modules.sparse_static_embedding": ("SparseStaticEmbedding",),
    f"{_ST}.sparse_encoder.modules.splade_pooling": ("SpladePooling",),
    **{f"{_ST}.sentence_transformer.modules.{file}": (name,) for file, name in (
        ("bow", "BoW"), ("clip_model", "CLIPModel"), ("cnn", "CNN"), ("dropout", "Dropout"),
        ("layer_norm", "LayerNorm"), ("lstm", "LSTM"), ("normalize", "Normalize"), ("pooling", "Pooling"),
        ("static_embedding", "StaticEmbedding"),
        ("weighted_layer_pooling", "WeightedLayerPooling"), ("word_embeddings", "WordEmbeddings"),
        ("word_weights", "WordWeights"), ("tokenizer.phrase", "PhraseTokenizer"),
        ("tokenizer.whitespace", "WhitespaceTokenizer"), ("tokenizer.word", "TransformersTokenizerWrapper"),
        ("tokenizer.word", "WordTokenizer"))},
}
#: Every exact reference a folder may name without the user's opt-in. Written out, so that checking a
#: folder imports neither torch nor sentence-transformers; a test holds it to the installed release.
ALLOWED_REFERENCES = frozenset({f"{where}.{name}" for where, names in _ST_CLASSES.items() for name in names}
                               | TORCH_ACTIVATIONS)
#: Blocks of keyword arguments that sentence-transformers hands to transformers' loaders.
LOADER_KWARG_KEYS = ("model_kwargs", "model_args", "config_kwargs", "config_args", "processor_kwargs",
                     "tokenizer_args", "tokenizer_kwargs")
#: Keys of such a block that change no loading rule (dtypes, casing, lengths, padding sides).
HARMLESS_LOADER_KEYS = frozenset({"torch_dtype", "dtype", "do_lower_case", "model_max_length", "max_length",
                                  "padding_side", "truncation_side", "clean_up_tokenization_spaces"})

OPT_IN_HINT = "If you trust the folder's code, pass --trust-model-code (trust_model_code=True)"


class _Callable(str):
    """A reference a loader calls: never a bare name (a config's ``"gelu_new"`` is refused as a callable)."""


def _read_json(path: Path, folder: Path):
    # A model folder may come from anywhere: its JSON is read as any input is.
    try:
        if path.stat().st_size > MAX_CHECKED_JSON_BYTES:
            raise SGIInputError(f"{path.stat().st_size:,} bytes, over the {MAX_CHECKED_JSON_BYTES:,} a model's "
                                "JSON configuration may hold")
        return loads_json(path.read_bytes(), allow_duplicate_keys=True)
    except (OSError, SGIInputError) as err:
        reason = err.message if isinstance(err, SGIInputError) else err
        raise SGIInputError(f"cannot read '{path.relative_to(folder)}' of model folder '{folder}': {reason}") from None


def _references(node, out: list) -> None:
    """Append every value under a class or callable key, at any depth, whatever its type."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in CALLABLE_KEYS:
                out.append(_Callable(value) if isinstance(value, str) else value)
            elif key in CLASS_KEYS:
                out.extend(value.values() if key == "types" and isinstance(value, dict) else [value])
            _references(value, out)
    elif isinstance(node, list):
        for value in node:
            _references(value, out)


def _check_paths(data, file: Path, root: Path) -> None:
    """Module paths of a ``modules.json`` and a Router's sub-folders must stay inside the folder."""
    if file.name == "modules.json":
        if not isinstance(data, list) or not all(isinstance(m, dict) for m in data):
            raise SGIInputError(f"'{file.relative_to(root)}' of model folder '{root}' is not a list of modules")
        paths = [str(m.get("path", "")) for m in data]
    else:
        types = data.get("types") if isinstance(data, dict) else None
        paths = [str(name) for name in types] if isinstance(types, dict) else []
    for path in paths:
        if not (file.parent / path).resolve().is_relative_to(root):
            raise SGIInputError(f"module path '{path}' in '{file}' leaves the folder")


def _loader_kwargs(node, out: list) -> None:
    """Append ``(block, key)`` for every key of a loader keyword block outside the harmless ones, at any depth."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in LOADER_KWARG_KEYS:
                keys = value if isinstance(value, dict) else {"(not an object)": value}
                out.extend((key, inner) for inner in keys if inner not in HARMLESS_LOADER_KEYS)
            _loader_kwargs(value, out)
    elif isinstance(node, list):
        for value in node:
            _loader_kwargs(value, out)


def _named_files(node, out: list) -> None:
    """Append every file name a loader reads by a folder's word: ``*_file`` values and ``weight_map`` shards."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "weight_map" and isinstance(value, dict):
                out.extend(value.values())
            elif isinstance(key, str) and key.endswith("_file") and value is not None:
                out.append(value)
            _named_files(value, out)
    elif isinstance(node, list):
        for value in node:
            _named_files(value, out)


def check_named_files(folder: str | Path) -> None:
    """Refuse a folder whose JSON names a file outside it (an absolute path, a ``..``), trusted or not.

    The folder's fingerprint covers its own files only: weights or a vocabulary read from
    elsewhere could change under the cached scores.
    """
    root = Path(folder).resolve()
    for path in _json_files(root):
        names: list = []
        _named_files(_read_json(path, root), names)
        for name in names:
            inside = isinstance(name, str) and not Path(name).is_absolute() and (path.parent / name).resolve(
                ).is_relative_to(root)
            if not inside:
                raise SGIInputError(f"'{path.relative_to(root)}' of model folder '{root}' names the file {name!r}, "
                                    "outside the folder", hint="Copy that file into the folder and name it by its "
                                                               "relative name, or delete the key")


def _json_files(root: Path):
    for path in sorted(root.rglob("*.json")):
        if path.name not in DATA_JSON_FILES and path.is_file():
            yield path


def class_references(folder: str | Path) -> list[tuple[str, object]]:
    """``(file, reference)`` for every value a loader of the folder would import, at any depth.

    A reference is usually a string; a value of another type under such a key is listed as it is
    (it can never be on the allow-list). ``modules.json`` comes first.

    Raises
    ------
    SGIInputError
        If a JSON file cannot be read, a ``modules.json`` is not a list of modules, or a module's
        path leaves the folder.

    Examples
    --------
    >>> import json, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     modules = [{"idx": 0, "name": "0", "path": "", "type": "evil_module.Evil "}]
    ...     _ = (Path(tmp) / "modules.json").write_text(json.dumps(modules))
    ...     class_references(tmp)
    [('modules.json', 'evil_module.Evil ')]
    """
    root = Path(folder).resolve()
    files = sorted(_json_files(root), key=lambda path: (path != root / "modules.json", path))
    refs: list[tuple[str, object]] = []
    for path in files:
        data = _read_json(path, root)
        _check_paths(data, path, root)
        found: list = []
        _references(data, found)
        refs.extend((path.relative_to(root).as_posix(), ref) for ref in found)
    return refs


def is_allowed(reference: object) -> bool:
    """Whether no loader can import code of the folder's choosing from ``reference``.

    >>> is_allowed("sentence_transformers.models.Pooling"), is_allowed("BertTokenizer")
    (True, True)
    >>> is_allowed("evil.Evil "), is_allowed("evil-mod.Evil"), is_allowed("torch.utils.collect_env.main")
    (False, False, False)
    """
    if not isinstance(reference, str):
        return False
    bare = reference.isidentifier() and not isinstance(reference, _Callable)
    return bare or reference in ALLOWED_REFERENCES


def check_model_code(folder: str | Path, *, trust_model_code: bool = False) -> None:
    """Refuse a folder naming anything outside :data:`ALLOWED_REFERENCES`, unless trusted.

    Parameters
    ----------
    folder : path-like
        A local model folder (sentence-transformers or transformers).
    trust_model_code : bool
        The user's opt-in to import whatever the folder names.

    Raises
    ------
    SGIInputError
        Naming the first untrusted reference or loader keyword, the file that names it and how
        to opt in; or a file named outside the folder (:func:`check_named_files`, even when trusted).
    """
    check_named_files(folder)
    if trust_model_code:
        return
    root = Path(folder).resolve()
    for path in _json_files(root):
        found: list = []
        _loader_kwargs(_read_json(path, root), found)
        if found:
            block, key = found[0]
            raise SGIInputError(f"'{path.relative_to(root)}' of model folder '{folder}' passes {key!r} to the loader "
                                f"in '{block}', which can change how it loads "
                                f"(only {', '.join(sorted(HARMLESS_LOADER_KEYS))} "
                                "are taken without the opt-in)", hint=OPT_IN_HINT)
    untrusted = [(file, ref) for file, ref in class_references(folder) if not is_allowed(ref)]
    if untrusted:
        file, ref = untrusted[0]
        more = f" (and {len(untrusted) - 1} more)" if len(untrusted) > 1 else ""
        raise SGIInputError(
            f"model folder '{folder}' would import code of its own: '{file}' names module {ref!r}{more}, "
            "not one of sentence-transformers' module classes or torch.nn's activations",
            hint=OPT_IN_HINT,
        )
