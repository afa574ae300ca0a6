"""Row selection that does not copy whole text columns.

A frame read from Parquet keeps each text column as an Arrow array in many chunks
(one per record batch). pandas' ``frame.iloc[positions]`` and ``frame[mask]`` both
hand row positions to Arrow's ``take``, which first concatenates every chunk of the
column: picking 300 rows of a 2,000,000-row file copied its whole context column
(about 1 GB). Arrow's ``filter`` selects within each chunk, so :func:`take_rows`
filters Arrow-backed columns by a boolean mask itself and reorders only the rows it
selected.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa


def take_rows(frame: pd.DataFrame, positions) -> pd.DataFrame:
    """``frame.iloc[positions]`` without concatenating chunked Arrow columns.

    Parameters
    ----------
    frame : DataFrame
    positions : array_like of int
        0-based row positions, in any order, repeats and negative positions allowed
        as ``iloc`` allows them.

    Returns
    -------
    DataFrame
        Equal to ``frame.iloc[positions]``, index included.

    Raises
    ------
    IndexError
        For a position outside the frame, as ``iloc`` raises.

    Examples
    --------
    >>> frame = pd.DataFrame({"text": ["a", "b", "c", "d"]})
    >>> take_rows(frame, [3, 1, 3])["text"].tolist()
    ['d', 'b', 'd']
    """
    positions = np.asarray(positions, dtype=np.int64).ravel()
    n = len(frame)
    if ((positions < -n) | (positions >= n)).any():
        raise IndexError(f"positions out of bounds for a frame of {n} rows")
    positions = np.where(positions < 0, positions + n, positions)
    chosen = np.unique(positions)
    mask = np.zeros(n, dtype=bool)
    mask[chosen] = True
    arrow_mask = pa.array(mask)
    columns = [_filtered(frame.iloc[:, i], chosen, arrow_mask) for i in range(frame.shape[1])]
    selected = pd.concat(columns, axis=1) if columns else frame.iloc[chosen]
    selected.index = frame.index[chosen]
    selected.columns = frame.columns
    if np.array_equal(chosen, positions):
        return selected
    # Few rows by now: reordering (and repeating) them takes from a small frame.
    return selected.iloc[np.searchsorted(chosen, positions)]


def _filtered(column: pd.Series, chosen: np.ndarray, arrow_mask) -> pd.Series:
    """The rows at sorted positions ``chosen``; an Arrow-backed column through Arrow's filter."""
    if isinstance(column.array, (pd.arrays.ArrowExtensionArray, pd.arrays.ArrowStringArray)):
        picked = column.array.__arrow_array__().filter(arrow_mask)
        return pd.Series(column.dtype.__from_arrow__(picked), name=column.name)
    return column.iloc[chosen].reset_index(drop=True)
