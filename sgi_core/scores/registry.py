"""What a score is: one registry naming, orienting, describing and computing every per-row score the library knows.

Every face reads a score's display name, direction, description and how it is made from its
:class:`ScoreSpec` in :data:`SCORES`, and nowhere else, so that the report, the pages and the gates
cannot disagree about a score.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sgi_core.columns import GROUNDING_PREFIX, GROUNDING_SCORE_SUFFIXES
from sgi_core.errors import SGIInputError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

#: What a score's raw high values mean.
DIRECTIONS = ("grounded", "hallucinated")
#: Where a score comes from.
KINDS = ("sgi", "angle", "baseline", "detector", "probability", "judge", "column")
#: Prefix of the columns the LLM judge writes (:mod:`sgi_core.judge.metrics`), every one higher = grounded.
JUDGE_PREFIX = "judge_"
#: The judge's columns that record a run, not a score: each row's status, the model and the prompt version.
JUDGE_RUN_COLUMNS = ("judge_status", "judge_model", "judge_prompt_version")
#: Suffix of the judge's column saying where a metric's value came from (log-probabilities or the answer).
JUDGE_SOURCE_SUFFIX = "_source"
#: Prefix of an oriented column whose raw values were negated.
NEGATED_PREFIX = "neg_"


@dataclass(frozen=True)
class ScoreSpec:
    """One per-row score.

    Attributes
    ----------
    name : str
        The column as the library (or the file) writes it, raw.
    label : str
        The display name, in the oriented direction.
    higher_is : {"grounded", "hallucinated"}
        What a high *raw* value means.
    description : str
        What it measures, one clause.
    needs : tuple of str
        What computing it takes: ``"texts"``, ``"embeddings"``, ``"labels"`` (fitted on
        labelled folds), ``"an LLM judge"``, ``"the file"``.
    kind : str
        One of :data:`KINDS`.
    compute : str
        ``"module:function"``: the function computing the raw values from the scored frame
        (``function(frame) -> array``), imported when first called; ``""`` for a score read
        from the frame's column ``name`` (SGI and the angles, written by scoring; a file's
        own columns).
    family : str
        The detector family whose ``compute`` writes the column
        (:data:`sgi_core.detectors.registry.FAMILIES`), ``"combined"`` for the out-of-fold
        combination; ``""`` for any other score.
    reversed_label : str
        A trivial score's display name when it separates better reversed on a file
        (default: its label, "reversed").
    """

    name: str
    label: str
    higher_is: str = "grounded"
    description: str = ""
    needs: tuple[str, ...] = ()
    kind: str = "column"
    compute: str = ""
    family: str = ""
    reversed_label: str = ""

    def __post_init__(self):
        object.__setattr__(self, "needs", tuple(self.needs))
        if self.higher_is not in DIRECTIONS:
            raise ValueError(f"higher_is must be one of {DIRECTIONS}; got {self.higher_is!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {self.kind!r}")
        if self.compute and self.compute.count(":") != 1:
            raise ValueError(f"compute must be 'module:function'; got {self.compute!r}")

    @property
    def oriented_name(self) -> str:
        """The column name of the oriented values: ``name``, or ``neg_<name>`` when negated."""
        return self.name if self.higher_is == "grounded" else f"{NEGATED_PREFIX}{self.name}"

    def oriented(self, values, *, source: str = "<input>") -> np.ndarray:
        """The raw values as floats oriented higher = grounded: ``-raw`` when ``higher_is`` is "hallucinated".

        The one orientation of every score. Numbers or numeric text are read as they are;
        empty cells are NaN (a row the score does not cover).

        Raises
        ------
        SGIInputError
            Naming the rows that hold text that is not a number, or an infinite value
            (``source`` and the column ``name`` in the message).

        Examples
        --------
        >>> ScoreSpec("x", "x", "hallucinated").oriented([0.5, 0.0])
        array([-0.5, -0. ])
        >>> ScoreSpec("x", "x", "hallucinated").oriented(["0.9", "", "0.2"])
        array([-0.9,  nan, -0.2])
        """
        import numpy as np
        import pandas as pd

        raw = values.reset_index(drop=True) if isinstance(values, pd.Series) else pd.Series(np.asarray(values))
        if pd.api.types.is_numeric_dtype(raw):
            # A numeric column (θ(r,c) on millions of rows) is read as it is, never boxed cell by cell.
            blank = raw.isna()
            numbers = raw.astype(np.float64)
        else:
            blank = raw.isna() | raw.astype(str).str.strip().eq("")
            numbers = pd.to_numeric(raw.where(~blank), errors="coerce")
        bad = numbers.isna() & ~blank
        if bad.any():
            raise SGIInputError("detector scores must be numbers", source=source, column=self.name,
                                rows=(np.flatnonzero(bad.to_numpy()) + 1).tolist(),
                                hint="Clean the column or choose another one as the detector score")
        oriented = numbers.to_numpy(dtype=np.float64)
        if np.isinf(oriented).any():
            raise SGIInputError("detector scores must be finite", source=source, column=self.name,
                                rows=(np.flatnonzero(np.isinf(oriented)) + 1).tolist())
        return -oriented if self.higher_is == "hallucinated" else oriented

    def raw_values(self, frame: pd.DataFrame):
        """The raw values of this score on a scored frame: computed by ``compute``, else its column as it is.

        Raises
        ------
        SGIInputError
            When the frame lacks the column, saying what writes it.

        Examples
        --------
        >>> import pandas as pd
        >>> SCORES["neg_response_length"].raw_values(pd.DataFrame({"response": ["Paris"], "context": ["x"]})).tolist()
        [-5]
        """
        if self.compute:
            module, function = self.compute.split(":")
            return getattr(importlib.import_module(module), function)(frame)
        if self.name in frame.columns:
            return frame[self.name]
        if self.family:
            hint = (f"Compute it with python -m sgi_core report --detectors {self.family}" if self.family != "combined"
                    else "Compute it with python -m sgi_core report --detectors (it is the families' combination)")
        elif self.kind in ("sgi", "angle"):
            hint = "Score the file first (python -m sgi_core score)"
        else:
            hint = "Choose a column the file has"
        raise SGIInputError(f"the score '{self.name}' needs the column '{self.name}', which the frame lacks",
                            column=self.name, hint=hint)


_BASELINES = "sgi_core.scores.baselines"
_EMB = ("embeddings",)
_CROSSFIT = ("embeddings", "labels", "reference set")
_CLAIMS = ("texts", "embeddings")

#: Every registered score by raw column name, in the order the faces list them.
SCORES: dict[str, ScoreSpec] = {spec.name: spec for spec in (
    ScoreSpec("sgi", "SGI", "grounded", "θ(r,q) / θ(r,c): how much nearer the response is to its context than "
              "to its question", _EMB, "sgi"),
    ScoreSpec("theta_rq", "θ(r,q) response-question", "grounded",
              "angle between response and question alone (farther = grounded)", _EMB, "angle",
              reversed_label="θ(r,q) alone, reversed (smaller = grounded)"),
    ScoreSpec("theta_rc", "θ(r,c) response-context, negated", "hallucinated",
              "angle between response and context (nearer = grounded)", _EMB, "angle"),
    ScoreSpec("theta_qc", "θ(q,c) question-context, negated", "hallucinated",
              "angle between question and context (a context nearer its question)", _EMB, "angle"),
    # The computed baselines: each names the function of the scored frame that computes it.
    ScoreSpec("neg_response_length", "response length (shorter = grounded)", "grounded",
              "minus the response length in characters (shorter = grounded)", ("texts",), "baseline",
              f"{_BASELINES}:neg_response_length", reversed_label="response length (longer = grounded)"),
    ScoreSpec("lexical_groundedness", "word overlap with the context", "grounded",
              "share of non-stopword response tokens found in the context", ("texts",), "baseline",
              f"{_BASELINES}:word_overlap", reversed_label="word overlap, reversed (less = grounded)"),
    ScoreSpec("p_grounded", "calibrated P(grounded)", "grounded",
              "a calibration session's probability that the row is grounded", ("embeddings", "labels"), "probability"),
    # The detector families' scores (sgi_core.detectors.registry takes them from here).
    ScoreSpec("displacement_consistency", "displacement consistency", "grounded",
              "cosine of the response's displacement from its question with its neighbours' mean grounded "
              "displacement", _CROSSFIT, "detector", family="reference"),
    ScoreSpec("expected_response_deviation", "expected response deviation, negated", "grounded",
              "minus the angle between the response and the one its neighbours' mean displacement predicts",
              _CROSSFIT, "detector", family="reference"),
    ScoreSpec("displacement_magnitude", "displacement magnitude (z)", "grounded",
              "the displacement's length against its neighbours', as a z-score", _CROSSFIT, "detector",
              family="reference"),
    ScoreSpec("tangent_space_residual", "tangent space residual, negated", "grounded",
              "minus the share of the displacement outside its neighbours' principal directions", _CROSSFIT,
              "detector", family="reference"),
    ScoreSpec("lsgi", "LSGI (local SGI)", "grounded", "SGI over the median SGI of its neighbours' grounded answers",
              _CROSSFIT, "detector", family="reference"),
    ScoreSpec("claim_min_support", "claim support, weakest sentence", "grounded",
              "the weakest response sentence's best cosine to a context piece", _CLAIMS, "detector", family="claims"),
    ScoreSpec("claim_mean_support", "claim support, mean sentence", "grounded",
              "the mean response sentence's best cosine to a context piece", _CLAIMS, "detector", family="claims"),
    ScoreSpec("specifics_unsupported_share", "unsupported specifics (share), negated", "hallucinated",
              "share of the response's numbers and names absent from the context", ("texts",), "detector",
              family="specifics"),
    ScoreSpec("combined", "combined (logistic, out of fold)", "grounded",
              "logistic combination of SGI, the angles, the baselines and the computed scores, fitted out of fold",
              ("embeddings", "labels"), "detector", family="combined"),
)}
#: The computed baselines, in registry order.
BASELINES = tuple(name for name, spec in SCORES.items() if spec.kind == "baseline")
#: The trivial scores every detector must beat: they cost nothing to compute (the baselines, then θ(r,q) alone).
TRIVIAL = (*BASELINES, "theta_rq")
#: Each trivial score's display name when it separates better reversed on a file.
REVERSED_LABELS = {name: SCORES[name].reversed_label or f"{SCORES[name].label}, reversed" for name in TRIVIAL}
#: How the trivial baselines are named where they stand alone (θ(r,q) "alone": without θ(r,c)).
BASELINE_LABELS = {name: ("θ(r,q) alone" if name == "theta_rq" else SCORES[name].label) for name in TRIVIAL}


_GROUNDING_WHAT = {"min": ("weakest sentence", "the weakest response sentence's"),
                   "mean": ("mean sentence", "the mean response sentence's")}


def grounding_spec(column: str) -> ScoreSpec | None:
    """The spec of a grounding model's score column ``grounding_<name>_min`` / ``_mean``, else None.

    Examples
    --------
    >>> grounding_spec("grounding_nli_min").label
    'grounding model nli: weakest sentence'
    >>> grounding_spec("grounding_nli_chunks") is None
    True
    """
    if not column.startswith(GROUNDING_PREFIX):
        return None
    name, _, suffix = column.removeprefix(GROUNDING_PREFIX).rpartition("_")
    if not name or suffix not in GROUNDING_SCORE_SUFFIXES:
        return None
    label, whose = _GROUNDING_WHAT[suffix]
    return ScoreSpec(column, f"grounding model {name}: {label}", "grounded",
                     f"{whose} P(supported) from the grounding model '{name}', best over context chunks",
                     ("texts", "a grounding model"), "detector")


def column_spec(column: str, *, higher_is: str = "grounded") -> ScoreSpec:
    """The spec of a file's own numeric column.

    ``judge_*`` columns are the LLM judge's, higher = grounded, unless given otherwise.

    Examples
    --------
    >>> column_spec("my_detector", higher_is="hallucinated").oriented_name
    'neg_my_detector'
    """
    if column.startswith(JUDGE_PREFIX) and higher_is == "grounded":
        return ScoreSpec(column, f"judge: {column.removeprefix(JUDGE_PREFIX).replace('_', ' ')}", "grounded",
                         "an LLM judge's score in [0, 1]", ("an LLM judge",), "judge")
    if higher_is == "grounded" and grounding_spec(column) is not None:
        return grounding_spec(column)
    suffix = ", negated" if higher_is == "hallucinated" else ""
    return ScoreSpec(column, f"{column} (file column){suffix}", higher_is, "a numeric column of the file",
                     ("the file",), "column")


def spec_for(name: str) -> ScoreSpec:
    """The spec of a raw or oriented column name: registered, judge, or a file column taken as it is.

    ``neg_<name>`` of a registered score negated on orientation resolves to that score;
    any other ``neg_<column>`` is a file column given as hallucinated-high.

    Notes
    -----
    Every face (the report, its JSON, the pages, ``compare``, ``gate``, the review queues,
    the detector families) reads a score's display name, direction, description and how it
    is made from its :class:`ScoreSpec` here, and nowhere else; the oriented values of a
    file come from one function, :func:`sgi_core.scores.oriented.oriented_scores`. A score is *oriented* **higher =
    grounded** before it is judged: a spec whose raw values mean the opposite
    (``higher_is="hallucinated"``) is negated and its column renamed ``neg_<name>``
    (:attr:`ScoreSpec.oriented_name`).

    The registry holds SGI and the three angles, the trivial baselines, the detector
    families' scores (:mod:`sgi_core.detectors.registry` takes its entries from here), the
    calibrated probability of a session, and the LLM judge's columns by their prefix
    (``judge_*``, all higher = grounded) and the grounding models' by theirs
    (``grounding_<name>_min`` / ``_mean``, :func:`grounding_spec`). Any other numeric column of a user's file is
    described by :func:`column_spec`.

    Examples
    --------
    >>> spec_for("neg_theta_rc").label, spec_for("neg_theta_rc").higher_is
    ('θ(r,c) response-context, negated', 'hallucinated')
    >>> spec_for("judge_answer_consistency").kind
    'judge'
    """
    if name in SCORES:
        return SCORES[name]
    raw = name.removeprefix(NEGATED_PREFIX)
    if name.startswith(NEGATED_PREFIX):
        if raw in SCORES and SCORES[raw].higher_is == "hallucinated":
            return SCORES[raw]
        return column_spec(raw, higher_is="hallucinated")
    return column_spec(name)
