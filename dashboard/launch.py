"""``python -m dashboard.launch`` (``make run``): the app behind a fresh access token, its URL printed.

127.0.0.1 is reachable by every account and container on the machine, so each launch
makes a random token (as Jupyter does), starts ``streamlit run dashboard/serve.py`` with it
in :data:`TOKEN_ENV`, and once the app answers prints the one URL that opens it,
``http://127.0.0.1:<port>/?token=<token>`` (``/<base>/?token=`` with ``--server.baseUrlPath``).
:mod:`dashboard.serve` puts :class:`dashboard.guard.TokenGuard` in front of every Streamlit
route: without the token (then its cookie) a client gets no page, websocket, upload, media or
metrics, only the health check's ``ok``. Extra arguments go to ``streamlit run``.

"The app answers" means its own child: the launcher sends the health check a random nonce
and prints the URL only when the answer carries the nonce's HMAC under the token
(:func:`dashboard.guard.launch_proof`), which no other server on the port can make; a port
something else listens on is refused before the app starts. The soft limit on open files is
raised to the hard limit first (:func:`raise_open_files_limit`), so that it takes that many
idle clients, not 1,024, to make the app unreachable.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

try:  # POSIX; elsewhere the open-files limit is left as it is
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None

from dashboard.guard import HEALTH_PATH, NONCE_HEADER, PROOF_HEADER, launch_proof

#: Environment variable holding the launch's token; the app asks for it when it is set.
TOKEN_ENV = "SGI_APP_TOKEN"
#: The app behind the token guard (``dashboard/app.py`` inside it).
SERVED_APP = Path(__file__).resolve().parent / "serve.py"
#: Seconds to wait for the app to answer before giving up.
START_SECONDS = 120
#: What a ``--server.baseUrlPath`` may hold: path segments of letters, digits, ``.``, ``_``, ``~`` and ``-``.
_BASE_PATH = re.compile(r"[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*")


class LaunchError(Exception):
    """An option the launcher cannot serve the app with, or a port it cannot use; the message says what to do."""


def raise_open_files_limit() -> tuple[int, int]:
    """Raise this process's soft limit on open files (``RLIMIT_NOFILE``) to its hard limit; children inherit it.

    Every client connection holds a file descriptor, so the soft limit (often 1,024) is how
    many idle connections make the app unreachable. An unlimited hard limit is capped at the
    kernel's ``fs.nr_open``. Returns the ``(soft, hard)`` limits in force afterwards; where the
    system refuses the change (or has no such limit: ``(-1, -1)``) they are left as they were.
    """
    if resource is None:  # pragma: no cover - Windows
        return -1, -1
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard
    if hard == resource.RLIM_INFINITY:
        try:
            target = int(Path("/proc/sys/fs/nr_open").read_text())
        except (OSError, ValueError):
            return soft, hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (OSError, ValueError):
            pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def base_path(arguments: list[str]) -> str:
    """The ``--server.baseUrlPath`` given, without its outer slashes (``""`` for none).

    Raises
    ------
    LaunchError
        A base path holding characters other than letters, digits, ``.``, ``_``, ``~``, ``-``
        and single slashes between them, or a ``.`` or ``..`` part.
    """
    given = _option(arguments, "--server.baseUrlPath")
    base = (given or "").strip("/")
    if base and (not _BASE_PATH.fullmatch(base) or {".", ".."} & set(base.split("/"))):
        raise LaunchError(f"--server.baseUrlPath {given!r} is not a path this app can be served under: use letters, "
                          "digits, '.', '_', '~' and '-', with single '/' between parts, none of them '.' or '..' "
                          "(for example 'tools/sgi')")
    return base


def port_taken(host: str, port: int) -> bool:
    """Whether something already listens on ``host:port`` (binding it, as the app will, fails)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        # As the app binds: a connection of a closed socket in TIME_WAIT owns no port.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


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


def answers_with_token(port: int, token: str, base: str = "") -> bool:
    """Whether the server on ``port`` answers its health check with the proof that it holds ``token``."""
    nonce = secrets.token_hex(16)
    prefix = f"/{base}" if base else ""
    request = urllib.request.Request(f"http://127.0.0.1:{port}{prefix}{HEALTH_PATH}", headers={NONCE_HEADER: nonce})
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            proof = response.headers.get(PROOF_HEADER, "")
            return response.read() == b"ok" and hmac.compare_digest(proof, launch_proof(token, nonce))
    except OSError:
        return False


def main(arguments: list[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if arguments is None else arguments)
    raise_open_files_limit()
    token = secrets.token_urlsafe(32)
    host = _option(arguments, "--server.address") or "127.0.0.1"
    try:
        base = base_path(arguments)
        given = _option(arguments, "--server.port")
        if given is not None and not (given.isascii() and given.isdigit() and 1 <= int(given) <= 65535):
            raise LaunchError(f"--server.port {given!r} is not a port number: give one from 1 to 65535")
        port = int(given or 0) or free_port()
        if given is None:
            arguments += ["--server.port", str(port)]
        if port_taken(host, port):
            raise LaunchError(f"port {port} on {host} is taken: another program listens on it. Choose another "
                              "with --server.port, or leave it out to take the first free port from 8501")
    except LaunchError as err:
        print(f"dashboard.launch: {err}", file=sys.stderr, flush=True)
        return 2
    child = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(SERVED_APP), *arguments],
                             env={**os.environ, TOKEN_ENV: token})
    # Stopped by a service manager or `kill` (SIGTERM), the launcher stops the app it started, not only itself.
    signal.signal(signal.SIGTERM, lambda signum, frame: child.terminate())
    try:
        deadline = time.monotonic() + START_SECONDS
        while not answers_with_token(port, token, base):
            if child.poll() is not None or time.monotonic() > deadline:
                child.terminate()
                code = child.wait() or 1
                print(f"dashboard.launch: the app did not answer on port {port} (exit status {code}); if the port was "
                      "taken meanwhile, choose another with --server.port", file=sys.stderr, flush=True)
                return code
            time.sleep(0.3)
        path = f"/{base}/" if base else "/"
        print(f"\n  Open the SGI Workbench at  http://{host}:{port}{path}?token={token}\n"
              "  (the token is new at every launch; without it the app refuses all but its health check)\n", flush=True)
        return child.wait()
    except KeyboardInterrupt:  # the terminal sent Ctrl-C to the app too; let it stop
        return child.wait()


if __name__ == "__main__":
    sys.exit(main())
