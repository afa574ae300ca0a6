"""The judge's statements of one response with their verdicts, read back from the answer cache.

The ``support`` task splits a response into factual statements and says whether the
passages support each; the judged file keeps only their share
(``judge_answer_consistency``). The statements themselves stay in the answer cache
(:class:`~sgi_core.judge.cache.AnswerCache`), keyed by endpoint, model, prompt version
and the exact inputs; this module finds them again for one row.
"""

from __future__ import annotations

from sgi_core.judge.cache import AnswerCache, answer_key
from sgi_core.judge.prompts import TASKS, AnswerError
from sgi_core.retrieval import parse_id_list


def cached_statements(question, context, response, *, endpoint: str, model: str,
                      cache: AnswerCache) -> tuple[tuple[str, bool], ...] | None:
    """``((statement, supported), ...)`` for a row judged with its ``context`` cell as the one passage.

    Returns None when the cache holds no such answer: the row was not judged with this
    endpoint and model, or with a retrieved-contexts column (whose passages are other inputs).
    """
    inputs = {"question": str(question), "contexts": parse_id_list([context]), "response": str(response)}
    answer = cache.get_many([answer_key(endpoint, model, "support", inputs)])
    if not answer:
        return None
    (answer,) = answer.values()
    try:
        TASKS["support"].parse(answer, inputs)
    except AnswerError:
        return None
    return tuple((item["statement"], item["supported"]) for item in answer["statements"])
