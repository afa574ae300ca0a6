"""A run comparison as tables and text: what ``compare`` and ``gate --baseline`` print, and the page's tables.

Reads :class:`~sgi_core.evaluation.run_comparison.RunComparison` and
:class:`~sgi_core.commands.gate_baseline.DropCheck` results; computes nothing.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from sgi_core.render.numbers import format_ci

if TYPE_CHECKING:
    from sgi_core.evaluation.run_comparison import RunComparison

#: Keys listed by name in the text before "and N more".
LISTED_KEYS = 10


def deltas_frame(res: RunComparison) -> pd.DataFrame:
    """One row per score: keys, mean in each run, ``new - base``, its interval, Wilcoxon and Holm p, verdict."""
    return pd.DataFrame([{
        "score": d.score, "keys": d.n_keys, "mean_base": d.mean_base, "mean_new": d.mean_new,
        "difference": d.difference, "ci_low": d.ci[0], "ci_high": d.ci[1], "wilcoxon_p": d.wilcoxon_p,
        "holm_p": d.holm_p, "verdict": d.verdict,
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


def _keys(keys: tuple[str, ...]) -> str:
    shown = ", ".join(repr(k[:60]) for k in keys[:LISTED_KEYS])
    return shown + (f" and {len(keys) - LISTED_KEYS} more" if len(keys) > LISTED_KEYS else "")


def comparison_text(res: RunComparison) -> str:
    """The comparison as plain text: matching, the table of deltas, flags, labels and AUROCs."""
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
    level = round(res.confidence * 100)
    lines.append(f"\nscores, higher = grounded; difference = new - base, {level}% interval over keys "
                 f"({res.n_boot} bootstrap resamples); a regression is an interval below zero")
    header = f"{'score':<28}{'keys':>6}{'base':>10}{'new':>10}{'new-base':>10}  {'interval':<20}{'Wilcoxon p':>11}" \
             f"{'Holm p':>9}  verdict"
    lines.append(header)
    for d in res.scores:
        lines.append(f"{d.score[:27]:<28}{d.n_keys:>6}{d.mean_base:>10.4g}{d.mean_new:>10.4g}{d.difference:>+10.4g}  "
                     f"{format_ci(d.ci, '.4f'):<20}{_p(d.wilcoxon_p):>11}{_p(d.holm_p):>9}  {d.verdict}")
    if res.flags is not None:
        f = res.flags
        lines.append(f"\nflagged {f.score} < {f.threshold:.4g} (policy): base {f.share_base:.1%}, new "
                     f"{f.share_new:.1%} of {f.n_keys} keys; {f.flagged_base_only} flagged in base only, "
                     f"{f.flagged_new_only} in new only; McNemar exact p {_p(f.mcnemar_p) or 'undefined'}")
    if res.labels is not None:
        lab = res.labels
        lines.append(f"\nlabels ({lab.n_keys} keys labelled in both): hallucination rate base {lab.rate_base:.3f}, "
                     f"new {lab.rate_new:.3f}, new - base {lab.difference:+.3f} {format_ci(lab.ci)}: {lab.verdict}")
        defined = [a for a in lab.auroc if not math.isnan(a.difference)]
        if not defined:
            lines.append("AUROC: undefined for every score (each run needs keys of both classes)")
            return "\n".join(lines)
        lines.append(f"AUROC (grounded positive), DeLong's {'paired' if lab.paired else 'unpaired'} test:")
        for a in lab.auroc:
            text = (f"{a.auroc_base:.3f} -> {a.auroc_new:.3f}, {a.difference:+.3f} {format_ci(a.ci)}, p {_p(a.p_value)}"
                    if a in defined else "undefined")
            lines.append(f"  {a.score:<26}{text}")
    return "\n".join(lines)


def drop_check_line(check, confidence: float = 0.95) -> str:
    """One :class:`sgi_core.commands.gate_baseline.DropCheck` as a line: ``PASS``/``FAIL``, the score, the lower bound of ``new - base`` against ``-max_drop``, and the means."""
    level = round(confidence * 100)
    about = (f"mean {check.mean_base:.4g} -> {check.mean_new:.4g}, new - base {check.difference:+.4g} "
             f"{format_ci(check.ci, '+.4f')} over {check.n_keys} keys")
    verdict = "PASS" if check.passed else "FAIL"
    if math.isnan(check.ci[0]):
        return f"{verdict} {check.score}: no {level}% interval ({about}); the drop cannot be bounded"
    return (f"{verdict} {check.score}: lower {level}% bound {check.ci[0]:+.4g} {'>=' if check.passed else '<'} "
            f"-{check.max_drop:g} allowed ({about})")
