"""The app as ``python -m dashboard.launch`` serves it: ``dashboard/app.py`` behind the token guard.

``streamlit run dashboard/serve.py`` finds the ``st.App`` below and serves it through Streamlit's own ASGI
server, with the guard as the outermost middleware, so no Streamlit route answers before the token is checked.
The token comes from :data:`~dashboard.launch.TOKEN_ENV`; without it the app does not start. The guard learns
``server.baseUrlPath`` from Streamlit's configuration, so the health check answers under the base path.
"""

import os
import sys
from pathlib import Path

# `streamlit run` puts only this folder on sys.path; the guard lives in the repository's package.
REPO = str(Path(__file__).resolve().parents[1])
if REPO not in sys.path:
    sys.path.insert(0, REPO)

import streamlit as st  # noqa: E402
from starlette.middleware import Middleware  # noqa: E402

from dashboard.guard import TokenGuard  # noqa: E402
from dashboard.launch import TOKEN_ENV  # noqa: E402

if not os.environ.get(TOKEN_ENV):
    sys.exit(f"dashboard/serve.py serves the app behind the launch token in ${TOKEN_ENV}, which is not set; "
             "start it with `python -m dashboard.launch` (make run).")

app = st.App(Path(__file__).with_name("app.py"),
             middleware=[Middleware(TokenGuard, token=os.environ[TOKEN_ENV],
                                    base_path=st.get_option("server.baseUrlPath") or "")])
