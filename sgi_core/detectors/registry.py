"""Every detector family beside SGI, declared once; each face of the workbench reads this registry.

``report --detectors``, ``score``'s flags, the JSON report, the Detectors page and the CLI help all
read a family's :class:`DetectorFamily` entry in :data:`FAMILIES`, so adding a family is its module,
its entry and its tests (docs/EXTENDING.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from sgi_core.detectors.columns import CLAIM_COLUMNS, REFERENCE_DETECTORS, SPECIFICS_COLUMNS
from sgi_core.detectors.resources import RESOURCE_OPTIONS, ResourceOption
from sgi_core.errors import SGIInputError
from sgi_core.scores.registry import SCORES, ScoreSpec

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from sgi_core.embedding import EmbeddingCache, Encoder, ProgressCallback
    from sgi_core.io.triples import TripleTable

#: What a family may read: the three texts, their embeddings (a model), the labels, a reference set of
#: labelled grounded rows, local grounding model folders.
NEEDS = ("texts", "embeddings", "labels", "reference set", "a grounding model")


#: How a family is fitted.
FITTINGS = ("per row", "cross-fitted")
#: How each judging protocol is named on screen.
PROTOCOL_LABELS = {"crossfit": "cross-fitted (honest)", "label-free": "label-free",
                   "combined (out of fold)": "out of fold (honest)"}


@dataclass(frozen=True)
class DetectorInputs:
    """What a family's ``compute`` may read.

    Attributes
    ----------
    table : TripleTable
        The rows (``question``, ``context``, ``response``; ``unscorable`` rows get NaN).
    encoder : Encoder or None
        None where no family asked for embeddings.
    cache : EmbeddingCache, optional
    batch_size : int
    progress : callable, optional
        ``progress(done, total)`` over the texts encoded.
    labels : ndarray, optional
        1 = grounded, 0 = hallucinated, NaN = unlabelled (cross-fitted families).
    folds : ndarray of int, optional
        Question-group fold of each row, -1 for rows not scored (cross-fitted families).
    resources : mapping of str -> tuple
        The loaded resources given by name, by :attr:`ResourceOption.field` (e.g.
        ``resources["grounding_models"]``); read-only, empty when none was given.
    """

    table: TripleTable
    encoder: Encoder | None = None
    cache: EmbeddingCache | None = None
    batch_size: int = 64
    progress: ProgressCallback | None = None
    labels: np.ndarray | None = None
    folds: np.ndarray | None = None
    resources: Mapping[str, tuple] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "resources", MappingProxyType({name: tuple(loaded) for name, loaded
                                                                in (self.resources or {}).items()}))


@dataclass(frozen=True)
class FamilyScores:
    """A family's per-row columns (indexed like ``table.frame``) and, by score, the leaky protocol's values.

    ``scores`` names the judged columns of a family whose scores depend on its
    resources (one pair per grounding model); other families' are their ``scores``.
    """

    columns: pd.DataFrame
    leaky: dict[str, np.ndarray] = field(default_factory=dict)
    scores: tuple[ScoreSpec, ...] = ()


@dataclass(frozen=True)
class DetectorFamily:
    """One registered detector family.

    Attributes
    ----------
    name : str
        ``report --detectors NAME``; ``score --NAME`` for a family fitted per row.
    label, explanation : str
        The checkbox text, and the one sentence the page caption and the CLI help show.
    needs : tuple of str
        What it reads (:data:`NEEDS`). A resource the user gives by name (a model folder) is
        one entry of :data:`RESOURCE_OPTIONS`, from which the commands' options, the library's
        ``resources`` keyword (:attr:`DetectorInputs.resources`) and the page's widget are made.
    fitting : {"per row", "cross-fitted"}
        Label-free, each row alone; or learnt from the grounded rows of other question-group
        folds, with the leaky protocol beside it.
    scores : tuple of ScoreSpec
        The per-row scores judged, each the :data:`sgi_core.scores.SCORES` entry that names it
        and gives its orientation (``higher_is``: a ``"hallucinated"`` score is negated before
        it is judged, so every judged score reads higher = grounded).
    columns : tuple of str
        Every per-row column ``compute`` returns (the scores and any counts): what ``score
        --NAME`` writes for a family fitted per row.
    compute : callable
        ``compute(DetectorInputs) -> FamilyScores``.
    """

    name: str
    label: str
    explanation: str
    needs: tuple[str, ...]
    fitting: str
    scores: tuple[ScoreSpec, ...]
    columns: tuple[str, ...]
    compute: Callable[[DetectorInputs], FamilyScores]

    @property
    def resource(self) -> ResourceOption | None:
        """The option through which the user gives what the family needs, if any."""
        return next((RESOURCE_OPTIONS[need] for need in self.needs if need in RESOURCE_OPTIONS), None)

    @property
    def protocol(self) -> str:
        """The judging protocol of its scores: ``"crossfit"`` or ``"label-free"``."""
        return "crossfit" if self.fitting == "cross-fitted" else "label-free"


# The families' computations are imported when a family is computed: reading the registry (the CLI's help, the
# pages' labels) must not import the embedding stack or scikit-learn.
def _reference(inputs: DetectorInputs) -> FamilyScores:
    import numpy as np
    import pandas as pd

    from sgi_core.detectors.reference import reference_scores
    from sgi_core.scoring import embed_table

    table = inputs.table
    q_emb, c_emb, r_emb, scorable = embed_table(table, inputs.encoder, cache=inputs.cache,
                                                batch_size=inputs.batch_size, progress=inputs.progress)
    rows = np.flatnonzero(scorable)
    labels = inputs.labels[rows]
    honest = reference_scores(q_emb, c_emb, r_emb, labels, fold=inputs.folds[rows])
    dishonest = reference_scores(q_emb, c_emb, r_emb, labels, protocol="leaky")
    columns = pd.DataFrame(np.nan, index=table.frame.index, columns=list(REFERENCE_DETECTORS))
    leaky = {}
    for name in REFERENCE_DETECTORS:
        columns.loc[scorable, name] = honest.scores[name]
        leaky[name] = np.full(table.n_rows, np.nan)
        leaky[name][rows] = dishonest.scores[name]
    return FamilyScores(columns, leaky)


def _claims(inputs: DetectorInputs) -> FamilyScores:
    from sgi_core.detectors.claims import claim_scores

    return FamilyScores(claim_scores(inputs.table.frame, inputs.encoder, passages=inputs.table.passages,
                                     cache=inputs.cache, batch_size=inputs.batch_size, progress=inputs.progress))


def _specifics(inputs: DetectorInputs) -> FamilyScores:
    from sgi_core.detectors.specifics import specifics_scores

    return FamilyScores(specifics_scores(inputs.table.frame, passages=inputs.table.passages))


def _grounding(inputs: DetectorInputs) -> FamilyScores:
    from sgi_core.grounding.family import grounding_family_scores

    columns, specs = grounding_family_scores(inputs)
    return FamilyScores(columns, scores=specs)


FAMILIES: dict[str, DetectorFamily] = {family.name: family for family in (
    DetectorFamily(
        name="reference",
        label="Reference-set displacement detectors (need labels, cross-fitted)",
        explanation="each response's displacement from its question compared with those of the grounded answers "
                    "to the 10 nearest reference questions, the reference set built only from the other "
                    "question-group folds",
        needs=("embeddings", "labels", "reference set"),
        fitting="cross-fitted",
        scores=(SCORES["displacement_consistency"],
                SCORES["expected_response_deviation"],
                SCORES["displacement_magnitude"],
                SCORES["tangent_space_residual"],
                SCORES["lsgi"]),
        columns=REFERENCE_DETECTORS,
        compute=_reference,
    ),
    DetectorFamily(
        name="claims",
        label="Claim-level support (label-free)",
        explanation="each response sentence's best cosine to a context piece; the row keeps its weakest and its "
                    "mean sentence",
        needs=("texts", "embeddings"),
        fitting="per row",
        scores=(SCORES["claim_min_support"],
                SCORES["claim_mean_support"]),
        columns=CLAIM_COLUMNS,
        compute=_claims,
    ),
    DetectorFamily(
        name="specifics",
        label="Unsupported specifics (label-free, no model)",
        explanation="the share of the response's numbers and capitalised names (past a sentence's first word) "
                    "that do not occur in the context, negated",
        needs=("texts",),
        fitting="per row",
        scores=(SCORES["specifics_unsupported_share"],),
        columns=SPECIFICS_COLUMNS,
        compute=_specifics,
    ),
    DetectorFamily(
        name="grounding",
        label="Grounding models from local folders (label-free)",
        explanation="each response sentence's P(supported) from a local NLI, consistency or span-marking model, "
                    "best over overlapping chunks of the context; the row keeps its weakest and its mean sentence",
        needs=("texts", "a grounding model"),
        fitting="per row",
        scores=(),  # one pair per model given: grounding_<name>_min, grounding_<name>_mean
        columns=(),
        compute=_grounding,
    ),
)}
#: The out-of-fold combination of SGI, the angles, the trivial baselines and the computed scores.
COMBINED = SCORES["combined"]


def per_row_families() -> tuple[DetectorFamily, ...]:
    """Families fitted per row, which ``score`` can add to every row of a file of any size."""
    return tuple(family for family in FAMILIES.values() if family.fitting == "per row")


def per_row_family(name: str) -> DetectorFamily:
    """The registered family ``name``, refused unless it is fitted per row (what ``score`` can add).

    Raises
    ------
    SGIInputError
        For a name not registered, or a cross-fitted family (it needs labels across the file).
    """
    choices = ", ".join(family.name for family in per_row_families())
    if name not in FAMILIES:
        raise SGIInputError(f"unknown detector family '{name}'", hint=f"Choose among {choices}")
    if FAMILIES[name].fitting != "per row":
        raise SGIInputError(f"the detector family '{name}' is fitted on labelled folds of the whole file, not per row",
                            hint=f"Judge it with python -m sgi_core report --detectors {name}; score adds {choices}")
    return FAMILIES[name]


def score_specs() -> dict[str, ScoreSpec]:
    """Every judged score of every family, then ``combined``, by column name."""
    specs = {spec.name: spec for family in FAMILIES.values() for spec in family.scores}
    return {**specs, COMBINED.name: COMBINED}
