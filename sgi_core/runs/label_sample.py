"""Whether the keys labelled in both runs are a sample of the keys, or were selected by the answers being equal.

Labels join to rows on their texts (:func:`~sgi_core.review.annotations.row_key`). A key
whose answer did not change between the runs carries the same rows in both, so a labels
file of the base run labels it in both runs at once, with the same label; a key whose
answer changed is labelled in the new run only if someone labelled its new answer. Labels
of one release thus make "labelled in both" exactly the unchanged keys, whose paired
differences are zero by construction: any regression is invisible.

A key is *changed* when the texts of its rows (question, context, response) differ between
the runs. If the ``n`` keys labelled in both runs were a random sample of the ``k``
matched keys, the number ``x`` of changed keys among them would follow the
hypergeometric law of ``n`` draws from ``k`` keys of which ``C`` changed. The sample is
refused (:func:`check_labelled_sample`) when ``x`` is implausible under that law, with
two-sided ``p = min(1, 2 min(P(X <= x), P(X >= x)))`` below :data:`MIN_SAMPLE_P`: with
``C`` changed keys not rare, that includes the case where no changed key is labelled.

The same module words the keys that carry both labels (:func:`mixed_label_note`), which
``compare`` and ``gate`` print alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult

#: Two-sided p of the hypergeometric test below which the labelled keys are not taken as a sample of the keys.
MIN_SAMPLE_P = 0.01


@dataclass(frozen=True)
class LabelledSample(JsonResult):
    """How the keys labelled in both runs sit among the changed keys.

    Attributes
    ----------
    n_keys : int
        Matched keys ``k``.
    n_changed : int
        Matched keys whose rows' texts differ between the runs (``C``).
    n_labelled_both : int
        Keys labelled in both runs (``n``).
    n_changed_labelled_both, n_changed_labelled_new : int
        Changed keys labelled in both runs (``x``), in the new run.
    expected_changed : float
        ``n C / k``: changed keys a random sample of ``n`` keys would hold on average.
    p_value : float
        The two-sided hypergeometric p of ``x`` (NaN when nothing changed or nothing is labelled in both).
    representative : bool
        ``p_value >= MIN_SAMPLE_P`` (True where the test is undefined).
    """

    n_keys: int
    n_changed: int
    n_labelled_both: int
    n_changed_labelled_both: int
    n_changed_labelled_new: int
    expected_changed: float
    p_value: float
    representative: bool


def labelled_sample(changed, labelled_base, labelled_new) -> LabelledSample:
    """The hypergeometric check of the keys labelled in both runs against the changed keys (see the module notes).

    Parameters
    ----------
    changed, labelled_base, labelled_new : array_like of bool, shape (k,)
        Per matched key.

    Examples
    --------
    >>> changed = np.arange(150) >= 85
    >>> labelled = ~changed  # a labels file of the base release: only the unchanged keys join in both
    >>> res = labelled_sample(changed, np.ones(150, bool), labelled)
    >>> res.n_changed, res.n_changed_labelled_both, res.representative
    (65, 0, False)
    """
    changed = np.asarray(changed, dtype=bool)
    labelled_new = np.asarray(labelled_new, dtype=bool)
    both = np.asarray(labelled_base, dtype=bool) & labelled_new
    k, c, n, x = len(changed), int(changed.sum()), int(both.sum()), int((changed & both).sum())
    p = math.nan
    if 0 < c < k and n:
        law = stats.hypergeom(k, c, n)
        p = float(min(1.0, 2.0 * min(law.cdf(x), law.sf(x - 1))))
    return LabelledSample(k, c, n, x, int((changed & labelled_new).sum()), n * c / k if k else math.nan, p,
                          bool(math.isnan(p) or p >= MIN_SAMPLE_P))


def sample_sentence(sample: LabelledSample) -> str:
    """How many changed keys are labelled, in one clause."""
    return (f"{sample.n_changed_labelled_both} of the {sample.n_changed} keys whose answer changed are labelled in "
            f"both runs ({sample.n_changed_labelled_new} in the new run; a random sample of {sample.n_labelled_both} "
            f"keys would hold about {sample.expected_changed:.0f})")


def check_labelled_sample(sample: LabelledSample | None) -> None:
    """Refuse keys labelled in both runs that are not a sample of the keys (see the module notes).

    Raises
    ------
    SGIInputError
    """
    if sample is None or sample.representative:
        return
    raise SGIInputError(
        f"the keys labelled in both runs are not a sample of the keys: {sample_sentence(sample)}, p = "
        f"{sample.p_value:.2g}; labels of one run's answers label the unchanged keys in both runs by their texts, so "
        "a change would go unseen", hint="Label a random sample of the new run's answers, the changed ones included "
                                         "(`python -m sgi_core sample`, or the Review page's two-runs mode), and pass "
                                         "those labels too")


#: What to do about keys whose rows carry both labels.
MIXED_LABELS_FIX = "label each key's rows alike, or match on a key that tells the rows apart (--key)"


def mixed_label_note(n_mixed: int) -> str:
    """The keys whose rows carry both labels, as ``compare`` and ``gate`` say it ("" when none)."""
    return f"{n_mixed} keys carry both labels (their rows disagree) and are left out" if n_mixed else ""


def no_labels_sentence(n_mixed: int) -> str:
    """Why the labels decide nothing, when no key is labelled in either run, as ``compare`` and ``gate`` say it."""
    if n_mixed:
        return (f"{mixed_label_note(n_mixed)}, and no other key is labelled in both runs' matched keys, so nothing "
                f"here says which run is more grounded; {MIXED_LABELS_FIX}")
    return ("none in either run, so nothing here says which run is more grounded; label a sample of both runs "
            "(--labels FILE, or the Review page) to decide")
