"""Detectors beside SGI: reference-set displacement scores (out of fold), claim-level grounding, unsupported specifics.

Each family is declared once in :mod:`sgi_core.detectors.registry`, which every face reads.
"""

from sgi_core.detectors.claims import CLAIM_COLUMNS, claim_scores, sentence_scores, split_pieces, split_sentences
from sgi_core.detectors.folds import GROUP_COLUMNS, question_groups
from sgi_core.evaluation.folds import crossfit_folds
from sgi_core.detectors.reference import (
    PROTOCOLS,
    REFERENCE_DETECTORS,
    ReferenceScores,
    reference_scores,
    reference_sets,
)

__all__ = [
    "CLAIM_COLUMNS",
    "GROUP_COLUMNS",
    "PROTOCOLS",
    "REFERENCE_DETECTORS",
    "ReferenceScores",
    "claim_scores",
    "crossfit_folds",
    "question_groups",
    "reference_scores",
    "reference_sets",
    "sentence_scores",
    "split_pieces",
    "split_sentences",
]
