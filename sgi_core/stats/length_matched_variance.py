"""Large-sample variances of the length-matched AUROC and Cohen's d, by influence functions.

Above :data:`~sgi_core.stats.bootstrap.BOOTSTRAP_MAX_ROWS` labelled rows the within-class bootstrap
of :mod:`sgi_core.stats.length_matched` takes minutes; the delta method gives the same variance in
one pass (:func:`length_matched_variances` has the derivation).
"""

from __future__ import annotations

import numpy as np


def _bin_shares(labels: np.ndarray, bins: np.ndarray, n_bins: int):
    """Per-class bin counts, the kept bins (both classes present) and the pooled shares ``p`` over them."""
    counts = np.stack([np.bincount(bins[labels == cls], minlength=n_bins) for cls in (1.0, 0.0)]).astype(float)
    kept = (counts > 0).all(axis=0)
    totals = counts.sum(axis=1)
    share_of_all = counts.sum(axis=0) / totals.sum()
    pooled = np.where(kept, share_of_all / share_of_all[kept].sum(), 0.0)
    return counts, kept, totals, pooled


def _share_influence(cls: int, counts, kept, totals, pooled) -> np.ndarray:
    """``dp[beta, b]``: the change of ``p_b`` as a row of class ``cls`` in bin ``beta`` gains mass."""
    q = counts[cls] / totals[cls]
    pi = totals[cls] / totals.sum()
    share_of_all = counts.sum(axis=0) / totals.sum()
    kept_total = share_of_all[kept].sum()
    in_bin = np.eye(len(q))
    moved_kept = kept.astype(float)[:, None] - q[kept].sum()
    return np.where(kept[None, :], pi * (in_bin - q[None, :] - pooled[None, :] * moved_kept) / kept_total, 0.0)


