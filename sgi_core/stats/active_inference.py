"""Active statistical inference: a mean from labels drawn with known, unequal probabilities and a predictor.

Each of ``N`` units is labelled with a probability ``pi_i`` fixed before any label is
seen (``xi_i ~ Bernoulli(pi_i)``), larger where the predictor is unsure. The
inverse-probability-weighted prediction-powered estimate stays unbiased whatever the
predictor and the probabilities; a good predictor and a design that follows its
uncertainty narrow the interval (Zrnic and Candès 2024, who also give the optimal
``pi_i`` proportional to the root of the predictor's conditional squared error).

Reference: Zrnic, T. and Candès, E. J. (2024). Active Statistical Inference. Proceedings
of the 41st International Conference on Machine Learning (ICML), PMLR 235, 62993-63010.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sklearn
from scipy import stats
from sklearn.linear_model import LogisticRegression

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult, warn_undefined
from sgi_core.stats.checks import as_scores, check_fraction, check_int
from sgi_core.stats.crossval import normal_scores

#: Share of the label budget spread uniformly, so that every ``pi_i >= UNIFORM_SHARE * n / N``.
UNIFORM_SHARE = 0.2
#: Labelled units of each class (or nonzero differences) below which the normal interval is not given.
MIN_CLASS_COUNT = 5


def inclusion_probabilities(uncertainty, budget: float, *, uniform_share: float = UNIFORM_SHARE) -> np.ndarray:
    """Labelling probabilities that follow the predictor's uncertainty, above a floor, summing to the budget.

    With ``u_i >= 0`` the uncertainty of unit ``i`` (the root of the predictor's conditional
    squared error: ``sqrt(p (1 - p))`` for a label predicted at ``p``), ``N`` units, budget ``n``
    and uniform share ``a``::

        pi_i = n [ (1 - a) u_i / sum(u) + a / N ]

    then every ``pi_i > 1`` is set to 1 and the rest rescaled to keep ``sum(pi) = n``
    (repeated until none exceeds 1). Hence ``pi_i >= a n / N``. With every ``u_i = 0`` the
    design is uniform, ``pi_i = n / N``. Sums are exact (:func:`math.fsum`), so the same
    units in any order get the same probabilities.

    Parameters
    ----------
    uncertainty : array_like of shape (N,)
        Finite values >= 0.
    budget : float in (0, N]
        Expected number of labelled units.
    uniform_share : float in (0, 1], default :data:`UNIFORM_SHARE`
        1 gives the uniform design.

    Returns
    -------
    ndarray of shape (N,)

    Examples
    --------
    >>> inclusion_probabilities([0.0, 0.5, 0.5, 0.0], 2, uniform_share=0.2).tolist()
    [0.1, 0.9, 0.9, 0.1]
    """
    func = "inclusion_probabilities"
    u = as_scores(uncertainty, name="uncertainty")
    if not (np.isfinite(u).all() and (u >= 0).all()):
        raise SGIInputError(f"'uncertainty' of {func} must hold finite values >= 0", column="uncertainty",
                            rows=(np.flatnonzero(~(np.isfinite(u) & (u >= 0))) + 1).tolist())
    n_units = len(u)
    budget = float(budget)
    if not (n_units and 0 < budget <= n_units):
        raise SGIInputError(f"The 'budget' parameter of {func} must be in (0, {n_units}], the number of units. "
                            f"Got {budget!r} instead.", hint="Ask for at most as many labels as there are keys")
    share = float(uniform_share)
    if not 0.0 < share <= 1.0:
        raise SGIInputError(f"The 'uniform_share' parameter of {func} must be a float in (0, 1]. Got {uniform_share!r} "
                            "instead.")
    total = math.fsum(u.tolist())
    weight = np.full(n_units, 1.0 / n_units) if total == 0 else (1 - share) * u / total + share / n_units
    capped = np.zeros(n_units, dtype=bool)
    while True:
        free = budget - capped.sum()
        pi = np.where(capped, 1.0, free * weight / math.fsum(weight[~capped].tolist()))
        over = (pi > 1.0) & ~capped
        if not over.any():
            return np.minimum(pi, 1.0)
        capped |= over


@dataclass(frozen=True)
class ActiveEstimate(JsonResult):
    """An inverse-probability-weighted prediction-powered estimate of a mean (:func:`active_mean`).

    Attributes
    ----------
    estimate, ci : float, (float, float)
    lam : float
        The power-tuning ``lam`` in [0, 1] (0 = labels alone, weighted).
    labels_only_estimate, labels_only_ci : float, (float, float)
        The same estimator at ``lam = 0`` (Horvitz-Thompson): what the labels give without the predictor.
    n_units, n_labelled : int
    expected_labels : float
        ``sum(pi)``, the design's budget.
    variance : float
        ``var(z) / N`` (ddof=0) of the per-unit terms.
    method : str
    confidence : float
    """

    estimate: float
    ci: tuple[float, float]
    lam: float
    labels_only_estimate: float
    labels_only_ci: tuple[float, float]
    n_units: int
    n_labelled: int
    expected_labels: float
    variance: float
    method: str
    confidence: float


def _checked(y, pred, pi):
    y = as_scores(y, name="y")
    pred = as_scores(pred, name="pred", n=len(y))
    pi = as_scores(pi, name="pi", n=len(y))
    for name, bad in (("pred", ~np.isfinite(pred)), ("pi", ~((pi > 0) & (pi <= 1)))):
        if bad.any():
            raise SGIInputError(f"'{name}' must be {'finite' if name == 'pred' else 'in (0, 1]'} for every unit",
                                column=name, rows=(np.flatnonzero(bad) + 1).tolist(),
                                hint="Give every unit a prediction and the probability it was drawn with")
    return y, pred, pi


def _interval(z: np.ndarray, confidence: float) -> tuple[float, tuple[float, float], float]:
    estimate, variance = float(z.mean()), float(z.var() / len(z))
    half = float(stats.norm.ppf(0.5 + confidence / 2.0)) * math.sqrt(variance)
    return estimate, (estimate - half, estimate + half), variance


def active_mean(y, pred, pi, *, confidence: float = 0.95, power_tuning: bool = True) -> ActiveEstimate:
    """Inverse-probability-weighted prediction-powered mean and interval (Zrnic and Candès 2024).

    With unit ``i`` labelled (``xi_i = 1``, its ``y_i`` given) with probability ``pi_i``::

        z_i   = lam f_i + (y_i - lam f_i) xi_i / pi_i
        theta = mean(z)                     Var = var(z) / N  (ddof=0)
        lam   = sum(xi f y (1 - pi) / pi^2) / sum(f^2 (1 - pi) / pi)      clipped to [0, 1]

    ``lam`` minimises ``Var(z)`` (its expectation, estimated by weighting the labelled
    units by ``1 / pi``); a useless predictor gets ``lam`` near 0. ``theta`` is unbiased for
    any fixed ``lam`` and ``f``, so ``f`` must not depend on unit ``i``'s own label: pass
    predictions cross-fitted by unit (:func:`design_cross_fit`). The interval is the normal
    ``theta -/+ z Var^(1/2)``, for the mean of the distribution the units are drawn from
    (conservative for the mean over these ``N`` units). With every ``pi_i = 1`` it is the
    labels' mean. With fewer than :data:`MIN_CLASS_COUNT` labelled units of each value
    (or nonzero, for a difference) of a target in {-1, 0, 1}, the interval is NaN with a
    warning: the per-unit variance is then too rough to trust.

    Parameters
    ----------
    y : array_like of shape (N,)
        The target of each unit; NaN where the unit was not drawn.
    pred : array_like of shape (N,)
        The prediction ``f_i`` of every unit.
    pi : array_like of shape (N,)
        The probability each unit was drawn with, in (0, 1].
    confidence : float, default 0.95
    power_tuning : bool, default True
        False fixes ``lam = 1``.

    Returns
    -------
    ActiveEstimate

    Examples
    --------
    >>> y = np.array([1.0, np.nan, 0.0, np.nan])
    >>> res = active_mean(y, [0.5, 0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5], power_tuning=False)
    >>> res.estimate  # (0.5 + 1) + 0.5 + (0.5 - 1) + 0.5, over 4
    0.5
    """
    confidence = check_fraction(confidence, "confidence", "active_mean")
    y, f, pi = _checked(y, pred, pi)
    drawn = ~np.isnan(y)
    n_units, n_drawn = len(y), int(drawn.sum())
    weighted = np.where(drawn, np.nan_to_num(y) / pi, 0.0)  # y xi / pi, 0 where not drawn
    denominator = float(np.sum(f ** 2 * (1 - pi) / pi))
    if not power_tuning:
        lam = 1.0
    elif denominator > 0:
        lam = float(np.clip(np.sum(weighted * f * (1 - pi) / pi) / denominator, 0.0, 1.0))
    else:
        lam = 0.0
    z = lam * f + weighted - np.where(drawn, lam * f / pi, 0.0)
    method = "active (inverse-probability-weighted prediction-powered)"
    if n_units < 2:
        warn_undefined(f"the active interval needs at least 2 units; got {n_units}")
        nan = (math.nan, math.nan)
        return ActiveEstimate(math.nan, nan, lam, math.nan, nan, n_units, n_drawn, float(pi.sum()), math.nan,
                              method, confidence)
    estimate, ci, variance = _interval(z, confidence)
    labels_estimate, labels_ci, _ = _interval(weighted, confidence)
    short = _too_few(y[drawn])
    if short:
        warn_undefined(f"the active interval is left out: {short}")
        ci, labels_ci, method = (math.nan, math.nan), (math.nan, math.nan), f"{method}; no interval: {short}"
    return ActiveEstimate(estimate, ci, lam, labels_estimate, labels_ci, n_units, n_drawn, float(pi.sum()),
                          variance, method, confidence)


def _too_few(labelled: np.ndarray) -> str:
    """Why a target in {-1, 0, 1} has too few labelled units of a value for the normal interval; "" otherwise."""
    if not np.isin(labelled, (-1.0, 0.0, 1.0)).all():
        return ""
    if (labelled < 0).any():
        counts = {"nonzero differences": int((labelled != 0).sum())}
    else:
        counts = {"units of value 1": int((labelled == 1).sum()), "units of value 0": int((labelled == 0).sum())}
    short = [f"{count} {name}" for name, count in counts.items() if count < MIN_CLASS_COUNT]
    return f"{' and '.join(short)} labelled (fewer than {MIN_CLASS_COUNT})" if short else ""


def design_cross_fit(score, y, pi, folds) -> np.ndarray:
    """P(y = 1) of every unit from a logistic model of the score fitted on the labelled units of the other folds.

    For fold ``k``, the package's feature map (median fill, normal-quantile map:
    :func:`~sgi_core.stats.crossval.normal_scores`) and a logistic regression weighted by
    ``1 / pi`` (so that it fits the population, not the design's sample) are fitted on the
    labelled units outside ``k`` and predict every unit of ``k``. A unit's prediction thus
    never depends on its own draw or label, which keeps :func:`active_mean` unbiased. A fold
    whose training units hold one class only, or a score that never varies there, gets
    their weighted share of 1s (0 without any): a constant, which keeps the estimate unbiased too.

    Parameters
    ----------
    score : array_like of shape (N,)
        Any score (NaN allowed); its sign is learnt.
    y : array_like of shape (N,) of 0 or 1, NaN where not drawn
    pi : array_like of shape (N,)
    folds : array_like of int of shape (N,)
        The fold of each unit, fixed before labelling (for example from a hash of its key).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.binomial(1, 0.4, 200).astype(float)
    >>> pred = design_cross_fit(y + rng.normal(0, 0.7, 200), y, np.ones(200), np.arange(200) % 5)
    >>> bool(pred[y == 1].mean() > pred[y == 0].mean())
    True
    """
    x = as_scores(score, name="score")
    y = as_scores(y, name="y", n=len(x))
    pi = as_scores(pi, name="pi", n=len(x))
    folds = np.asarray(folds)
    if folds.shape != x.shape:
        raise SGIInputError(f"'folds' has {folds.size} values but there are {len(x)} units", column="folds")
    labelled = ~np.isnan(y)
    if not np.isin(y[labelled], (0.0, 1.0)).all():
        raise SGIInputError("'y' of design_cross_fit must hold 0 or 1 where labelled", column="y",
                            rows=(np.flatnonzero(labelled & ~np.isin(y, (0.0, 1.0))) + 1).tolist())
    pred = np.zeros(len(x))
    # The inputs are checked above; scikit-learn's own checks would cost more than these small fits.
    with sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
        for fold in np.unique(folds):
            _fit_fold(x, y, pi, labelled & (folds != fold), folds == fold, pred)
    return pred


def _fit_fold(x, y, pi, train, test, pred) -> None:
    """Fill ``pred[test]`` from the units ``train`` (see :func:`design_cross_fit`)."""
    weight = 1.0 / pi[train]
    values = x[train][~np.isnan(x[train])]
    if not train.any() or np.ptp(y[train]) == 0 or values.size == 0 or np.ptp(values) == 0:
        pred[test] = float(np.sum(weight * y[train]) / weight.sum()) if train.any() else 0.0
        return
    features = x[:, None]
    mapping = normal_scores(int(train.sum())).fit(features[train])
    # Newton's method: one feature, a few exact steps, far quicker than L-BFGS on so few rows.
    model = LogisticRegression(solver="newton-cholesky")
    model.fit(mapping.transform(features[train]), y[train], sample_weight=weight)
    pred[test] = model.predict_proba(mapping.transform(features[test]))[:, 1]


def planned_variance(pred, variance, pi) -> float:
    """The variance :func:`active_mean` would have with a calibrated predictor, before any label is seen.

    With ``f_i`` the prediction of ``E[y_i]`` and ``v_i`` its conditional variance, at ``lam = 1``::

        Var = (var(f) + mean(v / pi)) / N                (ddof=0)

    Examples
    --------
    >>> planned_variance([0.5, 0.5], [0.25, 0.25], [0.5, 0.5])  # (0 + 0.5) / 2
    0.25
    """
    f, v, p = (np.asarray(a, dtype=np.float64) for a in (pred, variance, pi))
    return float((f.var() + np.mean(v / p)) / len(f))


def labels_for_half_width(pred, variance, half_width: float, *, confidence: float = 0.95, active: bool = True,
                          uniform_share: float = UNIFORM_SHARE) -> float:
    """Smallest budget whose planned half-width ``z sqrt(planned_variance)`` is at most ``half_width``.

    The design is :func:`inclusion_probabilities` of ``sqrt(v)`` (``active``) or uniform;
    the budget is found by bisection (the planned variance falls as the budget grows).
    ``inf`` when even labelling every unit does not reach it.

    Examples
    --------
    >>> f, v = np.full(100, 0.5), np.full(100, 0.25)
    >>> round(labels_for_half_width(f, v, 0.1, active=False), 1)  # 1.96^2 0.25 / 0.01 = 96.04, at N = 100
    96.0
    """
    func = "labels_for_half_width"
    if not (math.isfinite(half_width) and half_width > 0):
        raise SGIInputError(f"The 'half_width' parameter of {func} must be a finite number > 0. Got {half_width!r}.")
    confidence = check_fraction(confidence, "confidence", func)
    f, v = np.asarray(pred, dtype=np.float64), np.asarray(variance, dtype=np.float64)
    n_units = check_int(len(f), "len(pred)", func, minimum=1)
    target = (half_width / float(stats.norm.ppf(0.5 + confidence / 2.0))) ** 2
    share = uniform_share if active else 1.0

    def var_at(budget: float) -> float:
        return planned_variance(f, v, inclusion_probabilities(np.sqrt(v), budget, uniform_share=share))

    if var_at(n_units) > target:
        return math.inf
    low, high = 0.0, float(n_units)
    while high - low > 0.01:
        middle = (low + high) / 2
        low, high = (middle, high) if var_at(middle) > target else (low, middle)
    return high
