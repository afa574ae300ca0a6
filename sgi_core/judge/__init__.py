"""LLM-judged RAG metrics through any OpenAI-compatible chat-completions endpoint.

The metrics of :mod:`sgi_core.judge.metrics`, asked with the versioned prompts of
:mod:`sgi_core.judge.prompts`, answers cached on disk (:mod:`sgi_core.judge.cache`) and
run with bounded concurrency (:mod:`sgi_core.judge.runner`). The ``judge_<metric>``
columns are oriented higher = grounded, like SGI, and feed ``report --detector``.
"""

from __future__ import annotations

from sgi_core import lazy_package

#: Each public name and the module that defines it; imported on first use, so that importing one module of
#: the package does not import them all.
_EXPORTS = {
    "AnswerCache": "sgi_core.judge.cache",
    "judge_cache_dir": "sgi_core.judge.cache",
    "JudgeClient": "sgi_core.judge.client",
    "METRICS": "sgi_core.judge.metrics",
    "Metric": "sgi_core.judge.metrics",
    "BEYOND_MAX_ROWS": "sgi_core.judge.output",
    "NOT_IN_SAMPLE": "sgi_core.judge.output",
    "renamed_input_columns": "sgi_core.judge.output",
    "with_judge_columns": "sgi_core.judge.output",
    "PROMPT_VERSION": "sgi_core.judge.prompts",
    "TASKS": "sgi_core.judge.prompts",
    "JudgeCacheWarning": "sgi_core.judge.cache",
    "JudgeProbabilityWarning": "sgi_core.judge.yes_no",
    "JudgeEstimate": "sgi_core.judge.runner",
    "JudgePlan": "sgi_core.judge.runner",
    "JudgeSummary": "sgi_core.judge.runner",
    "estimate": "sgi_core.judge.runner",
    "parse_metrics": "sgi_core.judge.runner",
    "plan_judging": "sgi_core.judge.runner",
    "run_judge": "sgi_core.judge.runner",
}

lazy_package(__name__, _EXPORTS)
