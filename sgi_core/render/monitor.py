"""The words of a monitored run (:class:`~sgi_core.monitoring.summary.MonitorSummary`), for every face.

The ``monitor`` command prints :func:`monitor_lines` (or :func:`monitor_json`); the Monitor
page and the HTML report show the same sentences. The headline rate comes first; the corrected
rate is always written "if only the rate changed". Under detected or unchecked shift no sentence
says the policy validates its score.
"""

from __future__ import annotations

import math

from sgi_core.monitoring.summary import IF_ONLY_THE_RATE_CHANGED
from sgi_core.policy.references import feature_label
from sgi_core.render.numbers import format_ci

#: The corrected rate's assumption, written wherever the number is shown.
ASSUMPTION = ("Assumes the score behaves within each class as on the policy's held-out rows (the same sensitivity "
              "and specificity); only the share of hallucinated answers may differ. A new answering model or system "
              "breaks this without any shift test noticing: only labels of the run can check it.")
#: Exit status of each verdict of :data:`sgi_core.monitoring.summary.STATUSES`.
EXIT_CODES = {"holds": 0, "over limit": 1, "shift detected": 3, "not validated": 3, "unverified": 4}


def _pct(value: float) -> str:
    return "undefined" if value is None or math.isnan(value) else f"{value:.1%}"


def _pct_ci(ci) -> str:
    return "" if math.isnan(ci[0]) else f"[{ci[0]:.1%}, {ci[1]:.1%}]"


def label_request(summary) -> str:
    """The rows to label, and what they can give: ``"385 of its 5,000 rows (...)"`` or the whole run, said so."""
    plan = summary.plan
    where = f"Review page, queue 'random', seed {plan.seed}"
    if not plan.whole_run:
        return (f"{plan.size:,} of its {plan.n_rows:,} rows (the seeded random sample sized for a rate interval of "
                f"+/-{plan.half_width:.1%}; {where})")
    if plan.reachable:
        return f"all {plan.n_rows:,} rows of this run (the whole run; {where})"
    return (f"all {plan.n_rows:,} rows of this run (the whole run: no sample of {plan.n_rows:,} rows reaches "
            f"+/-{plan.half_width:.1%}; all of them give about +/-{plan.reachable_half_width:.1%}; {where})")


def status_line(summary) -> str:
    """The verdict first: ``"UNVERIFIED: label N rows ..."``, ``"HOLDS"``, ..., with the policy's rule."""
    rule = f"policy {summary.policy_id}, flag {summary.score_column} < {summary.threshold:.4f}"
    if summary.status == "unverified":
        return f"UNVERIFIED: label {label_request(summary)}; {rule}"
    return f"{summary.status.upper()}: {rule}"


def rate_sentence(summary) -> str:
    """The headline rate with its interval and method, or why the run's rate is not known."""
    h = summary.headline
    if h.verified:
        return f"hallucination rate {_pct(h.estimate)} {_pct_ci(h.ci)} ({h.method})"
    why = f"the labels given do not count: {summary.labels_refused}" if summary.labels_refused else \
        "no labelled sample of this run"
    return f"hallucination rate unverified: {why}"


def assumed_rate_sentence(summary) -> str:
    """The corrected rate, always as the secondary figure "if only the rate changed", or why it is withheld."""
    c = summary.corrected
    if c.withheld:
        return f"{IF_ONLY_THE_RATE_CHANGED}: corrected rate withheld: {c.withheld}"
    return (f"{IF_ONLY_THE_RATE_CHANGED}: corrected rate {_pct(c.estimate)} {_pct_ci(c.ci)} (Rogan-Gladen, held-out "
            f"sensitivity {c.sensitivity:.2f}, specificity {c.specificity:.2f}; not checked on this run)")


def flag_sentence(summary) -> str:
    c = summary.corrected
    return (f"{c.n_flagged:,} of {c.n_scored:,} scored rows flagged ({_pct(c.flag_share)} {_pct_ci(c.flag_share_ci)}, "
            "the raw flag share: true flags and false alarms mixed)")


