"""What a score is and how it is made: the registry of every per-row score, the computed baselines, the oriented table.

Importing the package imports none of its modules; each name is imported from its
module on first use (the command line's parser reads the registry, and must not import
pandas).
"""

from __future__ import annotations

from sgi_core import lazy_package

#: Each public name and the module that defines it.
_EXPORTS = {
    "BASELINES": "sgi_core.scores.registry",
    "BASELINE_LABELS": "sgi_core.scores.registry",
    "DIRECTIONS": "sgi_core.scores.registry",
    "JUDGE_PREFIX": "sgi_core.scores.registry",
    "KINDS": "sgi_core.scores.registry",
    "NEGATED_PREFIX": "sgi_core.scores.registry",
    "REVERSED_LABELS": "sgi_core.scores.registry",
    "SCORES": "sgi_core.scores.registry",
    "TRIVIAL": "sgi_core.scores.registry",
    "ScoreSpec": "sgi_core.scores.registry",
    "column_spec": "sgi_core.scores.registry",
    "grounding_spec": "sgi_core.scores.registry",
    "spec_for": "sgi_core.scores.registry",
    "LEXICAL_FLAG_BELOW": "sgi_core.scores.baselines",
    "lexical_groundedness": "sgi_core.scores.baselines",
    "response_length": "sgi_core.scores.baselines",
    "word_overlap": "sgi_core.scores.baselines",
    "oriented_scores": "sgi_core.scores.oriented",
}

lazy_package(__name__, _EXPORTS)
