"""OpenAI and Azure OpenAI embeddings backend.

Speaks the embeddings endpoint over plain HTTP (``urllib``), so it needs no SDK.
Configuration comes from the environment:

- OpenAI: ``OPENAI_API_KEY`` (and optionally ``OPENAI_BASE_URL``, default
  ``https://api.openai.com/v1``).
- Azure OpenAI: ``AZURE_OPENAI_API_KEY``, ``AZURE_OPENAI_ENDPOINT``,
  ``AZURE_OPENAI_DEPLOYMENT_NAME``, ``AZURE_OPENAI_API_VERSION``.

The key is sent in a request header only; it is never printed, logged, part of
``repr`` or of an error message.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Sequence

import numpy as np

from sgi_core.embedding.base import ProgressCallback
from sgi_core.errors import SGIInputError

_DEFAULT_OPENAI_BASE = "https://api.openai.com/v1"
_MAX_INPUTS_PER_REQUEST = 256


def _require_env(names: Sequence[str]) -> dict[str, str]:
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        raise SGIInputError(
            f"API embeddings need the environment variable(s) {', '.join(missing)}",
            hint="Set them, or pick an offline model such as 'minilm'",
        )
    return {n: os.environ[n] for n in names}


class OpenAIEncoder:
    """Embeddings from the OpenAI or Azure OpenAI REST API.

    Parameters
    ----------
    provider : {"openai", "azure"}
    model : str, optional
        OpenAI model name (e.g. ``text-embedding-3-small``); for Azure the
        deployment name, default ``$AZURE_OPENAI_DEPLOYMENT_NAME``.
    timeout : float
        Seconds per HTTP request.
    """

    def __init__(self, provider: str, model: str | None = None, *, timeout: float = 60.0):
        self.provider = provider
        self.timeout = timeout
        self.max_seq_length = None
        if provider == "openai":
            env = _require_env(["OPENAI_API_KEY"])
            if not model:
                raise SGIInputError("name the OpenAI embedding model, e.g. 'openai:text-embedding-3-small'")
            base = os.environ.get("OPENAI_BASE_URL", _DEFAULT_OPENAI_BASE).rstrip("/")
            self._url = f"{base}/embeddings"
            self._headers = {"Authorization": f"Bearer {env['OPENAI_API_KEY']}"}
            self._body_model = model
        elif provider == "azure":
            env = _require_env(
                ["AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_VERSION"]
                + ([] if model else ["AZURE_OPENAI_DEPLOYMENT_NAME"])
            )
            model = model or env["AZURE_OPENAI_DEPLOYMENT_NAME"]
            endpoint = env["AZURE_OPENAI_ENDPOINT"].rstrip("/")
            self._url = (
                f"{endpoint}/openai/deployments/{model}/embeddings"
                f"?api-version={env['AZURE_OPENAI_API_VERSION']}"
            )
            self._headers = {"api-key": env["AZURE_OPENAI_API_KEY"]}
            self._body_model = None
        else:
            raise SGIInputError(f"unknown API provider '{provider}'", hint="Use 'openai' or 'azure'")
        self.model_id = f"{provider}:{model}"

    def __repr__(self) -> str:
        return f"OpenAIEncoder(model_id={self.model_id!r})"

    def _post(self, inputs: list[str]) -> np.ndarray:
        body = {"input": inputs}
        if self._body_model:
            body["model"] = self._body_model
        request = urllib.request.Request(
            self._url,
            data=json.dumps(body).encode("utf-8"),
            headers={"Content-Type": "application/json", **self._headers},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as err:
            raise SGIInputError(
                f"the embeddings API of {self.model_id} answered HTTP {err.code}",
                hint="Check the key, endpoint, deployment and API version",
            ) from None
        except urllib.error.URLError as err:
            raise SGIInputError(
                f"cannot reach the embeddings API of {self.model_id}: {err.reason}",
                hint="Check the endpoint and the network, or pick an offline model",
            ) from None
        items = sorted(payload["data"], key=lambda item: item["index"])
        return np.asarray([item["embedding"] for item in items], dtype=np.float32)

    def encode(
        self, texts: Sequence[str], *, batch_size: int = 64, progress: ProgressCallback | None = None
    ) -> np.ndarray:
        texts = list(texts)
        parts = []
        step = min(max(batch_size, 1), _MAX_INPUTS_PER_REQUEST)
        for start in range(0, len(texts), step):
            parts.append(self._post(texts[start : start + step]))
            if progress is not None:
                progress(min(start + step, len(texts)), len(texts))
        return np.vstack(parts) if parts else np.empty((0, 0), dtype=np.float32)
