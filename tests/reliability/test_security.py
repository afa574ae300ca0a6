"""Nothing a user provides is unpickled or run as code, keys never leak, and the app stays local."""

import ast
from pathlib import Path

import pytest
import tomllib

from sgi_core.io.reading import DEFAULT_MAX_INPUT_MB
from tests.conftest import REPO

UNSAFE_MODULES = {"pickle", "_pickle", "cPickle", "dill", "cloudpickle", "joblib", "shelve", "marshal"}
UNSAFE_BUILTINS = {"eval", "exec", "compile", "__import__"}
UNSAFE_METHODS = {"read_pickle", "to_pickle", "unsafe_load", "full_load"}
SAFE_ONLY_IF_FALSE = {"trust_remote_code", "allow_pickle", "shell"}
#: The one place a model folder's own code may run: the user's explicit opt-in
#: (``--trust-model-code``), which ``sgi_core.models.trust.check_model_code`` checks
#: before the model loads (tests/models/test_model_trust.py holds the refusal by default).
AUDITED_USES = {"sgi_core/embedding/sentence_transformer.py": ["trust_remote_code=trust_model_code"],
                # Pickle weights of a grounding model, read only with --trust-model-code and then with torch's
                # restricted unpickler (weights_only=True); tests/grounding/test_folder.py holds both rules.
                "sgi_core/grounding/weights.py": [".load()"]}


def unsafe_uses(source: str) -> list[str]:
    """Every construct in ``source`` that could unpickle or run what a user provides."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.split(".")[0] in UNSAFE_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in UNSAFE_MODULES:
            found.append(f"from {node.module} import")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in UNSAFE_BUILTINS:
                found.append(f"{func.id}()")
            if isinstance(func, ast.Attribute) and (
                func.attr in UNSAFE_METHODS
                or (func.attr == "load" and isinstance(func.value, ast.Name) and func.value.id in {"torch", "yaml"})
            ):
                found.append(f".{func.attr}()")
            for keyword in node.keywords:
                literal_false = isinstance(keyword.value, ast.Constant) and keyword.value.value is False
                if keyword.arg in SAFE_ONLY_IF_FALSE and not literal_false:
                    found.append(f"{keyword.arg}={ast.unparse(keyword.value)}")
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in {"SentenceTransformer", "from_pretrained"} and not any(
                k.arg == "trust_remote_code" for k in node.keywords
            ):
                found.append(f"{name}() without trust_remote_code=False")
    return found


def package_sources() -> list[Path]:
    return sorted([*(REPO / "sgi_core").rglob("*.py"), *(REPO / "dashboard").rglob("*.py")])


def test_scanner_catches_every_unsafe_form():
    sample = """
import pickle
from joblib import load
import dill.settings
x = eval(text); exec(code); compile(src, "f", "exec"); __import__(name)
pd.read_pickle(path); frame.to_pickle(path); torch.load(f); yaml.load(s); yaml.unsafe_load(s)
SentenceTransformer(path, trust_remote_code=True)
AutoModel.from_pretrained(path, trust_remote_code=flag)
SentenceTransformer(path)
np.load(f, allow_pickle=True); subprocess.run(cmd, shell=True)
"""
    assert unsafe_uses(sample) == [
        "import pickle", "from joblib import", "import dill.settings",
        "eval()", "exec()", "compile()", "__import__()",
        ".read_pickle()", ".to_pickle()", ".load()", ".load()", ".unsafe_load()",
        "trust_remote_code=True", "trust_remote_code=flag", "SentenceTransformer() without trust_remote_code=False",
        "allow_pickle=True", "shell=True",
    ]
    assert unsafe_uses("SentenceTransformer(p, trust_remote_code=False); re.compile('x'); np.load(f)") == []


@pytest.mark.parametrize("path", package_sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_unpickling_eval_or_remote_code(path):
    expected = AUDITED_USES.get(str(path.relative_to(REPO)), [])
    assert unsafe_uses(path.read_text(encoding="utf-8")) == expected


def test_every_package_source_was_scanned():
    names = {str(p.relative_to(REPO)) for p in package_sources()}
    assert {"sgi_core/io/reading.py", "sgi_core/embedding/sentence_transformer.py", "dashboard/app.py"} <= names


def test_app_listens_on_localhost_with_the_reader_upload_limit():
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    server = config["server"]
    assert server["address"] == "127.0.0.1"
    assert server["maxUploadSize"] == DEFAULT_MAX_INPUT_MB
    assert server.get("enableXsrfProtection", True) is True
    assert server.get("enableCORS", True) is True
    assert config["browser"]["gatherUsageStats"] is False
    # whoever reaches the app sees no traceback (file paths, code, values) on an unexpected error
    assert config["client"]["showErrorDetails"] == "none"
