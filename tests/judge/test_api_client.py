"""The shared HTTP client against a real loopback server: URL rules, retries, faults, the key."""

import logging
import random
import socket

import pytest

from sgi_core.errors import SGIInputError
from sgi_core.http.client import (
    ApiClient,
    ApiError,
    RetryPolicy,
    check_base_url,
    retry_after_seconds,
)
from tests.judge.fake_server import FakeServer

KEY = "sk-judge-test-SECRET-0123456789"
BODY = {"input": ["alpha beta"], "model": "m"}


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


def client_for(server, sleeps, **options):
    return ApiClient(server.base_url, api_key=KEY, sleep=sleeps.append, seed=0, **options)


@pytest.mark.parametrize("url, message", [
    ("file:///etc/passwd", "must be an https:// URL, not 'file:'"),
    ("ftp://example.com/v1", "must be an https:// URL, not 'ftp:'"),
    ("example.com/v1", "must be an https:// URL. Give"),
    ("http://example.com/v1", "plain http is allowed only on this machine, not for example.com"),
    ("http://10.0.0.5:8000/v1", "plain http is allowed only on this machine, not for 10.0.0.5"),
    ("https://user:pw@example.com/v1", "holds a user name or password"),
])
def test_endpoint_urls_refused(url, message):
    with pytest.raises(SGIInputError, match=message):
        check_base_url(url)


@pytest.mark.parametrize("url, expected", [
    ("https://api.openai.com/v1/", "https://api.openai.com/v1"),
    ("http://localhost:11434/v1", "http://localhost:11434/v1"),
    ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080/"),
])
def test_endpoint_urls_accepted(url, expected):
    assert str(check_base_url(url)) == expected


def test_retry_after_header_forms():
    assert retry_after_seconds("7") == 7.0
    # 1445412480 is Wed, 21 Oct 2015 07:28:00 GMT
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412480 - 10) == 10.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412480 + 10) == 0.0
    assert retry_after_seconds("-3") == 0.0
    assert retry_after_seconds("later") is None


@pytest.mark.statistical
def test_backoff_is_exponential_with_jitter_inside_its_bounds():
    policy = RetryPolicy(base_delay=1.0, max_delay=6.0)
    rng = random.Random(3)
    for attempt, full in enumerate([1.0, 2.0, 4.0, 6.0, 6.0]):
        waits = [policy.backoff(attempt, rng) for _ in range(200)]
        assert full / 2 <= min(waits) and max(waits) <= full
        assert max(waits) - min(waits) > full / 4  # jittered, not a constant


def test_429_is_retried_after_the_retry_after_seconds(server):
    server.inject("429", "429")
    sleeps = []
    payload = client_for(server, sleeps).post_json("embeddings", BODY)
    assert len(payload["data"]) == 1
    assert sleeps == [1.0, 1.0]
    assert len(server.requests) == 3


def test_retry_after_is_capped():
    with FakeServer(retry_after="3600") as server:
        server.inject("429")
        sleeps = []
        client_for(server, sleeps, retry=RetryPolicy(max_delay=5.0)).post_json("embeddings", BODY)
    assert sleeps == [5.0]


def test_5xx_backoff_then_one_line_error_without_the_key(server):
    server.inject(*["500"] * 4)
    sleeps = []
    with pytest.raises(ApiError, match=r"^127\.0\.0\.1 failed 4 times \(HTTP 500\)\. The server is") as info:
        client_for(server, sleeps).post_json("embeddings", BODY)
    rng = random.Random(0)
    assert sleeps == [d / 2 + rng.uniform(0, d / 2) for d in (1.0, 2.0, 4.0)]
    assert len(server.requests) == 4 and not info.value.fatal
    assert KEY not in str(info.value) and "\n" not in str(info.value)


def test_slow_reply_past_the_timeout_is_retried():
    with FakeServer(slow_seconds=1.5) as server:
        server.inject("slow")
        sleeps = []
        payload = client_for(server, sleeps, timeout=0.3).post_json("embeddings", BODY)
    assert len(payload["data"]) == 1 and len(sleeps) == 1 and len(server.requests) == 2


def test_timeouts_every_time_end_in_one_line(server):
    server.slow_seconds = 1.0
    server.inject("slow", "slow")
    with pytest.raises(ApiError, match=r"failed 2 times \(no complete reply within 0\.2 s\)"):
        client_for(server, [], timeout=0.2, retry=RetryPolicy(max_attempts=2)).post_json("embeddings", BODY)


def test_dropped_connection_is_retried(server):
    server.inject("drop")
    sleeps = []
    assert len(client_for(server, sleeps).post_json("embeddings", BODY)["data"]) == 1
    assert len(sleeps) == 1 and len(server.requests) == 2


def test_dropped_connections_every_time_end_in_one_line(server):
    server.inject("drop", "drop")
    with pytest.raises(ApiError, match=r"failed 2 times \(the connection was dropped\)"):
        client_for(server, [], retry=RetryPolicy(max_attempts=2)).post_json("embeddings", BODY)


def test_malformed_json_reply_is_one_line_error(server):
    server.inject("malformed")
    with pytest.raises(ApiError, match="127.0.0.1 answered with something other than a JSON object"):
        client_for(server, []).post_json("embeddings", BODY)
    assert len(server.requests) == 1


def test_redirect_is_refused_and_the_key_never_reaches_the_other_port(server):
    with FakeServer() as other:
        server.redirect_target = f"{other.base_url}/embeddings"
        server.inject("redirect")
        with pytest.raises(ApiError, match=r"redirect \(HTTP 307\) to 127\.0\.0\.1, which is not followed") as info:
            client_for(server, []).post_json("embeddings", BODY)
        assert other.requests == []
    assert info.value.fatal and len(server.requests) == 1
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"


def test_rejected_key_is_fatal_and_not_retried(server):
    server.inject("401")
    with pytest.raises(ApiError, match=r"127\.0\.0\.1 rejected the key \(HTTP 401\)") as info:
        client_for(server, []).post_json("embeddings", BODY)
    assert info.value.fatal and len(server.requests) == 1


def test_nothing_listening_is_fatal():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ApiError, match="cannot connect to 127.0.0.1: .*Connection refused") as info:
        ApiClient(f"http://127.0.0.1:{port}/v1", api_key=KEY).post_json("embeddings", BODY)
    assert info.value.fatal


def test_key_is_in_one_header_only_and_never_in_repr_or_logs(server, caplog):
    caplog.set_level(logging.DEBUG)
    client = client_for(server, [])
    client.post_json("embeddings", BODY)
    sent = server.requests[0]
    assert [name for name, value in sent["headers"].items() if KEY in value] == ["authorization"]
    assert KEY not in repr(client) and KEY not in caplog.text
    azure = ApiClient(server.base_url, api_key=KEY, key_header="api-key")
    azure.post_json("embeddings", BODY, params={"api-version": "2024-02-01"})
    assert server.requests[1]["headers"]["api-key"] == KEY and "authorization" not in server.requests[1]["headers"]
    assert server.requests[1]["path"] == "/v1/embeddings?api-version=2024-02-01"


@pytest.mark.parametrize("timeout", [0, -1.0, float("inf"), float("nan")])
def test_timeout_must_be_finite_and_positive(timeout):
    with pytest.raises(SGIInputError, match=f"timeout must be a finite number of seconds > 0. Got {timeout} instead"):
        ApiClient("https://api.openai.com/v1", timeout=timeout)
