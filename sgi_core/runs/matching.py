"""Two runs of a system on the same inputs, matched by a key and averaged per key.

A *run* is a table with one row per answered input: a key column (an id, or the
question text), score columns oriented **higher = grounded**, and optionally a
``label`` column (1 grounded, 0 hallucinated, NaN unlabelled). Rows are matched by
key; a key present on one side only is counted and listed, never dropped silently;
several rows under one key are averaged into one value per key (and the number of
such keys is reported), so that each key weighs the same in the paired statistics.
The matched keys come in one canonical order, ranked by a stable hash of the key
(:func:`sgi_core.stats.key_order.canonical_order`), so that every seeded resample
downstream (bootstrap, cross-fitting folds, the review queue) is the same whatever the
order of either file's rows.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.columns import STATUS_COLUMN, TEXT_COLUMNS, UNBOUNDED_SGI_STATUS
from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult
from sgi_core.runs.label_order import LABEL_ORDER
from sgi_core.runs.reading import ROW_KEY, run_row_keys
from sgi_core.stats.key_order import canonical_order

# A whole number written as text, with or without a zero fraction ("7", "7.0", "-7.00"); "007" stays an id of its own.
_WHOLE_NUMBER = re.compile(r"([+-]?(?:0|[1-9]\d*))(?:\.0+)?")


@dataclass(frozen=True)
class KeyMatch(JsonResult):
    """How the rows of two runs were matched.

    Attributes
    ----------
    key : str
        The column the rows were matched on.
    n_rows_base, n_rows_new : int
        Rows of each run.
    n_keys_base, n_keys_new : int
        Distinct keys of each run.
    n_matched : int
        Keys present in both runs.
    only_in_base, only_in_new : tuple of str
        Keys present in one run only, sorted as text; left out of every paired
        statistic.
    averaged_base, averaged_new : int
        Keys with several rows in that run, whose scores and labels were averaged.
    keyless_rows_base, keyless_rows_new : tuple of int
        1-based rows with an empty key; they cannot be matched.
    mixed_label_keys : int
        Matched keys whose rows carry both labels on one side (or both): their label
        there is NaN.
    """

    key: str
    n_rows_base: int
    n_rows_new: int
    n_keys_base: int
    n_keys_new: int
    n_matched: int
    only_in_base: tuple[str, ...]
    only_in_new: tuple[str, ...]
    averaged_base: int
    averaged_new: int
    keyless_rows_base: tuple[int, ...]
    keyless_rows_new: tuple[int, ...]
    mixed_label_keys: int


@dataclass(frozen=True)
class MatchedRuns:
    """Per-key values of two runs on their matched keys (not a JSON result: it holds arrays).

    Attributes
    ----------
    match : KeyMatch
    keys : ndarray of str, shape (k,)
        The matched keys in their canonical order (:func:`~sgi_core.stats.key_order.canonical_order`),
        the same whatever the order of either run's rows.
    base, new : DataFrame
        Indexed like ``keys``: the per-key mean of every compared score column, and
        ``label`` (per-key label, NaN when mixed or unlabelled) when the run has one.
    first_row_base, first_row_new : ndarray of int, shape (k,)
        0-based position in each input table of the first row under each key.
    scores : tuple of str
        The score columns compared (present in both runs).
    scored_rows_base, scored_rows_new : DataFrame, optional
        Indexed like ``keys``: per score, the rows under each key that carry a value
        (a key is fully scored only when as many of its rows are scored in both runs).
    changed : ndarray of bool, shape (k,), optional
        Keys whose rows' texts (question, context, response) differ between the runs; None
        when a run lacks the text columns.
    """

    match: KeyMatch
    keys: np.ndarray
    base: pd.DataFrame
    new: pd.DataFrame
    first_row_base: np.ndarray
    first_row_new: np.ndarray
    scores: tuple[str, ...]
    scored_rows_base: pd.DataFrame | None = None
    scored_rows_new: pd.DataFrame | None = None
    changed: np.ndarray | None = None


def _key_text(frame: pd.DataFrame, key: str, side: str) -> pd.Series:
    if key not in frame.columns:
        raise SGIInputError(f"the {side} run has no column '{key}' to match rows on", column=key,
                            hint=f"Columns present: {', '.join(map(str, frame.columns))}; choose one with --key")
    # Ids read as 7, 7.0 (a number column with gaps) or " 7" are the same key.
    text = frame[key].astype(object).map(_key_cell)
    return text.reset_index(drop=True)


def _key_cell(value) -> str:
    """The key as text: 7, 7.0, "7.0" and " 7" are all "7"; a missing value is ""."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    text = str(value).strip()
    whole = _WHOLE_NUMBER.fullmatch(text)
    return str(int(whole.group(1))) if whole else text


