"""Unsupported specifics: the response's numbers and names that its context does not contain.

A label-free, model-free detector family: invented details (a year, a count, a name) are what a
reader can check, so a response's share of them missing from the context is a grounding signal.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.io.passages import row_passages
from sgi_core.results import warn_undefined
from sgi_core.text.sentences import CITATION, split_sentences

#: Columns returned by :func:`specific_passages`.
SPECIFIC_PASSAGES_COLUMNS = ("specific", "kind", "passages")
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
_WORD = re.compile(r"[^\W\d_]+")
_NOT_NAMES = frozenset({"I"})


def numbers_in(text: str) -> set[str]:
    """The distinct numbers of a text, thousands commas removed.

    Examples
    --------
    >>> sorted(numbers_in("In 1,200 BC, 3.5% of 1200 people; the 19th."))
    ['1200', '19', '3.5']
    """
    return {match.replace(",", "") for match in _NUMBER.findall(text)}


def names_in(text: str) -> set[str]:
    """The distinct names of a text: runs of capitalised words past each sentence's first word, case folded.

    Examples
    --------
    >>> sorted(names_in("Paris is in France (Passage 2). It hosted the Tour de France with Marie Curie."))
    ['france', 'marie curie', 'tour']
    """
    names = set()
    # A citation goes, the punctuation it swallowed stays: "France (Passage 2). It" keeps its sentence end.
    uncited = CITATION.sub(lambda m: " " + m.group(0)[-1] if m.group(0)[-1] in ".,;:" else " ", text)
    for sentence in split_sentences(uncited):
        run: list[str] = []
        for word in [*_WORD.findall(sentence)[1:], ""]:
            if word[:1].isupper() and word not in _NOT_NAMES:
                run.append(word.casefold())
            elif run:
                names.add(" ".join(run))
                run = []
    return names


def _words(text: str) -> str:
    """The text's words, case folded and padded with spaces, for whole-word phrase lookup."""
    return f" {' '.join(word.casefold() for word in _WORD.findall(text))} "


def _held(response: str, passages) -> list[tuple[str, str, tuple]]:
    """``(specific, kind, passages holding it)`` of each distinct specific, numbers then names, each sorted."""
    numbers = [numbers_in(passage) for passage in passages]
    words = [_words(passage) for passage in passages]
    return ([(number, "number", tuple(i for i, held in enumerate(numbers, start=1) if number in held))
             for number in sorted(numbers_in(response))]
            + [(name, "name", tuple(i for i, held in enumerate(words, start=1) if f" {name} " in held))
               for name in sorted(names_in(response))])


def _as_passages(context) -> tuple:
    return (context,) if isinstance(context, str) else tuple(context)


def specific_passages(response: str, context) -> pd.DataFrame:
    """Each distinct specific of a response and the passages of its context that hold it.

    Parameters
    ----------
    response : str
    context : str or sequence of str
        The context text (one passage) or its passages.

    Returns
    -------
    DataFrame
        One row per specific, numbers first, with :data:`SPECIFIC_PASSAGES_COLUMNS`:
        ``specific`` (a number without thousands commas, or a case-folded name),
        ``kind`` (``"number"`` or ``"name"``) and ``passages`` (the 1-based numbers of the
        passages holding it; ``()`` when none does: unsupported).

    Examples
    --------
    >>> found = specific_passages("So Lee paid 1,200 euros in 1999.", ["Lee paid 1200.", "In 1998, said Lee."])
    >>> found.values.tolist()
    [['1200', 'number', (1,)], ['1999', 'number', ()], ['lee', 'name', (1, 2)]]
    """
    return pd.DataFrame(_held(response, _as_passages(context)), columns=list(SPECIFIC_PASSAGES_COLUMNS))


def row_specifics(response: str, context) -> tuple[int, int]:
    """``(n, u)``: the response's distinct specifics and those no passage of its context holds.

    ``context`` is the context text (one passage) or its passages.

    Examples
    --------
    ``Ann`` opens the sentence and is not read; ``1,200`` is found as ``1200``:

    >>> row_specifics("Ann Lee paid 1,200 euros in 1999.", "Lee paid 1200 euros.")
    (3, 1)

    A name split between two passages is not found:

    >>> row_specifics("It was Marie Curie.", ["It was Marie", "Curie, they said."])
    (1, 1)
    """
    held = _held(response, _as_passages(context))
    return len(held), sum(not where for _, _, where in held)


