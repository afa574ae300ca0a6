"""LLM-judged RAG metrics through any OpenAI-compatible chat-completions endpoint.

The six metrics of :mod:`sgi_core.judge.metrics`, asked with the versioned prompts of
:mod:`sgi_core.judge.prompts`, answers cached on disk (:mod:`sgi_core.judge.cache`) and
run with bounded concurrency (:mod:`sgi_core.judge.runner`). The ``judge_<metric>``
columns are oriented higher = grounded, like SGI, and feed ``report --detector``.
"""

from sgi_core.judge.cache import AnswerCache, judge_cache_dir
from sgi_core.judge.client import JudgeClient
from sgi_core.judge.metrics import METRICS, Metric
from sgi_core.judge.output import BEYOND_MAX_ROWS, NOT_IN_SAMPLE, renamed_input_columns, with_judge_columns
from sgi_core.judge.prompts import PROMPT_VERSION, TASKS
from sgi_core.judge.runner import (
    JudgeCacheWarning,
    JudgeEstimate,
    JudgePlan,
    JudgeSummary,
    estimate,
    parse_metrics,
    plan_judging,
    run_judge,
)

__all__ = [
    "BEYOND_MAX_ROWS",
    "METRICS",
    "PROMPT_VERSION",
    "TASKS",
    "NOT_IN_SAMPLE",
    "AnswerCache",
    "JudgeCacheWarning",
    "JudgeClient",
    "JudgeEstimate",
    "JudgePlan",
    "JudgeSummary",
    "Metric",
    "estimate",
    "judge_cache_dir",
    "parse_metrics",
    "plan_judging",
    "renamed_input_columns",
    "run_judge",
    "with_judge_columns",
]