def _per_key(frame: pd.DataFrame, keys: pd.Series,
             scores: tuple[str, ...]) -> tuple[pd.DataFrame, pd.Series, int, pd.DataFrame]:
    """Per-key means of ``scores`` (and of ``label``), first row per key, keys with several rows, scored rows per
    key."""
    columns = [c for c in (*scores, "label", LABEL_ORDER) if c in frame.columns]
    values = frame[columns].reset_index(drop=True).apply(pd.to_numeric, errors="coerce").astype(np.float64)
    if "sgi" in columns and STATUS_COLUMN in frame.columns:
        # SGI ~1e8 where the response embeds as the context: a number no mean or difference can carry.
        values.loc[(frame[STATUS_COLUMN].astype(str) == UNBOUNDED_SGI_STATUS).to_numpy(), "sgi"] = np.nan
    values["_key"] = keys.to_numpy()
    # Rows sorted by key, then by value: a key's mean adds its rows in one order, whatever the file's.
    grouped = values.sort_values(["_key", *columns], kind="stable").groupby("_key", sort=False)
    means = grouped.mean()
    if "label" in columns:
        # A key whose rows disagree on the label has no label (0.5 would read as a probability).
        means.loc[(means["label"] > 0) & (means["label"] < 1), "label"] = np.nan
    if LABEL_ORDER in columns:  # a key is labelled once its last row is
        means[LABEL_ORDER] = grouped[LABEL_ORDER].max()
    first = pd.Series(np.arange(len(values)), index=keys.to_numpy()).groupby(level=0, sort=False).first()
    return means, first, int((grouped.size() > 1).sum()), grouped[list(scores)].count()


def match_runs(base: pd.DataFrame, new: pd.DataFrame, *, key: str, scores) -> MatchedRuns:
    """Match two runs' rows by ``key`` and average each score per key.

    A row whose ``sgi_status`` says its SGI is unbounded (the response embeds as its
    context, :data:`~sgi_core.columns.UNBOUNDED_SGI_STATUS`) has no SGI here: its key's
    SGI is the mean of its other rows, or missing, and is left out of SGI's comparison.

    Parameters
    ----------
    base, new : DataFrame
        The runs, one row per answer; ``label`` is used when present.
    key : str
        Column holding the key (compared as stripped text, so 7 and "7" match).
    scores : sequence of str
        Score columns to keep; those missing from either run are left out.

    Returns
    -------
    MatchedRuns

    Raises
    ------
    SGIInputError
        When a run lacks the key column or the runs share no key.

    Examples
    --------
    >>> base = pd.DataFrame({"id": ["a", "a", "b", "c"], "sgi": [1.0, 3.0, 1.0, 5.0]})
    >>> new = pd.DataFrame({"id": ["b", "a", "d"], "sgi": [0.5, 1.0, 2.0]})
    >>> m = match_runs(base, new, key="id", scores=["sgi"])
    >>> m.keys.tolist(), m.base["sgi"].tolist(), m.new["sgi"].tolist()
    (['b', 'a'], [1.0, 2.0], [0.5, 1.0])
    >>> m.match.only_in_base, m.match.only_in_new, m.match.averaged_base
    (('c',), ('d',), 1)
    """
    scores = tuple(s for s in scores if s in base.columns and s in new.columns)
    key_base, key_new = _key_text(base, key, "base"), _key_text(new, key, "new")
    keyless_base, keyless_new = np.flatnonzero(key_base == ""), np.flatnonzero(key_new == "")
    if len(keyless_base) or len(keyless_new):
        warnings.warn(f"{len(keyless_base)} base and {len(keyless_new)} new rows have an empty '{key}' and are "
                      "left out of the comparison (listed in the result)", UserWarning, stacklevel=2)
    base_means, base_first, averaged_base, base_counts = _per_key(base[key_base.to_numpy() != ""],
                                                                  key_base[key_base != ""], scores)
    new_means, new_first, averaged_new, new_counts = _per_key(new[key_new.to_numpy() != ""],
                                                              key_new[key_new != ""], scores)
    # Positions within the keyed rows back to positions in the input tables.
    base_first = pd.Series(np.flatnonzero(key_base != "")[base_first.to_numpy()], index=base_first.index)
    new_first = pd.Series(np.flatnonzero(key_new != "")[new_first.to_numpy()], index=new_first.index)
    in_new = base_means.index.isin(new_means.index)
    keys = base_means.index[in_new]
    order = canonical_order(keys.to_numpy(dtype=object))
    keys = keys[order]
    if len(keys) == 0:
        raise SGIInputError(f"the two runs share no value of '{key}'", column=key,
                            hint="Match on another column with --key (an id both runs carry)")
    base_kept, new_kept = base_means.loc[keys], new_means.loc[keys]
    mixed = len(_mixed_label_keys(base, key_base, keys) | _mixed_label_keys(new, key_new, keys))
    match = KeyMatch(
        key=key, n_rows_base=len(base), n_rows_new=len(new), n_keys_base=len(base_means),
        n_keys_new=len(new_means), n_matched=len(keys),
        only_in_base=tuple(sorted(base_means.index[~in_new])),
        only_in_new=tuple(sorted(new_means.index[~new_means.index.isin(keys)])),
        averaged_base=averaged_base, averaged_new=averaged_new,
        keyless_rows_base=tuple((keyless_base + 1).tolist()), keyless_rows_new=tuple((keyless_new + 1).tolist()),
        mixed_label_keys=mixed,
    )
    return MatchedRuns(match, keys.to_numpy(dtype=object), base_kept.reset_index(drop=True),
                       new_kept.reset_index(drop=True), base_first.loc[keys].to_numpy(),
                       new_first.loc[keys].to_numpy(), scores,
                       base_counts.loc[keys].reset_index(drop=True), new_counts.loc[keys].reset_index(drop=True),
                       _changed_keys(base, new, key_base, key_new, keys))


