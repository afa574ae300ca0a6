"""The smallest margin ``gate --max-rate-increase`` can pass, by keys labelled in both runs and discordance.

    .venv/bin/python benchmarks/margin_table.py

Prints the table of docs/COMPARING_RUNS.md (a test checks that the page holds exactly this output):
:func:`sgi_core.stats.margin_power.zero_difference_half_width` of a paired design,
``1.96 sqrt(psi / n)``, for ``n`` keys labelled in both runs when a share ``psi`` of them
is hallucinated in one run only; and the keys an unchanged run needs to pass a margin
4 times in 5 (:func:`sgi_core.stats.margin_power.keys_for_margin`).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sgi_core.stats.margin_power import keys_for_margin, zero_difference_half_width  # noqa: E402

KEYS = (20, 40, 80, 150, 300, 600, 1000)
DISCORDANCES = (0.1, 0.2, 0.3)
MARGINS = (0.02, 0.05, 0.1, 0.2)


def margin_table() -> str:
    """The two Markdown tables, as docs/COMPARING_RUNS.md holds them."""
    head = "| keys labelled in both runs | " + " | ".join(f"discordance {psi:.0%}" for psi in DISCORDANCES) + " |"
    lines = [head, "|" + "---|" * (len(DISCORDANCES) + 1)]
    for n in KEYS:
        cells = " | ".join(f"{zero_difference_half_width(psi, n):.3f}" for psi in DISCORDANCES)
        lines.append(f"| {n} | {cells} |")
    lines += ["", "| margin | " + " | ".join(f"discordance {psi:.0%}" for psi in DISCORDANCES) + " |",
              "|" + "---|" * (len(DISCORDANCES) + 1)]
    for margin in MARGINS:
        cells = " | ".join(f"{keys_for_margin(psi, margin):,}" for psi in DISCORDANCES)
        lines.append(f"| {margin:g} | {cells} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(margin_table())
