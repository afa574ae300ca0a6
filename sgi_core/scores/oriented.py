"""The oriented scores of a file, by name: the one table every face judges, ranks or draws.

:func:`oriented_scores` turns score names (registered, ``neg_<name>``, ``judge_*`` or a
file's own numeric column) into a frame of values oriented **higher = grounded**: each
score's :class:`~sgi_core.scores.registry.ScoreSpec` says how its raw values are made
(its column, its ``compute`` function, its detector family's column) and whether they
are negated. :func:`orient_detector_score` is the one check that a column holds numbers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError
from sgi_core.scores.registry import DIRECTIONS, ScoreSpec, spec_for
from sgi_core.stats.checks import check_choice


def orient_detector_score(values, *, higher_is: str = "grounded", source: str = "<input>",
                          column: str = "score") -> np.ndarray:
    """Read a score column as numbers oriented so that higher = grounded.

    Parameters
    ----------
    values : array_like
        Numbers or numeric text; empty cells are NaN (row not scored by the detector).
    higher_is : {"grounded", "hallucinated"}
        What a high raw value means. ``"hallucinated"`` scores are negated.
    source, column : str
        Used in error messages.

    Raises
    ------
    SGIInputError
        Naming the rows that hold text that is not a number, or an infinite value.

    Examples
    --------
    >>> orient_detector_score(["0.9", "", "0.2"], higher_is="hallucinated")
    array([-0.9,  nan, -0.2])
    """
    check_choice(higher_is, "higher_is", "orient_detector_score", DIRECTIONS)
    raw = values.reset_index(drop=True) if isinstance(values, pd.Series) else pd.Series(values)
    if pd.api.types.is_numeric_dtype(raw):
        # A numeric column (θ(r,c) on millions of rows) is read as it is, never boxed cell by cell.
        blank = raw.isna()
        numbers = raw.astype(np.float64)
    else:
        blank = raw.isna() | raw.astype(str).str.strip().eq("")
        numbers = pd.to_numeric(raw.where(~blank), errors="coerce")
    bad = numbers.isna() & ~blank
    if bad.any():
        rows = (np.flatnonzero(bad.to_numpy()) + 1).tolist()
        raise SGIInputError(
            "detector scores must be numbers", source=source, column=column, rows=rows,
            hint="Clean the column or choose another one as the detector score",
        )
    oriented = numbers.to_numpy(dtype=np.float64)
    if np.isinf(oriented).any():
        rows = (np.flatnonzero(np.isinf(oriented)) + 1).tolist()
        raise SGIInputError("detector scores must be finite", source=source, column=column, rows=rows)
    return -oriented if higher_is == "hallucinated" else oriented


def oriented_scores(frame: pd.DataFrame, names, *, source: str = "<input>") -> pd.DataFrame:
    """The scores ``names`` of a (scored) frame, each oriented higher = grounded, in one frame.

    Each name is resolved by :func:`~sgi_core.scores.registry.spec_for`: a registered
    score (``sgi``, ``theta_rc``, ``neg_response_length``, a detector family's score),
    its oriented name (``neg_theta_rc``), an LLM judge's ``judge_*`` column, or any
    numeric column of the file (``neg_<column>`` for a column where high means
    hallucinated). Its raw values are those of
    :meth:`~sgi_core.scores.registry.ScoreSpec.raw_values` (the column, or its
    ``compute`` function of the frame); a score whose raw high values mean hallucinated
    is negated: ``oriented = -raw``.

    Parameters
    ----------
    frame : DataFrame
        A scored frame (:func:`sgi_core.scoring.score_table`), or any frame holding the
        columns the scores read.
    names : iterable of str or ScoreSpec
        Score names, or specs (:func:`~sgi_core.scores.registry.column_spec` of a
        file's column, whatever its name looks like).
    source : str, default "<input>"
        The file's name, for messages.

    Returns
    -------
    DataFrame
        Indexed like ``frame``, one float column per score named by its oriented name
        (:attr:`~sgi_core.scores.registry.ScoreSpec.oriented_name`), in the order given.

    Raises
    ------
    SGIInputError
        A score whose column the frame lacks (saying what writes it), or a column
        holding text or infinite values (with its rows).

    Examples
    --------
    >>> frame = pd.DataFrame({"response": ["Paris", "A city"], "context": ["Paris", "x"], "theta_rc": [0.5, 1.0]})
    >>> oriented_scores(frame, ["neg_response_length", "theta_rc"]).to_dict("list")
    {'neg_response_length': [-5.0, -6.0], 'neg_theta_rc': [-0.5, -1.0]}
    """
    out = {}
    for name in names:
        spec = name if isinstance(name, ScoreSpec) else spec_for(str(name))
        raw = spec.raw_values(frame)
        out[spec.oriented_name] = orient_detector_score(raw, higher_is=spec.higher_is, source=source,
                                                        column=spec.name)
    return pd.DataFrame(out, index=frame.index, columns=list(out))
