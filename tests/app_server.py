"""The dashboard started as users start it (``streamlit run dashboard/app.py``), for tests that talk to it."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboard.launch import TOKEN_ENV
from tests.conftest import REPO


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_app(env: dict, log: Path, *arguments: str, token: str | None = None) -> Iterator[int]:
    """Start the app on a free local port with ``env`` added to the environment; yield the port once healthy.

    ``arguments`` are extra ``streamlit run`` options; the app's output goes to ``log``.
    With ``token``, the app asks for it as ``make run`` makes it do (``?token=`` in the URL).
    The test fails when the app is not healthy within 60 s.
    """
    port = free_port()
    env = {**os.environ, **env}
    env.pop(TOKEN_ENV, None)
    if token is not None:
        env[TOKEN_ENV] = token
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "dashboard/app.py", "--server.port",
                                    str(port), *arguments], cwd=REPO, env=env, stdout=out,
                                   stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                    if response.read() == b"ok":
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"streamlit did not start; see {log}")
            time.sleep(0.5)
        try:
            yield port
        finally:
            process.terminate()
            process.wait(timeout=20)
