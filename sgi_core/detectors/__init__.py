"""Detectors beside SGI: reference-set displacement scores (out of fold) and claim-level grounding."""

from sgi_core.detectors.folds import GROUP_COLUMNS, crossfit_folds, question_groups
from sgi_core.detectors.reference import (
    PROTOCOLS,
    REFERENCE_DETECTORS,
    ReferenceScores,
    reference_scores,
    reference_sets,
)

__all__ = [
    "GROUP_COLUMNS",
    "PROTOCOLS",
    "REFERENCE_DETECTORS",
    "ReferenceScores",
    "crossfit_folds",
    "question_groups",
    "reference_scores",
    "reference_sets",
]
