"""Statistics of a score against grounded/hallucinated labels, and the confounds beside it.

Conventions throughout: ``y_true`` is 1 = grounded, 0 = hallucinated, NaN =
unlabelled (left out of label metrics and counted); scores are oriented **higher =
grounded** (SGI as it is); a row is flagged as hallucinated when its score is below a
threshold. Every result is a frozen dataclass whose ``to_dict()`` is JSON-safe and
whose ``from_dict()`` reads it back.
"""

from sgi_core.results import UndefinedStatisticWarning
from sgi_core.evaluation.agreement import AgreementResult, cross_model_agreement
from sgi_core.evaluation.baselines import (
    BASELINE_DESCRIPTIONS,
    LEXICAL_FLAG_BELOW,
    BeyondLengthResult,
    baseline_scores,
    beyond_length,
    lexical_groundedness,
    response_length,
)
from sgi_core.evaluation.calibration import (
    CalibrationResult,
    Calibrator,
    ReliabilityBins,
    calibration_analysis,
    expected_calibration_error,
    fit_calibrator,
    halluc_rate_by_quantile,
    reliability_bins,
)
from sgi_core.evaluation.effect_size import (
    AngleEffectsResult,
    EffectSizeResult,
    angle_effects,
    cohens_d,
    effect_size,
    hedges_g,
)
from sgi_core.evaluation.groups import (
    KEEP_TOGETHER,
    MISSING_GROUP,
    GroupAnalysis,
    GroupConfound,
    GroupResult,
    group_analysis,
    default_keep_together,
    group_confound,
)
from sgi_core.evaluation.length_matched import LengthMatchedResult, length_matched_auroc, length_matching_weights
from sgi_core.evaluation.paired import (
    DeLongResult,
    Disagreements,
    McNemarResult,
    delong_test,
    disagreements,
    mcnemar_test,
)
from sgi_core.evaluation.policy import HeldOutThreshold, development_split, holdout_threshold, make_policy, proportion_ci
from sgi_core.evaluation.policy_file import Policy, load_policy, policy_from_json, policy_to_json, save_policy
from sgi_core.evaluation.ranking import RocResult, auroc, roc_analysis, score_percentile
from sgi_core.evaluation.report import BaselineResult, EvaluationReport, evaluate
from sgi_core.evaluation.strata import StrataResult, StratumResult, length_strata, theta_qc_strata
from sgi_core.evaluation.verdict import ScoreStanding, Verdict, file_verdict
from sgi_core.evaluation.label_leaks import ColumnScreen, LabelLeak, describe_leak, label_leaks, screen_columns
from sgi_core.evaluation.thresholds import (
    ScoreRange,
    ThresholdChoice,
    ThresholdMetrics,
    choose_threshold,
    count_threshold_candidates,
    threshold_metrics,
    threshold_metrics_grid,
    robust_range,
    threshold_range,
)

__all__ = [
    "KEEP_TOGETHER",
    "default_keep_together",
    "ColumnScreen",
    "LabelLeak",
    "describe_leak",
    "label_leaks",
    "screen_columns",
    "ScoreStanding",
    "Verdict",
    "file_verdict",
    "AgreementResult",
    "AngleEffectsResult",
    "BASELINE_DESCRIPTIONS",
    "BaselineResult",
    "BeyondLengthResult",
    "CalibrationResult",
    "Calibrator",
    "DeLongResult",
    "Disagreements",
    "EffectSizeResult",
    "EvaluationReport",
    "GroupAnalysis",
    "GroupConfound",
    "GroupResult",
    "HeldOutThreshold",
    "LEXICAL_FLAG_BELOW",
    "LengthMatchedResult",
    "MISSING_GROUP",
    "McNemarResult",
    "Policy",
    "ReliabilityBins",
    "RocResult",
    "StrataResult",
    "StratumResult",
    "ThresholdChoice",
    "ThresholdMetrics",
    "UndefinedStatisticWarning",
    "angle_effects",
    "auroc",
    "baseline_scores",
    "beyond_length",
    "calibration_analysis",
    "choose_threshold",
    "cohens_d",
    "cross_model_agreement",
    "delong_test",
    "development_split",
    "disagreements",
    "effect_size",
    "evaluate",
    "expected_calibration_error",
    "fit_calibrator",
    "group_analysis",
    "group_confound",
    "halluc_rate_by_quantile",
    "hedges_g",
    "holdout_threshold",
    "length_matched_auroc",
    "length_matching_weights",
    "length_strata",
    "lexical_groundedness",
    "load_policy",
    "make_policy",
    "mcnemar_test",
    "policy_from_json",
    "policy_to_json",
    "proportion_ci",
    "reliability_bins",
    "response_length",
    "roc_analysis",
    "save_policy",
    "score_percentile",
    "theta_qc_strata",
    "threshold_metrics",
    "threshold_metrics_grid",
    "count_threshold_candidates",
    "threshold_range",
    "robust_range",
    "ScoreRange",
]
