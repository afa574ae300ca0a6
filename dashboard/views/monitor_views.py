"""Figure and tables of the Monitor page, laid out from monitoring results; no statistics here."""

from __future__ import annotations

from dashboard.views.tables import interval

# The words come from the one renderer the command line prints too.
from sgi_core.render.monitor import (  # noqa: F401
    ASSUMPTION,
    assumed_rate_sentence,
    flag_sentence,
    limit_lines,
    rate_sentence,
    shift_sentence,
    status_line,
    validation_sentence,
    what_to_do,
)
from sgi_core.render.monitor_figures import (  # noqa: F401
    REVALIDATED_MARK,
    SHIFT_MARK,
    history_figure,
    history_frame,
    shift_frame,
)


def sentence(text: str) -> str:
    """``text`` as a sentence: its first letter upper case, a full stop at the end (the rest untouched)."""
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def rate_value(corrected) -> str:
    """The corrected rate for a metric tile: the estimate, or "withheld"."""
    return "withheld" if corrected.withheld else f"{corrected.estimate:.1%}"


def headline_value(headline) -> str:
    """The headline rate for a metric tile: the verified estimate, or "unverified"."""
    return f"{headline.estimate:.1%}" if headline.verified else "unverified"


def rate_interval(ci) -> str:
    return interval(ci, ".1%", in_text=True)
