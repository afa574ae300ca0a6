"""One order whatever the files' row order: keys ranked by a stable, seeded hash of their text.

Seeded resampling (bootstrap replicates, cross-fitting folds, random review queues) draws
positions; when positions follow the rows of a file, the same rows in another order give
another interval. Ranking the keys by a hash of their text first makes every such draw a
function of the keys alone: a key's place depends on its text and the seed, not on where
its row sits in the file, nor on which other keys are present.

The hash is pandas' SipHash-2-4 of the UTF-8 text (:func:`pandas.util.hash_array`, a
fixed hash key), the same on every machine and in every process; ties (the same key
twice, or a 64-bit collision) fall back to the key's text, then to its position.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sgi_core.stats.checks import check_int


def key_hash(keys, *, seed: int = 0) -> np.ndarray:
    """Stable 64-bit hash of each key's text, salted with ``seed``.

    ``h_i = SipHash("<seed>:<key_i>")`` (:func:`pandas.util.hash_array`), as ``uint64``.

    Parameters
    ----------
    keys : array_like of shape (n,)
        Keys of any type; each is hashed as ``str(key)``.
    seed : int, default 0
        Another seed gives an unrelated order.

    Examples
    --------
    >>> bool(key_hash(["a", "b"])[0] == key_hash(["b", "a"])[1])
    True
    """
    seed = check_int(seed, "seed", "key_hash", minimum=0)
    text = np.array([f"{seed}:{key}" for key in np.asarray(keys, dtype=object).ravel()], dtype=object)
    return pd.util.hash_array(text, categorize=False)


def canonical_order(keys, *, seed: int = 0) -> np.ndarray:
    """Positions of ``keys`` sorted by :func:`key_hash` (ties by the key's text, then by position).

    The same keys in any order give the same sequence of keys back:
    ``keys[canonical_order(keys)]`` is unchanged by shuffling ``keys``, up to the
    position of identical keys.

    Parameters
    ----------
    keys : array_like of shape (n,)
    seed : int, default 0

    Examples
    --------
    >>> keys = np.array(["q1", "q2", "q3", "q4"], dtype=object)
    >>> first = keys[canonical_order(keys)]
    >>> bool((keys[::-1][canonical_order(keys[::-1])] == first).all())
    True
    """
    keys = np.asarray(keys, dtype=object).ravel()
    text = np.array([str(key) for key in keys], dtype=object)
    return np.lexsort((np.arange(len(keys)), text, key_hash(keys, seed=seed)))
