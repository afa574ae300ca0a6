"""Hostile calibration-session files: refused with a reason on load, never accepted and broken on use."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sgi_core.errors import SGIInputError
from sgi_core.policy.sessions import data_fingerprint, load_session, new_session, session_to_json
from sgi_core.stats.calibration import Calibrator, fit_calibrator

FRAME = pd.DataFrame({"question": ["q1", "q2", "q3", "q4"], "context": ["c1", "c2", "c3", "c4"],
                      "response": ["r1", "r2", "r3", "r4"], "label": [1.0, 0.0, 1.0, 0.0], "sgi": [1.4, 0.7, 1.1, 0.9]})
FINGERPRINT = data_fingerprint(FRAME)
SAVED = {method: json.loads(session_to_json(new_session(
    model="minilm", calibrator=fit_calibrator(FRAME["sgi"], FRAME["label"], method=method), threshold=1.0,
    frame=FRAME))) for method in ("minmax", "platt", "isotonic")}
UNUSABLE = "the calibrator cannot be used: {} (file 's.json'). Load a session saved from the Calibration page"


def unusable(problem):
    return f"^{re.escape(UNUSABLE.format(problem))}$"


def with_calibrator(fitted_with, **changes):
    data = json.loads(json.dumps(SAVED[fitted_with]))
    data["calibrator"].update(changes)
    return json.dumps(data)


@pytest.mark.parametrize("raw, message", [
    ("[" * 100_000, r"^JSON nested too deeply to read"),
    ('{"schema": 1, "schema": 2}', r"^the key 'schema' appears twice in one JSON object"),
    (json.dumps({"schema": "other"}), "^" + re.escape("not a calibration session (the 'schema' field is missing or "
                                                      "different) (file 's.json'). Load a session saved from the "
                                                      "Calibration page") + "$"),
    (with_calibrator("platt", method="magic"), unusable("unknown method 'magic' (use one of minmax, platt, isotonic)")),
    (with_calibrator("platt", slope=float("nan")), r"^NaN is not a JSON number"),
    (with_calibrator("platt", slope=None), unusable('the Platt slope and intercept must be finite numbers')),
    (with_calibrator("platt", slope="1"), unusable('slope and intercept must be null or finite numbers')),
    (with_calibrator("minmax", knots_y=[0.0]),
     unusable('knots_x and knots_y must be of equal length')),
    (with_calibrator("minmax", knots_x=[], knots_y=[]),
     unusable('knots_x and knots_y must not be empty')),
    (with_calibrator("platt", knots_x=[""]), unusable('knots_x and knots_y must be lists of finite numbers')),
    (with_calibrator("isotonic", knots_x=[2.0, 1.0], knots_y=[0.0, 1.0]),
     unusable('knots_x must never decrease')),
    (with_calibrator("isotonic", knots_x=[1.0, 2.0], knots_y=[1.0, 0.0]),
     unusable('knots_y must never decrease (a higher score cannot mean a lower P(grounded))')),
    (with_calibrator("minmax", knots_y=[0.0, 7.0]),
     unusable('knots_y are probabilities and must lie in [0, 1]')),
    (with_calibrator("minmax", knots_x=[0.0, float("inf")]), r"^Infinity is not a JSON number"),
])
def test_hostile_session_is_refused(raw, message):
    with pytest.raises(SGIInputError, match=message):
        load_session(raw, source="s.json")


def test_a_session_for_other_data_loads_with_its_own_fingerprint():
    other = data_fingerprint(FRAME.assign(label=[0.0, 0.0, 1.0, 1.0]))
    session = load_session(json.dumps(SAVED["platt"]), source="s.json")
    assert session.fingerprint == FINGERPRINT != other


json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@given(method=st.sampled_from(sorted(SAVED)),
       field=st.sampled_from(["method", "knots_x", "knots_y", "slope", "intercept", "calibrator", "threshold",
                              "schema", "version", "fingerprint"]),
       value=json_values)
def test_a_loaded_session_always_applies(method, field, value):
    data = json.loads(json.dumps(SAVED[method]))
    if field in data["calibrator"]:
        data["calibrator"][field] = value
    else:
        data[field] = value
    try:
        session = load_session(json.dumps(data))
    except SGIInputError:
        return
    probability = Calibrator.from_dict(session.calibrator).predict(np.array([-1.0, 0.5, 1.0, 3.0]))
    assert np.all((probability >= 0) & (probability <= 1))
