"""A run comparison as tables and text: what ``compare`` and ``gate --baseline`` print, and the page's tables.

Reads :class:`~sgi_core.runs.comparison.RunComparison` and
the checks of :mod:`sgi_core.policy.baseline_gate`; computes nothing.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from sgi_core.render.numbers import format_ci
from sgi_core.runs.headline_rates import headline_rates
from sgi_core.runs.label_sample import mixed_label_note, no_labels_sentence, sample_sentence

if TYPE_CHECKING:
    from sgi_core.runs.comparison import RunComparison

#: Keys listed by name in the text before "and N more".
LISTED_KEYS = 10


def deltas_frame(res: RunComparison) -> pd.DataFrame:
    """One row per score: keys, means, ``new - base`` and its interval, p-values, AUROC per run, verdict and why."""
    return pd.DataFrame([{
        "score": d.score, "keys": d.n_keys, "mean_base": d.mean_base, "mean_new": d.mean_new,
        "difference": d.difference, "ci_low": d.ci[0], "ci_high": d.ci[1], "wilcoxon_p": d.wilcoxon_p,
        "holm_p": d.holm_p, "auroc_base": d.auroc_base, "auroc_new": d.auroc_new, "verdict": d.verdict,
        "validation": d.validation,
    } for d in res.scores])


def auroc_frame(res: RunComparison) -> pd.DataFrame | None:
    """One row per score: AUROC in each run, ``new - base``, DeLong's interval and p; None without labels."""
    if res.labels is None:
        return None
    return pd.DataFrame([{
        "score": a.score, "auroc_base": a.auroc_base, "auroc_new": a.auroc_new, "difference": a.difference,
        "ci_low": a.ci[0], "ci_high": a.ci[1], "p_value": a.p_value, "delong": "paired" if a.paired else "unpaired",
    } for a in res.labels.auroc])


def _p(value: float) -> str:
    return "" if math.isnan(value) else f"{value:.2g}"


def _number(value: float, width: int) -> str:
    return " " * width if math.isnan(value) else f"{value:>{width}.3f}"


def _keys(keys: tuple[str, ...]) -> str:
    shown = ", ".join(repr(k[:60]) for k in keys[:LISTED_KEYS])
    return shown + (f" and {len(keys) - LISTED_KEYS} more" if len(keys) > LISTED_KEYS else "")


def _no_labels(res: RunComparison) -> str:
    return f"labels: {no_labels_sentence(res.match.mixed_label_keys)}"


def detectable_line(res: RunComparison, *, sequential: bool = False) -> str:
    """What size of change the labels can detect (the interval's, or with ``sequential`` the sequence's, bound were
    the difference zero); "" without labels."""
    lab = res.labels
    power = None if lab is None else lab.sequential_power if sequential else lab.power
    if power is None:
        return ""
    keys = (f"{power.n_keys} keys labelled in both runs" if power.design != "unpaired" else
            f"{power.n_keys} labelled keys, none in both runs")
    if math.isinf(power.smallest_margin):
        return f"detectable change: none yet ({keys})"
    reach = math.ceil(power.smallest_margin * 1000 - 1e-9) / 1000  # float noise must not add a step
    if power.design == "sequential":
        return (f"detectable change: about +/-{reach:.3f} with {keys} of {power.population} (the sequence's bound on a "
                f"typical unchanged run; discordance {power.variance_source}); `gate --sequential` refuses a smaller "
                "margin unless the sequence already clears it")
    return (f"detectable change: about +/-{reach:.3f} with {keys} (the {power.design} interval's "
            f"half-width were the difference zero; variance {power.variance_source}); `gate --max-rate-increase` "
            "refuses a smaller margin unless the interval already clears it, and halving it takes about four times "
            "the keys")


def sequential_line(res: RunComparison) -> str:
    """A note that the fixed-sample interval assumes a planned sample, with the confidence sequence's reading."""
    lab = res.labels
    if lab is None or lab.sequential is None:
        return ""
    seq = lab.sequential
    return (f"the interval above assumes the number of labelled keys was fixed in advance; if you labelled until it "
            "looked decided, read the confidence sequence instead (--sequential): new - base "
            f"{format_ci(seq.ci, '+.3f')} over {seq.n} keys labelled in both runs: {lab.sequential_verdict}")


