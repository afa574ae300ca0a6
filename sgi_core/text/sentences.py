"""Sentences of a text, cut by a regular expression (no model download): the one splitter every family uses.

The claim-level detectors score each response sentence alone, and the grounding models read a
long context in sentence-aligned chunks; both cut text here, so a sentence means the same thing
to every score.
"""

from __future__ import annotations

import re

import numpy as np

from sgi_core.stats.checks import check_int

#: A sentence longer than this many words is cut into near-equal windows of at most as many.
DEFAULT_MAX_WORDS = 64
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr vs etc e.g i.e cf al inc ltd co corp no nos mt ft gen col lt sgt capt "
    "rev gov sen rep pres jan feb mar apr jun jul aug sep sept oct nov dec fig approx est dept univ".split()
)
_CUT = re.compile(
    r"[.!?]+[\"'\u201d\u2019)\]]*(?=\s+[\"'\u201c\u2018(\[]?[A-Z0-9])"
    r"|(?<=[a-z0-9)])[.!?]+(?=[A-Z][a-z])"
)
_INITIALS = re.compile(r"(?:[A-Z]\.)+")
#: A list marker: bullets and dashes, or numbering such as ``1.``, ``2)``, ``(3)``, ``a.``, ``iv)``.
_MARKER = re.compile(r"[-*+>#\u2022\u2023\u2043\u25aa\u25cf\u25e6\u2013\u2014]+"
                     r"|\(?(?:\d{1,3}|[A-Za-z]|[ivx]{1,4}|[IVX]{1,4})[.)]\)?")
#: One or more bracketed citations, ``(Passage 1)``, ``[2]``, ``[Source 1, 3]``, ``(Docs 2-4)``, and a closing stop.
#: A bracketed citation (``(Passage 1)``, ``[2]``, ``[Source 1, 3]``): part of the sentence it follows, never a name.
CITATION = re.compile(r"(?:[(\[]\s*(?:[^\W\d_]+\.?\s*)?\d+(?:\s*(?:[,;&\u2013-]|and)\s*\d+)*\s*[)\]]\s*)+[.,;:]?")
_LETTER = re.compile(r"[^\W\d_]")
_GLUED = re.compile(r"(?<=[a-z0-9)][.!?])(?=[A-Z])")


def _keeps_going(before: str) -> bool:
    """Whether the text before a candidate cut ends on an abbreviation or initials.

    The last word is read after any glued sentence end, so ``"Louis.St."`` ends on ``St.``.
    """
    words = before.split()
    last = _GLUED.split(words[-1])[-1].lstrip("\"'(\u201c\u2018[") if words else ""
    return bool(_INITIALS.fullmatch(last)) or last.rstrip(".").lower() in _ABBREVIATIONS


def _with_neighbours(pieces: list[str]) -> list[str]:
    """Each piece without words joined to a neighbour: a list marker to the next piece, anything else to the last.

    With no neighbour on that side the other one is taken; a text with no words at
    all stays one piece. A citation that opens a piece goes to the sentence before.
    """
    sentences, waiting = [], []
    for piece in pieces:
        cited = CITATION.match(piece)
        if cited and sentences and not waiting and cited.end() < len(piece):
            # "Text. (Passage 1) Next text.": the cut falls before the citation, which cites the sentence before.
            sentences[-1] = f"{sentences[-1]} {piece[:cited.end()].strip()}"
            piece = piece[cited.end():].strip()
        if _MARKER.fullmatch(piece):
            waiting.append(piece)
        elif _LETTER.search(piece) and not CITATION.fullmatch(piece):
            sentences.append(" ".join([*waiting, piece]))
            waiting = []
        elif sentences and not waiting:
            sentences[-1] = f"{sentences[-1]} {piece}"
        else:
            waiting.append(piece)
    if waiting and sentences:
        sentences[-1] = " ".join([sentences[-1], *waiting])
    elif waiting:
        sentences.append(" ".join(waiting))
    return sentences


def split_sentences(text: str) -> list[str]:
    """Split a text into sentences with a regular expression (no model download).

    Whitespace inside a sentence is collapsed to single spaces; empty pieces are
    dropped, so an empty or blank text gives ``[]``.

    Notes
    -----
    Sentences are cut by a regular expression (no model download): after ``.``, ``!``
    or ``?`` (and any closing quotes or brackets) followed by a space and a capital
    letter or digit, or glued to a capitalised word (``"century.First"``, as HaluEval's
    joined paragraphs have it), and at line breaks; not after common abbreviations
    (``Dr.``, ``e.g.``) or initials (``J.``, ``U.S.``). A sentence that ends on an
    initial (``... vitamin C. It ...``) is not cut.

    A piece that carries no words is not a sentence: scored alone, ``"1."`` or
    ``"(Passage 1)"`` has a low support that says nothing about grounding, and the
    weakest sentence of a list would be its numbering. Such pieces are kept with a
    neighbour: a list marker (``-``, ``*``, a bullet,
    ``1.``, ``2)``, ``(a)``, ``iv.``) with the sentence after it, a bracketed citation
    (``(Passage 1)``, ``[2]``, ``[Source 1, 3]``) or bare punctuation or numbers with the
    sentence before it.

    Examples
    --------
    >>> split_sentences("Dr. Smith left at 3.30 p.m. on Monday. He was late!Not really.")
    ['Dr. Smith left at 3.30 p.m. on Monday.', 'He was late!', 'Not really.']
    >>> split_sentences("It was in the 19th century.First for Women came later.")
    ['It was in the 19th century.', 'First for Women came later.']
    >>> split_sentences("1. Paris is the capital. (Passage 1)\\n2. It is large. [2]")
    ['1. Paris is the capital. (Passage 1)', '2. It is large. [2]']
    """
    pieces = []
    for line in str(text).splitlines():
        cuts = [m.end() for m in _CUT.finditer(line) if not _keeps_going(line[: m.end()])]
        bounds = [0, *cuts, len(line)]
        for start, end in zip(bounds[:-1], bounds[1:]):
            piece = " ".join(line[start:end].split())
            if piece:
                pieces.append(piece)
    return _with_neighbours(pieces)


def split_pieces(text: str, *, max_words: int = DEFAULT_MAX_WORDS) -> list[str]:
    """Sentences of ``text``, each longer than ``max_words`` words cut into near-equal windows.

    A sentence of ``w > max_words`` words becomes ``ceil(w / max_words)`` consecutive,
    non-overlapping windows whose sizes differ by at most one word (keeping pieces
    well inside a model's token limit, e.g. MiniLM's 256 word pieces).

    Examples
    --------
    >>> split_pieces("one two three four five. Six.", max_words=3)
    ['one two three', 'four five.', 'Six.']
    """
    max_words = check_int(max_words, "max_words", "split_pieces", minimum=1)
    pieces = []
    for sentence in split_sentences(text):
        words = sentence.split()
        n_windows = -(-len(words) // max_words)
        pieces.extend(" ".join(chunk) for chunk in np.array_split(np.asarray(words, dtype=object), n_windows))
    return pieces
