"""Statistics of a score against grounded/hallucinated labels, and the confounds beside it.

Conventions throughout: ``y_true`` is 1 = grounded, 0 = hallucinated, NaN =
unlabelled (left out of label metrics and counted); scores are oriented **higher =
grounded** (SGI as it is); a row is flagged as hallucinated when its score is below a
threshold. Every result is a frozen dataclass whose ``to_dict()`` is JSON-safe and
whose ``from_dict()`` reads it back.
"""

from __future__ import annotations

from sgi_core import lazy_package

#: Each public name and the module that defines it; imported on first use, so that importing one module of
#: the package does not import them all.
_EXPORTS = {
    "UndefinedStatisticWarning": "sgi_core.results",
    "AgreementResult": "sgi_core.stats.correlation",
    "cross_model_agreement": "sgi_core.stats.correlation",
    "BeyondLengthResult": "sgi_core.evaluation.beyond_length",
    "LEXICAL_FLAG_BELOW": "sgi_core.scores.baselines",
    "lexical_groundedness": "sgi_core.scores.baselines",
    "response_length": "sgi_core.scores.baselines",
    "orient_detector_score": "sgi_core.scores.oriented",
    "oriented_scores": "sgi_core.scores.oriented",
    "beyond_length": "sgi_core.evaluation.beyond_length",
    "CalibrationResult": "sgi_core.stats.calibration",
    "Calibrator": "sgi_core.stats.calibration",
    "ReliabilityBins": "sgi_core.stats.calibration",
    "calibration_analysis": "sgi_core.stats.calibration",
    "expected_calibration_error": "sgi_core.stats.calibration",
    "fit_calibrator": "sgi_core.stats.calibration",
    "halluc_rate_by_quantile": "sgi_core.stats.calibration",
    "reliability_bins": "sgi_core.stats.calibration",
    "AngleEffectsResult": "sgi_core.stats.effect_size",
    "EffectSizeResult": "sgi_core.stats.effect_size",
    "angle_effects": "sgi_core.stats.effect_size",
    "cohens_d": "sgi_core.stats.effect_size",
    "effect_size": "sgi_core.stats.effect_size",
    "hedges_g": "sgi_core.stats.effect_size",
    "KEEP_TOGETHER": "sgi_core.evaluation.groups",
    "MISSING_GROUP": "sgi_core.evaluation.groups",
    "GroupAnalysis": "sgi_core.evaluation.groups",
    "GroupConfound": "sgi_core.evaluation.groups",
    "GroupResult": "sgi_core.evaluation.groups",
    "group_analysis": "sgi_core.evaluation.groups",
    "default_keep_together": "sgi_core.evaluation.groups",
    "group_confound": "sgi_core.evaluation.groups",
    "LengthMatchedResult": "sgi_core.stats.length_matched",
    "length_matched_auroc": "sgi_core.stats.length_matched",
    "length_matching_weights": "sgi_core.stats.length_matched",
    "DeLongResult": "sgi_core.stats.paired",
    "Disagreements": "sgi_core.stats.paired",
    "McNemarResult": "sgi_core.stats.paired",
    "delong_test": "sgi_core.stats.paired",
    "disagreements": "sgi_core.stats.paired",
    "mcnemar_test": "sgi_core.stats.paired",
    "HeldOutThreshold": "sgi_core.policy.making",
    "development_split": "sgi_core.policy.making",
    "holdout_threshold": "sgi_core.policy.making",
    "make_policy": "sgi_core.policy.making",
    "Policy": "sgi_core.policy.file",
    "load_policy": "sgi_core.policy.file",
    "policy_from_json": "sgi_core.policy.file",
    "policy_to_json": "sgi_core.policy.file",
    "RocResult": "sgi_core.stats.ranking",
    "auroc": "sgi_core.stats.ranking",
    "roc_analysis": "sgi_core.stats.ranking",
    "score_percentile": "sgi_core.stats.ranking",
    "trivial_names": "sgi_core.evaluation.report",
    "EvaluationReport": "sgi_core.evaluation.report",
    "evaluate": "sgi_core.evaluation.report",
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
    "ScoreRange": "sgi_core.stats.thresholds",
    "ThresholdChoice": "sgi_core.stats.thresholds",
    "ThresholdMetrics": "sgi_core.stats.thresholds",
    "choose_threshold": "sgi_core.stats.thresholds",
    "count_threshold_candidates": "sgi_core.stats.thresholds",
    "threshold_metrics": "sgi_core.stats.thresholds",
    "threshold_metrics_grid": "sgi_core.stats.thresholds",
    "robust_range": "sgi_core.stats.thresholds",
    "threshold_range": "sgi_core.stats.thresholds",
}

lazy_package(__name__, _EXPORTS)