def rate_line(line) -> str:
    """One :class:`~sgi_core.runs.headline_rates.RateLine`: its name, both rates and ``new - base`` of them."""
    text = (f"{line.name}: base {line.rate_base:.1%}, new {line.rate_new:.1%}, new - base {line.difference:+.3f} "
            f"{format_ci(line.ci, '+.3f')}")
    if line.own_rate_new == line.own_rate_new and abs(line.own_rate_new - line.rate_new) >= 0.0005:
        text += f" (new = base + the paired estimate; the new run's own estimate {line.own_rate_new:.1%})"
    return text


def _sequence_headline(res: RunComparison) -> list[str]:
    """The confidence sequence as the headline: its verdict and interval, its order, and at a stop, its caution."""
    lab, seq = res.labels, res.labels.sequential
    lines = [f"hallucination rate (labels): {lab.sequential_verdict} by the confidence sequence, new - base "
             f"{format_ci(seq.ci, '+.3f')} over {seq.n} of {seq.population} matched keys labelled in both runs "
             f"({round(seq.confidence * 100)}% {seq.method})",
             f"  keys read in {lab.sequence_order}"]
    if lab.sequential_verdict in ("improvement", "regression"):
        lines.append(f"  the answer is the interval {format_ci(seq.ci, '+.3f')}: an estimate read where the labelling "
                     f"stopped because it looked decided is biased away from zero (here {seq.estimate:+.3f})")
    return lines


def labels_headline(res: RunComparison, *, sequential: bool = False) -> str:
    """The labels' verdict: the word and the keys, then one named line per estimate, each adding up, then what
    the comparison can detect.

    The lines are :func:`~sgi_core.runs.headline_rates.headline_rates`: "labels only"
    and, where only a sample is labelled, "prediction-powered" (the verdict's estimate). With
    ``sequential`` the headline is the confidence sequence's verdict and interval (valid when
    labelling stopped at any time), and the fixed-sample lines follow as secondary; otherwise a
    line says the fixed-sample interval assumes a planned sample.
    """
    lab = res.labels
    if lab is None:
        return _no_labels(res)
    level = round(res.confidence * 100)
    counts = (f"{lab.n_keys} keys labelled in both runs" if lab.paired else
              f"{lab.n_labelled_base} base and {lab.n_labelled_new} new keys labelled, none in both")
    mcnemar = f", McNemar exact p {_p(lab.mcnemar_p)}" if lab.paired and not math.isnan(lab.mcnemar_p) else ""
    fixed = (f"{lab.verdict} by the {lab.method} estimate ({level}% intervals; {counts}{mcnemar})")
    by_sequence = sequential and lab.sequential is not None
    if by_sequence:
        lines = [*_sequence_headline(res),
                 f"  secondary, valid only at a number of labelled keys fixed in advance: {fixed}"]
    else:
        lines = [f"hallucination rate (labels): {fixed}"]
    prefix = "  secondary, " if by_sequence else "  "
    lines += [f"{prefix}{rate_line(line)}" for line in headline_rates(lab).lines]
    if lab.method.startswith("prediction-powered"):
        lines.append("  every matched key enters through the scores' mapping to P(hallucinated), fitted out of fold "
                     "on the labels; valid when the labelled keys are a random sample of the matched keys")
    if lab.method.startswith("active"):
        lines.append("  every matched key enters through the predictor's mapping to P(hallucinated), fitted out of "
                     "fold; each label weighs 1 / the probability its key was drawn with, so the interval holds "
                     "whatever the predictor is worth")
    if res.match.mixed_label_keys:
        lines.append(f"  {mixed_label_note(res.match.mixed_label_keys)}")
    if lab.sample is not None and lab.sample.n_changed:
        lines.append(f"  {sample_sentence(lab.sample)}")
    notes = ("" if by_sequence else sequential_line(res), detectable_line(res, sequential=by_sequence))
    lines += [f"  {line}" for line in notes if line]
    return "\n".join(lines)


