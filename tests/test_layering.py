"""The lines the architecture rests on.

sgi_core knows no UI; the dashboard does no statistics; ``sgi_core.evaluation`` is pure
statistics on arrays and frames (it neither loads encoders nor scores texts).
"""

import ast
import importlib.util
import re

from tests.conftest import REPO

UI_PACKAGES = {"streamlit", "plotly", "matplotlib", "altair", "dashboard"}
STATS_PACKAGES = {"scipy", "sklearn", "statsmodels", "umap", "pingouin"}
# What embeds or scores texts: the evaluation package sits below all of it.
ENCODING_MODULES = ("sgi_core.embedding", "sgi_core.scoring", "sgi_core.comparison", "sgi_core.long_context",
                    "sgi_core.local_engine", "sgi_core.detectors", "sgi_core.detector_report", "sgi_core.ray_engine",
                    "sgi_core.judge", "torch", "sentence_transformers", "transformers")
# Calls that compute a statistic; the dashboard must take such numbers from sgi_core results.
STATS_CALLS = re.compile(r"\.(mean|std|var|median|quantile|corr|describe|cov)\(|np\.(percentile|nanpercentile|"
                         r"histogram|corrcoef|average|nanmean|mean|std|median)\(|roc_auc|ttest")


def imported_modules(path) -> set[str]:
    """Every module a file imports, at any depth (function-level imports included)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def imported_packages(path) -> set[str]:
    return {name.split(".")[0] for name in imported_modules(path)}


def encoding_imports(path) -> set[str]:
    return {name for name in imported_modules(path)
            if any(name == m or name.startswith(m + ".") for m in ENCODING_MODULES)}


def test_sgi_core_imports_no_ui_library():
    files = sorted((REPO / "sgi_core").rglob("*.py"))
    assert files
    offenders = {str(f.relative_to(REPO)): imported_packages(f) & UI_PACKAGES for f in files}
    assert not {f: p for f, p in offenders.items() if p}


def module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def test_every_listed_encoding_module_exists():
    # A renamed module left under its old name here would silently stop being checked.
    assert [name for name in ENCODING_MODULES if not module_exists(name)] == []


def test_evaluation_is_statistics_only():
    files = sorted((REPO / "sgi_core" / "evaluation").rglob("*.py"))
    assert len(files) > 8
    offenders = {str(f.relative_to(REPO)): encoding_imports(f) for f in files}
    assert not {f: m for f, m in offenders.items() if m}


def test_pages_import_only_the_dashboard():
    files = sorted((REPO / "dashboard" / "pages").glob("*.py"))
    assert len(files) > 5
    offenders = {str(f.relative_to(REPO)): {m for m in imported_modules(f) if m.split(".")[0] == "sgi_core"}
                 for f in files}
    assert not {f: m for f, m in offenders.items() if m}


def test_dashboard_imports_no_statistics_library():
    files = sorted((REPO / "dashboard").rglob("*.py"))
    assert len(files) > 8
    offenders = {str(f.relative_to(REPO)): imported_packages(f) & STATS_PACKAGES for f in files}
    assert not {f: p for f, p in offenders.items() if p}


def test_dashboard_computes_no_statistic():
    offenders = []
    for path in sorted((REPO / "dashboard").rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if STATS_CALLS.search(line):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not offenders


def test_the_checks_would_catch_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import streamlit as st\nfrom scipy import stats\nx = frame['sgi'].mean()\n"
                   "def f():\n    from sgi_core.scoring import score_table\n")
    assert encoding_imports(bad) == {"sgi_core.scoring"}
    assert imported_packages(bad) & UI_PACKAGES == {"streamlit"}
    assert imported_packages(bad) & STATS_PACKAGES == {"scipy"}
    assert STATS_CALLS.search(bad.read_text().splitlines()[2])
    assert not module_exists("sgi_core.streaming") and not module_exists("sgi_core.gone.streaming")


def test_every_dashboard_name_a_page_uses_exists():
    # A name moved between dashboard modules fails here, not only when its page is opened.
    import importlib

    missing = []
    for path in sorted((REPO / "dashboard" / "pages").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and node.module == "dashboard" for alias in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported:
                if not hasattr(importlib.import_module(f"dashboard.{node.value.id}"), node.attr):
                    missing.append(f"{path.name}: {node.value.id}.{node.attr}")
    assert missing == []
