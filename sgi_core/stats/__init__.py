"""Statistical topics on arrays, knowing nothing of the product: proportions, effect sizes, ranking,
paired tests, bootstrap, calibration, thresholds, cross-fitting, prediction-powered inference,
kappa, correlation and length matching.

Conventions throughout: ``y_true`` is 1 = grounded, 0 = hallucinated, NaN = unlabelled; scores are
oriented higher = grounded.
"""
