"""A labelling design's sample file, and the design read back from labels and checked against the runs.

``sample`` writes one row per run and drawn key: the run's name, the key, the row's
question, context and response, an empty ``label``, and the design's columns
(:data:`~sgi_core.runs.sampling_design.DESIGN_COLUMNS`). Filled in, the file is a labels
file; the labels travel with their design. Reading labels back
(:func:`verified_pair_design`), the design is re-computed from its seed, budget and
predictor on the runs at hand and the labels are used under it only when:

* every labels file carries the design's columns, with one design among its labelled rows
  (labels of different designs, or with and without one, are refused);
* every labelled row's recorded probability is the one re-computed for its key;
* the labelled keys are exactly the keys the design draws, labelled in both runs.

Anything else is refused with the reason: labels whose design cannot be verified are never
used as if they were drawn uniformly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sgi_core.columns import TEXT_COLUMNS
from sgi_core.errors import SGIInputError
from sgi_core.runs.sampling_design import (
    DESIGN_COLUMNS,
    PROBABILITY_TOLERANCE,
    LabellingDesign,
    halluc_probability,
    make_design,
)

#: The columns of a sample file, in order.
SAMPLE_COLUMNS = ("run", "key", *TEXT_COLUMNS, "label", *DESIGN_COLUMNS)
_HINT = "Label the keys of one `python -m sgi_core sample` file, drawn on these runs, and pass that file"


def pair_design(pair, *, design: str, budget: float, seed: int, predictor: str = "", policy=None) -> LabellingDesign:
    """The design of two runs' matched keys (:func:`~sgi_core.runs.sampling_design.make_design`).

    The predictor's P(hallucinated) of a key in each run is that of its per-key mean
    (:func:`~sgi_core.runs.sampling_design.halluc_probability`); a key whose first row is
    the same texts in both runs is unchanged.
    """
    from sgi_core.runs.reading import run_row_keys

    matched = pair.matched
    if predictor:
        p = np.column_stack([halluc_probability(frame, predictor, policy=policy, source=run.source)
                             for frame, run in ((matched.base, pair.base), (matched.new, pair.new))])
    else:
        p = np.full((len(matched.keys), 2), np.nan)
    unchanged = (run_row_keys(pair.base.frame.iloc[matched.first_row_base])
                 == run_row_keys(pair.new.frame.iloc[matched.first_row_new]))
    return make_design(matched.keys, p, design=design, budget=budget, seed=seed, predictor=predictor,
                       unchanged=unchanged)


def run_units(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """One run's units: its distinct row keys (:func:`~sgi_core.review.annotations.row_key`) and each one's first
    row."""
    from sgi_core.review.annotations import row_keys

    keys = pd.Series(row_keys(frame))
    first = ~keys.duplicated().to_numpy()
    return keys[first].to_numpy(dtype=object), np.flatnonzero(first)


def run_design(frame: pd.DataFrame, *, design: str, budget: float, seed: int, predictor: str = "", policy=None,
               source: str = "run") -> LabellingDesign:
    """The design of one run's units (:func:`run_units`); rows repeating a unit's texts share its label."""
    keys, first = run_units(frame)
    p = (halluc_probability(frame.iloc[first], predictor, policy=policy, source=source)[:, None] if predictor
         else np.full((len(keys), 1), np.nan))
    return make_design(keys, p, design=design, budget=budget, seed=seed, predictor=predictor)


def sample_table(design: LabellingDesign, runs) -> pd.DataFrame:
    """The rows to label: for each drawn unit and each run, that run's row of it.

    Parameters
    ----------
    design : LabellingDesign
    runs : sequence of (str, DataFrame, ndarray of int)
        Each run's name, frame and the position of each unit's row in it (indexed like ``design.keys``).
    """
    drawn = np.flatnonzero(design.drawn)
    parts = []
    for name, frame, rows in runs:
        texts = frame.iloc[np.asarray(rows)[drawn]][list(TEXT_COLUMNS)].reset_index(drop=True)
        parts.append(texts.assign(run=name, key=design.keys[drawn], label="",
                                  inclusion_probability=design.pi[drawn], design=design.design,
                                  predictor=design.predictor, seed=design.seed, budget=design.budget))
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(SAMPLE_COLUMNS))
    return table[list(SAMPLE_COLUMNS)]


@dataclass(frozen=True)
class RecordedDesign:
    """The design a set of labels files records, and the probability each labelled row carries.

    Attributes
    ----------
    design, predictor : str
    seed : int
    budget : float
    probability : dict of str -> float
        Row key (:func:`~sgi_core.review.annotations.row_key`) -> recorded ``inclusion_probability``.
    sources : tuple of str
    """

    design: str
    predictor: str
    seed: int
    budget: float
    probability: dict
    sources: tuple


def _design_rows(path) -> tuple[pd.DataFrame | None, str]:
    """A labels file's labelled rows with their design columns (None for a file without them), and its name."""
    from sgi_core.io.reading import max_input_bytes, read_table, source_name
    from sgi_core.io.triples import validate_triples
    from sgi_core.review.annotations import row_keys
    from sgi_core.review.label_sources import looks_like_annotations
    from sgi_core.review.store_files import read_regular_file

    name = source_name(path)
    raw = read_regular_file(path, limit=max_input_bytes(), what="labels file")
    if looks_like_annotations(raw):
        return None, name
    frame = read_table(raw, name=name)
    present = [c for c in DESIGN_COLUMNS if c in frame.columns]
    if not present:
        return None, name
    if len(present) < len(DESIGN_COLUMNS):
        missing = ", ".join(c for c in DESIGN_COLUMNS if c not in present)
        raise SGIInputError(f"the labels carry a design's columns but not {missing}: the design cannot be verified",
                            source=name, hint=_HINT)
    table = validate_triples(frame, source=name).frame
    labelled = table["label"].notna().to_numpy()
    rows = table.loc[labelled, list(DESIGN_COLUMNS)].assign(key=row_keys(table.loc[labelled]),
                                                            row=table.loc[labelled, "input_row"])
    rows = rows.replace("", np.nan)
    # A uniform design may have no predictor; every other field is needed to re-compute the design.
    empty = rows[[c for c in DESIGN_COLUMNS if c != "predictor"]].isna().any(axis=1).to_numpy()
    if empty.any():
        raise SGIInputError("labelled rows without their design (an empty inclusion_probability, design, seed or "
                            "budget): the design cannot be verified", source=name,
                            rows=rows.loc[empty, "row"].tolist(), hint=_HINT)
    return rows.assign(predictor=rows["predictor"].fillna("")), name