def reconciliation(res: RunComparison) -> list[str]:
    """Sentences that say how the scores' movements relate to the labels' verdict."""
    unvalidated = [d for d in res.scores if not d.validated and (d.ci[1] < 0 or d.ci[0] > 0)]
    validated = [d for d in res.scores if d.validated]
    lines = []
    if unvalidated:
        names = ", ".join(d.score for d in unvalidated[:LISTED_KEYS])
        lines.append(f"{len(unvalidated)} scores moved ({names}) but are not validated on these labels: their "
                     "movement says nothing about grounding here (see each score's reason)")
    if res.labels is not None:
        clashing = [d.score for d in validated if d.verdict in ("improvement", "regression")
                    and res.labels.verdict in ("improvement", "regression") and d.verdict != res.labels.verdict]
        if clashing:
            lines.append(f"validated scores that disagree with the labels ({', '.join(clashing)}): the labels decide; "
                         "the scores measure something that moved the other way")
    return lines


def comparison_text(res: RunComparison, *, sequential: bool = False) -> str:
    """The comparison as plain text: matching, the labels' verdict, the table of scores, flags and AUROC shifts."""
    m = res.match
    lines = [f"matched {m.n_matched} keys on '{m.key}': base {m.n_rows_base} rows / {m.n_keys_base} keys, "
             f"new {m.n_rows_new} rows / {m.n_keys_new} keys"]
    for side, keys in (("base", m.only_in_base), ("new", m.only_in_new)):
        if keys:
            lines.append(f"only in {side} ({len(keys)} keys, left out): {_keys(keys)}")
    for side, count, keyless in (("base", m.averaged_base, m.keyless_rows_base),
                                 ("new", m.averaged_new, m.keyless_rows_new)):
        if count:
            lines.append(f"{count} {side} keys have several rows: their scores and labels are averaged per key")
        if keyless:
            lines.append(f"{len(keyless)} {side} rows have an empty key and are left out: rows "
                         f"{', '.join(map(str, keyless[:LISTED_KEYS]))}")
    lines.append("\n" + labels_headline(res, sequential=sequential))
    level = round(res.confidence * 100)
    lines.append(f"\nscores, higher = grounded; difference = new - base, {level}% interval over keys "
                 f"({res.n_boot} bootstrap resamples); a score earns a verdict only where its AUROC's {level}% "
                 "interval lies above 0.5 in both runs (or a policy records it)")
    header = f"{'score':<28}{'keys':>6}{'base':>10}{'new':>10}{'new-base':>10}  {'interval':<20}{'Holm p':>9}" \
             f"{'AUROC base':>11}{'AUROC new':>10}  verdict"
    lines.append(header)
    for d in res.scores:
        reason = "" if d.validated else f" ({d.validation})"
        aurocs = _number(d.auroc_base, 11) + _number(d.auroc_new, 10)
        lines.append(f"{d.score[:27]:<28}{d.n_keys:>6}{d.mean_base:>10.4g}{d.mean_new:>10.4g}{d.difference:>+10.4g}  "
                     f"{format_ci(d.ci, '.4f'):<20}{_p(d.holm_p):>9}{aurocs}  {d.verdict}{reason}")
    lines.extend(reconciliation(res))
    if res.flags is not None:
        f = res.flags
        lines.append(f"\nflagged {f.score} < {f.threshold:.4g} (policy): base {f.share_base:.1%}, new "
                     f"{f.share_new:.1%} of {f.n_keys} keys; {f.flagged_base_only} flagged in base only, "
                     f"{f.flagged_new_only} in new only; McNemar exact p {_p(f.mcnemar_p) or 'undefined'}")
    if res.labels is not None:
        defined = [a for a in res.labels.auroc if not math.isnan(a.difference)]
        if not defined:
            lines.append("\nAUROC change: undefined for every score (each run needs labelled keys of both classes)")
            return "\n".join(lines)
        lines.append("\nAUROC change (grounded positive), DeLong's test:")
        for a in res.labels.auroc:
            test = (f"{format_ci(a.ci)}, p {_p(a.p_value)} ({'paired' if a.paired else 'unpaired'})"
                    if not math.isnan(a.p_value) else "no test (no variance)")
            text = (f"{a.auroc_base:.3f} -> {a.auroc_new:.3f}, {a.difference:+.3f} {test}" if a in defined
                    else "undefined")
            lines.append(f"  {a.score:<26}{text}")
    return "\n".join(lines)


