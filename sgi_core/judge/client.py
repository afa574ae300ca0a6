"""Asking an OpenAI-compatible chat-completions endpoint one judge task.

A task answered with a JSON object is asked in JSON mode; a task answered Yes or No
(:attr:`~sgi_core.judge.prompts.Task.answer_form` ``"yes_no"``) is asked for its token
log-probabilities (``logprobs=true``, ``top_logprobs``), read by :mod:`sgi_core.judge.yes_no`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from sgi_core.errors import SGIInputError
from sgi_core.http.client import ApiClient, ApiError
from sgi_core.judge.prompts import AnswerError, Task, decode_answer
from sgi_core.judge.yes_no import TOP_LOGPROBS, YesNoError, yes_no_verdict

#: Characters per token assumed by the estimates (English prose, OpenAI tokenizers).
CHARS_PER_TOKEN = 4
#: Longest judge reply read (decompressed): an answer of ``max_tokens`` tokens is a few KB.
MAX_REPLY_BYTES = 4 * 2**20
#: Characters of a malformed answer quoted back to the model when asking again.
ECHO_CHARS = 2_000
#: Most tokens one request may report using; a larger or negative count is replaced by the estimate.
MAX_TOKENS_PER_REQUEST = 10_000_000
#: Longest reply asked for a Yes/No task: the word, and room for a leading space or a full stop.
YES_NO_MAX_TOKENS = 8


def estimate_tokens(messages: list[dict]) -> int:
    """Rough input tokens of a chat request: characters / :data:`CHARS_PER_TOKEN`, plus 4 per message.

    Examples
    --------
    >>> estimate_tokens([{"role": "user", "content": "x" * 40}])
    14
    """
    return sum(len(m["content"]) // CHARS_PER_TOKEN + 4 for m in messages)


@dataclass(frozen=True)
class Reply:
    """A task's answer: the checked JSON object, its parsed value and the tokens spent."""

    answer: dict
    value: object
    tokens: int


class JudgeClient:
    """A judge model behind ``{endpoint}/chat/completions``.

    Parameters
    ----------
    endpoint : str
        Base URL, e.g. ``https://api.openai.com/v1`` or ``http://127.0.0.1:8000/v1``.
    model : str
        The judge model's name at that endpoint.
    api_key : str, optional
        None for local servers that need no key.
    max_tokens : int
        Longest answer asked for.
    json_mode : bool
        Ask for ``response_format={"type": "json_object"}`` (OpenAI, vLLM, Ollama and
        llama.cpp servers accept it).
    **client_options
        Passed to :class:`~sgi_core.http.client.ApiClient` (``timeout``, ``retry``, ``sleep``,
        ``max_reply_bytes``, default :data:`MAX_REPLY_BYTES`).

    Attributes
    ----------
    tokens : int
        Tokens of every reply so far, as the server counted them, or the estimate where
        it gave no plausible count (none, negative, above :data:`MAX_TOKENS_PER_REQUEST`).
    """

    def __init__(self, endpoint: str, model: str, *, api_key: str | None = None, max_tokens: int = 1024,
                 json_mode: bool = True, **client_options):
        if not str(model).strip():
            raise SGIInputError("name the judge model", hint="Pass --judge-model, e.g. gpt-4o-mini")
        self.model = str(model).strip()
        self.max_tokens = max_tokens
        self.json_mode = json_mode
        self._api = ApiClient(endpoint, api_key=api_key, **{"max_reply_bytes": MAX_REPLY_BYTES, **client_options})
        self.endpoint = str(self._api.base_url)
        self._lock = threading.Lock()
        self.tokens = 0

    @property
    def n_requests(self) -> int:
        """Requests sent so far, retries and asking again after a malformed answer included."""
        return self._api.n_requests

    def cancel(self) -> None:
        """Stop at once: requests in flight and later ones fail (see :meth:`ApiClient.cancel`)."""
        self._api.cancel()

    def resume(self) -> None:
        """Accept requests again after :meth:`cancel`."""
        self._api.resume()

    def __repr__(self) -> str:
        return f"JudgeClient(endpoint={self.endpoint!r}, model={self.model!r})"

    def close(self) -> None:
        self._api.close()

    def _chat(self, messages: list[dict], answer_form: str = "json") -> tuple[object, object, int]:
        """``(content, logprobs, tokens)`` of one request; ``logprobs`` is the choice's, None unless asked."""
        body = {"model": self.model, "messages": messages, "temperature": 0, "max_tokens": self.max_tokens}
        if answer_form == "yes_no":
            body.update(max_tokens=min(self.max_tokens, YES_NO_MAX_TOKENS), logprobs=True, top_logprobs=TOP_LOGPROBS)
        elif self.json_mode:
            body["response_format"] = {"type": "json_object"}
        payload = self._api.post_json("chat/completions", body)
        usage = payload.get("usage")
        total = usage.get("total_tokens") if isinstance(usage, dict) else None
        # A server's count is believed only within reason (not negative, not 10**41).
        plausible = type(total) is int and 0 <= total <= MAX_TOKENS_PER_REQUEST
        tokens = total if plausible else estimate_tokens(messages)
        with self._lock:
            self.tokens += tokens
        try:
            choice = payload["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            return None, None, tokens
        return content, choice.get("logprobs") if answer_form == "yes_no" else None, tokens

    @staticmethod
    def _answer(task: Task, content, logprobs, inputs: dict) -> tuple[dict, object]:
        """The answer object (what the cache keeps) and its parsed value; raises :class:`AnswerError`."""
        if task.answer_form == "yes_no":
            try:
                answer = yes_no_verdict(content, logprobs).to_answer()
            except YesNoError as err:
                raise AnswerError(str(err)) from None
        else:
            answer = decode_answer(content)
        return answer, task.parse(answer, inputs)

    def check_connection(self) -> str:
        """Send one tiny chat request (a few tokens) and return the model name the endpoint answered as.

        Raises
        ------
        ApiError
            The endpoint cannot be reached, rejects the key or the model, or does not
            answer as a chat-completions API.
        """
        body = {"model": self.model, "messages": [{"role": "user", "content": "Reply with OK."}], "max_tokens": 2,
                "temperature": 0}
        payload = self._api.post_json("chat/completions", body)
        choices = payload.get("choices")
        if not isinstance(choices, list) or not choices:
            raise ApiError(f"{self._api.host} answered without 'choices', not as a chat-completions API",
                           hint="Check that the endpoint URL ends where /chat/completions can be added (often /v1)")
        answered = payload.get("model")
        return answered[:200] if isinstance(answered, str) and answered else self.model

    def ask(self, task: Task, inputs: dict) -> Reply:
        """Ask ``task`` about one row; a malformed answer is asked again once, with the reason.

        Raises
        ------
        AnswerError
            The second answer is malformed too; the message gives the reason.
        ApiError
            The request failed (after the client's retries).
        """
        messages = task.messages(inputs)
        content, logprobs, tokens = self._chat(messages, task.answer_form)
        try:
            return Reply(*self._answer(task, content, logprobs, inputs), tokens)
        except AnswerError as err:
            echo = content[:ECHO_CHARS] if isinstance(content, str) else ""
            retry = [*messages, {"role": "assistant", "content": echo},
                     {"role": "user",
                      "content": f"That reply was not valid: {err}. Reply again with {task.ask_again}."}]
        content, logprobs, more = self._chat(retry, task.answer_form)
        try:
            return Reply(*self._answer(task, content, logprobs, inputs), tokens + more)
        except AnswerError as err:
            raise AnswerError(f"malformed answer twice ({err})") from None