def _ordering_shares(target: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Share of ``reference`` below each ``target`` value, ties counted one half."""
    ordered = np.sort(reference)
    below = np.searchsorted(ordered, target, side="left")
    not_above = np.searchsorted(ordered, target, side="right")
    return (below + not_above) / (2.0 * len(ordered))


def _in_score_order(values: np.ndarray, bins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` sorted, and ``bins`` in the same order."""
    order = np.argsort(values, kind="stable")
    return values[order], bins[order]


def _auroc_influences(labels, scores, bins, counts, kept, pooled, dp):
    """Influence of each grounded and each hallucinated row on the weighted AUROC, each class in score order.

    Only the spread of the influences is used, so their order is free: sorted targets search fastest.
    ``counts[0]`` holds the grounded class and ``counts[1]`` the hallucinated one (:func:`_bin_shares`).
    """
    n_bins = len(pooled)
    x, bx = _in_score_order(scores[labels == 1.0], bins[labels == 1.0])
    y, by = _in_score_order(scores[labels == 0.0], bins[labels == 0.0])
    pair_auroc = np.zeros((n_bins, n_bins))
    seen_by_valid = np.zeros(len(x))
    for b in np.flatnonzero(kept):
        below = _ordering_shares(x, y[by == b])
        pair_auroc[:, b] = np.bincount(bx, weights=below, minlength=n_bins) / np.maximum(counts[0], 1.0)
        seen_by_valid += pooled[b] * below
    seen_by_halluc = np.zeros(len(y))
    for a in np.flatnonzero(kept):
        seen_by_halluc += pooled[a] * (1.0 - _ordering_shares(y, x[bx == a]))
    pair_auroc = np.where(kept[:, None] & kept[None, :], pair_auroc, 0.0)
    through_shares = pair_auroc @ pooled + pair_auroc.T @ pooled
    q_valid, q_halluc = counts[0] / counts[0].sum(), counts[1] / counts[1].sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        own_valid = np.where(kept, pooled / q_valid, 0.0)
        own_halluc = np.where(kept, pooled / q_halluc, 0.0)
    phi_valid = (dp[0] @ through_shares)[bx] + own_valid[bx] * (seen_by_valid - (pair_auroc @ pooled)[bx])
    phi_halluc = (dp[1] @ through_shares)[by] + own_halluc[by] * (seen_by_halluc - (pooled @ pair_auroc)[by])
    return phi_valid, phi_halluc


def _d_influences(labels, scores, bins, counts, kept, totals, pooled, dp):
    """Influence of each grounded and each hallucinated row on the weighted Cohen's d.

    With ``Q_k`` the share of class ``k`` in kept bins and ``V_k = sum_b p_b E_(k,b)[(x - m_k)**2]``,
    the pooled variance is ``S = sum_k pi_k Q_k V_k / sum_k pi_k Q_k``.
    """
    n_bins = len(pooled)
    centred = scores - np.average(scores)
    q = counts / totals[:, None]
    pi = totals / totals.sum()
    in_kept = q[:, kept].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        means = np.stack([np.bincount(bins[labels == cls], weights=centred[labels == cls], minlength=n_bins)
                          for cls in (1.0, 0.0)]) / counts
        squares = np.stack([np.bincount(bins[labels == cls], weights=centred[labels == cls] ** 2, minlength=n_bins)
                            for cls in (1.0, 0.0)]) / counts
        own = np.where(kept[None, :], pooled[None, :] / q, 0.0)
    means, squares = np.where(kept[None, :], means, 0.0), np.where(kept[None, :], squares, 0.0)
    m = means @ pooled
    spread = squares @ pooled - m**2
    mix = pi * in_kept
    pooled_var = float(mix @ spread / mix.sum())
    gap = m[0] - m[1]
    phis = []
    for k, cls in enumerate((1.0, 0.0)):
        x, beta = centred[labels == cls], bins[labels == cls]
        d_m = (dp[k] @ means.T)[beta]
        d_m2 = (dp[k] @ squares.T)[beta]
        d_m[:, k] += own[k][beta] * (x - means[k][beta])
        d_m2[:, k] += own[k][beta] * (x**2 - squares[k][beta])
        d_spread = d_m2 - 2.0 * m[None, :] * d_m
        d_in_kept = kept[beta].astype(float) - in_kept[k]
        d_mix_total = pi[k] * d_in_kept
        d_pooled = (d_mix_total * spread[k] + d_spread @ mix - pooled_var * d_mix_total) / mix.sum()
        phis.append((d_m[:, 0] - d_m[:, 1]) / np.sqrt(pooled_var) - gap * d_pooled / (2.0 * pooled_var**1.5))
    return phis


def length_matched_variances(labels: np.ndarray, scores: np.ndarray, bins: np.ndarray,
                             n_bins: int) -> tuple[float, float]:
    """Delta-method variances of the length-matched AUROC and Cohen's d (the derivation is in the notes).

    Parameters
    ----------
    labels : ndarray of shape (n,)
        1.0 = grounded, 0.0 = hallucinated; no NaN.
    scores : ndarray of shape (n,)
        Higher = grounded; no NaN.
    bins : ndarray of int of shape (n,)
        Each row's length bin, ``0 <= bins < n_bins``.
    n_bins : int

    Returns
    -------
    (var_auroc, var_d) : tuple of float
        Variances over the within-class bootstrap; ``var_d`` is NaN when the pooled
        weighted variance is 0.

    Notes
    -----
    Under the weights of :mod:`sgi_core.stats.length_matched`, with ``p_b`` the pooled
    share of kept bin ``b`` and ``A_ab`` the plain AUROC of the grounded rows of bin ``a``
    against the hallucinated rows of bin ``b``, the weighted AUROC is

        theta = sum_(a, b kept) p_a p_b A_ab

    and the weighted class means are ``m_k = sum_b p_b mu_(k,b)`` (``mu_(k,b)`` the mean
    of class ``k`` in bin ``b``); Cohen's d is ``(m_1 - m_0) / sqrt(S)`` with ``S`` the
    pooled weighted variance. Both are smooth functions of the two classes' empirical
    distributions, so the delta method applies: each row ``x`` of class ``k`` gets its
    influence ``phi_k(x)`` (the derivative of the statistic as ``x`` gains mass in its
    class), which has mean 0 over the class, and

        Var(statistic) = mean(phi_1**2) / N_1 + mean(phi_0**2) / N_0

    is the variance of the bootstrap that resamples rows within each class (class sizes
    kept; the weights recomputed from each resample's bin counts), the bootstrap that
    :func:`~sgi_core.stats.length_matched.length_matched_auroc` runs up to
    :data:`~sgi_core.stats.bootstrap.BOOTSTRAP_MAX_ROWS` labelled rows.

    For a grounded row ``x`` in bin ``beta`` (hallucinated rows mirror it), with
    ``q_(1,b)`` the share of the grounded rows in bin ``b``, ``pi_1 = N_1 / N``,
    ``T_b = n_b / N`` and ``R`` the kept bins' total of ``T``:

        dp_b = pi_1 ([beta = b] - q_(1,b) - p_b ([beta kept] - sum_(c kept) q_(1,c))) / R
        dA_(beta, b) = (G_b(x) - A_(beta, b)) / q_(1,beta)
        G_b(x) = P(score_0 < x | bin b) + P(score_0 = x | bin b) / 2

    so ``phi(x) = sum_b dp_b (r_b + c_b) + p_beta sum_b p_b dA_(beta, b)`` with ``r``, ``c``
    the row and column sums of ``p_a p_b A_ab`` over ``p``. Cohen's d takes the same
    ``dp_b`` through the bin means and second moments of each class.
    """
    counts, kept, totals, pooled = _bin_shares(labels, bins, n_bins)
    dp = np.stack([_share_influence(k, counts, kept, totals, pooled) for k in (0, 1)])
    phi_auroc = _auroc_influences(labels, scores, bins, counts, kept, pooled, dp)
    var_auroc = sum(float(np.mean(phi**2)) / len(phi) for phi in phi_auroc)
    with np.errstate(divide="ignore", invalid="ignore"):
        phi_d = _d_influences(labels, scores, bins, counts, kept, totals, pooled, dp)
    var_d = sum(float(np.mean(phi**2)) / len(phi) for phi in phi_d)
    return var_auroc, var_d
