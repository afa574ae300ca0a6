"""The lines the architecture rests on.

sgi_core knows no UI; the dashboard does no statistics; ``sgi_core.evaluation`` is pure
statistics on arrays and frames (it neither loads encoders nor scores texts) and imports
only from an allow-list; no module imports another that imports it back, even from inside
a function; no library module imports the command line; no module is over
:data:`MAX_MODULE_LINES` lines. Each checker is a function of a folder, so the last tests
run it on a small package planted with every violation.
"""

import ast
import importlib.util
import re
import sys

from tests.conftest import REPO

UI_PACKAGES = {"streamlit", "plotly", "matplotlib", "altair", "dashboard"}
STATS_PACKAGES = {"scipy", "sklearn", "statsmodels", "umap", "pingouin"}
# What embeds or scores texts: the evaluation package sits below all of it.
ENCODING_MODULES = ("sgi_core.embedding", "sgi_core.scoring", "sgi_core.pipelines.model_comparison",
                    "sgi_core.long_context", "sgi_core.pipelines.local_engine", "sgi_core.detectors",
                    "sgi_core.detectors.report", "sgi_core.pipelines.ray_engine",
                    "sgi_core.judge", "torch", "sentence_transformers", "transformers")
# Calls that compute a statistic; the dashboard must take such numbers from sgi_core results.
STATS_CALLS = re.compile(r"\.(mean|std|var|median|quantile|corr|describe|cov)\(|np\.(percentile|nanpercentile|"
                         r"histogram|corrcoef|average|nanmean|mean|std|median)\(|roc_auc|ttest")
# Pages only draw: they neither count rows, apply a calibrator nor draw random samples themselves.
PAGE_STATS_CALLS = re.compile(r"\.(sum|nunique|probability)\(|np\.random")
#: The packages whose import graph must have no cycle, and whose modules must stay short.
PACKAGES = ("sgi_core", "dashboard")
MAX_MODULE_LINES = 350
#: What sgi_core.evaluation may import: the standard library, these packages and these sgi_core modules.
EVALUATION_PACKAGES = {"numpy", "pandas", "scipy", "sklearn"}
EVALUATION_MODULES = ("sgi_core.evaluation", "sgi_core.stats", "sgi_core.results", "sgi_core.errors",
                      "sgi_core.columns", "sgi_core.jsonio", "sgi_core.retrieval", "sgi_core.scores")
#: What the statistics room may import: topics only, nothing of the product but its error and result types.
STATISTICS_MODULES = ("sgi_core.stats", "sgi_core.results", "sgi_core.errors")
#: The library's figures: the only sgi_core modules that may import plotly (and no other UI package).
FIGURE_MODULES = ("sgi_core.render.figures", "sgi_core.render.compare_figures", "sgi_core.render.html_report",
                  "sgi_core.render.monitor_figures",
                  "sgi_core.render.monitor_report")
#: The command line, which no library module may import (it is the top floor).
CLI_MODULES = ("sgi_core.cli", "sgi_core.commands", "sgi_core.__main__")


