"""The app's one bootstrap setting: how many resamples stand behind the intervals its pages draw.

Unset, every interval is made with the resamples the command line makes the same result
with (``report``'s 1,000, ``compare``'s 2,000), so a page and the command line agree to
the last digit. ``$SGI_APP_RESAMPLES`` sets one count for every interval instead: fewer
for a quicker first look at a large file, more for steadier interval ends. Each page
says how many resamples its intervals used.
"""

from __future__ import annotations

import os

from sgi_core.errors import SGIInputError

#: The resamples of a file's report on the command line (``report --n-boot``'s default).
REPORT_N_BOOT = 1000
#: The environment variable that sets the count.
RESAMPLES_ENV = "SGI_APP_RESAMPLES"
#: Fewer resamples than this leave a 95% percentile interval's ends resting on two or three replicates.
MIN_RESAMPLES = 100
#: More than this and a page waits minutes on a large file for digits that no longer move.
MAX_RESAMPLES = 20_000


def resamples_setting() -> int | None:
    """The count ``$SGI_APP_RESAMPLES`` sets, or None where it is unset or blank.

    Raises
    ------
    SGIInputError
        When the variable is not a whole number from :data:`MIN_RESAMPLES` to :data:`MAX_RESAMPLES`.
    """
    text = os.environ.get(RESAMPLES_ENV, "").strip()
    if not text:
        return None
    try:
        count = int(text)
    except ValueError:
        count = -1
    if not MIN_RESAMPLES <= count <= MAX_RESAMPLES:
        raise SGIInputError(f"${RESAMPLES_ENV} is '{text}', not a number of resamples from {MIN_RESAMPLES:,} to "
                            f"{MAX_RESAMPLES:,}", hint=f"Unset it for the command line's counts, or set e.g. "
                                                      f"{RESAMPLES_ENV}=500 before starting the app")
    return count


def app_resamples(default: int) -> int:
    """The resamples behind one interval: the count :func:`resamples_setting` reads, else ``default``."""
    count = resamples_setting()
    return default if count is None else count
