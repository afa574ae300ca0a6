"""A file's verdict in words: which detector, if any, beats the best trivial score here, and what is near chance.

The words of :class:`~sgi_core.evaluation.verdict.Verdict`, the same on the Overview and in
``report``: a detector "beats" the bar only where DeLong's interval of its AUROC minus
the best trivial score's lies above 0; a score is "near chance" or "inverted" from its
AUROC's interval. Reads results; computes nothing.
"""

from __future__ import annotations

from sgi_core.render.names import display_name
from sgi_core.scores import BASELINE_LABELS, REVERSED_LABELS

#: Response length at or above this AUROC, shorter = grounded, reads as HaluEval's answer-length bias.
HALUEVAL_LIKE_AUROC = 0.8
_STANDING_WORDS = {"near chance": "is near chance here: its interval holds 0.5",
                   "inverted": "is inverted here: its interval lies below 0.5, so its high values go with "
                               "hallucinated rows"}
#: Added to an inverted detector column's note: its direction is the user's to set.
_CHECK_DIRECTION = " Check what its high values mean (the Detectors page, or --detector COLUMN:hallucinated)."


def _name(score) -> str:
    """Display name of a :class:`~sgi_core.evaluation.verdict.ScoreStanding`."""
    if score.trivial:
        stated = BASELINE_LABELS.get(score.name, score.name)
        flipped = REVERSED_LABELS.get(score.name, f"{score.name}, reversed")
        return flipped if score.flipped else stated
    return _label(score.name)


def _label(name: str) -> str:
    """A score by its display name (:func:`~sgi_core.render.names.display_name`), oriented names included."""
    return display_name(name)


def _auroc(score) -> str:
    lo, hi = score.auroc.interval
    interval = "" if lo != lo or hi != hi else f" [{lo:.3f}, {hi:.3f}]"
    return f"AUROC {score.auroc.value:.3f}{interval}"


def _difference(comparison) -> str:
    lo, hi = comparison.ci
    interval = "" if lo != lo or hi != hi else f" [{lo:+.3f}, {hi:+.3f}]"
    return f"{comparison.difference:+.3f}{interval}"


def verdict_text(verdict, detector: str = "sgi") -> tuple[str, str, list[str]]:
    """``(level, headline, notes)`` of a :class:`~sgi_core.evaluation.verdict.Verdict` about this file.

    ``level`` is ``"success"`` when a detector beats the best trivial score,
    ``"error"`` when ``detector`` is near chance or inverted, ``"warning"`` otherwise;
    ``notes`` name every other score near chance or inverted. Scores are named by
    their display names.
    """
    main = verdict.standing(detector)
    shown = _label(detector)
    best = verdict.standing(verdict.best_trivial)
    bar = f"the best trivial score on this file, {_name(best)} ({_auroc(best)})"
    by_name = {c.detector: c for c in verdict.comparisons}
    if verdict.winners:
        lines = [f"{_label(name)} ({_auroc(verdict.standing(name))}, {_difference(by_name[name])} "
                 "by DeLong's paired test)" for name in verdict.winners]
        level, headline = "success", f"Beats {bar}: " + "; ".join(lines) + "."
    elif main.standing in _STANDING_WORDS:
        level = "error"
        headline = f"{shown} {_STANDING_WORDS[main.standing]} ({_auroc(main)}). Compare {bar}."
    elif main.standing == "undefined":
        level, headline = "warning", f"{shown}'s AUROC or its interval is undefined on this file ({_auroc(main)})."
    else:
        comparison = by_name[detector]
        how = {"loses": "is worse than", "no clear difference": "is not clearly better than"}.get(
            comparison.outcome, "cannot be compared with")
        level = "warning"
        headline = (f"No detector beats {bar}. {shown} ({_auroc(main)}) {how} it: difference "
                    f"{_difference(comparison)} by DeLong's paired test.")
    notes = [f"{_name(score)} {_STANDING_WORDS[score.standing]} ({_auroc(score)})."
             + (_CHECK_DIRECTION if score.standing == "inverted" and not score.trivial and score.name != detector
                else "")
             for score in verdict.scores
             if score.standing in _STANDING_WORDS and not (level == "error" and score.name == detector)]
    return level, headline, notes


def confound_text(verdict) -> str:
    """Why trivial scores are the bar, with what they reach on this file."""
    trivial = [score for score in verdict.scores if score.trivial and score.auroc.value == score.auroc.value]
    reached = "; ".join(f"{_name(score)} {_auroc(score)}" for score in trivial)
    text = ("A score is only useful if it beats what is trivial to compute. Each trivial score is taken in the "
            f"direction that separates best on this file: {reached}.")
    best = verdict.standing(verdict.best_trivial)
    if best.name == "neg_response_length" and not best.flipped and best.auroc.value >= HALUEVAL_LIKE_AUROC:
        text += (" Shorter responses are the grounded ones here, as on HaluEval, where correct answers are short "
                 "spans and hallucinated ones full sentences: response length alone does much of the separating.")
    return text
