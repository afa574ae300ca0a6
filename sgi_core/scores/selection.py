"""Which scores a file is judged on: the one chooser the report, the detectors, the runs, the gates and the pages call.

A face says what it has (the file's columns, the detector families' computed columns, the
columns declared as detectors, other numeric columns) and :func:`judged_scores` answers with
the registry's :class:`~sgi_core.scores.registry.ScoreSpec` of each score, in the order every
face lists them, so that no face keeps its own list of names.
"""

from __future__ import annotations

from sgi_core.columns import GROUNDING_PREFIX
from sgi_core.scores.registry import (
    BASELINES,
    JUDGE_PREFIX,
    JUDGE_RUN_COLUMNS,
    JUDGE_SOURCE_SUFFIX,
    NEGATED_PREFIX,
    SCORES,
    ScoreSpec,
    column_spec,
    grounding_spec,
    spec_for,
)


def carried_names() -> tuple[str, ...]:
    """The registered scores a file may carry as columns, in registry order.

    SGI, the angles, a session's probability, the detector families' per-row scores: the
    baselines are computed from the texts and ``combined`` is fitted across the scores, so
    neither is read from a file. Read from :data:`~sgi_core.scores.registry.SCORES` when
    called, so that an entry added to the registry is carried at once.
    """
    return tuple(name for name, spec in SCORES.items() if spec.kind != "baseline" and spec.family != "combined")


def trivial_names(columns) -> tuple[str, ...]:
    """The trivial scores a frame with ``columns`` allows: the baselines with a response and a context, θ(r,q) with
    its column.

    Examples
    --------
    >>> trivial_names(["response", "context", "theta_rq"])
    ('neg_response_length', 'lexical_groundedness', 'theta_rq')
    >>> trivial_names(["theta_rq"])
    ('theta_rq',)
    """
    has = set(columns)
    return (*(BASELINES if {"response", "context"} <= has else ()), *(("theta_rq",) if "theta_rq" in has else ()))


def declared_spec(text: str) -> ScoreSpec:
    """The spec of a column declared as a detector: ``COLUMN``, ``COLUMN:grounded`` or ``COLUMN:hallucinated``.

    Examples
    --------
    >>> declared_spec("judge_halluc:hallucinated").oriented_name
    'neg_judge_halluc'
    >>> declared_spec("faithfulness").higher_is
    'grounded'
    """
    column, _, direction = text.rpartition(":") if text.endswith((":grounded", ":hallucinated")) else (text, "", "")
    return column_spec(column, higher_is=direction or "grounded")


def named_score(name: str) -> ScoreSpec:
    """The spec of a score a user names (``gate --score-column``, a policy's score column).

    A registered score by its name or its oriented name (``theta_rc`` and ``neg_theta_rc``
    are both θ(r,c), negated as its entry says); any other name is the file's column as it
    is (a judge's or a grounding model's by its prefix), even one that starts with ``neg_``.

    Examples
    --------
    >>> named_score("theta_rc").oriented_name, named_score("neg_theta_rc").oriented_name
    ('neg_theta_rc', 'neg_theta_rc')
    >>> named_score("neg_my_column").oriented_name
    'neg_my_column'
    """
    registered = name in SCORES or name.removeprefix(NEGATED_PREFIX) in SCORES
    return spec_for(name) if registered else column_spec(name)


def is_score_column(column: str) -> bool:
    """Whether a file's column ``column`` is a score by its name: registered, a judge's or a grounding model's.

    A grounding model's other columns (its chunk count, its cut flag) are not scores.

    Examples
    --------
    >>> is_score_column("theta_rc"), is_score_column("judge_faithfulness"), is_score_column("grounding_nli_chunks")
    (True, True, False)
    >>> is_score_column("judge_model"), is_score_column("judge_groundedness_source")  # the judge's records
    (False, False)
    """
    if column.startswith(GROUNDING_PREFIX):
        return grounding_spec(column) is not None
    return column in carried_names() or (column.startswith(JUDGE_PREFIX) and column not in JUDGE_RUN_COLUMNS
                                         and not column.endswith(JUDGE_SOURCE_SUFFIX))


def judged_scores(columns, *, score: str | None = "sgi", trivial: bool = True, computed=(), declared=(),
                  others=()) -> tuple[ScoreSpec, ...]:
    """Every score a file with ``columns`` is judged on, each once, in the order the faces list them.

    Parameters
    ----------
    columns : iterable of str
        The (scored) file's columns.
    score : str or None, default "sgi"
        The score the file is judged on first (a registered or oriented name); None for none.
    trivial : bool, default True
        Include the trivial scores the columns allow (:func:`trivial_names`).
    computed : iterable of str or ScoreSpec
        Columns the detector families computed on the file, or their families' specs
        (``combined`` last, whatever its place here).
    declared : iterable of str or ScoreSpec
        Columns declared as detectors (:func:`declared_spec` text, or a spec).
    others : iterable of str
        Other numeric columns taken as scores as they are (higher = grounded).

    Returns
    -------
    tuple of ScoreSpec
        ``score``; the trivial scores; the declared columns; the registered, judge and
        grounding-model columns the file carries; the computed scores; the others; then
        ``combined`` when computed. A score met twice is kept at its first place, so a
        declared column keeps the direction it was declared with.

    Examples
    --------
    >>> [s.oriented_name for s in judged_scores(["response", "context", "theta_rq", "theta_rc", "judge_x", "sgi"],
    ...                                          declared=["h:hallucinated"])]
    ['sgi', 'neg_response_length', 'lexical_groundedness', 'theta_rq', 'neg_h', 'neg_theta_rc', 'judge_x']
    """
    columns = [str(column) for column in columns]
    computed = [item if isinstance(item, ScoreSpec) else spec_for(str(item)) for item in computed]
    specs = [spec_for(score)] if score is not None else []
    if trivial:
        specs += [SCORES[name] for name in trivial_names(columns)]
    specs += [item if isinstance(item, ScoreSpec) else declared_spec(item) for item in declared]
    specs += [SCORES[name] for name in carried_names() if name in columns]
    specs += [spec_for(column) for column in columns if column not in SCORES and is_score_column(column)]
    specs += [spec for spec in computed if spec.family != "combined"]
    specs += [column_spec(column) for column in others]
    specs += [spec for spec in computed if spec.family == "combined"]
    chosen = {}
    for spec in specs:
        if spec.name not in chosen and spec.oriented_name not in {s.oriented_name for s in chosen.values()}:
            chosen[spec.name] = spec
    return tuple(chosen.values())
