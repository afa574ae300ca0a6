"""The running app opens its websocket only for loopback Host headers (no DNS rebinding)."""

from __future__ import annotations

import base64
import os
import socket

import pytest
import tomllib

from tests.app_server import running_app
from tests.conftest import REPO

LOOPBACK = ("localhost", "127.0.0.1", "[::1]")


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    """The app started as ``make run`` starts it (the repository's config), on a free port."""
    env = {"SGI_CACHE_DIR": str(tmp_path_factory.mktemp("hosts-cache")), "SGI_DASHBOARD_MODEL": "hashing"}
    with running_app(env, tmp_path_factory.mktemp("hosts-log") / "streamlit.log") as port:
        yield port


def websocket_status(port: int, host: str) -> int:
    """HTTP status of a websocket upgrade to the app's stream sent with the header ``Host: host``."""
    key = base64.b64encode(os.urandom(16)).decode()
    request = (f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: streamlit\r\n\r\n")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request.encode())
        status_line = sock.recv(256).decode("latin-1").split("\r\n")[0]
    return int(status_line.split()[1])


def test_config_names_only_loopback_hosts():
    hosts = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())["server"]["allowedHosts"]
    assert sorted(hosts) == sorted(h.strip("[]") for h in LOOPBACK)


@pytest.mark.parametrize("host", LOOPBACK)
def test_loopback_host_gets_the_websocket(port, host):
    assert websocket_status(port, f"{host}:{port}") == 101


@pytest.mark.parametrize("host", ["evil.example", "192.168.1.20", "localhost.evil.example"])
def test_foreign_host_header_is_refused(port, host):
    assert websocket_status(port, f"{host}:{port}") == 403
