"""The API embedder on the shared client, against a real loopback server."""

import logging

import numpy as np
import pytest

from sgi_core.cli import main
from sgi_core.embedding import HashingEncoder
from sgi_core.embedding.openai_api import OpenAIEncoder
from sgi_core.errors import SGIInputError
from sgi_core.http.client import ApiError
from tests.judge.fake_server import FakeServer

KEY = "sk-embed-test-SECRET-42"
TEXTS = ["one", "two words", "three more words", "four", "five", "six"]


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeServer() as running:
        monkeypatch.setenv("OPENAI_BASE_URL", running.base_url)
        yield running


def encoder(sleeps=None):
    return OpenAIEncoder("openai", "emb-model", client_options={"sleep": (sleeps if sleeps is not None else []).append})


def test_vectors_come_back_in_input_order(server):
    out = encoder().encode(TEXTS, batch_size=4)
    np.testing.assert_array_equal(out, HashingEncoder(8).encode(TEXTS))
    assert [len(r["body"]["input"]) for r in server.requests] == [4, 2]
    assert {r["headers"]["authorization"] for r in server.requests} == {f"Bearer {KEY}"}


@pytest.mark.parametrize("fault, message", [
    ("one_vector", r"returned 1 vectors for 6 inputs"),
    ("bad_index", r"returned indices that are not 0\.\.5 each once"),
    ("ragged", r"returned vectors of width 4, 8, expected one width of 4"),
])
def test_replies_that_do_not_match_the_request_are_errors(server, fault, message):
    server.inject(fault)
    with pytest.raises(SGIInputError, match=r"^the embeddings API of openai:emb-model at 127\.0\.0\.1 " + message):
        encoder().encode(TEXTS)


def test_width_must_stay_the_same_across_requests(server):
    enc = encoder()
    enc.encode(TEXTS[:1])
    server.inject("ragged")
    with pytest.raises(SGIInputError, match="returned vectors of width 4, 8, expected one width of 8"):
        enc.encode(TEXTS[:2])


def test_429_and_500_are_retried(server):
    server.inject("429", "500")
    sleeps = []
    out = encoder(sleeps).encode(TEXTS)
    np.testing.assert_array_equal(out, HashingEncoder(8).encode(TEXTS))
    assert len(server.requests) == 3 and sleeps[0] == 1.0 and len(sleeps) == 2


def test_redirect_is_refused_and_the_key_stays_home(server):
    with FakeServer() as other:
        server.redirect_target = f"{other.base_url}/embeddings"
        server.inject("redirect")
        with pytest.raises(ApiError, match="redirect .* not followed"):
            encoder().encode(TEXTS)
        assert other.requests == []


@pytest.mark.parametrize("base, message", [
    ("http://embeddings.example.com/v1", "plain http is allowed only on this machine"),
    ("file:///tmp/embeddings", "must be an https:// URL, not 'file:'"),
])
def test_unsafe_base_urls_are_refused_before_sending(monkeypatch, base, message):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", base)
    with pytest.raises(SGIInputError, match=message) as info:
        OpenAIEncoder("openai", "m")
    assert KEY not in str(info.value)


def test_malformed_reply_is_one_line_and_keyless(server):
    server.inject("malformed")
    with pytest.raises(ApiError, match="answered with something other than a JSON object") as info:
        encoder().encode(TEXTS)
    assert KEY not in str(info.value) and KEY not in repr(encoder())


def test_cache_key_names_endpoint_and_model_but_not_the_key(server, monkeypatch):
    here = encoder()
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.openai.com/v1")
    there = OpenAIEncoder("openai", "emb-model")
    assert here.cache_key == f"api:{server.base_url}/embeddings|emb-model"
    assert there.cache_key == "api:https://api.openai.com/v1/embeddings|emb-model"
    assert KEY not in here.cache_key
    assert here.dimension is None
    here.encode(TEXTS[:2])
    assert here.dimension == 8


def test_score_and_compute_send_the_key_but_never_print_log_or_write_it(server, tmp_path, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    source = tmp_path / "in.csv"
    source.write_text("question,context,response\nWho wrote Hamlet?,Hamlet is by Shakespeare.,Shakespeare\n")
    for output in ("out.csv", "out.parquet"):
        assert main(["score", str(source), "-o", str(tmp_path / output), "--model", "openai:emb-model"]) == 0
    assert main(["compute", "--json", "--q", "q", "--c", "c", "--r", "r", "--model", "openai:emb-model"]) == 0
    assert server.requests and {r["headers"]["authorization"] for r in server.requests} == {f"Bearer {KEY}"}
    printed = capsys.readouterr()
    assert KEY not in printed.out + printed.err and KEY not in caplog.text
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"out.csv", "out.parquet"}
    assert not [p for p in written if KEY.encode() in p.read_bytes()]


def test_cli_failures_are_one_line_without_the_key(server, tmp_path, capsys):
    source = tmp_path / "in.csv"
    source.write_text("question,context,response\n"
                      "Who wrote it?,Hamlet is by Shakespeare.,It was William Shakespeare.\n")
    server.inject("401")
    assert main(["score", str(source), "-o", str(tmp_path / "o.csv"), "--model", "openai:m", "--no-cache"]) == 2
    assert capsys.readouterr().err == ("error: the embeddings API of openai:m: 127.0.0.1 rejected the key (HTTP 401). "
                                       "Check the key, the endpoint URL and the model name\n")
    server.inject("one_vector")
    assert main(["compute", "--q", "q", "--c", "c", "--r", "r", "--model", "openai:m"]) == 2
    assert capsys.readouterr().err == ("error: the embeddings API of openai:m at 127.0.0.1 returned 1 vectors for 3 "
                                       "inputs. Check that the endpoint serves this embedding model\n")


def test_vectors_received_before_a_failure_are_kept_and_not_asked_again(server):
    enc = encoder()
    server.inject("ok", "ok", "401")  # the third request of 2 inputs each is refused
    with pytest.raises(ApiError, match=r"rejected the key \(HTTP 401\); the 4 vectors received before are kept"):
        enc.encode(TEXTS, batch_size=2)
    assert [r["body"]["input"] for r in server.requests] == [TEXTS[:2], TEXTS[2:4], TEXTS[4:]]
    out = enc.encode(TEXTS, batch_size=2)
    np.testing.assert_array_equal(out, HashingEncoder(8).encode(TEXTS))
    assert [r["body"]["input"] for r in server.requests[3:]] == [TEXTS[4:]]  # only the texts still missing
    enc.encode(TEXTS[:1])
    assert server.requests[-1]["body"]["input"] == TEXTS[:1]  # kept vectors serve one call only