def drop_check_line(check, confidence: float = 0.95) -> str:
    """One :class:`sgi_core.policy.baseline_gate.DropCheck` as a line.

    ``PASS``/``FAIL``, the score, the lower bound of ``new - base`` against ``-max_drop``, and the means.
    """
    level = round(confidence * 100)
    about = (f"mean {check.mean_base:.4g} -> {check.mean_new:.4g}, new - base {check.difference:+.4g} "
             f"{format_ci(check.ci, '+.4f')} over {check.n_keys} keys")
    if not check.validated:
        about += f"; NOT VALIDATED on these labels ({check.validation}): the drop says nothing about grounding"
    verdict = "PASS" if check.passed else "FAIL"
    if math.isnan(check.ci[0]):
        return f"{verdict} {check.score}: no {level}% interval ({about}); the drop cannot be bounded"
    return (f"{verdict} {check.score}: lower {level}% bound {check.ci[0]:+.4g} {'>=' if check.passed else '<'} "
            f"-{check.max_drop:g} allowed ({about})")


def _sequential_rate_line(rate, level: int) -> str:
    """A sequential rate check: decided (PASS or FAIL) when the sequence excludes the margin, else undecided (FAIL)."""
    about = (f"new - base {rate.difference:+.3f} {format_ci(rate.ci, '+.3f')} over {rate.n_keys} keys labelled "
             "in both, "
             f"{level}% {rate.method}")
    if not rate.decided:
        return (f"FAIL hallucination rate: not decided yet, the sequence holds {rate.max_increase:g} ({about}); "
                "label more keys in both runs and run the gate again")
    relation = "<=" if rate.passed else ">"
    bound = rate.ci[1] if rate.passed else rate.ci[0]
    side = "upper" if rate.passed else "lower"
    return (f"{'PASS' if rate.passed else 'FAIL'} hallucination rate: {side} bound of the sequence {bound:+.3f} "
            f"{relation} {rate.max_increase:g} allowed ({about})")


def gate_baseline_lines(coverage, rate, drops, floors, confidence: float = 0.95) -> list[str]:
    """The checks of ``gate --baseline`` (:mod:`sgi_core.policy.baseline_gate`), one line each, verdict first."""
    level = round(confidence * 100)
    lines = []
    gaps = len(coverage.missing) + len(coverage.unscored) + len(coverage.fewer_scored)
    if gaps:
        what = (f"{len(coverage.missing)} of {coverage.n_keys_base} base keys are missing from the new run"
                f"{': ' + _keys(coverage.missing) if coverage.missing else ''}; {len(coverage.unscored)} are unscored "
                f"there{': ' + _keys(coverage.unscored) if coverage.unscored else ''}")
        if coverage.fewer_scored:
            what += (f"; {len(coverage.fewer_scored)} have fewer scored rows there than in the base run "
                     f"({coverage.rows_unscored} rows unscored): {_keys(coverage.fewer_scored)}")
        lines.append(f"{'PASS' if coverage.passed else 'FAIL'} keys: {what}"
                     + (" (allowed by --allow-missing-keys)" if coverage.allowed else ""))
    else:
        lines.append(f"PASS keys: every one of the {coverage.n_keys_base} base keys is in the new run and scored on "
                     "as many rows")
    if rate is not None and rate.sequential:
        lines.append(_sequential_rate_line(rate, level))
    elif rate is not None:
        verdict = "PASS" if rate.passed else "FAIL"
        lines.append(f"{verdict} hallucination rate: upper {level}% bound of the increase {rate.ci[1]:+.3f} "
                     f"{'<=' if rate.passed else '>'} {rate.max_increase:g} allowed (base {rate.rate_base:.1%}, new "
                     f"{rate.rate_new:.1%}, new - base {rate.difference:+.3f} {format_ci(rate.ci, '+.3f')}, "
                     f"{rate.method}, {rate.n_keys} keys labelled in both)")
    lines.extend(drop_check_line(check, confidence) for check in drops)
    for f in floors:
        bound = "undefined" if math.isnan(f.auroc_ci[0]) else f"{f.auroc_ci[0]:.3f}"
        lines.append(f"{'PASS' if f.passed else 'FAIL'} {f.score} AUROC in {f.run}: lower {level}% bound {bound} "
                     f"{'>=' if f.passed else '<'} {f.min_auroc:g} (AUROC {f.auroc:.3f})")
    return lines
