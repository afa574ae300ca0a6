"""The two lines the architecture rests on: sgi_core knows no UI, the dashboard does no statistics."""

import ast
import re

from tests.conftest import REPO

UI_PACKAGES = {"streamlit", "plotly", "matplotlib", "altair", "dashboard"}
STATS_PACKAGES = {"scipy", "sklearn", "statsmodels", "umap", "pingouin"}
# Calls that compute a statistic; the dashboard must take such numbers from sgi_core results.
STATS_CALLS = re.compile(r"\.(mean|std|var|median|quantile|corr|describe|cov)\(|np\.(percentile|nanpercentile|"
                         r"histogram|corrcoef|average|nanmean|mean|std|median)\(|roc_auc|ttest")


def imported_packages(path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_sgi_core_imports_no_ui_library():
    files = sorted((REPO / "sgi_core").rglob("*.py"))
    assert files
    offenders = {str(f.relative_to(REPO)): imported_packages(f) & UI_PACKAGES for f in files}
    assert not {f: p for f, p in offenders.items() if p}


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
    bad.write_text("import streamlit as st\nfrom scipy import stats\nx = frame['sgi'].mean()\n")
    assert imported_packages(bad) & UI_PACKAGES == {"streamlit"}
    assert imported_packages(bad) & STATS_PACKAGES == {"scipy"}
    assert STATS_CALLS.search(bad.read_text().splitlines()[2])
