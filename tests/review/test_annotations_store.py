"""The annotations store: undo by decision id, old files read as before, reading only new bytes, bounds and links."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import warnings

import pytest

from sgi_core.errors import SGIInputError
from sgi_core.review.annotations import (
    AnnotationFileWarning,
    AnnotationStore,
    annotations_path,
    decision_line,
    row_key,
)

KEYS = [row_key("q", "c", str(i)) for i in range(5)]


def old_line(key: str, label: str, *, note: str = "", annotator: str = "", time: str = "2026-01-01T00:00:00") -> bytes:
    """A line as the store wrote it before decisions had ids (no ``id``, no ``retracts``)."""
    return (json.dumps({"key": key, "label": label, "note": note, "annotator": annotator, "time": time},
                       ensure_ascii=False) + "\n").encode()


def in_force(store: AnnotationStore) -> dict:
    return store.current().set_index("key")["label"].to_dict()


def test_an_undo_takes_back_its_own_decision_and_not_a_later_one_by_someone_else(tmp_path):
    store = AnnotationStore(tmp_path / "a.jsonl")
    mine = store.add(KEYS[0], "grounded", annotator="ann")
    theirs = store.add(KEYS[0], "hallucinated", annotator="bob")  # another tab, same row, after mine
    assert len(mine) == len(theirs) == 16 and mine != theirs
    store.retract(KEYS[0], mine, annotator="ann")
    assert in_force(store) == {KEYS[0]: "hallucinated"}
    store.retract(KEYS[0], theirs, annotator="bob")
    assert in_force(store) == {}
    lines = [json.loads(line) for line in store.path.read_bytes().splitlines()]
    assert [line.get("retracts") for line in lines] == [None, None, mine, theirs]
    assert all(len(line["id"]) == 16 for line in lines)


def test_a_retraction_names_a_decision_id():
    with pytest.raises(SGIInputError, match="a retract line names the id"):
        decision_line(KEYS[0], "retract")
    with pytest.raises(SGIInputError, match="retracted id must be 16 lowercase hex digits"):
        decision_line(KEYS[0], "retract", retracts="XYZ")


def old_current(lines: list[tuple[str, str]]) -> dict:
    """The rule of the store before ids, written out: a retract pops the latest decision on its key."""
    stacks: dict[str, list[str]] = {}
    for key, label in lines:
        stack = stacks.setdefault(key, [])
        if label == "retract":
            if stack:
                stack.pop()
        else:
            stack.append(label)
    return {key: stack[-1] for key, stack in stacks.items() if stack}


@pytest.mark.parametrize("seed", range(5))
def test_a_store_written_before_ids_reads_exactly_as_it_did(tmp_path, seed):
    rng = random.Random(seed)
    lines = [(rng.choice(KEYS), rng.choice(["grounded", "hallucinated", "unsure", "retract", "retract"]))
             for _ in range(300)]
    path = tmp_path / "old.jsonl"
    path.write_bytes(b"".join(old_line(key, label, note=f"n{i}", annotator="ann")
                              for i, (key, label) in enumerate(lines)))
    store = AnnotationStore(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        current = store.current()
    assert current.set_index("key")["label"].to_dict() == old_current(lines)
    assert list(current["key"]) == list(dict.fromkeys(key for key, _ in lines if key in old_current(lines)))
    assert len(store.read()) == 300


def test_new_decisions_and_undos_go_on_top_of_an_old_store(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_bytes(old_line(KEYS[0], "grounded") + old_line(KEYS[0], "hallucinated") + old_line(KEYS[1], "unsure"))
    store = AnnotationStore(path)
    mine = store.add(KEYS[0], "unsure")
    store.add(KEYS[1], "grounded")
    store.retract(KEYS[0], mine)
    assert in_force(store) == {KEYS[0]: "hallucinated", KEYS[1]: "grounded"}
    with path.open("ab") as out:  # an old-style retraction still takes back the latest decision on its key
        out.write(old_line(KEYS[1], "retract"))
    assert in_force(store) == {KEYS[0]: "hallucinated", KEYS[1]: "unsure"}


class CountingParser:
    def __init__(self, monkeypatch):
        from sgi_core.review import decision_log

        self.calls = 0
        original = decision_log.parse_line

        def counted(text):
            self.calls += 1
            return original(text)

        monkeypatch.setattr(decision_log, "parse_line", counted)


def test_reading_again_parses_only_the_lines_appended_since(tmp_path, monkeypatch):
    store = AnnotationStore(tmp_path / "a.jsonl")
    store.path.write_bytes(b"".join(decision_line(row_key("q", "c", str(i)), "grounded") for i in range(2_000)))
    parser = CountingParser(monkeypatch)
    assert len(store.current()) == 2_000
    assert parser.calls == 2_000
    store.add(row_key("q", "c", "new"), "hallucinated")
    assert len(store.current()) == 2_001 and len(store.read()) == 2_001
    assert parser.calls == 2_001  # one new line parsed, once, whatever was asked
    assert len(AnnotationStore(store.path).current()) == 2_001  # another store object on the same file shares it
    assert parser.calls == 2_001


def test_a_replaced_or_shortened_file_is_read_whole_again(tmp_path):
    store = AnnotationStore(tmp_path / "a.jsonl")
    for key in KEYS:
        store.add(key, "grounded")
    assert len(store.current()) == 5
    replacement = tmp_path / "b.jsonl"
    replacement.write_bytes(b"".join(decision_line(key, "hallucinated") for key in KEYS[:2]) + b" " * 2_000)
    os.replace(replacement, store.path)  # another inode, longer than what was read
    assert in_force(store) == {KEYS[0]: "hallucinated", KEYS[1]: "hallucinated"}
    with store.path.open("r+b") as handle:  # the same inode, shortened
        handle.truncate(len(decision_line(KEYS[0], "hallucinated")))
    assert in_force(store) == {KEYS[0]: "hallucinated"}
    rewritten = store.path.read_bytes().replace(b"hallucinated", b"grounded\", \"x\": \"")
    store.path.write_bytes(rewritten)  # the same inode, rewritten in place and longer
    assert in_force(store) == {KEYS[0]: "grounded"}


def test_a_last_line_without_its_newline_counts_and_the_next_append_keeps_the_numbering(tmp_path):
    store = AnnotationStore(tmp_path / "a.jsonl")
    store.path.write_bytes(decision_line(KEYS[0], "grounded") + decision_line(KEYS[1], "grounded").rstrip(b"\n"))
    assert len(store.current()) == 2
    with store.path.open("ab") as out:  # a writer that wrote part of a line and died
        out.write(b"\n" + decision_line(KEYS[2], "grounded")[:20])
    with pytest.warns(AnnotationFileWarning, match=r"line 3 skipped"):
        assert len(store.current()) == 2
    store.add(KEYS[3], "hallucinated")
    with pytest.warns(AnnotationFileWarning, match=r"line 3 skipped"):
        decisions = store.read()
    assert decisions["line"].tolist() == [1, 2, 4]


def test_damaged_lines_are_summed_up_in_one_warning(tmp_path):
    store = AnnotationStore(tmp_path / "a.jsonl")
    store.add(KEYS[0], "grounded")
    with store.path.open("ab") as out:
        out.write(b"not json\n" * 20_000)
    store.add(KEYS[1], "grounded")
    for _ in range(2):  # read whole, then from the cache
        with pytest.warns(AnnotationFileWarning) as caught:
            assert len(store.current()) == 2
        (message,) = [str(w.message) for w in caught]
        assert "20,000 damaged lines skipped, every other decision kept: line 2 (" in message
        assert "line 6 (" in message and "line 7" not in message and message.endswith("and 19,995 more")


def test_the_store_is_capped_like_a_labels_file(tmp_path, monkeypatch):
    store = AnnotationStore(tmp_path / "a.jsonl")
    for key in KEYS:
        store.add(key, "grounded")
    monkeypatch.setenv("SGI_MAX_INPUT_MB", str(store.path.stat().st_size / 2**20 / 2))
    with pytest.raises(SGIInputError, match="the annotations file is larger than .* MB"):
        store.current()
    size = store.path.stat().st_size
    with pytest.raises(SGIInputError, match="the annotations file is larger than"):
        store.add(KEYS[0], "hallucinated")
    assert store.path.stat().st_size == size  # nothing half-written


def test_a_long_upload_name_gives_a_short_file_name_that_works(tmp_path, monkeypatch):
    monkeypatch.setenv("SGI_DATA_DIR", str(tmp_path))
    long_a, long_b = "a" * 251 + ".csv", "a" * 250 + "b.csv"  # 255 bytes each: legal upload names
    path_a, path_b = annotations_path(long_a), annotations_path(long_b)
    assert len(path_a.name.encode()) <= 255 and path_a != path_b
    assert path_a == annotations_path(long_a.replace(".csv", ".parquet"))
    store = AnnotationStore(path_a)
    store.add(KEYS[0], "grounded")
    assert len(store.current()) == 1
    assert annotations_path("b" * 240 + ".csv").name == "b" * 240 + ".jsonl"  # short enough: unchanged


def test_a_link_planted_at_the_store_is_refused_and_its_target_untouched(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_bytes(b"precious\n")
    link = tmp_path / "a.jsonl"
    link.symlink_to(target)
    store = AnnotationStore(link)
    with pytest.raises(SGIInputError, match="symbolic link, which is not followed"):
        store.add(KEYS[0], "grounded")
    with pytest.raises(SGIInputError, match="symbolic link"):
        store.current()
    with pytest.raises(SGIInputError, match="symbolic link"):
        store.raw()
    assert target.read_bytes() == b"precious\n"


@contextlib.contextmanager
def within(seconds: int):
    """Fail instead of hanging when the block waits (on a pipe) longer than ``seconds``."""
    def give_up(*_):
        raise TimeoutError(f"still waiting after {seconds} s")

    previous = signal.signal(signal.SIGALRM, give_up)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_link_to_a_device_or_a_pipe_is_refused_before_reading(tmp_path):
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")
    with pytest.raises(SGIInputError, match="symbolic link"):
        AnnotationStore(zero).current()
    pipe = tmp_path / "pipe.jsonl"
    os.mkfifo(pipe)
    with within(10), pytest.raises(SGIInputError, match="not a regular file"):
        AnnotationStore(pipe).current()  # returns at once: a pipe is not waited on
    with within(10), pytest.raises(SGIInputError, match="not a regular file"):
        AnnotationStore(pipe).add(KEYS[0], "grounded")
