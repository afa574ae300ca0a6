"""The judge metrics (six after Tonic Validate, and a Yes/No verdict), each a formula over task answers.

Every score lies in [0, 1], oriented higher = grounded, so a judge column is judged like any other
score; :class:`Metric` tabulates each formula and when it is undefined.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sgi_core.scores.registry import JUDGE_PREFIX, JUDGE_SOURCE_SUFFIX

Scores = dict[str, float]


@dataclass(frozen=True)
class Metric:
    """One judge metric.

    Attributes
    ----------
    name : str
    tasks : tuple of str
        Tasks (see :data:`sgi_core.judge.prompts.TASKS`) whose answers it reads.
    needs : str or None
        ``"contexts"`` when it needs a retrieved-contexts list column, ``"reference"``
        when it needs a reference-answer column, None when the triple suffices.
    compute : callable
        ``compute(answers, k) -> (scores by column, reason it is undefined or None)``.
    reads_logprobs : bool
        Its score is P(yes) of a Yes/No task (:class:`~sgi_core.judge.yes_no.YesNo`), read
        from the token log-probabilities where the endpoint gives them.

    Notes
    -----
    Every score lies in [0, 1] and is oriented **higher = better / grounded**. With
    ``rel_i`` the relevance verdict of passage ``i`` (task ``relevance``), ``used_i`` whether
    the response uses it (task ``usage``), ``sup_j`` whether statement ``j`` of the response
    is supported by the passages (task ``support``) and ``s`` the 0-5 similarity score:

    ==========================  =================================================  ============================
    metric                      formula                                            undefined (NaN) when
    ==========================  =================================================  ============================
    answer_similarity           s / 5                                              never
    retrieval_precision         mean_i rel_i                                       never (>= 1 passage)
    retrieval_k_recall          sum_{i <= k} rel_i / sum_i rel_i                   no passage is relevant
    augmentation_precision      sum_i (rel_i and used_i) / sum_i rel_i             no passage is relevant
    augmentation_accuracy       mean_i used_i                                      never
    answer_consistency          mean_j sup_j  (+ ``_binary``: 1 if all j hold)     the response states nothing
    groundedness                P(yes) = p_yes / (p_yes + p_no)                    never
    ==========================  =================================================  ============================

    ``groundedness`` asks one Yes/No question per row (task ``grounded``: is the response
    grounded in the passages?) and reads P(yes) from the first answer token's log-probabilities,
    normalised over the two answers (:mod:`sgi_core.judge.yes_no`), so that it ranks rows
    continuously. Where the endpoint gives no log-probabilities it is the answer itself,
    1 (Yes) or 0 (No), and its :attr:`Metric.source_column` says ``"answer"`` instead of
    ``"logprobs"``.

    ``answer_consistency_binary`` is 1 when the response contains nothing unsupported (also
    when it states nothing) and 0 otherwise. The passages are the row's retrieved-contexts
    list when one is given, else its ``context`` cell as a single passage.
    """

    name: str
    tasks: tuple[str, ...]
    needs: str | None
    compute: Callable[[dict, int], tuple[Scores, str | None]]
    reads_logprobs: bool = False

    @property
    def source_column(self) -> str | None:
        """Per row, where the score came from (``"logprobs"`` or ``"answer"``); None for a metric of JSON answers."""
        return f"{JUDGE_PREFIX}{self.name}{JUDGE_SOURCE_SUFFIX}" if self.reads_logprobs else None

    @property
    def columns(self) -> tuple[str, ...]:
        extra = ("_binary",) if self.name == "answer_consistency" else ()
        return tuple(f"judge_{self.name}{suffix}" for suffix in ("", *extra))


def _share(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else float("nan")


def _similarity(answers, k):
    return {"judge_answer_similarity": answers["similarity"] / 5}, None


# numpy is imported inside each metric: the command line's parser reads this registry and imports no numpy.
def _retrieval_precision(answers, k):
    import numpy as np

    return {"judge_retrieval_precision": float(np.mean(answers["relevance"]))}, None


def _retrieval_k_recall(answers, k):
    import numpy as np

    relevant = np.asarray(answers["relevance"], dtype=bool)
    score = _share(int(relevant[:k].sum()), int(relevant.sum()))
    return {"judge_retrieval_k_recall": score}, (None if relevant.any() else "undefined, no passage is relevant")


def _augmentation_precision(answers, k):
    import numpy as np

    relevant = np.asarray(answers["relevance"], dtype=bool)
    used = np.asarray(answers["usage"], dtype=bool)
    score = _share(int((relevant & used).sum()), int(relevant.sum()))
    return {"judge_augmentation_precision": score}, (None if relevant.any() else "undefined, no passage is relevant")


def _augmentation_accuracy(answers, k):
    import numpy as np

    return {"judge_augmentation_accuracy": float(np.mean(answers["usage"]))}, None


def _answer_consistency(answers, k):
    import numpy as np

    supported = np.asarray(answers["support"], dtype=bool)
    scores = {"judge_answer_consistency": _share(int(supported.sum()), len(supported)),
              "judge_answer_consistency_binary": float(supported.all())}
    return scores, (None if len(supported) else "undefined share, the response states nothing")


def _groundedness(answers, k):
    return {"judge_groundedness": answers["grounded"].score}, None


METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("answer_similarity", ("similarity",), "reference", _similarity),
    Metric("retrieval_precision", ("relevance",), "contexts", _retrieval_precision),
    Metric("augmentation_precision", ("relevance", "usage"), None, _augmentation_precision),
    Metric("augmentation_accuracy", ("usage",), None, _augmentation_accuracy),
    Metric("answer_consistency", ("support",), None, _answer_consistency),
    Metric("retrieval_k_recall", ("relevance",), "contexts", _retrieval_k_recall),
    Metric("groundedness", ("grounded",), None, _groundedness, reads_logprobs=True),
)}
