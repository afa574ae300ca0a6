"""Grounding models from a local folder: NLI cross-encoders, consistency checkers, HHEM, seq2seq checkers, span markers.

Loading (:mod:`~sgi_core.grounding.folder`, :mod:`~sgi_core.grounding.runtime`, on torch or
ONNX Runtime: :mod:`~sgi_core.grounding.onnx_network`), adapters
declared one module per kind (:mod:`~sgi_core.grounding.adapters`),
the long-context rule (:mod:`~sgi_core.grounding.chunking`), the load-time self-test
(:mod:`~sgi_core.grounding.selftest`), per-row scores with their cache
(:mod:`~sgi_core.grounding.scoring`), the detector family (:mod:`~sgi_core.grounding.family`)
and one row's evidence (:mod:`~sgi_core.grounding.evidence`).
"""

from __future__ import annotations

from sgi_core import lazy_package

_EXPORTS = {
    "GroundingFolder": "sgi_core.grounding.folder",
    "read_folder": "sgi_core.grounding.folder",
    "Adapter": "sgi_core.grounding.adapters",
    "detect_adapter": "sgi_core.grounding.adapters",
    "GroundingModel": "sgi_core.grounding.runtime",
    "load_grounding_model": "sgi_core.grounding.runtime",
    "SelfTest": "sgi_core.grounding.selftest",
    "context_chunks": "sgi_core.grounding.chunking",
    "grounding_scores": "sgi_core.grounding.scoring",
    "row_evidence": "sgi_core.grounding.evidence",
}

lazy_package(__name__, _EXPORTS)
