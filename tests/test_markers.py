"""Every Monte Carlo test carries the ``statistical`` marker, so that the fast tier leaves it out and CI still runs it.

A test is a simulation when it repeats a random experiment many times: a loop (a ``for`` statement
or a comprehension) over ``range(N)``, ``N`` at least :data:`MIN_REPETITIONS` (a literal, a product
of literals, or a module constant), whose body both draws from a random generator and computes
something of the draw (calls a function that is neither a draw nor a builtin). A loop that only
draws builds one sample of many rows, and is not a simulation. The loop may sit in the test itself,
in a helper function of its module that the test calls, or in a fixture that the test takes (of its
module, or of a ``conftest.py`` above it).
"""

import ast
import builtins
from pathlib import Path

from tests.conftest import REPO

#: Repetitions from which a loop of random draws is a simulation, not the building of one sample.
MIN_REPETITIONS = 200
#: Names that draw random numbers: a generator called ``rng``, NumPy's and the standard library's modules.
RANDOM_NAMES = {"rng", "random", "default_rng", "RandomState", "Generator", "permutation", "shuffle"}


def _constants(tree: ast.Module) -> dict[str, int]:
    """Module-level counts: ``NAME = <int>`` (a product of ints and such names), a tuple or list's length, and the
    larger branch of ``A if FLAG else B``, the most a run can repeat."""
    found: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target, value in _pairs(node.targets, node.value):
                number = _int(value, found)
                if isinstance(target, ast.Name) and number is not None:
                    found[target.id] = number
    return found


def _pairs(targets, value):
    """``(target, value)`` pairs of an assignment, tuples unpacked (in both branches of a conditional)."""
    for target in targets:
        if isinstance(target, ast.Tuple) and isinstance(value, ast.IfExp) and \
                all(isinstance(v, ast.Tuple) and len(v.elts) == len(target.elts) for v in (value.body, value.orelse)):
            yield from ((t, ast.IfExp(value.test, a, b)) for t, a, b in zip(target.elts, value.body.elts,
                                                                            value.orelse.elts))
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            yield from zip(target.elts, value.elts)
        else:
            yield target, ast.Constant(len(value.elts)) if isinstance(value, (ast.Tuple, ast.List)) else value


def _int(node, constants: dict[str, int]) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        left, right = _int(node.left, constants), _int(node.right, constants)
        return None if left is None or right is None else left * right
    if isinstance(node, ast.IfExp):
        branches = [n for n in (_int(node.body, constants), _int(node.orelse, constants)) if n is not None]
        return max(branches, default=None)
    return None


def _repetitions(iterable, constants: dict[str, int]) -> int:
    """How many times a loop over ``iterable`` runs: ``range(N)`` or ``range(a, N)``, a literal tuple or list, a
    module constant's length; 1 where that is not known from the code."""
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range":
        bound = _int(iterable.args[-1], constants) if iterable.args else None
        start = _int(iterable.args[0], constants) if len(iterable.args) > 1 else 0
        return max((bound or 1) - (start or 0), 1)
    if isinstance(iterable, (ast.Tuple, ast.List)):
        return max(len(iterable.elts), 1)
    if isinstance(iterable, ast.Name) and iterable.id in constants:
        return max(constants[iterable.id], 1)
    return 1


def _draws(nodes) -> bool:
    """Whether any of ``nodes`` names a random generator."""
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in RANDOM_NAMES:
                return True
            if isinstance(sub, ast.Attribute) and sub.attr in RANDOM_NAMES:
                return True
    return False


def _is_generator(node) -> bool:
    """``rng``, ``random``, ``np.random``: what a draw is called on."""
    return (isinstance(node, ast.Name) and node.id in RANDOM_NAMES) or \
        (isinstance(node, ast.Attribute) and node.attr in RANDOM_NAMES)


def _computes(nodes) -> bool:
    """Whether any of ``nodes`` calls a function that is neither a random draw nor a builtin."""
    for node in nodes:
        for call in (sub for sub in ast.walk(node) if isinstance(sub, ast.Call)):
            if isinstance(call.func, ast.Name) and call.func.id not in RANDOM_NAMES and \
                    not hasattr(builtins, call.func.id):
                return True
            if isinstance(call.func, ast.Attribute) and not _is_generator(call.func.value):
                return True
    return False


def simulates(function: ast.AST, constants: dict[str, int]) -> bool:
    """Whether ``function`` holds a loop that runs at least :data:`MIN_REPETITIONS` times (nested loops multiply)
    and whose body draws at random and computes something of the draw."""

    def visit(node, outer: int) -> bool:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            times = outer * _repetitions(node.iter, constants)
            if times >= MIN_REPETITIONS and _draws(node.body) and _computes(node.body):
                return True
            return any(visit(child, times) for child in node.body + node.orelse)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            times = outer
            for generator in node.generators:
                times *= _repetitions(generator.iter, constants)
            body = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            return times >= MIN_REPETITIONS and _draws(body) and _computes(body)
        return any(visit(child, outer) for child in ast.iter_child_nodes(node))

    return visit(function, 1)


