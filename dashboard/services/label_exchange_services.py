"""Labels in and out of a file's annotations: importing an upload, finding and copying the decisions another
annotation file holds on the same rows, and the exports."""

from __future__ import annotations

import warnings
from pathlib import Path

from dashboard import services, state
from dashboard.services.review_services import LabelState, annotation_store, table_keys
from sgi_core.io.triples import TripleTable
from sgi_core.review.annotations import AnnotationStore, append_lines, row_keys
from sgi_core.review.label_exchange import LabelImport, annotation_table, import_lines
from sgi_core.review.label_lookup import StoreMatch
from sgi_core.review.label_lookup import labels_elsewhere as find_labels_elsewhere
from sgi_core.review.label_sources import read_label_source


def import_labels(key: state.DataKey, table: TripleTable, name: str, raw: bytes) -> LabelImport:
    """Append to this file's annotations the labels of an upload that are about its rows and not already in force.

    Raises
    ------
    SGIInputError
        When the upload cannot be read, or none of its rows is in this file.
    """
    labels = read_label_source(raw, name=name, limits=services.input_limits())
    store = annotation_store(key)
    lines, done = import_lines(labels, table_keys(key._replace(labels="file"), table), store.current(),
                               annotator=f"import: {name}")
    append_lines(store.path, lines)
    return done


def labels_elsewhere(key: state.DataKey, table: TripleTable, store: AnnotationStore) -> tuple[StoreMatch, ...]:
    """The other annotation files holding decisions on this file's rows (the same texts under another file name)."""
    return find_labels_elsewhere(table_keys(key._replace(labels="file"), table), store.path.parent, exclude=store.path)


def copy_labels_from(key: state.DataKey, table: TripleTable, path: str) -> LabelImport:
    """Import into this file's annotations the decisions another annotation file holds on its rows."""
    source = AnnotationStore(Path(path))
    return import_labels(key, table, source.path.name, source.raw())


def export_jsonl(store: AnnotationStore):
    """A callable giving the annotations file's bytes: read only when the download is asked for."""
    return store.raw


def export_table(labels: LabelState, table: TripleTable, store: AnnotationStore):
    """A callable giving the readable export (CSV) of this file's annotated rows, built only when downloaded."""
    frame, keys = table.frame, labels.keys

    def build() -> bytes:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the page shows the damaged lines already
            current = store.current()
        rows = keys if len(keys) else row_keys(frame)
        return annotation_table(frame, rows, current).to_csv(index=False).encode("utf-8")

    return build