def shift_sentence(summary) -> str:
    """"no shift beyond the rate", which features moved, or why the check was not made."""
    shift = summary.shift
    if shift.unchecked:
        return f"shift not checked: {shift.unchecked}"
    if not shift.detected:
        untested = [f"{feature_label(t.feature)} ({t.untested})" for t in shift.tests if t.untested]
        return ("no shift beyond the rate: every feature tested is a mixture of the policy's two classes"
                + (f"; not tested: {', '.join(untested)}" if untested else ""))
    moved = ", ".join(f"{feature_label(t.feature)}, p = {t.p_holm:.3g}" for t in shift.tests if t.shifted)
    return (f"the run's distribution is not a mixture of what the policy was validated on ({moved}): the policy's "
            "validation may not carry over")


def what_to_do(summary) -> str:
    """What to do where the run's rate is not verified or the policy does not hold; empty otherwise."""
    r = summary.revalidation
    if summary.status == "not validated" and (r is None or r.validated):
        return ("write the policy again on labelled rows where its score separates the classes, with at least "
                "enough held-out rows of each class: its own record does not validate it")
    if summary.status == "not validated":
        return "the score does not separate the classes on this run: write a policy on labels of runs like this one"
    if summary.status not in ("shift detected", "unverified"):
        return ""
    return f"label {label_request(summary)} and re-validate: monitor RUN --policy P --labels LABELS"


def validation_sentence(summary) -> str:
    """What validates the score here: a re-validation on the run's labels, the policy's record, or nothing."""
    r = summary.revalidation
    if r is not None:
        return (f"re-validated on {r.n_labelled:,} labelled rows of this run ({r.n_grounded} grounded / "
                f"{r.n_hallucinated} hallucinated): AUROC {r.auroc:.3f} {format_ci(r.auroc_ci, undefined='')}, "
                f"precision {r.precision:.3f} {format_ci(r.precision_ci, undefined='')}, recall {r.recall:.3f} "
                f"{format_ci(r.recall_ci, undefined='')}; {'validated' if r.validated else 'not validated'}: "
                f"{r.reason}")
    if summary.validation.validated:
        return f"the policy's record validates its score: {summary.validation.reason}"
    return f"the policy's validation does not carry over: {summary.validation.reason}"


def limit_lines(summary) -> list[str]:
    lines = [f"over the limit {name.replace('_', '-')} ({getattr(summary, name):g}): its interval lies above it"
             for name in summary.over_limits]
    lines += [f"cannot check --max-rate ({summary.max_rate:g}): it is checked on a verified rate only, and this run's "
              "rate is unverified" for _ in summary.unchecked_limits]
    return lines


def monitor_lines(summary, *, record_id: int | None = None, db=None) -> list[str]:
    """The ``monitor`` command's report, verdict first, then the headline rate."""
    lines = [status_line(summary), rate_sentence(summary), assumed_rate_sentence(summary), f"note: {ASSUMPTION}"]
    lines += [f"note: {summary.answering_note}"] if summary.answering_note else []
    lines += [flag_sentence(summary), shift_sentence(summary)]
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
    """The ``--json`` object: ``headline_rate`` first, ``corrected_rate`` "if only the rate changed", and the rest."""
    data = summary.to_dict()
    corrected, shift = data["corrected"], data["shift"]
    return {
        "status": summary.status, "exit_code": EXIT_CODES[summary.status],
        "headline_rate": data["headline"],
        "corrected_rate": {"estimate": corrected["estimate"], "ci": corrected["ci"], "withheld": corrected["withheld"],
                           "role": IF_ONLY_THE_RATE_CHANGED, "assumption": ASSUMPTION},
        "flag_share": {"estimate": corrected["flag_share"], "ci": corrected["flag_share_ci"],
                       "n_flagged": summary.n_flagged, "n_scored": summary.n_scored},
        "shift": {"detected": shift["detected"], "tests": shift["tests"], "rate_range": shift["rate_range"],
                  "unchecked": shift["unchecked"], "method": shift["method"]},
        "validation": data["validation"], "revalidation": data["revalidation"],
        "labels_refused": summary.labels_refused, "answering_note": summary.answering_note,
        "what_to_do": what_to_do(summary), "sample": data["plan"],
        "record_id": record_id, "db": None if db is None else str(db), "summary": data,
    }
