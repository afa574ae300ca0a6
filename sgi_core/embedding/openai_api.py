"""OpenAI and Azure OpenAI embeddings backend.

Speaks the embeddings endpoint through :class:`sgi_core.http.client.ApiClient` (https
only except on loopback hosts, no redirects, retries with backoff, one-line errors), so it
needs no SDK. Each reply is checked against its request: one vector per input, indices
0..n-1 each once, and the same width throughout. Configuration comes from the environment:

- OpenAI: ``OPENAI_API_KEY`` (and optionally ``OPENAI_BASE_URL``, default
  ``https://api.openai.com/v1``).
- Azure OpenAI: ``AZURE_OPENAI_API_KEY``, ``AZURE_OPENAI_ENDPOINT``,
  ``AZURE_OPENAI_DEPLOYMENT_NAME``, ``AZURE_OPENAI_API_VERSION``.

The key is sent in a request header only; it is never printed, logged, part of
``repr`` or of an error message.

Vectors are paid for: when a request fails after others succeeded, the vectors already
received are kept by the encoder, and the next :meth:`OpenAIEncoder.encode` sends only
the texts still missing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from urllib.parse import quote

import numpy as np

from sgi_core.embedding.base import ProgressCallback
from sgi_core.errors import SGIInputError
from sgi_core.http.client import ApiClient, ApiError

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
    client_options : dict, optional
        More keyword arguments of :class:`~sgi_core.http.client.ApiClient` (``retry``, ``sleep``).
    """

    def __init__(self, provider: str, model: str | None = None, *, timeout: float = 60.0, client_options=None):
        self.provider = provider
        self.timeout = timeout
        self.max_seq_length = None
        self._width: int | None = None
        #: Text -> vector received during a call that then failed; used (and emptied) by the next call.
        self._kept: dict[str, np.ndarray] = {}
        options = {"timeout": timeout, **(client_options or {})}
        if provider == "openai":
            env = _require_env(["OPENAI_API_KEY"])
            if not model:
                raise SGIInputError("name the OpenAI embedding model, e.g. 'openai:text-embedding-3-small'")
            base = os.environ.get("OPENAI_BASE_URL", _DEFAULT_OPENAI_BASE)
            self._client = ApiClient(base, api_key=env["OPENAI_API_KEY"], **options)
            self._path, self._params, self._body_model = "embeddings", None, model
        elif provider == "azure":
            env = _require_env(
                ["AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_VERSION"]
                + ([] if model else ["AZURE_OPENAI_DEPLOYMENT_NAME"])
            )
            model = model or env["AZURE_OPENAI_DEPLOYMENT_NAME"]
            self._client = ApiClient(env["AZURE_OPENAI_ENDPOINT"], api_key=env["AZURE_OPENAI_API_KEY"],
                                     key_header="api-key", **options)
            self._path = f"openai/deployments/{quote(model, safe='')}/embeddings"
            self._params = {"api-version": env["AZURE_OPENAI_API_VERSION"]}
            self._body_model = None
        else:
            raise SGIInputError(f"unknown API provider '{provider}'", hint="Use 'openai' or 'azure'")
        self.model_id = f"{provider}:{model}"
        # The embedding cache keys vectors on the endpoint, path and model, never on the key.
        self.cache_key = f"api:{self._client.url_for(self._path)}|{self._body_model or model}"

    @property
    def dimension(self) -> int | None:
        """Width of the vectors, known after the first reply."""
        return self._width

    def __repr__(self) -> str:
        return f"OpenAIEncoder(model_id={self.model_id!r})"

    def _post(self, inputs: list[str]) -> np.ndarray:
        body = {"input": inputs}
        if self._body_model:
            body["model"] = self._body_model
        try:
            payload = self._client.post_json(self._path, body, params=self._params)
        except ApiError as err:
            raise ApiError(f"the embeddings API of {self.model_id}: {err.message}", fatal=err.fatal,
                           hint=err.hint) from None
        vectors = self._check_reply(payload, len(inputs))
        self._width = vectors.shape[1]
        return vectors

    def _check_reply(self, payload: dict, n_inputs: int) -> np.ndarray:
        """The reply's vectors in input order, after checking count, indices and width."""

        def bad(problem: str) -> SGIInputError:
            return SGIInputError(f"the embeddings API of {self.model_id} at {self._client.host} {problem}",
                                 hint="Check that the endpoint serves this embedding model")

        items = payload.get("data")
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise bad("answered without a 'data' list of embeddings")
        if len(items) != n_inputs:
            raise bad(f"returned {len(items)} vectors for {n_inputs} inputs")
        if sorted(item.get("index") for item in items if type(item.get("index")) is int) != list(range(n_inputs)):
            raise bad(f"returned indices that are not 0..{n_inputs - 1} each once")
        try:
            vectors = [np.asarray(item.get("embedding"), dtype=np.float32)
                       for item in sorted(items, key=lambda item: item["index"])]
        except (TypeError, ValueError):
            raise bad("returned an embedding that is not a list of numbers") from None
        widths = sorted({v.shape[0] if v.ndim == 1 else -1 for v in vectors})
        expected = self._width or widths[0]
        if widths != [expected] or expected < 1:
            shown = ", ".join("?" if w < 0 else str(w) for w in widths)
            raise bad(f"returned vectors of width {shown}, expected one width of {expected}")
        matrix = np.vstack(vectors)
        if not np.isfinite(matrix).all():
            raise bad("returned an embedding holding NaN or infinity")
        return matrix

    def encode(
        self, texts: Sequence[str], *, batch_size: int = 64, progress: ProgressCallback | None = None
    ) -> np.ndarray:
        """Embed ``texts`` in requests of at most ``batch_size`` (and 256) inputs.

        Raises
        ------
        SGIInputError
            A request failed for good, or a reply did not match its request; the vectors
            received before are kept, and a new call sends only the texts still missing.
        """
        texts = list(texts)
        known = {text: self._kept[text] for text in texts if text in self._kept}
        missing = list(dict.fromkeys(text for text in texts if text not in known))
        step = min(max(batch_size, 1), _MAX_INPUTS_PER_REQUEST)
        for start in range(0, len(missing), step):
            batch = missing[start : start + step]
            try:
                vectors = self._post(batch)
            except SGIInputError as err:
                self._kept.update(known)
                if not self._kept:
                    raise
                raise ApiError(f"{err.message}; the {len(self._kept):,} vectors received before are kept, and "
                               "encoding again sends only the texts still missing",
                               fatal=getattr(err, "fatal", False), hint=err.hint) from None
            known.update(zip(batch, vectors))
            if progress is not None:
                progress(min(start + step, len(missing)), len(missing))
        self._kept = {}
        return np.vstack([known[text] for text in texts]) if texts else np.empty((0, 0), dtype=np.float32)
