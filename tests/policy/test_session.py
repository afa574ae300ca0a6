import json

import numpy as np
import pandas as pd
import pytest

from sgi_core.errors import SGIInputError
from sgi_core.policy.sessions import (
    FLAG_COLUMN,
    PROBABILITY_COLUMN,
    apply_session,
    data_fingerprint,
    load_session,
    new_session,
    session_to_json,
)
from sgi_core.stats.calibration import fit_calibrator


@pytest.fixture
def frame():
    return pd.DataFrame({
        "question": ["q1", "q2", "q3", "q4", "q5"],
        "context": ["c1", "c2", "c3", "c4", "c5"],
        "response": ["r1", "r2", "r3", "r4", ""],
        "label": [1.0, 0.0, 1.0, 0.0, np.nan],
        "sgi": [1.4, 0.7, 1.1, 0.9, np.nan],
    })


@pytest.fixture
def calibrator(frame):
    return fit_calibrator(frame["sgi"][:4], frame["label"][:4], method="platt")


def test_round_trip(frame, calibrator):
    session = new_session(model="minilm", calibrator=calibrator, threshold=1.0, frame=frame)
    loaded = load_session(session_to_json(session))
    assert loaded == session
    assert loaded.calibrator == calibrator.to_dict()
    assert loaded.created.endswith("+00:00")


def test_fingerprint_covers_triples_and_labels_only(frame):
    base = data_fingerprint(frame)
    assert data_fingerprint(frame.assign(extra=1, sgi=0.0)) == base
    assert data_fingerprint(frame.assign(label=[1.0, 0.0, 1.0, 1.0, np.nan])) != base
    assert data_fingerprint(frame.assign(response=["r1", "r2", "r3", "r4", "r5"])) != base
    assert data_fingerprint(frame.iloc[::-1]) != base
    # Cells are kept apart: moving text across a column boundary changes the digest.
    shifted = frame.assign(question=["q1c", "q2", "q3", "q4", "q5"], context=["1", "c2", "c3", "c4", "c5"])
    assert data_fingerprint(shifted) != base


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(schema="x"), "not a calibration session"),
    (lambda d: d.update(version=99), "not a calibration session this tool reads: .* version 99"),
    (lambda d: d.update(version=True), "not a calibration session this tool reads: .* version True"),
    (lambda d: d.pop("created"), "the session has missing fields created"),
    (lambda d: d.update(note="x"), "the session has unknown fields note"),
    (lambda d: d.update(threshold="high"), "threshold have the wrong type"),
    (lambda d: d.update(threshold=True), "threshold have the wrong type"),
    (lambda d: d.update(calibrator={"method": "platt"}),
     "the calibrator cannot be used: it must be an object with exactly the fields"),
])
def test_bad_sessions_are_refused(frame, calibrator, mutate, message):
    data = new_session(model="minilm", calibrator=calibrator, threshold=1.0, frame=frame).to_dict()
    mutate(data)
    with pytest.raises(SGIInputError, match=message):
        load_session(json.dumps(data), source="s.json")


def test_not_json_is_refused(frame):
    with pytest.raises(SGIInputError, match="invalid JSON: .*s.json"):
        load_session(b"\x00garbage", source="s.json")
    with pytest.raises(SGIInputError, match="the session must be a JSON object"):
        load_session(b"[1, 2]")


def test_apply_session_adds_probability_and_flag(frame, calibrator):
    out = apply_session(frame, calibrator, 1.0)
    np.testing.assert_allclose(out[PROBABILITY_COLUMN][:4], calibrator.predict(frame["sgi"][:4]))
    assert np.isnan(out[PROBABILITY_COLUMN][4])
    assert out[FLAG_COLUMN].tolist()[:4] == [False, True, False, True]
    assert out[FLAG_COLUMN].isna().tolist() == [False, False, False, False, True]
    assert list(frame.columns) == ["question", "context", "response", "label", "sgi"]


def test_fingerprint_is_the_same_a_block_at_a_time(frame, monkeypatch):
    import hashlib
    import json as json_module

    from sgi_core.policy import sessions as session

    whole = data_fingerprint(frame)
    monkeypatch.setattr(session, "FINGERPRINT_BLOCK_ROWS", 2)  # 5 rows: blocks of 2, 2 and 1
    assert data_fingerprint(frame) == whole
    # The digest is of one JSON array per row, whatever the blocks.
    lines = [json_module.dumps([q, c, r, None if np.isnan(y) else float(y)], ensure_ascii=False) + "\n"
             for q, c, r, y in zip(frame["question"], frame["context"], frame["response"], frame["label"])]
    assert whole == hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def test_a_given_fingerprint_is_recorded_as_given(frame):
    calibrator = fit_calibrator([0.1, 0.9, 0.2, 0.8], [0, 1, 0, 1], method="platt")
    given = new_session(model="m", calibrator=calibrator, threshold=0.5, frame=frame, fingerprint="abc")
    computed = new_session(model="m", calibrator=calibrator, threshold=0.5, frame=frame)
    assert given.fingerprint == "abc" and computed.fingerprint == data_fingerprint(frame)
