"""Two runs read for comparison: loaded, labelled, checked to be scored alike, and matched by key.

``compare``, ``gate --baseline`` and the Compare runs page share these rules:

* the labels of every source (the files' label columns, or ``--labels`` files, one of
  which may hold the rows of both runs) are joined to each run by row key;
* two runs whose SGI and angles were made by a different model, precision or backend
  (recorded in a scored Parquet file by ``score``) are refused: their scores are in
  different units;
* the rows are matched by key (:func:`sgi_core.runs.matching.match_runs`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sgi_core.errors import SGIInputError
from sgi_core.runs.label_order import LABELLING_ORDER
from sgi_core.runs.matching import MatchedRuns, match_runs
from sgi_core.runs.reading import Run

#: What a run's scores are made by, compared field by field.
SCORER_FIELDS = ("model", "precision", "backend", "context_strategy")


@dataclass(frozen=True)
class RunPair:
    """Two runs and their matched keys.

    Attributes
    ----------
    base, new : Run
    matched : MatchedRuns
    made_by : (dict or None, dict or None)
        What scored each run's SGI (``model``, ``precision``, ``backend``; a field is
        None where unknown), None where nothing is known.
    targeted_labels : int
        Labelled rows of either run whose label came from a Review queue that is not a
        random order: with any, the labels are not a random sample and no
        prediction-powered estimate is made.
    label_order : str
        How the runs' ``label_order`` columns were made (:mod:`sgi_core.runs.label_order`).
    """

    base: Run
    new: Run
    matched: MatchedRuns
    made_by: tuple[dict | None, dict | None]
    targeted_labels: int = 0
    label_order: str = LABELLING_ORDER

    @property
    def model(self) -> str | None:
        """The model both runs were scored with, when known."""
        models = {m.get("model") for m in self.made_by if m}
        return models.pop() if len(models) == 1 else None


def check_same_scorer(made_by_base: dict | None, made_by_new: dict | None, *, sources=("base", "new")) -> None:
    """Refuse two runs whose scores were made by a different model, precision, backend or context strategy.

    Only fields known on both sides are compared.

    Raises
    ------
    SGIInputError

    Examples
    --------
    >>> check_same_scorer({"model": "minilm", "precision": "fp32", "backend": None},
    ...                   {"model": "minilm", "precision": "fp32", "backend": "onnx"})
    """
    if not (made_by_base and made_by_new):
        return
    for name in SCORER_FIELDS:
        a, b = made_by_base.get(name), made_by_new.get(name)
        if a is not None and b is not None and a != b:
            raise SGIInputError(
                f"the two runs were scored with a different {name}: {a} ({sources[0]}) and {b} ({sources[1]}); "
                "their SGI and angles are in different units", source=sources[1],
                hint="Score both runs with the same model, precision, backend and --context-strategy "
                     "(python -m sgi_core score)")


def pair_runs(base: Run, new: Run, *, key: str, made_by=(None, None), targeted_labels: int = 0,
              label_order: str = LABELLING_ORDER) -> RunPair:
    """Check that the runs were scored alike and match their keys.

    Parameters
    ----------
    base, new : Run
        Read by :func:`sgi_core.runs.reading.read_run`, labels already joined.
    key : str
        The matching column.
    made_by : (dict or None, dict or None)
        What scored each run (:func:`sgi_core.io.scored.scored_with`, or the scorer used here).

    Raises
    ------
    SGIInputError
        Runs scored differently, or sharing no key.
    """
    check_same_scorer(*made_by, sources=(base.source, new.source))
    matched = match_runs(base.frame, new.frame, key=key, scores=base.scores)
    return RunPair(base, new, matched, tuple(made_by), targeted_labels, label_order)
