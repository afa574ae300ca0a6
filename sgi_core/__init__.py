"""Semantic Grounding Index (SGI) for (question, context, response) triples.

``SGI = theta(r, q) / (theta(r, c) + 1e-8)`` on sentence embeddings; high SGI means
the response moved from the question toward its context (grounded).
"""

from sgi_core.errors import SGIInputError

__version__ = "0.1.0"
__all__ = ["SGIInputError", "__version__"]
