"""The Review page's evidence table: each response sentence beside its nearest context sentence.

The shade is the sentence's percentile among the file's sentences, one hue from light
(less similar than most of the file) to deep (more similar than most): a place in the
file, not a verdict. Every number comes from the service's result.
"""

from __future__ import annotations

import math

import pandas as pd

from sgi_core.render.numbers import format_ci

SIMILARITY = "similarity to the nearest context sentence"
PERCENTILE = "percentile in the file"


def percentile_shade(percentile: float) -> str:
    """One hue, deeper with the percentile (0 to 100); nothing for NaN."""
    if percentile is None or math.isnan(percentile):
        return ""
    return f"background-color: rgba(31, 119, 180, {0.05 + 0.55 * percentile / 100:.2f})"


def evidence_table(scored: pd.DataFrame):
    """The styled table of :func:`dashboard.services.evidence_services.sentence_evidence`'s sentences.

    A ``passage`` column ("passage 2 of 5") is shown when the row has more than one passage.
    """
    table = pd.DataFrame({"response sentence": scored["sentence"], SIMILARITY: scored["support"],
                          PERCENTILE: scored["percentile"], "nearest context sentence": scored["context_piece"]})
    if (scored["n_passages"] > 1).any():
        table["passage"] = [f"passage {p} of {n}" for p, n in zip(scored["passage"], scored["n_passages"])]
    shades = [percentile_shade(p) for p in table[PERCENTILE]]
    return table.style.apply(lambda _: shades, subset=["response sentence"]).apply(
        lambda _: shades, subset=[SIMILARITY]).format({SIMILARITY: "{:.3f}", PERCENTILE: "{:.0f}"})


def evidence_caption(supports) -> str:
    """What the similarity is, and which of the file's sentences the percentile is read against."""
    rows = (f"a seeded random sample of {len(supports.rows):,} of its {supports.n_file_rows:,} rows"
            if supports.sampled else f"its {supports.n_file_rows:,} rows")
    return ("Similarity = cosine of the sentence's embedding and its nearest context sentence's "
            "(sgi_core.detectors.claims): how alike the two read, not whether the context entails the sentence. "
            f"The shade is its percentile among the {len(supports.support):,} response sentences of the file "
            f"({rows}): the deeper, the more similar than the file's other sentences.")


def weakest_line(roc) -> str:
    """The weakest-sentence score's AUROC on the labels, with its interval, or what it needs."""
    if math.isnan(roc.auroc):
        return (f"Weakest-sentence similarity against the labels: needs labels of both classes among these rows "
                f"({roc.n_pos:,} grounded, {roc.n_neg:,} hallucinated so far).")
    interval = format_ci(roc.auroc_ci, undefined="no interval")
    return (f"Weakest-sentence similarity against the labels on these rows: AUROC {roc.auroc:.3f}, 95% CI {interval} "
            f"({roc.n_pos:,} grounded, {roc.n_neg:,} hallucinated; 0.5 = no better than chance).")


def grounding_table(scored: pd.DataFrame):
    """A grounding model's evidence (:func:`sgi_core.grounding.evidence.row_evidence`): each sentence's best chunk,
    shaded by its probability; a token classifier's marked spans listed with their largest probability."""
    table = pd.DataFrame({"response sentence": scored["sentence"], "P(supported)": scored["support"],
                          "passage": scored["passage"], "best-supporting context chunk": scored["premise"]})
    if any(len(spans) for spans in scored["spans"]):
        table["marked unsupported"] = ["; ".join(f"{sentence[s:e]} ({p:.2f})" for s, e, p in spans)
                                       for sentence, spans in zip(scored["sentence"], scored["spans"])]
    shades = [percentile_shade(100 * p) for p in table["P(supported)"]]
    return table.style.apply(lambda _: shades, subset=["response sentence"]).format({"P(supported)": "{:.3f}"})