def recorded_design(paths) -> RecordedDesign | None:
    """The one design the labels files ``paths`` record, or None when none records one.

    Raises
    ------
    SGIInputError
        Files with and without a design, labelled rows of different designs, or design columns missing or empty.
    """
    read = [_design_rows(path) for path in paths]
    with_design = [name for rows, name in read if rows is not None]
    if not with_design:
        return None
    if len(with_design) < len(read):
        plain = ", ".join(name for rows, name in read if rows is None)
        raise SGIInputError(f"labels drawn under a design ({', '.join(with_design)}) mixed with labels without one "
                            f"({plain}): the estimate would weigh them wrongly", hint=_HINT)
    return design_of_rows(pd.concat([rows for rows, _ in read], ignore_index=True), with_design)


def design_of_rows(rows: pd.DataFrame, sources, *, hint: str = _HINT) -> RecordedDesign | None:
    """The one design labelled rows record, or None when there is no row.

    Parameters
    ----------
    rows : DataFrame
        One row per label: its row ``key`` (:func:`~sgi_core.review.annotations.row_key`) and the design's
        fields (:data:`~sgi_core.runs.sampling_design.DESIGN_COLUMNS`), all filled but ``predictor``.
    sources : sequence of str
        Where the rows come from, for the messages.
    hint : str
        What to do, for the messages.

    Raises
    ------
    SGIInputError
        Rows of different designs, or rows of the same texts with different probabilities.
    """
    sources = tuple(sources)
    fields = rows[["design", "predictor", "seed", "budget"]].astype(str).drop_duplicates()
    if len(fields) > 1:
        listed = "; ".join(", ".join(f"{k} {v}" for k, v in row.items()) for row in fields.to_dict("records"))
        raise SGIInputError(f"the labels come from {len(fields)} different designs ({listed}): one estimate needs "
                            "one design", source=", ".join(sources), hint=hint)
    if rows.empty:
        return None
    first = rows.iloc[0]
    # Rows of the same texts are one row: its label and its probability are one.
    spread = rows.groupby("key")["inclusion_probability"].nunique()
    if (spread > 1).any():
        raise SGIInputError(f"{int((spread > 1).sum())} rows of the same texts carry different probabilities: the "
                            "design cannot be verified", source=", ".join(sources), hint=hint)
    probability = dict(zip(rows["key"], rows["inclusion_probability"].astype(np.float64)))
    return RecordedDesign(str(first["design"]), str(first["predictor"]), int(float(first["seed"])),
                          float(first["budget"]), probability, sources)