def _changed_keys(base: pd.DataFrame, new: pd.DataFrame, key_base: pd.Series, key_new: pd.Series,
                  keys: pd.Index) -> np.ndarray | None:
    """Whether each matched key's set of rows (by their texts' :func:`~sgi_core.runs.reading.run_row_keys`) differs."""
    if not all(ROW_KEY in frame.columns or all(column in frame.columns for column in TEXT_COLUMNS)
               for frame in (base, new)):
        return None
    rows = [pd.Series(run_row_keys(frame), index=key.to_numpy()).groupby(level=0).agg(frozenset)
            for frame, key in ((base, key_base), (new, key_new))]
    return (rows[0].reindex(keys).to_numpy() != rows[1].reindex(keys).to_numpy()).astype(bool)


def _mixed_label_keys(frame: pd.DataFrame, keys: pd.Series, matched) -> set:
    """Matched keys whose rows in ``frame`` carry both labels."""
    if "label" not in frame.columns:
        return set()
    labels = pd.Series(pd.to_numeric(frame["label"], errors="coerce").to_numpy(), index=keys.to_numpy())
    labels = labels[labels.index.isin(matched)].dropna()  # an unlabelled row disagrees with nothing
    spread = labels.groupby(level=0).agg(["min", "max"])
    return set(spread.index[spread["min"] != spread["max"]])


@dataclass(frozen=True)
class KeyChanges(JsonResult):
    """The matched keys whose score changed most, largest ``|new - base|`` first (ties in key order).

    ``row_base`` and ``row_new`` are 0-based positions in each run's table of the
    first row under the key.
    """

    score: str
    keys: tuple[str, ...]
    base: tuple[float, ...]
    new: tuple[float, ...]
    change: tuple[float, ...]
    row_base: tuple[int, ...]
    row_new: tuple[int, ...]


def largest_changes(matched: MatchedRuns, score: str, *, n: int = 20) -> KeyChanges:
    """The ``n`` keys whose per-key ``score`` moved most between the runs (keys with a NaN side left out).

    Examples
    --------
    >>> base = pd.DataFrame({"q": list("abc"), "sgi": [1.0, 1.0, 1.0]})
    >>> new = pd.DataFrame({"q": list("abc"), "sgi": [0.9, 1.5, 0.2]})
    >>> largest_changes(match_runs(base, new, key="q", scores=["sgi"]), "sgi", n=2).keys
    ('c', 'b')
    """
    if score not in matched.scores:
        raise SGIInputError(f"'{score}' is not a score of both runs", column=score,
                            hint=f"Scores of both runs: {', '.join(matched.scores)}")
    base, new = matched.base[score].to_numpy(), matched.new[score].to_numpy()
    change = new - base
    rows = np.flatnonzero(~np.isnan(change))
    order = rows[np.argsort(-np.abs(change[rows]), kind="stable")][:n]
    return KeyChanges(score, tuple(map(str, matched.keys[order])), tuple(base[order].tolist()),
                      tuple(new[order].tolist()), tuple(change[order].tolist()),
                      tuple(matched.first_row_base[order].tolist()), tuple(matched.first_row_new[order].tolist()))
