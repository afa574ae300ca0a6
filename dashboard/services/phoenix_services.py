"""The Data page's Phoenix source: a window pulled by the library's one pull path, handed on as a Parquet file.

A pull is an action, not a cached computation: the server's traces change, and the file it
makes becomes the current data (:func:`dashboard.state.set_file`), cached from there on as any upload.
"""

from __future__ import annotations

import io
import re
import warnings

from sgi_core.render.tracing import count_line
from sgi_core.tracing.connection import Connection
from sgi_core.tracing.phoenix_pull import pull_phoenix, window_time


def pull_window(url: str, project: str, since: str, until: str) -> tuple[str, bytes, tuple[str, ...], str]:
    """Pull the window: the file's name, its Parquet bytes, the warnings and the count line.

    Raises
    ------
    SGIInputError
        A URL, project or time that cannot be used, or a server that refuses or cannot be reached.
    """
    with warnings.catch_warnings(record=True) as caught:  # plain http off this machine: shown on the page
        warnings.simplefilter("always", UserWarning)
        since_time, until_time = window_time(since, "Since"), window_time(until, "Until")
        with Connection(url) as connection:
            window = pull_phoenix(connection, project.strip(), since=since_time, until=until_time)
    buffer = io.BytesIO()
    window.frame.to_parquet(buffer, index=False)
    name = "phoenix-" + re.sub(r"[^A-Za-z0-9._-]+", "_", project.strip()) + ".parquet"
    return name, buffer.getvalue(), (*(str(w.message) for w in caught), *window.warnings), count_line(window)
