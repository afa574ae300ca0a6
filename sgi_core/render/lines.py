"""One-line summaries: a ``score`` run, a ``judge`` estimate, a ``gate`` run and policy, a 2-D map's caption."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from sgi_core.render.numbers import NAN_INTERVAL, format_ci

if TYPE_CHECKING:
    from sgi_core.judge.runner import JudgeEstimate
    from sgi_core.policy.policy_gate import GateCheck, GateResult
    from sgi_core.projection import TripleProjection
    from sgi_core.scoring import ScoreSummary


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def score_summary_lines(summary: ScoreSummary, output) -> list[str]:
    """What a ``score`` run did, written to ``output``: texts embedded, rows written (and on Ray, by how many actors).

    Examples
    --------
    >>> from sgi_core.scoring import ScoreSummary
    >>> score_summary_lines(ScoreSummary("ray", rows=8, scored=5, seconds=9.1, shards=1, actors=2), "out")
    ['wrote 8 rows (5 scored) from 1 shard with 2 encoder actors in 9.1 s; Parquet dataset in out']
    """
    if summary.engine == "ray":
        return [f"wrote {summary.rows} rows ({summary.scored} scored) from {_plural(summary.shards, 'shard')} "
                f"with {_plural(summary.actors, 'encoder actor')} in {summary.seconds:.1f} s; "
                f"Parquet dataset in {output}"]
    blank = ([f"{_plural(summary.blank_passages, 'blank passage')} (empty or only whitespace) left out of the "
              "contexts before embedding"] if summary.blank_passages else [])
    return [f"{summary.new_texts} new texts embedded, the rest from the cache", *blank,
            f"wrote {summary.rows} rows ({summary.scored} scored) to {output}"]


def judge_estimate_line(estimate: JudgeEstimate) -> str:
    """What a judge run would send: rows, requests, cached answers and input tokens."""
    to_send = estimate.n_requests - estimate.n_cached
    return (f"{estimate.n_judged_rows} of {estimate.n_rows} rows to judge: {estimate.n_requests} requests, "
            f"{estimate.n_cached} already in the cache, {to_send} to send, "
            f"about {estimate.input_tokens:,} input tokens")


def gate_check_line(check: GateCheck, result: GateResult) -> str:
    """``PASS``/``FAIL``, the check, its statistic with interval, and the bound it was held to."""
    verdict = "PASS" if check.passed else "FAIL"
    if check.name == "auroc":
        about = (f"AUROC {check.estimate:.3f} {format_ci(check.ci, undefined=NAN_INTERVAL)}, "
                 f"{result.n_grounded} grounded / {result.n_hallucinated} hallucinated rows")
        if check.ci[0] <= 0.5 <= check.ci[1]:
            about += "; the interval holds 0.5: the score is near chance on this file"
        if math.isnan(check.bound):
            return (f"UNCHECKED auroc: {about}; no minimum is set (neither --min-auroc nor the policy's min_auroc), "
                    "so this check cannot fail")
        return (f"{verdict} auroc: lower 95% bound {check.value:.3f} {'>=' if check.passed else '<'} minimum "
                f"{check.bound:.3f} ({about})")
    where = f"flagging {result.score_column} < {result.threshold:.4g}"
    if check.name == "flag rate" and not math.isnan(check.value):
        about = (f"flag rate: {check.value:.3f} {format_ci(check.ci, undefined=NAN_INTERVAL)} of the rows {where} "
                 "(no labels: precision and recall unchecked)")
        if math.isnan(check.bound):
            return f"{verdict} {about}; no --max-flag-rate, so this check cannot fail"
        return (f"{verdict} {about}; lower bound {'does not exceed' if check.passed else 'is above'} the allowed "
                f"{check.bound:.3f}")
    if math.isnan(check.value):
        return f"{verdict} {check.name}: undefined {where} (zero denominator)"
    return (f"{verdict} {check.name}: {check.value:.3f} {format_ci(check.ci, undefined=NAN_INTERVAL)} {where}; "
            f"upper bound {'reaches' if check.passed else 'is below'} the policy's held-out {check.bound:.3f}")


def flagged_rows_line(rows, scores, threshold: float, *, listed: int = 20) -> str:
    """The file's rows a policy flags (``score < threshold``), the first ``listed`` by row number, for review.

    Examples
    --------
    >>> flagged_rows_line([1, 2, 3], [0.2, 0.9, 0.1], 0.5)
    'flagged for review: rows 1, 3'
    """
    import numpy as np

    scores = np.asarray(scores, dtype=np.float64)
    flagged = np.asarray(rows)[~np.isnan(scores) & (scores < threshold)]
    if not len(flagged):
        return "flagged for review: no row"
    shown = ", ".join(str(int(row)) for row in flagged[:listed])
    more = f" and {len(flagged) - listed:,} more" if len(flagged) > listed else ""
    return f"flagged for review: rows {shown}{more}"


def gate_lines(result: GateResult) -> list[str]:
    """One line per check of a gate run (:func:`gate_check_line`)."""
    return [gate_check_line(check, result) for check in result.checks]


def policy_lines(policy, holdout) -> list[str]:
    """A policy just made: its threshold rule, and precision, recall and flag rate on the held-out half."""
    held = holdout.heldout
    return [f"threshold: flag {policy.score_column} < {policy.threshold:.4g} ({policy.threshold_method} on "
            f"{holdout.n_dev} development rows{', whole groups per side' if holdout.grouped else ''})",
            f"held-out ({holdout.n_heldout} rows, hallucinated positive): precision {held.precision:.3f} "
            f"{format_ci(holdout.precision_ci, undefined=NAN_INTERVAL)}, recall {held.recall:.3f} "
            f"{format_ci(holdout.recall_ci, undefined=NAN_INTERVAL)}, flagged {held.flag_rate:.3f} "
            f"{format_ci(holdout.flag_rate_ci, undefined=NAN_INTERVAL)}"]


def projection_note(projection: TripleProjection) -> str:
    """How a UMAP map was made when only a sample of triples was fitted; empty otherwise."""
    n_points = 3 * len(projection.question)
    if projection.method != "umap" or projection.fit_points >= n_points:
        return ""
    return (f"UMAP was fitted on {projection.fit_points:,} of the {n_points:,} points (the question, context and "
            f"response of {projection.fit_points // 3:,} triples drawn with seed {projection.seed}); the other "
            f"{n_points - projection.fit_points:,} points were placed into that map by UMAP's transform.")
