"""Label cells to 1.0 (grounded), 0.0 (hallucinated) or NaN (unlabelled), and warnings about them.

Label convention: ``label`` is 1 for grounded / valid / faithful responses and 0 for
hallucinated ones; ``NaN`` means unlabelled.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sgi_core.errors import SGIInputError, format_rows
from sgi_core.io.reading import cell_to_text

#: Label column names whose 1/true/yes means hallucinated.
HALLUCINATION_LABEL_NAMES = frozenset({"hallucination", "hallucinated", "is_hallucinated", "is_hallucination"})

# Words that say which class they are, whatever the column's direction.
_GROUNDED_WORDS = frozenset({"grounded", "valid", "faithful", "correct", "supported", "right", "truthful"})
_HALLUCINATED_WORDS = frozenset(
    {"hallucinated", "hallucination", "invalid", "unfaithful", "incorrect", "unsupported", "wrong", "false_answer"}
)
# Words whose meaning depends on which class the column marks as positive.
_POSITIVE_WORDS = frozenset({"1", "1.0", "true", "yes", "y", "t", "pass"})
_NEGATIVE_WORDS = frozenset({"0", "0.0", "false", "no", "n", "f", "fail"})
MISSING_WORDS = frozenset({"", "nan", "na", "n/a", "none", "null"})
#: What a label value can be mapped to (``--label-map``, the Data page's value mapping).
LABEL_MAP_CLASSES = {"grounded": 1.0, "hallucinated": 0.0, "unlabelled": np.nan}


def parse_label_map(text: str) -> dict[str, str]:
    """``"Entailment=grounded,Partial Hallucination=hallucinated,Generic=unlabelled"`` as a dict.

    Values are matched ignoring case and surrounding spaces; a value cannot hold a comma
    or an equals sign here.

    Examples
    --------
    >>> parse_label_map("Entailment=grounded, Hallucination = hallucinated")
    {'Entailment': 'grounded', 'Hallucination': 'hallucinated'}
    """
    mapping = {}
    for part in (p for p in text.split(",") if p.strip()):
        value, sep, meaning = part.partition("=")
        meaning = meaning.strip().lower()
        if not sep or not value.strip() or meaning not in LABEL_MAP_CLASSES:
            raise SGIInputError(f"cannot read the label map entry {part.strip()!r}",
                                hint="Write VALUE=grounded, VALUE=hallucinated or VALUE=unlabelled, separated by "
                                     "commas, e.g. 'Entailment=grounded,Partial Hallucination=hallucinated'")
        mapping[value.strip()] = meaning
    if not mapping:
        raise SGIInputError("the label map is empty", hint="Write VALUE=grounded,VALUE=hallucinated")
    return mapping


def distinct_label_values(values: pd.Series, *, limit: int = 50) -> list[str]:
    """The distinct label cells as text (stripped, missing ones left out), in order of first appearance.

    Examples
    --------
    >>> distinct_label_values(pd.Series(["Entailment", "Generic", " Entailment", None, ""]))
    ['Entailment', 'Generic']
    """
    texts = [cell_to_text(value).strip() for value in pd.unique(values)]
    return list(dict.fromkeys(t for t in texts if t.lower() not in MISSING_WORDS))[:limit]


def unmapped_label_warnings(values: pd.Series, label_map: dict | None, label_positive: str,
                            first_row: int) -> list[str]:
    """With a label map: the rows kept unlabelled because neither the map nor the known words name their value."""
    if not label_map:
        return []
    known = set(_label_table(label_positive, label_map)) | MISSING_WORDS
    codes, uniques = pd.factorize(values, sort=False)
    unknown_code = np.array([cell_to_text(v).strip().lower() not in known for v in uniques] + [False])
    unknown = unknown_code[codes]
    if not unknown.any():
        return []
    names = ", ".join(repr(cell_to_text(uniques[code])) for code in pd.unique(codes[unknown])[:5])
    return [f"{int(unknown.sum()):,} rows have label values the label map does not name ({names}): they are kept, "
            f"unlabelled ({format_rows((np.flatnonzero(unknown) + first_row).tolist())})"]


def _label_table(label_positive: str, label_map: dict | None = None) -> dict:
    """Lower-cased label word -> 1.0, 0.0 or NaN (a value the map calls unlabelled)."""
    positive_value = 1.0 if label_positive == "grounded" else 0.0
    table = {w: 1.0 for w in _GROUNDED_WORDS}
    table.update({w: 0.0 for w in _HALLUCINATED_WORDS})
    table.update({w: positive_value for w in _POSITIVE_WORDS})
    table.update({w: 1.0 - positive_value for w in _NEGATIVE_WORDS})
    table.update({str(value).strip().lower(): LABEL_MAP_CLASSES[meaning]
                  for value, meaning in (label_map or {}).items()})
    return table


def default_label_positive(label_column: str | None) -> str:
    """``"hallucinated"`` if the column's name says 1 = hallucination, else ``"grounded"``."""
    if label_column and label_column.strip().lower() in HALLUCINATION_LABEL_NAMES:
        return "hallucinated"
    return "grounded"


