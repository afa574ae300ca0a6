"""Display names: the one place where a score's name becomes the words drawn for it.

Results key every score by its name (``sgi``, ``neg_response_length``, a file's
column); the words come from the score's registry entry
(:data:`sgi_core.scores.registry.SCORES`) only when a table, a figure or a sentence is
drawn.
"""

from __future__ import annotations

from sgi_core.scores.registry import BASELINE_LABELS, spec_for


def display_name(name: str) -> str:
    """The words drawn for a score, by its name or its oriented name: its spec's label (:func:`spec_for`).

    A registered score, a grounding model's score and a judge's column have their labels;
    any other column of the file is named as it is, marked as the file's.

    Examples
    --------
    >>> display_name("sgi"), display_name("neg_theta_rc"), display_name("judge_score")
    ('SGI', 'θ(r,c) response-context, negated', 'judge: score')
    >>> display_name("grounding_nli_min"), display_name("my_detector"), display_name("neg_my_detector")
    ('grounding model nli: weakest sentence', 'my_detector (file column)', 'my_detector (file column), negated')
    """
    return spec_for(name).label


def curve_name(name: str) -> str:
    """A score's name where it is drawn beside the trivial scores (θ(r,q) "alone": without θ(r,c)).

    Examples
    --------
    >>> curve_name("theta_rq"), curve_name("sgi")
    ('θ(r,q) alone', 'SGI')
    """
    return BASELINE_LABELS.get(name, display_name(name))


def curve_names(curves: dict) -> dict:
    """``curves`` keyed by score name, re-keyed by :func:`curve_name` for drawing."""
    return {curve_name(name): value for name, value in curves.items()}
