"""Detectors beside SGI: reference-set displacement scores (out of fold), claim-level grounding, unsupported specifics.

Each family is declared once in :mod:`sgi_core.detectors.registry`, which every face reads.
"""

from __future__ import annotations

from sgi_core import lazy_package

#: Each public name and the module that defines it; imported on first use, so that importing one module of
#: the package does not import them all.
_EXPORTS = {
    "CLAIM_COLUMNS": "sgi_core.detectors.claims",
    "claim_scores": "sgi_core.detectors.claims",
    "sentence_scores": "sgi_core.detectors.claims",
    "GROUP_COLUMNS": "sgi_core.detectors.folds",
    "question_groups": "sgi_core.detectors.folds",
    "PROTOCOLS": "sgi_core.detectors.reference",
    "REFERENCE_DETECTORS": "sgi_core.detectors.reference",
    "ReferenceScores": "sgi_core.detectors.reference",
    "reference_scores": "sgi_core.detectors.reference",
    "reference_sets": "sgi_core.detectors.reference",
}

lazy_package(__name__, _EXPORTS)
