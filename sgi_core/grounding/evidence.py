"""One row's evidence from a grounding model: each response sentence's best chunk, its probability, its spans.

For the Review page: :func:`row_evidence` gives, per hypothesis (response sentence, or
the whole response for adapters that read it whole), the context chunk that supports it
best, that chunk's passage and P(supported); for a token classifier also the spans of the
hypothesis whose tokens it marks as hallucinated (:func:`hallucinated_spans`).
"""

from __future__ import annotations

import pandas as pd

#: A token is part of a marked span when its P(hallucinated) is at least this.
SPAN_THRESHOLD = 0.5
EVIDENCE_COLUMNS = ("sentence", "support", "passage", "premise", "spans")


def hallucinated_spans(text: str, tokens, *, threshold: float = SPAN_THRESHOLD) -> tuple[tuple[int, int, float], ...]:
    """Character spans ``(start, end, largest P)`` of consecutive tokens with P(hallucinated) >= ``threshold``.

    Tokens separated only by whitespace join one span.

    Examples
    --------
    >>> hallucinated_spans("is 69 million people", [(0, 2, 0.1), (3, 5, 0.9), (6, 13, 0.7), (14, 20, 0.2)])
    ((3, 13, 0.9),)
    """
    spans: list[list] = []
    for start, end, prob in tokens:
        if prob < threshold:
            continue
        if spans and not text[spans[-1][1]:start].strip():
            spans[-1][1], spans[-1][2] = end, max(spans[-1][2], prob)
        else:
            spans.append([start, end, prob])
    return tuple((int(s), int(e), float(p)) for s, e, p in spans)


def row_evidence(model, context: str, response: str, passages: tuple = ()) -> pd.DataFrame:
    """:data:`EVIDENCE_COLUMNS` of each hypothesis of one row (empty for an empty context or response)."""
    from sgi_core.grounding.scoring import grounding_sentences

    frame = pd.DataFrame({"context": [context], "response": [response]})
    sentences, _ = grounding_sentences(frame, model, passages=(tuple(passages),) if passages else None)
    spans = [hallucinated_spans(sentence, model.token_probabilities(premise, sentence))
             if model.entry.marks_tokens else ()
             for sentence, premise in zip(sentences["sentence"], sentences["premise"])]
    return sentences.assign(spans=spans)[list(EVIDENCE_COLUMNS)]
