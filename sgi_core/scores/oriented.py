"""The oriented scores of a file, by name: the one table every face judges, ranks or draws.

:func:`oriented_scores` turns score names (registered, ``neg_<name>``, ``judge_*`` or a
file's own numeric column) into a frame of values oriented **higher = grounded**: each
score's :class:`~sgi_core.scores.registry.ScoreSpec` says how its raw values are made
(its column, its ``compute`` function, its detector family's column) and whether they
are negated (:meth:`~sgi_core.scores.registry.ScoreSpec.oriented`, the one orientation, which also checks
that a column holds numbers).
"""

from __future__ import annotations

import pandas as pd

from sgi_core.scores.registry import ScoreSpec, spec_for


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
        out[spec.oriented_name] = spec.oriented(raw, source=source)
    return pd.DataFrame(out, index=frame.index, columns=list(out))
