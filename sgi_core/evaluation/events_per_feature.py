"""The events-per-feature floor: below it, a combination fitted on the labels is withheld, not reported.

A logistic model with few rows of the rarer class per feature has an AUROC whose spread no single
file shows (Peduzzi et al. 1996), so :func:`withheld_reason` says when a combination needs more labels.
"""

from __future__ import annotations

import numpy as np

from sgi_core.stats.checks import as_labels, check_int

#: Rows of the smaller labelled class needed per feature before a combination fitted on the labels is reported.
MIN_EVENTS_PER_FEATURE = 10
#: ``level`` of a withheld combination, and the first word of its reason.
WITHHELD = "withheld"


def withheld_reason(y_true, *, n_features: int) -> str:
    """Why a combination of ``n_features`` fitted on ``y_true`` is withheld, or ``""`` when it may be reported.

    Withheld when ``min(n_grounded, n_hallucinated) < MIN_EVENTS_PER_FEATURE * n_features``
    over the labelled rows (NaN = unlabelled, not counted).

    Notes
    -----
    A logistic model with few rows of the rarer class per feature has unstable
    coefficients and an AUROC whose spread over samples of labels no single file shows,
    out of fold or not (Peduzzi et al. 1996: ten events per variable; docs/STATISTICS.md
    has what a simulation measured). A combination of ``k`` features is reported only
    when the smaller labelled class holds at least ``MIN_EVENTS_PER_FEATURE * k`` rows.
    Below that it is *withheld*: no AUROC is given as its result, its ``level`` is
    :data:`WITHHELD`, its reason says how many rows it needs and has, and it earns no
    verdict word nor a place among the scores a comparison or a "best" pick may choose.
    The scores it would combine are judged alone as before.

    References
    ----------
    Peduzzi, P., Concato, J., Kemper, E., Holford, T. R. and Feinstein, A. R. (1996). A simulation
    study of the number of events per variable in logistic regression analysis. *Journal of
    Clinical Epidemiology* 49(12), 1373-1379.

    Examples
    --------
    >>> withheld_reason(np.repeat([1.0, 0.0], [30, 19]), n_features=2)
    'withheld: 2 features need at least 20 rows of the smaller class; there are 19'
    >>> withheld_reason(np.repeat([1.0, 0.0], [30, 20]), n_features=2)
    ''
    """
    n_features = check_int(n_features, "n_features", "withheld_reason", minimum=1)
    labels = as_labels(y_true)
    smaller = int(min(np.count_nonzero(labels == 1), np.count_nonzero(labels == 0)))
    needed = MIN_EVENTS_PER_FEATURE * n_features
    if smaller >= needed:
        return ""
    features = "1 feature needs" if n_features == 1 else f"{n_features} features need"
    return f"{WITHHELD}: {features} at least {needed} rows of the smaller class; there are {smaller}"
