"""Annotations sent to a Phoenix server, in synchronous chunks, and read back.

``POST /v1/span_annotations?sync=true`` (and ``/v1/trace_annotations``) stores a chunk or, when
one of its ids is unknown, nothing: the 404 names the unknown ids. Those are taken out and the
rest of the chunk is sent again, so every known span gets its annotation and the unknown ones are
named. (Without ``sync`` the server answers 200 and may store nothing, so it is never used.)
A chunk retried after a 5xx cannot add duplicates: name, span and identifier make each post an upsert.
Annotation configs are registered once: looked up by name, created when missing, assigned to
the project. The annotations of the run are then read back by identifier and compared.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from sgi_core.results import JsonResult
from sgi_core.tracing.phoenix_pull import listing

if TYPE_CHECKING:
    from sgi_core.tracing.annotation_plan import AnnotationPlan
    from sgi_core.tracing.connection import Connection

#: Annotations sent in one request.
ANNOTATIONS_PER_REQUEST = 100
#: How Phoenix names unknown ids in a 404: "Spans with IDs a, b do not exist."
_UNKNOWN_IDS = re.compile(r"with IDs? (.+?) do(?:es)? not exist")


@dataclass(frozen=True)
class PushResult(JsonResult):
    """What the server stored.

    Attributes
    ----------
    n_spans_sent, n_traces_sent : int
        Span and trace annotations stored.
    unknown_spans, unknown_traces : tuple of str
        Ids the server does not hold, left out.
    n_read_back : int
        The run's span annotations of this name read back.
    n_equal : int
        Of those, the ones whose score equals the one sent.
    """

    n_spans_sent: int
    n_traces_sent: int
    unknown_spans: tuple
    unknown_traces: tuple
    n_read_back: int
    n_equal: int


def register_configs(connection: Connection, project: str, configs) -> None:
    """Create each annotation config that the server lacks and assign it to the project (both idempotent)."""
    from sgi_core.tracing.connection import ServerError

    for config in configs:
        try:
            found = connection.get(f"/v1/annotation_configs/{quote(config['name'], safe='')}")
        except ServerError as err:
            if err.status != 404:
                raise
            found = connection.post("/v1/annotation_configs", config)
        connection.put(f"/v1/projects/{quote(project, safe='')}/annotation_configs/"
                       f"{quote(found['data']['id'], safe='')}")


def post_annotations(connection: Connection, path: str, items, id_key: str) -> tuple[int, tuple]:
    """Post ``items`` in synchronous chunks; an unknown id is taken out and the rest sent again.

    Returns
    -------
    (int, tuple of str)
        Items stored, and the unknown ids in the order met.

    Raises
    ------
    ServerError
        A refusal other than unknown ids.
    """
    from sgi_core.tracing.connection import ServerError

    stored, unknown = 0, []
    for start in range(0, len(items), ANNOTATIONS_PER_REQUEST):
        chunk = list(items[start:start + ANNOTATIONS_PER_REQUEST])
        while chunk:
            try:
                connection.post(path, {"data": chunk}, params={"sync": "true"})
            except ServerError as err:
                named = _UNKNOWN_IDS.search(err.detail) if err.status == 404 else None
                ids = {i.strip() for i in named.group(1).split(",")} if named else set()
                if not ids & {item[id_key] for item in chunk}:
                    raise
                unknown += [item[id_key] for item in chunk if item[id_key] in ids]
                chunk = [item for item in chunk if item[id_key] not in ids]
                continue
            stored += len(chunk)
            break
    return stored, tuple(unknown)


def read_back(connection: Connection, project: str, run_id: str, name: str) -> dict[str, float]:
    """The run's span annotations named ``name``: span id -> score."""
    found = listing(connection, f"/v1/projects/{quote(project, safe='')}/span_annotations",
                    {"identifier": run_id, "include_annotation_names": name})
    return {item["span_id"]: (item.get("result") or {}).get("score") for item in found}


def push_annotations(connection: Connection, project: str, plan: AnnotationPlan) -> PushResult:
    """Register the configs, send the plan's annotations, and read the span annotations back.

    A score reads back equal when it is within 1e-9 relative of the one sent (the server stores doubles).
    """
    register_configs(connection, project, plan.configs)
    n_spans, unknown_spans = post_annotations(connection, "/v1/span_annotations", plan.span_annotations, "span_id")
    n_traces, unknown_traces = post_annotations(connection, "/v1/trace_annotations", plan.trace_annotations,
                                                "trace_id")
    sent = {item["span_id"]: item["result"]["score"] for item in plan.span_annotations}
    back = read_back(connection, project, plan.span_annotations[0]["identifier"], plan.span_annotations[0]["name"]) \
        if plan.span_annotations else {}
    equal = sum(1 for span_id, score in sent.items() if isinstance(back.get(span_id), (int, float))
                and math.isclose(back[span_id], score, rel_tol=1e-9))
    return PushResult(n_spans, n_traces, unknown_spans, unknown_traces, len(back), equal)
