"""Explanations shown on more than one page."""

from __future__ import annotations

import re

from sgi_core.render.verdict import confound_text, verdict_text

__all__ = ["AUROC_HELP", "D_HELP", "confound_text", "labels_missing", "plain", "verdict_text"]

# ASCII punctuation that Markdown (and GFM autolinks) give a meaning to; a backslash makes each literal.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~:$])")
# GFM autolinks are found in the parsed text, after backslash escapes are undone: "http\://a\.b" still links.
# A zero-width joiner inside what they need ("://", "www.", "@") leaves nothing to find; it is never seen.
_JOINER = "\u200d"
_AUTOLINK_PARTS = re.compile(r"(?i)(:)(?=//)|(www)(?=\.)|(@)")

D_HELP = ("Cohen's d = (mean grounded - mean hallucinated) / pooled SD (ddof=1). Positive: grounded answers "
          "score higher, as SGI intends. 0.2 is small, 0.5 medium, 0.8 large.")
AUROC_HELP = ("Probability that a random grounded row scores above a random hallucinated one. "
              "0.5 = chance, 1 = perfect.")



def labels_missing(n_valid: int, n_halluc: int) -> str | None:
    """Why label-based statistics are empty, or None when both classes are present."""
    if n_valid == 0 and n_halluc == 0:
        return ("This file has no labels, so there is nothing to measure SGI against: the scores, histograms, "
                "Geometry and Explorer still work. To see effect sizes, ROC curves and calibration, add a label "
                "column (1 = grounded, 0 = hallucinated) and map it on the Data page.")
    if n_valid == 0 or n_halluc == 0:
        present, absent = ("grounded", "hallucinated") if n_halluc == 0 else ("hallucinated", "grounded")
        return (f"Every labelled row is {present}: with no {absent} rows there is nothing to separate, so "
                "effect sizes, ROC, calibration and thresholds are undefined. If the label column means the "
                "opposite of what the Data page assumes, or another column holds the labels, fix it there.")
    return None


def plain(text) -> str:
    r"""Text from a file (cells, column and file names, messages quoting them) made literal for Markdown.

    Links, images, emphasis and autolinked URLs (``https://…``, ``www.…``, e-mail addresses) are written out as
    characters, never rendered: Markdown's punctuation gets a backslash, and a zero-width joiner (U+200D) breaks
    what GFM autolinking looks for.

    Examples
    --------
    >>> print(plain("[x](http://a.b) *hi*").replace(_JOINER, "+"))
    \[x\]\(http\:+//a\.b\) \*hi\*
    """
    text = _AUTOLINK_PARTS.sub(lambda m: m.group(0) + _JOINER, str(text))
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text).replace("\n", "  \n")


