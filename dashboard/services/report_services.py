"""The HTML reports the Overview and Compare runs pages offer: built when the download is clicked, from cached results.

Streamlit runs a deferred download's builder in a worker thread, where the session's state cannot be read: every
value that depends on the session (the detector columns chosen, the label source in the provenance) is read
when the page draws, and the builder only calls cached functions on what it was handed.
"""

from __future__ import annotations

from dashboard import services, state
from dashboard.services import confound_services, review_services
from sgi_core.embedding import backend_used
from sgi_core.render import html_report
from sgi_core.render.provenance import provenance


def _facts(data, **more) -> dict:
    return provenance(file=data.key.name, fingerprint=f"sha256:{data.key.digest[:16]}", rows=data.table.n_rows,
                      model=data.model, backend=backend_used(services.model_encoder(data.model)),
                      labels=review_services.label_source_line(data), **more)


def file_report(data):
    """A callable that builds the Overview's report of ``data`` (for ``st.download_button``'s deferred data)."""
    specs, facts = state.detector_specs(), _facts(data)
    kinds, resources = state.detector_families_run(data.key, data.model), state.resources_run(data.key, data.model)

    def build() -> str:
        report = confound_services.judged_report(data.key, data.model, specs, data.table, data.frame, kinds, resources)
        verdict = confound_services.file_verdict(data.key, data.model, specs, data.table, data.frame, kinds, resources)
        matched = confound_services.length_matched(data.key, data.model, data.frame)
        return html_report.file_report(report, verdict, data.frame, matched, facts)

    return build


def comparison_report(data, new_name: str, result, matched):
    """A callable that builds the Compare runs page's report (base: ``data``; new: ``new_name``)."""
    facts = _facts(data, new=new_name, matched_keys=result.match.n_matched, key=result.match.key)
    facts["base"] = facts.pop("file")

    def build() -> str:
        return html_report.comparison_report(result, matched, facts)

    return build
