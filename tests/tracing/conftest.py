"""A real Phoenix server for the session, and OpenInference RAG traces sent to it through the OpenTelemetry SDK.

The server runs from its own environment, ``.venv-phoenix`` (``.ci/run`` installs it; it never
shares the project's), on free loopback ports, offline, in a temporary working folder. Where
``CI`` is set the server is required: a missing environment or a server that does not start
fails the tests. Elsewhere, without the environment, they skip and say how to install it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from dataclasses import dataclass

import httpx
import pytest

from tests.conftest import REPO

PHOENIX_VENV = REPO / ".venv-phoenix"
INSTALL = "python3 -m venv .venv-phoenix && .venv-phoenix/bin/pip install -r tests/tracing/phoenix-server.txt"
#: Seconds the server may take to answer /healthz (it takes about 13 on two cores).
START_SECONDS = 90
#: The sender runs in the server's environment, which has the OpenTelemetry SDK.
collect_ignore = ["send_traces.py"]


@dataclass(frozen=True)
class Server:
    url: str
    log: object


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _unavailable(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"the Phoenix server is required in CI: {message}")
    pytest.skip(f"{message}; install the server with: {INSTALL}")


@pytest.fixture(scope="session")
def phoenix_server(tmp_path_factory):
    """A Phoenix server on free loopback ports, telemetry and outside resources off, stopped after the session."""
    executable = PHOENIX_VENV / "bin" / "phoenix"
    if not executable.exists():
        _unavailable(f"{executable} is missing")
    folder = tmp_path_factory.mktemp("phoenix")
    port, grpc_port = _free_port(), _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(folder), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
           "PHOENIX_GRPC_PORT": str(grpc_port), "PHOENIX_TELEMETRY_ENABLED": "false",
           "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false"}
    env.pop("PHOENIX_API_KEY", None)
    log = folder / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen([str(executable), "serve"], env=env, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_SECONDS
    try:
        while True:
            if process.poll() is not None:
                _unavailable(f"the server exited with {process.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                _unavailable(f"no answer on {url}/healthz after {START_SECONDS} s: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield Server(url, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def send_traces(server: Server, project: str, traces: list[dict]) -> list[dict]:
    """Send ``traces`` (see send_traces.py) and wait until the server lists every span; their trace and root ids."""
    spec = {"endpoint": f"{server.url}/v1/traces", "project": project, "traces": traces}
    sent = subprocess.run([str(PHOENIX_VENV / "bin" / "python"), str(REPO / "tests" / "tracing" / "send_traces.py")],
                          input=json.dumps(spec), capture_output=True, text=True, timeout=120, check=True)
    ids = json.loads(sent.stdout)
    expected = sum(len(t["retrievals"]) + 2 for t in traces)  # the root, each retriever, the LLM
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        reply = httpx.get(f"{server.url}/v1/projects/{project}/spans", params={"limit": 1000}, timeout=10)
        if reply.status_code == 200 and len(reply.json()["data"]) >= expected:
            return ids
        time.sleep(0.2)
    raise AssertionError(f"the server stored fewer than {expected} spans of project {project} within 30 s")