def _refuse(message: str, keys, recorded: RecordedDesign, hint: str) -> None:
    shown = ", ".join(map(str, list(keys)[:5])) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
    raise SGIInputError(f"{message} ({shown}): the labels cannot be used under their design {recorded.design} "
                        f"(seed {recorded.seed}, predictor {recorded.predictor or 'none'})",
                        source=", ".join(recorded.sources), hint=hint)


def _check_units(recorded: RecordedDesign, design: LabellingDesign, runs, *, every_drawn: bool = True,
                 hint: str = _HINT) -> None:
    """Refuse labels whose keys or probabilities are not those of ``design`` (see the module notes).

    ``runs``: each run's source, the row key of each unit's row and whether the unit is labelled there.
    ``every_drawn``: refuse a drawn unit left unlabelled in a run (False while the labelling is under way).
    """
    labelled_anywhere = np.any([labelled for _, _, labelled in runs], axis=0)
    extra = labelled_anywhere & ~design.drawn
    if extra.any():
        _refuse(f"{int(extra.sum())} labelled keys are not drawn by the design", design.keys[extra], recorded, hint)
    for source, keys, _ in runs:
        given = np.array([recorded.probability.get(key, np.nan) for key in keys])
        off = ~np.isnan(given) & ~np.isclose(given, design.pi, rtol=PROBABILITY_TOLERANCE, atol=0.0)
        if off.any():
            _refuse(f"{int(off.sum())} labelled keys of {source} carry a probability other than the one their "
                    "seed, budget and predictor give on these runs", design.keys[off], recorded, hint)
    for source, _, labelled in runs:
        missing = design.drawn & ~labelled
        if every_drawn and missing.any():
            _refuse(f"{int(missing.sum())} keys the design draws have no label in {source}; every drawn key "
                    "needs one", design.keys[missing], recorded, hint)


def verified_pair_design(paths, pair, *, policy=None) -> LabellingDesign | None:
    """The design the labels ``paths`` were drawn under, re-computed on the runs of ``pair`` and checked.

    Parameters
    ----------
    paths : sequence of path
        The ``--labels`` files.
    pair : RunPair
        The runs, labels joined (:func:`sgi_core.runs.pairing.pair_runs`).
    policy : Policy, optional
        The policy whose calibrator the sample's predictor was mapped with.

    Returns
    -------
    LabellingDesign or None
        None when no file records a design.

    Raises
    ------
    SGIInputError
        See the module notes.
    """
    recorded = recorded_design(paths)
    return None if recorded is None else checked_pair_design(recorded, pair, policy=policy)


def checked_pair_design(recorded: RecordedDesign, pair, *, policy=None, every_drawn: bool = True,
                        hint: str = _HINT) -> LabellingDesign:
    """The design ``recorded`` re-computed on the runs of ``pair`` (:func:`pair_design`), its labels checked against it.

    ``every_drawn``: refuse a drawn key left unlabelled in a run (False while the labelling is under way);
    ``hint`` says what to do in the messages. Raises as :func:`verified_pair_design`.
    """
    from sgi_core.runs.reading import run_row_keys

    matched = pair.matched
    design = pair_design(pair, design=recorded.design, budget=recorded.budget, seed=recorded.seed,
                         predictor=recorded.predictor, policy=policy)
    runs = [(run.source, run_row_keys(run.frame.iloc[rows]),
             frame["label"].notna().to_numpy() if "label" in frame else np.zeros(len(matched.keys), bool))
            for run, rows, frame in ((pair.base, matched.first_row_base, matched.base),
                                     (pair.new, matched.first_row_new, matched.new))]
    _check_units(recorded, design, runs, every_drawn=every_drawn, hint=hint)
    return design


def verified_run_design(paths, frame: pd.DataFrame, *, policy=None, source: str = "run") -> LabellingDesign | None:
    """:func:`verified_pair_design` for one run (units: :func:`run_units`), its ``label`` column joined."""
    recorded = recorded_design(paths)
    if recorded is None:
        return None
    design = run_design(frame, design=recorded.design, budget=recorded.budget, seed=recorded.seed,
                        predictor=recorded.predictor, policy=policy, source=source)
    first = run_units(frame)[1]
    labelled = frame["label"].iloc[first].notna().to_numpy() if "label" in frame else np.zeros(len(first), bool)
    _check_units(recorded, design, [(source, design.keys, labelled)])
    return design
