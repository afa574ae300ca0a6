"""Numbers and intervals as text, the same way in every printed table and line."""

from __future__ import annotations

import math

#: How ``gate`` writes an interval it could not compute (no resamples, an empty class).
NAN_INTERVAL = "[nan, nan]"


def format_ci(pair, spec: str = ".3f", *, undefined: str | None = "") -> str | None:
    """``"[lo, hi]"`` of an interval with each bound in format ``spec``; ``undefined`` when a bound is NaN.

    Examples
    --------
    >>> format_ci((0.81234, 0.9)), format_ci((float("nan"), float("nan")))
    ('[0.812, 0.900]', '')
    >>> format_ci((-0.1, 0.25), "+.2f")
    '[-0.10, +0.25]'
    """
    lo, hi = pair
    if math.isnan(lo) or math.isnan(hi):
        return undefined
    return f"[{lo:{spec}}, {hi:{spec}}]"


def frame_text(frame, *, na_rep: str = "NaN", index: bool = False) -> str:
    """A DataFrame as a plain-text table, floats with three decimals and NaN written ``na_rep``."""
    return frame.to_string(index=index, float_format=lambda x: f"{x:.3f}", na_rep=na_rep)