def specifics_scores(frame: pd.DataFrame, *, passages: tuple | None = None) -> pd.DataFrame:
    """Unsupported-specifics columns of every row (see the module notes for the definitions).

    Parameters
    ----------
    frame : DataFrame
        With ``context`` and ``response`` columns. A row whose context or response
        is empty is not scored.
    passages : tuple of tuple of str, optional
        Each row's passages (:attr:`~sgi_core.io.triples.TripleTable.passages`); without
        them, :func:`~sgi_core.io.passages.row_passages` reads the frame's passages
        column, else takes the context as one passage.

    Returns
    -------
    DataFrame
        Indexed like ``frame``, with :data:`SPECIFICS_COLUMNS`:
        ``specifics_unsupported_share`` (``u / n``, higher = less grounded; NaN when
        ``n = 0`` or the row is not scored, with an :class:`UndefinedStatisticWarning`
        giving the count), ``specifics_n`` and ``specifics_n_unsupported`` (0 for rows
        not scored).

    Raises
    ------
    SGIInputError
        When ``context`` or ``response`` is missing.

    Notes
    -----
    A hallucinated answer often invents the checkable details: a year, a count, a person
    or a place. The family reads the specifics of each response
    and looks each one up in its row's context:

    - **numbers**: runs of digits with optional thousands commas and a decimal part
      (``1,200``, ``1200``, ``3.5``, the ``19`` of ``19th``), compared after the commas
      are removed, so ``"1,200"`` in the response is supported by ``"1200"`` in the
      context;
    - **names**: maximal runs of capitalised words (first letter upper case in any
      script: ``New York``, ``Ørsted``, ``NASA``), leaving out the first word of each
      sentence (sentences as :func:`sgi_core.text.sentences.split_sentences` cuts
      them), whose capital says nothing, and the pronoun ``I``. A name is supported
      when its words occur consecutively among the context's words, case folded.

    A context given as a list of passages (:func:`sgi_core.io.passages.row_passages`) is
    searched passage by passage: a specific is supported when one passage holds it, so a
    name never matches across two passages, and :func:`specific_passages` names the
    passages that hold each one. A plain context is one passage.

    Each distinct specific counts once per row. With ``n`` the specifics of a response
    and ``u`` those no passage of its context contains::

        specifics_unsupported_share = u / n        (NaN when n = 0)

    Orientation: a **higher share means less grounded**; the registry declares the
    column ``higher_is="hallucinated"``, so the judged score is ``-u / n``.

    Limits: numbers written as words (``twelve``), dates in another format (``3 May``
    against ``May 3rd`` is fine, ``05/03`` against ``3 May`` is not), units and
    rounding (``1.2 million`` against ``1,200,000``) are not reconciled; a name that
    opens a sentence is counted from its second word only; a lower-case particle splits
    a name (``Tour de France`` gives ``Tour`` and ``France``); a capitalised common word
    inside a sentence (a title, ``The``) counts as a name; a name paraphrased or
    abbreviated in the context (``US`` against ``United States``) is unsupported; and a
    response with no number or name (a yes/no answer) gets no score. It reads strings
    only: no model, no labels.

    Examples
    --------
    >>> frame = pd.DataFrame({"context": ["Bo won in 1998."], "response": ["It was Bo, in 1999."]})
    >>> specifics_scores(frame).iloc[0].tolist()
    [0.5, 2.0, 1.0]
    """
    missing = [column for column in ("context", "response") if column not in frame.columns]
    if missing:
        raise SGIInputError(f"unsupported specifics need the columns context and response; missing "
                            f"{', '.join(missing)}", hint="Read the file with sgi_core.io.triples.load_triples")
    texts = frame[["response", "context"]].fillna("").astype(str)
    scorable = (texts.apply(lambda col: col.str.strip() != "")).all(axis=1).to_numpy()
    every_passages = row_passages(frame, passages)
    counts = np.zeros((len(frame), 2), dtype=np.int64)
    for i in np.flatnonzero(scorable):
        counts[i] = row_specifics(texts["response"].iat[i], every_passages[i])
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(scorable & (counts[:, 0] > 0), counts[:, 1] / counts[:, 0], np.nan)
    n_without = int((scorable & (counts[:, 0] == 0)).sum())
    if n_without:
        warn_undefined(f"{n_without} responses name no number or capitalised name: their unsupported-specifics "
                       "share is NaN")
    return pd.DataFrame({"specifics_unsupported_share": share, "specifics_n": counts[:, 0],
                         "specifics_n_unsupported": counts[:, 1]}, index=frame.index)
