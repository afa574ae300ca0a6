"""Semantic Grounding Index (SGI) for (question, context, response) triples.

``SGI = theta(r, q) / (theta(r, c) + 1e-8)`` on sentence embeddings; high SGI means
the response moved from the question toward its context (grounded).
"""

import importlib
import sys
import types

from sgi_core.errors import SGIInputError

__version__ = "0.1.0"
__all__ = ["SGIInputError", "__version__", "lazy_package"]


def lazy_package(name: str, exports: dict[str, str]) -> None:
    """Make the package ``name`` export ``exports`` (public name -> defining module) on first use.

    Importing one module of a package then imports no other (the command line's parser
    reads a few constants of big packages). An exported name is imported from its
    module when first read and kept. Importing a submodule binds it on its package under
    its own name, which would hide an exported function of that name (``effect_size``):
    such a binding is skipped (the submodule stays in :data:`sys.modules`).
    """
    package = sys.modules[name]

    class LazyPackage(types.ModuleType):
        def __getattr__(self, attribute: str):
            if attribute not in exports:
                raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
            value = getattr(importlib.import_module(exports[attribute]), attribute)
            super().__setattr__(attribute, value)
            return value

        def __dir__(self) -> list[str]:
            return sorted({*super().__dir__(), *exports})

        def __setattr__(self, attribute: str, value) -> None:
            if (attribute in exports and isinstance(value, types.ModuleType)
                    and value.__name__ == f"{name}.{attribute}"):
                return
            super().__setattr__(attribute, value)

    package.__all__ = sorted(exports)
    package.__class__ = LazyPackage
