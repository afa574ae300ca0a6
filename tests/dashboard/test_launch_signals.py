"""`make run`'s launcher: a port can be chosen, and SIGTERM stops the app it started, not only the launcher."""

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

from tests.app_server import free_port
from tests.conftest import REPO


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
            return response.read() == b"ok"
    except OSError:
        return False


def test_sigterm_to_the_launcher_stops_the_app_on_the_port_it_was_given(tmp_path):
    port = free_port()
    env = {**os.environ, "SGI_CACHE_DIR": str(tmp_path / "cache"), "SGI_DATA_DIR": str(tmp_path / "data"),
           "SGI_DASHBOARD_MODEL": "hashing"}
    launcher = subprocess.Popen([sys.executable, "-m", "dashboard.launch", "--server.port", str(port),
                                 "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                                cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + 120
        line = ""
        while "Open the SGI Workbench" not in line and time.monotonic() < deadline:
            line = launcher.stdout.readline()
        assert re.search(rf"http://127\.0\.0\.1:{port}/\?token=\S+", line), line
        assert healthy(port)
        launcher.send_signal(signal.SIGTERM)
        launcher.wait(timeout=30)
        stopped = time.monotonic() + 30
        while healthy(port) and time.monotonic() < stopped:
            time.sleep(0.3)
        assert not healthy(port)
    finally:
        if launcher.poll() is None:
            launcher.kill()
