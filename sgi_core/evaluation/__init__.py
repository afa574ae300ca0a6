"""Statistics of a score against grounded/hallucinated labels, and the confounds beside it.

Conventions throughout: ``y_true`` is 1 = grounded, 0 = hallucinated, NaN =
unlabelled (left out of label metrics and counted); scores are oriented **higher =
grounded** (SGI as it is); a row is flagged as hallucinated when its score is below a
threshold. Every result is a frozen dataclass whose ``to_dict()`` is JSON-safe and
whose ``from_dict()`` reads it back. The statistics themselves live in :mod:`sgi_core.stats`, the
scores in :mod:`sgi_core.scores` and policies in :mod:`sgi_core.policy`: import them from there.
"""

from __future__ import annotations

from sgi_core import lazy_package

#: Each public name and the module that defines it; imported on first use, so that importing one module of
#: the package does not import them all.
_EXPORTS = {
    "BeyondLengthResult": "sgi_core.evaluation.beyond_length",
    "beyond_length": "sgi_core.evaluation.beyond_length",
    "KEEP_TOGETHER": "sgi_core.evaluation.groups",
    "MISSING_GROUP": "sgi_core.evaluation.groups",
    "GroupAnalysis": "sgi_core.evaluation.groups",
    "GroupConfound": "sgi_core.evaluation.groups",
    "GroupResult": "sgi_core.evaluation.groups",
    "group_analysis": "sgi_core.evaluation.groups",
    "default_keep_together": "sgi_core.evaluation.groups",
    "group_confound": "sgi_core.evaluation.groups",
    "EvaluationReport": "sgi_core.evaluation.report",
    "evaluate": "sgi_core.evaluation.report",
    "with_declared": "sgi_core.evaluation.report",
    "with_families": "sgi_core.evaluation.report",
    "StrataResult": "sgi_core.evaluation.strata",
    "StratumResult": "sgi_core.evaluation.strata",
    "length_strata": "sgi_core.evaluation.strata",
    "theta_qc_strata": "sgi_core.evaluation.strata",
    "ScoreStanding": "sgi_core.evaluation.verdict",
    "Verdict": "sgi_core.evaluation.verdict",
    "file_verdict": "sgi_core.evaluation.verdict",
    "report_verdict": "sgi_core.evaluation.verdict",
    "ColumnScreen": "sgi_core.evaluation.label_leaks",
    "LabelLeak": "sgi_core.evaluation.label_leaks",
    "describe_leak": "sgi_core.evaluation.label_leaks",
    "label_leaks": "sgi_core.evaluation.label_leaks",
    "screen_columns": "sgi_core.evaluation.label_leaks",
}

lazy_package(__name__, _EXPORTS)
