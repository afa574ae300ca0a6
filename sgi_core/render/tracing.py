"""Words of a pull from a tracing server: the count line the command line and the Data page show."""

from __future__ import annotations


def count_line(window) -> str:
    """``3,220 traces in the window, 3,220 rows, 0 without a context``, naming the first few without one.

    Parameters
    ----------
    window : PulledWindow
        :class:`sgi_core.tracing.phoenix_pull.PulledWindow`.
    """
    from sgi_core.io.convert.traces import IDS_SHOWN

    shown = ", ".join(window.without_context[:IDS_SHOWN])
    more = len(window.without_context) - IDS_SHOWN
    named = f" ({shown}{f' and {more:,} more' if more > 0 else ''})" if shown else ""
    return (f"{window.n_traces:,} traces in the window, {len(window.frame):,} rows, "
            f"{len(window.without_context):,} without a context{named}")