def imported_modules(path) -> set[str]:
    """Every module a file imports, at any depth (function-level imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def module_files(root, packages=PACKAGES) -> dict[str, tuple]:
    """Dotted module name -> (path, is_package) for every ``.py`` file under ``root`` in ``packages``."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def import_graph(root, packages=PACKAGES) -> dict[str, set[str]]:
    """Module -> the modules of ``packages`` it imports, at any depth (function level and relative imports included).

    ``from a import b`` counts as importing ``a.b`` when that is a module, else ``a``.
    """
    modules = module_files(root, packages)

    def known(name):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        # A package that exports its names lazily imports each module of its _EXPORTS table on first use.
        targets = {known(module) for module in lazy_exports(tree).values()}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(known(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    here = name.split(".") if is_package else name.split(".")[:-1]
                    base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
                targets.update(known(f"{base}.{alias.name}") for alias in node.names)
        graph[name] = {target for target in targets if target and target != name}
    return graph


def lazy_exports(tree) -> dict[str, str]:
    """The ``_EXPORTS = {"name": "module", ...}`` table of a lazily exporting package ``__init__``, else {}."""
    for node in tree.body:
        if (isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["_EXPORTS"]
                and isinstance(node.value, ast.Dict)):
            return {k.value: v.value for k, v in zip(node.value.keys, node.value.values)}
    return {}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan 1972): each holds a cycle."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                cycles.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for module in sorted(graph):
            if module not in index:
                visit(module)
    finally:
        sys.setrecursionlimit(limit)
    return cycles


def is_within(name: str, prefixes) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def cli_importers(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Library modules (not the command line itself) that import the command line."""
    return {module: {t for t in targets if is_within(t, CLI_MODULES)} for module, targets in graph.items()
            if not is_within(module, CLI_MODULES) and any(is_within(t, CLI_MODULES) for t in targets)}


def evaluation_outsiders(root, room="evaluation", allowed=EVALUATION_MODULES) -> dict[str, set[str]]:
    """Modules of ``sgi_core.<room>`` importing anything beyond the standard library and the allow-list."""
    offenders = {}
    for path in sorted((root / "sgi_core" / room).rglob("*.py")):
        outside = {name for name in imported_modules(path)
                   if name.split(".")[0] not in sys.stdlib_module_names
                   and name.split(".")[0] not in EVALUATION_PACKAGES and not is_within(name, allowed)
                   and name != "sgi_core"}  # the package root: the error type and the lazy exports
        if outside:
            offenders[str(path.relative_to(root))] = outside
    return offenders


def long_modules(root, packages=PACKAGES, limit=MAX_MODULE_LINES) -> dict[str, int]:
    """Modules of more than ``limit`` lines, with their length."""
    lengths = {str(path.relative_to(root)): len(path.read_text(encoding="utf-8").splitlines())
               for path, _ in module_files(root, packages).values()}
    return {path: n for path, n in lengths.items() if n > limit}


def page_statistics(root) -> list[str]:
    """``file:line: code`` of each page line computing a statistic (:data:`STATS_CALLS`, :data:`PAGE_STATS_CALLS`)."""
    offenders = []
    for path in sorted((root / "dashboard" / "app_pages").glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if STATS_CALLS.search(line) or PAGE_STATS_CALLS.search(line):
                offenders.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return offenders


def imported_packages(path) -> set[str]:
    return {name.split(".")[0] for name in imported_modules(path)}


def encoding_imports(path) -> set[str]:
    return {name for name in imported_modules(path)
            if any(name == m or name.startswith(m + ".") for m in ENCODING_MODULES)}


def ui_imports(root) -> dict[str, set[str]]:
    """sgi_core modules importing a UI package; only :data:`FIGURE_MODULES` may import plotly, none the dashboard."""
    offenders = {}
    for path in sorted((root / "sgi_core").rglob("*.py")):
        names = imported_modules(path)
        is_figures = is_within(".".join(path.relative_to(root).with_suffix("").parts), FIGURE_MODULES)
        found = {name.split(".")[0] for name in names if name.split(".")[0] in UI_PACKAGES
                 and not (is_figures and name.split(".")[0] == "plotly")}
        if found:
            offenders[str(path.relative_to(root))] = found
    return offenders


def test_sgi_core_imports_no_ui_library():
    assert (REPO / "sgi_core").is_dir() and ui_imports(REPO) == {}


def test_importing_the_figures_imports_no_plotly():
    """The library's figures import plotly only when one is drawn."""
    import subprocess

    code = ("import sys, sgi_core.render.figures, sgi_core.render.compare_figures, sgi_core.render.html_report, "
            "sgi_core.render.monitor_figures, sgi_core.render.monitor_report; print('plotly' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "False"


def test_a_ui_import_in_the_library_outside_its_figures_is_found(tmp_path):
    plant(tmp_path, {"sgi_core/render/figures.py": "import plotly.graph_objects as go\n",
                     "sgi_core/commands/bad.py": "import plotly\n",
                     "sgi_core/render/bad.py": "def f():\n    from dashboard.views import tables\n",
                     "sgi_core/render/html_report.py": "import streamlit\n"})
    assert ui_imports(tmp_path) == {"sgi_core/commands/bad.py": {"plotly"}, "sgi_core/render/bad.py": {"dashboard"},
                                    "sgi_core/render/html_report.py": {"streamlit"}}


def module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


#: What ``import sgi_core.cli`` (every command's parser, so every ``--help``) must not import.
HEAVY_FOR_THE_PARSER = ("numpy", "scipy", "sklearn", "torch", "pyarrow", "pandas", "sentence_transformers",
                        "onnxruntime", "httpx", "streamlit")


def test_the_command_line_parser_imports_no_heavy_library():
    import subprocess

    code = ("import sys, sgi_core.cli; sgi_core.cli.build_parser(); "
            f"print(','.join(m for m in {HEAVY_FOR_THE_PARSER!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == ""


def test_compute_on_one_triple_imports_neither_sklearn_nor_scipy():
    import subprocess

    code = ("import sys; from sgi_core.cli import main; "
            "code = main(['compute', '--q', 'who wrote hamlet', '--c', 'Hamlet was written by Shakespeare.', "
            "'--r', 'Shakespeare', '--model', 'hashing', '--json']); "
            "print(code, ','.join(m for m in ('sklearn', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    *_, last = out.stdout.strip().splitlines()
    # The command ran (exit 0, its JSON printed above) and no statistics library came with it.
    assert last.strip() == "0" and '"sgi"' in out.stdout


def command_line_code(root) -> dict[str, set[str]]:
    """Library modules (outside the command line) that parse arguments or print: ``argparse`` imports, ``print``."""
    offenders = {}
    for name, (path, _) in module_files(root, ("sgi_core",)).items():
        if is_within(name, CLI_MODULES):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = {"argparse"} & {m.split(".")[0] for m in imported_modules(path)}
        found |= {"print" for node in ast.walk(tree)
                  if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print"}
        if found:
            offenders[name] = found
    return offenders


#: Modules directly in sgi_core/: the ground floor, what a score is, and the command line's entry; the rest is in
#: packages named for what they do.
MAX_TOP_LEVEL_MODULES = 16


def test_the_top_of_the_library_stays_small():
    top = sorted(path.stem for path in (REPO / "sgi_core").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_only_the_command_line_parses_arguments_and_prints():
    assert command_line_code(REPO) == {}


def test_lazy_packages_export_what_their_table_names():
    for package in ("sgi_core.evaluation", "sgi_core.embedding", "sgi_core.judge", "sgi_core.detectors"):
        module = importlib.import_module(package)
        assert module.__all__ and all(getattr(module, name) is not None for name in module.__all__)


def test_every_listed_encoding_module_exists():
    # A renamed module left under its old name here would silently stop being checked.
    assert [name for name in ENCODING_MODULES if not module_exists(name)] == []


def test_evaluation_is_statistics_only():
    files = sorted((REPO / "sgi_core" / "evaluation").rglob("*.py"))
    files += sorted((REPO / "sgi_core" / "stats").rglob("*.py"))
    assert len(files) > 8
    offenders = {str(f.relative_to(REPO)): encoding_imports(f) for f in files}
    assert not {f: m for f, m in offenders.items() if m}


#: The library's drawing layer (words, tables, figures): the one part of sgi_core a page may call itself.
PAGE_LIBRARY_MODULES = ("sgi_core.render",)


def test_pages_import_only_the_dashboard_and_the_drawing_layer():
    files = sorted((REPO / "dashboard" / "app_pages").glob("*.py"))
    assert len(files) > 5
    offenders = {str(f.relative_to(REPO)): {m for m in imported_modules(f) if m.split(".")[0] == "sgi_core"
                                            and not is_within(m, PAGE_LIBRARY_MODULES)} for f in files}
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
    for path in sorted((REPO / "dashboard" / "app_pages").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {alias.asname or alias.name: f"{node.module}.{alias.name}" for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and is_within(node.module or "", ("dashboard",))
                    for alias in node.names}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported:
                if not hasattr(importlib.import_module(imported[node.value.id]), node.attr):
                    missing.append(f"{path.name}: {node.value.id}.{node.attr}")
    assert missing == []


def test_no_import_cycle_even_through_imports_inside_functions():
    graph = import_graph(REPO)
    assert len(graph) > 100 and graph["sgi_core.cli"] >= {"sgi_core.commands.score", "sgi_core.commands.gate"}
    assert import_cycles(graph) == []


def package_ties(graph: dict[str, set[str]], top: str = "sgi_core") -> set[tuple[str, str]]:
    """Pairs of rooms of ``top`` (its sub-packages and modules) that import each other, at any depth."""
    def room(module):
        parts = module.split(".")
        return parts[1] if len(parts) > 1 and parts[0] == top else None

    edges = {(room(a), room(b)) for a, targets in graph.items() for b in targets}
    edges = {(a, b) for a, b in edges if a and b and a != b}
    return {(a, b) for a, b in edges if (b, a) in edges and a < b}


def test_no_two_rooms_import_each_other():
    assert package_ties(import_graph(REPO)) == set()


def test_no_library_module_imports_the_command_line():
    assert cli_importers(import_graph(REPO)) == {}


def test_evaluation_imports_only_from_its_allow_list():
    assert evaluation_outsiders(REPO) == {}


def test_statistics_import_nothing_of_the_product():
    assert len(list((REPO / "sgi_core" / "stats").glob("*.py"))) > 10
    assert evaluation_outsiders(REPO, "stats", STATISTICS_MODULES) == {}


def test_no_module_is_longer_than_the_limit():
    assert long_modules(REPO) == {}


def test_pages_count_apply_and_sample_nothing_themselves():
    assert page_statistics(REPO) == []


def plant(root, files: dict) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_structure_checks_catch_planted_violations(tmp_path):
    plant(tmp_path, {
        "sgi_core/__init__.py": "",
        # A cycle hidden inside a function, one through a relative import, and a module that stays out of both.
        "sgi_core/a.py": "from sgi_core import b\n",
        "sgi_core/b.py": "def late():\n    import sgi_core.a\n",
        "sgi_core/io/__init__.py": "",
        "sgi_core/io/c.py": "from .d import thing\n",
        "sgi_core/io/d.py": "def thing():\n    from ..io import c\n",
        "sgi_core/e.py": "import numpy\nfrom sgi_core.a import x\n",
        # The library reaching up to the command line, once from inside a function.
        "sgi_core/cli.py": "from sgi_core.commands import run\n",
        "sgi_core/commands/__init__.py": "",
        "sgi_core/commands/run.py": "from sgi_core import e\n",
        "sgi_core/gate.py": "def printer():\n    from sgi_core.cli import main\n",
        # Statistics reaching for what they may not.
        "sgi_core/evaluation/__init__.py": "",
        "sgi_core/evaluation/ok.py": "import math\nimport numpy as np\nfrom sklearn.metrics import roc_auc_score\n"
                                     "from sgi_core.results import JsonResult\nfrom sgi_core.evaluation.ok import x\n",
        "sgi_core/evaluation/bad.py": "import torch\ndef f():\n    from sgi_core.scoring import score_table\n",
        # A cycle through a lazily exporting package: its _EXPORTS table is an import.
        "sgi_core/lazy/__init__.py": "_EXPORTS = {'f': 'sgi_core.lazy.f_module'}\n",
        "sgi_core/lazy/f_module.py": "from sgi_core.lazy import g\n",
        # Argument parsing and printing outside the command line.
        "sgi_core/talks.py": "import argparse\ndef f():\n    print('x')\n",
        "sgi_core/long.py": "x = 1\n" * (MAX_MODULE_LINES + 1),
        "sgi_core/just_short.py": "x = 1\n" * MAX_MODULE_LINES,
        # Two rooms tied both ways, each through another module, one of them from inside a function.
        "sgi_core/policy/__init__.py": "",
        "sgi_core/policy/file.py": "from sgi_core.monitoring.references import refs\n",
        "sgi_core/monitoring/__init__.py": "",
        "sgi_core/monitoring/references.py": "def f():\n    from sgi_core.policy import rules\n",
        "sgi_core/policy/rules.py": "",
        "dashboard/__init__.py": "",
        "dashboard/app_pages/__init__.py": "",
        "dashboard/app_pages/p.py": "n = int(ok.sum())\nk = frame['g'].nunique()\np = calibrator.probability(1.0)\n"
                                "rows = np.random.default_rng(0).choice(9, 3)\nst.metric('n', n)\n",
    })
    graph = import_graph(tmp_path)
    assert sorted(import_cycles(graph)) == [["sgi_core.a", "sgi_core.b"], ["sgi_core.io.c", "sgi_core.io.d"],
                                            ["sgi_core.lazy", "sgi_core.lazy.f_module"]]
    assert command_line_code(tmp_path) == {"sgi_core.talks": {"argparse", "print"}}
    assert graph["sgi_core.e"] == {"sgi_core.a"} and graph["sgi_core.commands.run"] == {"sgi_core.e"}
    assert cli_importers(graph) == {"sgi_core.gate": {"sgi_core.cli"}}
    assert evaluation_outsiders(tmp_path) == {"sgi_core/evaluation/bad.py": {"torch", "sgi_core.scoring"}}
    assert evaluation_outsiders(tmp_path, "evaluation", STATISTICS_MODULES) == {
        "sgi_core/evaluation/bad.py": {"torch", "sgi_core.scoring"},
        "sgi_core/evaluation/ok.py": {"sgi_core.evaluation.ok"}}
    assert long_modules(tmp_path) == {"sgi_core/long.py": MAX_MODULE_LINES + 1}
    assert [line.split(":")[1] for line in page_statistics(tmp_path)] == ["1", "2", "3", "4"]
    assert package_ties(graph) == {("a", "b"), ("monitoring", "policy")}


def unimported_modules(root) -> list[str]:
    """``page: module`` for each dashboard module a page uses by name (``services.x``) without importing it."""
    files = [path for path in (root / "dashboard").rglob("*.py") if "app_pages" not in path.relative_to(root).parts]
    modules = {path.parent.name if path.stem == "__init__" else path.stem for path in files} - {"dashboard"}
    missing = []
    for path in sorted((root / "dashboard" / "app_pages").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree)
                    if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
        used = {node.value.id for node in ast.walk(tree)
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules}
        missing += [f"{path.name}: {name}" for name in sorted(used - imported)]
    return missing


def view_service_calls(root) -> dict[str, set[str]]:
    """Drawing modules (``dashboard/views``) that import anything of the dashboard outside the views."""
    offenders = {}
    for path in sorted((root / "dashboard" / "views").rglob("*.py")):
        outside = {m for m in imported_modules(path) if is_within(m, ("dashboard",)) and m != "dashboard"
                   and not is_within(m, ("dashboard.views",))}
        outside |= {f"dashboard.{alias.name}" for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                    if isinstance(node, ast.ImportFrom) and node.module == "dashboard" for alias in node.names
                    if alias.name != "views"}
        if outside:
            offenders[str(path.relative_to(root))] = outside
    return offenders


def test_drawing_code_calls_no_service():
    assert view_service_calls(REPO) == {}


def test_drawing_code_calling_a_service_is_found(tmp_path):
    plant(tmp_path, {"dashboard/views/ok.py": "from sgi_core.render.figures import x\n",
                     "dashboard/views/bad.py": "from dashboard import services\nfrom dashboard.services.a import b\n"})
    assert view_service_calls(tmp_path) == {"dashboard/views/bad.py": {"dashboard.services", "dashboard.services.a"}}


def test_every_dashboard_module_a_page_uses_is_imported():
    assert unimported_modules(REPO) == []


def test_a_page_using_a_module_it_does_not_import_is_found(tmp_path):
    plant(tmp_path, {"dashboard/services/__init__.py": "", "sgi_core/render/figures.py": "",
                     "dashboard/app_pages/p.py":
                         "from dashboard import charts\ncharts.draw()\nservices.csv_bytes(1)\n"})
    assert unimported_modules(tmp_path) == ["p.py: services"]
