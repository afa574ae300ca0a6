"""``python -m dashboard.launch`` (``make run``): the app behind a fresh access token, its URL printed.

127.0.0.1 is reachable by every account and container on the machine, so each launch
makes a random token (as Jupyter does), starts ``streamlit run dashboard/serve.py`` with it
in :data:`TOKEN_ENV`, and once the app answers prints the one URL that opens it,
``http://127.0.0.1:<port>/?token=<token>``. :mod:`dashboard.serve` puts
:class:`dashboard.guard.TokenGuard` in front of every Streamlit route: without the token
(then its cookie) a client gets no page, websocket, upload, media or metrics, only the
health check's ``ok``. Extra arguments go to ``streamlit run``.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

#: Environment variable holding the launch's token; the app asks for it when it is set.
TOKEN_ENV = "SGI_APP_TOKEN"
#: The app behind the token guard (``dashboard/app.py`` inside it).
SERVED_APP = Path(__file__).resolve().parent / "serve.py"
#: Seconds to wait for the app to answer before giving up.
START_SECONDS = 120


def free_port(first: int = 8501) -> int:
    """The first port from ``first`` that nothing on 127.0.0.1 listens on (Streamlit's default is 8501)."""
    for port in range(first, first + 100):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise SystemExit(f"no free port from {first} to {first + 99} on 127.0.0.1")


def _option(arguments: list[str], name: str) -> str | None:
    for i, argument in enumerate(arguments):
        if argument == name and i + 1 < len(arguments):
            return arguments[i + 1]
        if argument.startswith(name + "="):
            return argument.split("=", 1)[1]
    return None


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
            return response.read() == b"ok"
    except OSError:
        return False


def main(arguments: list[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if arguments is None else arguments)
    token = secrets.token_urlsafe(32)
    port = int(_option(arguments, "--server.port") or 0) or free_port()
    if _option(arguments, "--server.port") is None:
        arguments += ["--server.port", str(port)]
    host = _option(arguments, "--server.address") or "127.0.0.1"
    child = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(SERVED_APP), *arguments],
                             env={**os.environ, TOKEN_ENV: token})
    # Stopped by a service manager or `kill` (SIGTERM), the launcher stops the app it started, not only itself.
    signal.signal(signal.SIGTERM, lambda signum, frame: child.terminate())
    try:
        deadline = time.monotonic() + START_SECONDS
        while not _healthy(port):
            if child.poll() is not None or time.monotonic() > deadline:
                child.terminate()
                return child.wait() or 1
            time.sleep(0.3)
        print(f"\n  Open the SGI Workbench at  http://{host}:{port}/?token={token}\n"
              "  (the token is new at every launch; without it the app refuses all but its health check)\n", flush=True)
        return child.wait()
    except KeyboardInterrupt:  # the terminal sent Ctrl-C to the app too; let it stop
        return child.wait()


if __name__ == "__main__":
    sys.exit(main())
