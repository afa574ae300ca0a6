"""The words of a monitored run (:class:`~sgi_core.monitoring.summary.MonitorSummary`), for every face.

The ``monitor`` command prints :func:`monitor_lines` (or :func:`monitor_json`); the Monitor
page shows :func:`rate_sentence`, :data:`ASSUMPTION`, :func:`shift_sentence` and
:func:`what_to_do`. Under detected shift no sentence says the policy validates its score.
"""

from __future__ import annotations

import math

from sgi_core.monitoring.references import feature_label
from sgi_core.render.numbers import format_ci

#: The corrected rate's assumption, written wherever the number is shown.
ASSUMPTION = ("Assumes the score behaves within each class as on the policy's held-out rows (the same sensitivity "
              "and specificity); only the share of hallucinated answers may differ.")
#: Exit status of each verdict of :data:`sgi_core.monitoring.summary.STATUSES`.
EXIT_CODES = {"holds": 0, "over limit": 1, "limit unchecked": 1, "shift detected": 3, "not validated": 3}


def _pct(value: float) -> str:
    return "undefined" if value is None or math.isnan(value) else f"{value:.1%}"


def _pct_ci(ci) -> str:
    return "" if math.isnan(ci[0]) else f"[{ci[0]:.1%}, {ci[1]:.1%}]"


def rate_sentence(summary) -> str:
    """The corrected rate with its interval, or why it is withheld, beside the raw flag share."""
    c = summary.corrected
    flags = (f"{c.n_flagged:,} of {c.n_scored:,} scored rows flagged ({_pct(c.flag_share)} {_pct_ci(c.flag_share_ci)}, "
             "the raw flag share: true flags and false alarms mixed)")
    if c.withheld:
        return f"corrected hallucination rate withheld: {c.withheld}; {flags}"
    return (f"corrected hallucination rate {_pct(c.estimate)} {_pct_ci(c.ci)} (Rogan-Gladen, held-out sensitivity "
            f"{c.sensitivity:.2f}, specificity {c.specificity:.2f}); {flags}")


def shift_sentence(summary) -> str:
    """"no shift beyond the rate", or which features are not a mixture of what the policy was validated on."""
    shift = summary.shift
    if shift.unchecked:
        return f"shift not checked: {shift.unchecked}"
    if not shift.detected:
        return "no shift beyond the rate: every feature is a mixture of the policy's two classes"
    moved = ", ".join(f"{feature_label(t.feature)}, p = {t.p_holm:.3g}" for t in shift.tests if t.shifted)
    return (f"the run's distribution is not a mixture of what the policy was validated on ({moved}): the policy's "
            "validation may not carry over")


def what_to_do(summary) -> str:
    """What to do where the policy's validation does not carry over; empty otherwise."""
    if summary.status not in ("shift detected", "not validated"):
        return ""
    n = summary.sample_size if summary.sample_size > 0 else summary.n_scored
    return (f"label a random sample of {n:,} rows of this run (Review page, queue 'random', seed "
            f"{summary.sample_seed}) and re-validate: monitor RUN --policy P --labels LABELS")


def validation_sentence(summary) -> str:
    """What validates the score here: a re-validation on the run's labels, the policy's record, or nothing."""
    r = summary.revalidation
    if r is not None:
        return (f"re-validated on {r.n_labelled:,} labelled rows of this run ({r.n_grounded} grounded / "
                f"{r.n_hallucinated} hallucinated): AUROC {r.auroc:.3f} {format_ci(r.auroc_ci, undefined='')}, "
                f"precision {r.precision:.3f} {format_ci(r.precision_ci, undefined='')}, recall {r.recall:.3f} "
                f"{format_ci(r.recall_ci, undefined='')}; hallucination rate {_pct(r.rate)} {_pct_ci(r.rate_ci)} "
                f"({r.rate_method}); {'validated' if r.validated else 'not validated'}: {r.reason}")
    if summary.validation.validated:
        return f"the policy validates its score: {summary.validation.reason}"
    return f"the policy's validation does not carry over: {summary.validation.reason}"


def limit_lines(summary) -> list[str]:
    lines = [f"over the limit {name.replace('_', '-')} ({getattr(summary, name):g}): its interval lies above it"
             for name in summary.over_limits]
    lines += ["cannot check --max-rate: the corrected rate is withheld" for name in summary.unchecked_limits]
    return lines


def monitor_lines(summary, *, record_id: int | None = None, db=None) -> list[str]:
    """The ``monitor`` command's report, verdict first."""
    lines = [f"{summary.status.upper()}: policy {summary.policy_id}, flag {summary.score_column} < "
             f"{summary.threshold:.4f}",
             rate_sentence(summary), f"note: {ASSUMPTION}", shift_sentence(summary)]
    lines += [f"  {feature_label(t.feature)}: D = {t.statistic:.3f}, p = {t.p_value:.3g}, Holm p = {t.p_holm:.3g} "
              f"({t.n_run} rows)" for t in summary.shift.tests if not math.isnan(t.p_value)]
    lines.append(validation_sentence(summary))
    lines += limit_lines(summary)
    todo = what_to_do(summary)
    if todo:
        lines.append(f"what to do: {todo}")
    if record_id is not None:
        lines.append(f"recorded as run {record_id} in {db}")
    return lines


def monitor_json(summary, *, record_id: int | None = None, db=None) -> dict:
    """The ``--json`` object: ``corrected_rate``, ``flag_share``, ``shift`` and the rest of the summary."""
    data = summary.to_dict()
    corrected, shift = data["corrected"], data["shift"]
    return {
        "status": summary.status, "exit_code": EXIT_CODES[summary.status],
        "corrected_rate": {"estimate": corrected["estimate"], "ci": corrected["ci"], "withheld": corrected["withheld"],
                           "assumption": ASSUMPTION},
        "flag_share": {"estimate": corrected["flag_share"], "ci": corrected["flag_share_ci"],
                       "n_flagged": summary.n_flagged, "n_scored": summary.n_scored},
        "shift": {"detected": shift["detected"], "tests": shift["tests"], "rate_range": shift["rate_range"],
                  "unchecked": shift["unchecked"], "method": shift["method"]},
        "validation": data["validation"], "revalidation": data["revalidation"],
        "what_to_do": what_to_do(summary), "sample_size": summary.sample_size, "sample_seed": summary.sample_seed,
        "record_id": record_id, "db": None if db is None else str(db), "summary": data,
    }
