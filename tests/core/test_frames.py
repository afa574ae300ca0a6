import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from sgi_core.frames import take_rows


@pytest.fixture
def chunked_frame():
    """Text in three Arrow chunks, as a Parquet file read batch by batch gives it."""
    texts = pa.chunked_array([[f"t{i}" for i in range(start, start + 4)] for start in (0, 4, 8)], pa.large_string())
    return pd.DataFrame({"text": pd.Series(pd.arrays.ArrowExtensionArray(texts)), "x": np.arange(12.0),
                         "str": pd.Series([f"s{i}" for i in range(12)], dtype="str"),
                         "kind": pd.Categorical(list("abc") * 4), "count": pd.array(range(12), dtype="Int64")},
                        index=np.arange(100, 112))


@pytest.mark.parametrize("positions", [[1, 5, 9], [9, 1, 5], [3, 3, 0], [-1, 0], [], list(range(12)), [11, 10, 9]])
def test_take_rows_equals_iloc(chunked_frame, positions):
    pd.testing.assert_frame_equal(take_rows(chunked_frame, positions), chunked_frame.iloc[positions])


def test_take_rows_refuses_positions_outside_the_frame(chunked_frame):
    with pytest.raises(IndexError, match="out of bounds for a frame of 12 rows"):
        take_rows(chunked_frame, [0, 12])
    with pytest.raises(IndexError):
        take_rows(chunked_frame, [-13])
