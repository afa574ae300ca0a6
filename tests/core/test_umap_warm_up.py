"""UMAP's numba code compiled ahead of the first map: after :func:`warm_up_umap` a real map compiles nothing."""

import sys

import numpy as np
from numba.core.registry import CPUDispatcher

from sgi_core.progress import rate_line
from sgi_core.projection import project_triples, warm_up_umap


def compiled_signatures() -> dict:
    """Compiled specialisations of every numba function of umap and pynndescent loaded so far."""
    return {f"{name}.{attr}": len(obj.signatures)
            for name, module in list(sys.modules.items()) if name.split(".")[0] in ("umap", "pynndescent")
            for attr, obj in list(vars(module).items()) if isinstance(obj, CPUDispatcher)}


def test_a_map_after_the_warm_up_compiles_nothing_new():
    warm_up_umap()
    assert warm_up_umap() is False  # once per process
    before = compiled_signatures()
    assert sum(before.values()) > 20
    rng = np.random.default_rng(1)
    q, c, r = (rng.normal(size=(300, 384)).astype(np.float32) for _ in range(3))
    assert project_triples(q, c, r, method="umap").response.shape == (300, 2)
    assert compiled_signatures() == before


def test_rate_line_gives_rate_and_time_left():
    assert rate_line(30, 120, 6.0, label="Judged", unit="rows") == "Judged: 30 / 120 rows · 5.00 rows/s · 00:18 left"
    assert rate_line(120, 120, 6.0, label="Judged", unit="rows").endswith("20.00 rows/s · 00:00 left")
