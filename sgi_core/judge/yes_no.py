"""A judge that answers Yes or No, read as the probability of Yes from the token log-probabilities.

A bare Yes/No ranks rows into two ties; the log-probabilities an OpenAI-compatible endpoint returns
rank them continuously (:func:`p_yes`), and where it returns none the answer itself is the score.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass

import numpy as np

#: Alternatives asked for at each answer token (OpenAI allows 0-20).
TOP_LOGPROBS = 5
#: :attr:`YesNo.source` of a score read from the log-probabilities.
FROM_LOGPROBS = "logprobs"
#: :attr:`YesNo.source` of a score that is the bare answer (no log-probabilities to read).
FROM_ANSWER = "answer"
_WORD = re.compile(r"[A-Za-z]+")


class YesNoError(ValueError):
    """A reply that is neither Yes nor No; the message says what it was."""


class JudgeProbabilityWarning(UserWarning):
    """A Yes/No metric's score is the bare answer (0 or 1) on some rows: the endpoint gave no log-probabilities."""


@dataclass(frozen=True)
class YesNo:
    """One Yes/No verdict.

    Attributes
    ----------
    answer : bool
        True for Yes.
    p_yes : float or None
        P(yes) normalised over Yes and No (module docstring), None where the endpoint
        gave no log-probabilities for the answer.
    """

    answer: bool
    p_yes: float | None

    @property
    def score(self) -> float:
        """``p_yes``, else the answer as 1.0 (Yes) or 0.0 (No)."""
        return float(self.answer) if self.p_yes is None else self.p_yes

    @property
    def source(self) -> str:
        """:data:`FROM_LOGPROBS` or :data:`FROM_ANSWER`."""
        return FROM_ANSWER if self.p_yes is None else FROM_LOGPROBS

    def to_answer(self) -> dict:
        """The verdict as the JSON object the answer cache keeps (read back by :func:`parse_yes_no`)."""
        return {"answer": "yes" if self.answer else "no", "p_yes": self.p_yes}


def _normalised(token) -> str | None:
    return token.strip().lower() if isinstance(token, str) else None


def read_answer(content) -> bool:
    """The reply's first word as a verdict: True for yes, False for no (any case, punctuation around it).

    Examples
    --------
    >>> read_answer(" Yes."), read_answer("no")
    (True, False)

    Raises
    ------
    YesNoError
        The first word is neither.
    """
    word = _WORD.search(content) if isinstance(content, str) else None
    verdict = None if word is None else {"yes": True, "no": False}.get(word.group(0).lower())
    if verdict is None:
        shown = repr(content[:60]) if isinstance(content, str) else "no text"
        raise YesNoError(f"the reply is neither Yes nor No ({shown})")
    return verdict


def first_answer_alternatives(logprobs) -> list[tuple[str, float]] | None:
    """``(token, logprob)`` of the first answer token's top alternatives (the chosen token among them).

    ``logprobs`` is a chat completion choice's ``logprobs`` object,
    ``{"content": [{"token", "logprob", "top_logprobs": [{"token", "logprob"}, ...]}, ...]}``.
    Leading whitespace tokens are skipped. Entries that are not a text token with a finite
    log-probability are left out. None when it holds no such token, or fewer than two
    alternatives for it (the chosen token alone says nothing of the other answer).

    Examples
    --------
    >>> first_answer_alternatives({"content": [{"token": "\\n", "logprob": -0.1, "top_logprobs": []},
    ...     {"token": "Yes", "logprob": -0.2, "top_logprobs": [{"token": "No", "logprob": -1.8}]}]})
    [('No', -1.8), ('Yes', -0.2)]
    """
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list):
        return None
    for entry in content:
        if not isinstance(entry, dict) or not _normalised(entry.get("token")):
            continue
        listed = entry.get("top_logprobs")
        candidates = [*(listed if isinstance(listed, list) else []), entry]
        found = {}
        for item in candidates:
            token, logprob = (item.get("token"), item.get("logprob")) if isinstance(item, dict) else (None, None)
            finite = isinstance(logprob, (int, float)) and not isinstance(logprob, bool) and math.isfinite(logprob)
            if isinstance(token, str) and finite and logprob <= 0:
                found.setdefault(token, float(logprob))
        return list(found.items()) if len(found) >= 2 else None
    return None