def parse_labels(values: pd.Series, *, label_positive: str = "grounded", source: str = "<input>",
                 column: str = "label", first_row: int = 1, label_map: dict | None = None) -> np.ndarray:
    """Map label cells to 1.0 (grounded), 0.0 (hallucinated) or NaN (missing).

    Words naming a class (grounded/valid/faithful/correct vs hallucinated/invalid/
    unfaithful/incorrect) map to that class. Direction-free forms (1/0, true/false,
    yes/no) mean grounded when ``label_positive="grounded"`` and hallucinated when
    ``label_positive="hallucinated"``. Empty, ``NaN``, ``None`` and ``null`` are missing.
    Case and surrounding spaces are ignored; forms may be mixed in one column.

    Parameters
    ----------
    first_row : int
        Row number of ``values[0]`` in messages (1 = first data row of the file).
    label_map : dict, optional
        Value -> ``"grounded"``, ``"hallucinated"`` or ``"unlabelled"``
        (:func:`parse_label_map`), read before the known words. With a map, a value
        neither names is kept as unlabelled (:func:`unmapped_label_warnings` says
        which rows) instead of refused.

    Raises
    ------
    SGIInputError
        Without a label map, naming the rows that hold any other value.
    """
    if label_positive not in ("grounded", "hallucinated"):
        raise SGIInputError(
            f"label_positive must be 'grounded' or 'hallucinated'; got {label_positive!r}"
        )
    table = _label_table(label_positive, label_map)
    # A label column holds a handful of distinct cells: parse each once.
    codes, uniques = pd.factorize(values, sort=False)
    words = [cell_to_text(value).strip().lower() for value in uniques]
    value_of_code = np.array([table.get(word, np.nan) for word in words] + [np.nan])  # code -1: missing cell
    known = np.array([word in table or word in MISSING_WORDS for word in words] + [True])
    unknown = ~known[codes]
    if unknown.any() and not label_map:
        examples = ", ".join(repr(cell_to_text(uniques[code])) for code in pd.unique(codes[unknown])[:5])
        raise SGIInputError(
            f"unknown label values {examples}", source=source, column=column,
            rows=(np.flatnonzero(unknown) + first_row).tolist(),
            hint="Use 1/0, true/false, yes/no, grounded/hallucinated, valid/invalid or faithful/unfaithful, "
                 "or map the values (--label-map; the Data page's label values)",
        )
    return value_of_code[codes]


#: Distinct rewritten label values a warning names before "and N more".
REWRITES_SHOWN = 6


def rewritten_label_warning(original: pd.Series, labels: np.ndarray, kept_as: str, first_row: int) -> list[str]:
    """A warning naming the rows whose ``label`` cell now reads differently (kept in ``kept_as``)."""
    texts = original.map(cell_to_text).str.strip()
    as_number = pd.to_numeric(texts, errors="coerce").to_numpy(dtype=float)
    changed = ~np.isnan(labels) & (as_number != labels)
    if not changed.any():
        return []
    # Which word became which: each distinct original value of the changed rows, with its class.
    pairs = dict(zip(texts[changed].tolist(), labels[changed].tolist()))
    shown = ", ".join(f"{text!r} -> {int(value)}" for text, value in list(pairs.items())[:REWRITES_SHOWN])
    more = f" and {len(pairs) - REWRITES_SHOWN} more" if len(pairs) > REWRITES_SHOWN else ""
    return [f"the label column 'label' is rewritten as 1 = grounded, 0 = hallucinated ({shown}{more}), which changes "
            f"{format_rows((np.flatnonzero(changed) + first_row).tolist())}; the original cells are kept in "
            f"column '{kept_as}'"]


def label_class_warnings(n_grounded: int, n_hallucinated: int, label_column: str | None) -> list[str]:
    """Warnings about the label classes of a whole file: none labelled, or only one class."""
    if label_column is None:
        return []
    if n_grounded == 0 and n_hallucinated == 0:
        return [f"the label column '{label_column}' is empty in every row: treated as unlabelled"]
    if n_grounded == 0 or n_hallucinated == 0:
        only = "grounded" if n_hallucinated == 0 else "hallucinated"
        return [f"only one label class is present (every labelled row is {only}): scores are computed, "
                "but label-based metrics (AUROC, effect size, calibration, thresholds) are undefined"]
    return []


def label_warnings(labels: np.ndarray, label_column: str | None, first_row: int, whole_file: bool) -> list[str]:
    """Warnings about a parsed label column: missing labels, and (for a whole file) its classes."""
    if label_column is None:
        return []
    missing = np.isnan(labels)
    warnings = []
    if missing.any() and not missing.all():
        warnings.append(f"the label is missing in {format_rows((np.flatnonzero(missing) + first_row).tolist())}: "
                        "those rows count as unlabelled")
    if whole_file:
        warnings += label_class_warnings(int((labels == 1.0).sum()), int((labels == 0.0).sum()), label_column)
    return warnings