def _decorator_names(node) -> set[str]:
    """The dotted names of ``node``'s decorators, calls stripped (``pytest.mark.statistical``)."""
    names = set()
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        names.add(ast.unparse(target))
    return names


def _module_marked(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                    for t in node.targets)
               and "pytest.mark.statistical" in ast.unparse(node.value) for node in tree.body)


def _called_names(function) -> set[str]:
    return {node.func.id for node in ast.walk(function)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}


def _simulating_functions(tree: ast.Module) -> set[str]:
    """The module-level functions of ``tree`` (helpers, fixtures) that simulate."""
    constants = _constants(tree)
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and simulates(node, constants)}


def _simulating_fixtures(path: Path, root: Path) -> set[str]:
    """Functions of the ``conftest.py`` files above ``path`` (up to ``root``) that simulate: fixtures a test takes."""
    names = set()
    for folder in [path.parent, *path.parent.parents]:
        conftest = folder / "conftest.py"
        if conftest.is_file():
            names |= _simulating_functions(ast.parse(conftest.read_text(encoding="utf-8")))
        if folder == root:
            break
    return names


def unmarked_simulations(path: Path, root: Path) -> list[str]:
    """``file::test`` (``file`` relative to ``root``) for each test of ``path`` that simulates and is not marked
    ``statistical``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if _module_marked(tree):
        return []
    constants = _constants(tree)
    simulating = _simulating_functions(tree) | _simulating_fixtures(path, root)
    found = []
    tests = [(node, set()) for node in tree.body if isinstance(node, ast.FunctionDef)]
    tests += [(node, _decorator_names(cls)) for cls in tree.body if isinstance(cls, ast.ClassDef)
              for node in cls.body if isinstance(node, ast.FunctionDef)]
    for node, class_marks in tests:
        if not node.name.startswith("test"):
            continue
        used = _called_names(node) | {arg.arg for arg in node.args.args}
        if (simulates(node, constants) or used & (simulating - {node.name})) and \
                "pytest.mark.statistical" not in _decorator_names(node) | class_marks:
            found.append(f"{path.relative_to(root).as_posix()}::{node.name}")
    return found


def test_every_simulation_is_marked_statistical():
    unmarked = [hit for path in sorted((REPO / "tests").rglob("test_*.py")) for hit in unmarked_simulations(path, REPO)]
    assert unmarked == []


PLANTED = '''
import numpy as np
import pytest

FULL = False
REPS = 50 * 10
SPLITS, RUNS = (20, 10) if FULL else (4, 5)
RATES = (0.1, 0.3, 0.5)


def _coverage(rng):
    return [np.mean(rng.normal(size=3)) for _ in range(REPS)]


@pytest.fixture
def simulated():
    rng = np.random.default_rng(0)
    return [rng.normal(size=5).mean() for _ in range(1000)]


def test_a_loop():
    rng = np.random.default_rng(0)
    for _ in range(400):
        np.mean(rng.normal(size=10))


def test_nested_loops():
    rng = np.random.default_rng(0)
    for split in range(SPLITS):
        for rate in RATES:
            for _ in range(RUNS):
                np.mean(rng.binomial(1, rate, size=60))


def test_through_a_helper():
    _coverage(np.random.default_rng(1))


def test_through_a_fixture(simulated):
    assert simulated


def test_through_a_conftest_fixture(coverage_runs):
    assert coverage_runs


@pytest.mark.statistical
def test_marked():
    rng = np.random.default_rng(0)
    for _ in range(400):
        np.mean(rng.normal(size=10))


def test_few_repetitions():
    rng = np.random.default_rng(0)
    for _ in range(199):
        np.mean(rng.normal(size=10))


def test_one_sample_of_many_rows_drawn_in_a_loop():
    rows = [(rng.choice(["a", "b"]), int(rng.integers(3))) for rng in [np.random.default_rng(0)] for _ in range(500)]
    assert len(rows) == 500


def test_many_rows_without_a_draw():
    assert sum(i for i in range(10_000)) > 0


def test_one_draw_of_many_rows():
    assert np.random.default_rng(0).normal(size=100_000).std() > 0
'''


CONFTEST = '''
import numpy as np
import pytest


@pytest.fixture
def coverage_runs():
    rng = np.random.default_rng(0)
    return [np.mean(rng.normal(size=20)) > 0 for _ in range(500)]
'''


def test_unmarked_simulations_are_found_and_the_rest_left_alone(tmp_path):
    path = tmp_path / "tests" / "test_planted.py"
    path.parent.mkdir()
    path.write_text(PLANTED)
    (path.parent / "conftest.py").write_text(CONFTEST)
    assert unmarked_simulations(path, tmp_path) == [
        "tests/test_planted.py::test_a_loop", "tests/test_planted.py::test_nested_loops",
        "tests/test_planted.py::test_through_a_helper", "tests/test_planted.py::test_through_a_fixture",
        "tests/test_planted.py::test_through_a_conftest_fixture"]
    path.write_text("import pytest\npytestmark = [pytest.mark.statistical]\n" + PLANTED)
    assert unmarked_simulations(path, tmp_path) == []