def p_yes(alternatives) -> float | None:
    r"""P(yes) over yes and no among ``(token, logprob)`` alternatives; None when neither is there.

    Notes
    -----
    Guardian-style judges served behind an OpenAI-compatible endpoint (vLLM, Ollama,
    llama.cpp) answer one word. A bare Yes/No is a score of 0 or 1, which ranks rows only
    into two ties; the log-probabilities the endpoint returns with ``logprobs=true`` and
    ``top_logprobs=k`` rank them continuously. With ``T`` the top alternatives of the first
    answer token (the first token that is not whitespace) and ``lp(t)`` their log-probabilities,

    .. math::

        P(\text{yes}) = \frac{\sum_{t \in T, n(t) = \text{yes}} e^{lp(t)}}
                            {\sum_{t \in T, n(t) \in \{\text{yes}, \text{no}\}} e^{lp(t)}}

    where ``n(t)`` is the token stripped of whitespace and lower-cased (``"Yes"``, ``" yes"`` and
    ``"YES"`` all count as yes), computed as ``expit(logsumexp(yes) - logsumexp(no))``.
    Probability mass on other tokens (``"The"``, ``"Maybe"``) is left out, so the score is
    the judge's preference between the two answers. Higher = Yes.

    Where the endpoint gives no log-probabilities (a server that ignores the option), gives
    the chosen token alone without its alternatives, or neither answer is among them, the
    score falls back to the answer itself, 1.0 for Yes and 0.0 for No, and
    :attr:`YesNo.source` says so.

    References
    ----------
    Kadavath et al. (2022), "Language Models (Mostly) Know What They Know", arXiv:2207.05221:
    the probability of the answer token as the model's confidence in a True/False verdict.

    Examples
    --------
    >>> round(p_yes([("Yes", math.log(0.6)), (" yes", math.log(0.1)), ("No", math.log(0.1)), ("The", -0.5)]), 6)
    0.875
    >>> p_yes([("Maybe", -0.1)]) is None
    True
    """
    from scipy.special import expit, logsumexp

    yes = [lp for token, lp in alternatives if _normalised(token) == "yes"]
    no = [lp for token, lp in alternatives if _normalised(token) == "no"]
    if not yes and not no:
        return None
    if not no:
        return 1.0
    if not yes:
        return 0.0
    return float(expit(logsumexp(yes) - logsumexp(no)))


def yes_no_verdict(content, logprobs) -> YesNo:
    """A reply's verdict and, where its log-probabilities allow, P(yes).

    Raises
    ------
    YesNoError
        The reply is neither Yes nor No.
    """
    answer = read_answer(content)
    alternatives = first_answer_alternatives(logprobs)
    return YesNo(answer, None if alternatives is None else p_yes(alternatives))


def parse_yes_no(answer: dict) -> YesNo:
    """A cached verdict (:meth:`YesNo.to_answer`) read back, checked.

    Raises
    ------
    YesNoError
        ``answer`` is not ``"yes"`` / ``"no"``, or ``p_yes`` is neither null nor a number in [0, 1].
    """
    said = answer.get("answer")
    if said not in ("yes", "no"):
        raise YesNoError("'answer' is not \"yes\" or \"no\"")
    probability = answer.get("p_yes")
    number = isinstance(probability, (int, float)) and not isinstance(probability, bool)
    if probability is not None and not (number and 0.0 <= probability <= 1.0):
        raise YesNoError("'p_yes' is not null or a number from 0 to 1")
    return YesNo(said == "yes", None if probability is None else float(probability))


def warn_without_logprobs(sources: dict) -> int:
    """Warn, per Yes/No metric, of the rows scored by the bare answer; return how many rows are.

    Parameters
    ----------
    sources : dict
        Source column (``judge_<metric>_source``) -> per-row array of :data:`FROM_LOGPROBS`,
        :data:`FROM_ANSWER` or None (not judged).

    Returns
    -------
    int
        Rows where any Yes/No metric is the bare answer.

    Warns
    -----
    JudgeProbabilityWarning
        Naming the metric, its rows without log-probabilities out of those judged, and the column that marks them.
    """
    from_answer = None
    for column, source in sources.items():
        source = np.asarray(source, dtype=object)
        bare = source == FROM_ANSWER
        if bare.any():
            score = column.removesuffix("_source")
            judged = sum(value is not None for value in source)
            warnings.warn(f"the endpoint gave no token log-probabilities for {int(bare.sum())} of {judged} judged "
                          f"rows: their {score} is the bare answer, 1 (Yes) or 0 (No), not P(yes), so those rows rank "
                          f"only as two ties ({column} says '{FROM_ANSWER}' there). Serve the judge where the chat "
                          "API returns logprobs (vLLM, llama.cpp, Ollama) to rank them", JudgeProbabilityWarning,
                          stacklevel=3)
        from_answer = bare if from_answer is None else from_answer | bare
    return 0 if from_answer is None else int(from_answer.sum())
