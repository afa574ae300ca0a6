"""The order labels were given, per row of a run: what a confidence sequence of two runs reads its keys in.

A confidence sequence is valid in the order its observations arrive; read in another
order after each new label, its intervals stop being nested. The order of a label is:

* from labels sources (``--labels``): the sources in the order given, and within one the
  order of its labels (:class:`~sgi_core.review.label_sources.LabelSet` keeps them as they
  were given: an annotations file's keys in the order first decided, a labels table's rows
  by its ``labelled_at`` column, else in row order);
* from the runs' own label columns: no order is known. The keys are then read in a
  fixed order, the rank of a hash of each row's texts
  (:func:`~sgi_core.review.annotations.row_key`), the same whatever the files' row order
  and whatever column matches the runs.

A key labelled in both runs enters the sequence at the later of its two labels
(:func:`sequence_order`).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.stats.confidence_sequence import SequentialInterval, sequential_mean

#: A run frame's column holding each row's label order (NaN unlabelled).
LABEL_ORDER = "label_order"
#: How the sequence's keys were ordered.
LABELLING_ORDER = "the order the labels were given"
KEY_HASH_ORDER = "a fixed order (a hash of each key): the labels carry no order"
FIXED_ORDER = ("a fixed order (a hash of each row's texts): the labels carry no order; give them as a --labels file, "
               "in the order they were given or with a labelled_at column")


def label_order(row_keys, label_sets) -> np.ndarray:
    """Each row's place in the order its label was given (NaN where no source labels it).

    ``order = s * M + p`` for the first source ``s`` (0-based, in the order given) that
    labels the row's key, at position ``p`` among that source's labels, with ``M`` the
    largest number of labels of one source.

    Examples
    --------
    >>> from sgi_core.review.label_sources import LabelSet
    >>> a = LabelSet(pd.DataFrame({"key": ["k2", "k1"], "value": [1.0, 0.0]}), "a")
    >>> b = LabelSet(pd.DataFrame({"key": ["k3"], "value": [0.0]}), "b")
    >>> label_order(["k1", "k2", "k3", "k4"], [a, b]).tolist()
    [1.0, 0.0, 2.0, nan]
    """
    keys = pd.Index(np.asarray(row_keys, dtype=object))
    order = np.full(len(keys), np.nan)
    stride = max((len(labels.labels) for labels in label_sets), default=0)
    for source, labels in enumerate(label_sets):
        ranks = pd.Series(source * stride + np.arange(len(labels.labels), dtype=np.float64),
                          index=labels.labels["key"].to_numpy())
        order = np.where(np.isnan(order), ranks.reindex(keys).to_numpy(dtype=np.float64), order)
    return order


def fixed_order(row_keys, labels) -> np.ndarray:
    """The rank of each labelled row's key text (a SHA-256 hex, so a hash order); NaN where unlabelled.

    Examples
    --------
    >>> fixed_order(["c9", "0a", "5f"], [1.0, float("nan"), 0.0]).tolist()
    [1.0, nan, 0.0]
    """
    keys = np.asarray(row_keys, dtype=object)
    labelled = ~np.isnan(np.asarray(labels, dtype=np.float64))
    order = np.full(len(keys), np.nan)
    order[labelled] = pd.Series(keys[labelled]).rank(method="dense").to_numpy() - 1.0
    return order


def sequence_order(order_base, order_new, both) -> np.ndarray:
    """Positions of the keys labelled in both runs, by the later of their two labels, then by the earlier one.

    Examples
    --------
    >>> sequence_order([3.0, 0.0, 1.0], [2.0, 3.0, 1.0], np.array([True, True, True])).tolist()
    [2, 1, 0]
    """
    order_base, order_new = np.asarray(order_base, dtype=np.float64), np.asarray(order_new, dtype=np.float64)
    labelled = np.flatnonzero(both)
    later, earlier = np.fmax(order_base, order_new)[labelled], np.fmin(order_base, order_new)[labelled]
    return labelled[np.lexsort((earlier, later))]


def _key_hash_order(keys, both) -> np.ndarray:
    """Positions of the keys labelled in both, sorted by the SHA-256 of each key's text."""
    labelled = np.flatnonzero(both)
    digests = np.array([hashlib.sha256(str(key).encode("utf-8")).hexdigest() for key in keys[labelled]], dtype=object)
    return labelled[np.argsort(digests, kind="stable")]


def sequential_difference(halluc_base, halluc_new, both, *, keys, order=None, orders=(None, None),
                          label_order: str = LABELLING_ORDER,
                          confidence: float = 0.95) -> tuple[SequentialInterval, str]:
    """The confidence sequence of ``y_new - y_base`` over the keys labelled in both, and how they were ordered.

    The keys labelled in both runs are a sample drawn without replacement from the ``k``
    matched keys, so the sequence is the finite-population one
    (:func:`~sgi_core.stats.confidence_sequence.sequential_mean` with ``population=k``):
    it bounds the rate difference over every matched key.

    Parameters
    ----------
    halluc_base, halluc_new : ndarray of shape (k,)
        1.0 hallucinated, 0.0 grounded, NaN unlabelled, per matched key.
    both : ndarray of bool, shape (k,)
        Keys labelled in both runs.
    keys : ndarray of shape (k,)
        The matched keys (the fixed order's hash when no order is known).
    order : array_like of int, optional
        Positions of the matched keys in the order they were labelled.
    orders : (ndarray or None, ndarray or None)
        Each run's per-key label order (:data:`LABEL_ORDER`), read by :func:`sequence_order`.
    label_order : str
        How ``orders`` were made.

    Returns
    -------
    SequentialInterval, str
    """
    if order is not None:
        order = np.asarray(order)
        if order.shape != both.shape or not np.array_equal(np.sort(order), np.arange(len(both))):
            raise SGIInputError(f"'order' must list each of the {len(both)} matched keys' positions once",
                                hint="Pass the positions 0..k-1 in the order the keys were labelled")
        ranked, described = order[both[order]], LABELLING_ORDER
    elif orders[0] is not None and orders[1] is not None:
        ranked, described = sequence_order(orders[0], orders[1], both), label_order
    else:
        ranked, described = _key_hash_order(np.asarray(keys, dtype=object), both), KEY_HASH_ORDER
    return sequential_mean(halluc_new[ranked] - halluc_base[ranked], lower=-1.0, upper=1.0, confidence=confidence,
                           population=len(both)), described
