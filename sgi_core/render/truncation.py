"""What truncation does to a file's scores, in the words the report and the Overview share."""

from __future__ import annotations


def truncation_text(result, model: str) -> tuple[bool, str]:
    """``(cut, sentence)``: whether some context is embedded from its start only, and the sentence saying so.

    Parameters
    ----------
    result : TruncationResult
        :func:`sgi_core.long_context.truncation_report`, with its ``max_seq_length`` known.
    model : str
        The model's name, in the sentence.

    Returns
    -------
    cut : bool
        True under the ``joined`` strategy when a context exceeds the model's input length.
    sentence : str
        Markdown-free text.

    Examples
    --------
    >>> from sgi_core.long_context import TruncationResult
    >>> r = TruncationResult("m", 256, 10, 3, 0.3, 120.0, 900.0, "joined", 25, 1)
    >>> truncation_text(r, "minilm")[0]
    True
    >>> truncation_text(TruncationResult("m", 256, 10, 0, 0.0, 120.0, 200.0, "mean", 25, 0), "minilm")[1]
    'Every context fits in the 256 tokens minilm reads (the longest has 200). Each of the 25 passages fits on its own.'
    >>> print(truncation_text(r, "minilm")[1])  # doctest: +NORMALIZE_WHITESPACE
    3 of 10 contexts (30%) are longer than the 256 tokens minilm reads (the longest has 900): only their
    first 256 tokens are embedded, so SGI measures the response against the start of those contexts;
    the passages after the cut are not read. 1 of 25 passages is longer than that on its own.
    """
    limit, strategy = result.max_seq_length, result.context_strategy
    passages = ""
    if result.n_passages is not None and not result.n_passages_truncated:
        passages = f" Each of the {result.n_passages:,} passages fits on its own."
    elif result.n_passages is not None:
        verb = "is" if result.n_passages_truncated == 1 else "are"
        windows = "" if strategy == "joined" else f" and {verb} embedded in windows"
        passages = (f" {result.n_passages_truncated:,} of {result.n_passages:,} passages {verb} longer than that on "
                    f"its own{windows}.")
    if not result.n_truncated:
        return False, (f"Every context fits in the {limit:,} tokens {model} reads (the longest has "
                       f"{result.max_tokens:,.0f}).{passages}")
    head = (f"{result.n_truncated:,} of {result.n_texts:,} contexts ({result.share_truncated:.0%}) are longer than the "
            f"{limit:,} tokens {model} reads (the longest has {result.max_tokens:,.0f})")
    if strategy != "joined":
        return False, (f"{head}; with the context strategy '{strategy}' each passage is embedded in windows that "
                       f"fit, so no text is cut.{passages}")
    after = "; the passages after the cut are not read" if result.n_passages is not None else ""
    return True, (f"{head}: only their first {limit:,} tokens are embedded, so SGI measures the response against the "
                  f"start of those contexts{after}.{passages}")
