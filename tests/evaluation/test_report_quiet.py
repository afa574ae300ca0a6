"""A report on a real file says nothing on behalf of third-party libraries whose caveats the project handles."""

import json
import logging
import warnings

import pandas as pd
import pytest

from sgi_core.cli import main
from tests.conftest import REPO

PAIRED = REPO.parent / "shared" / "data" / "halueval" / "halueval_qa.csv"
HANDLED = ("Token indices sequence length is longer", "n_quantiles", "will result in indexing errors")


@pytest.mark.slow
def test_report_on_long_contexts_prints_no_handled_library_warning(tmp_path, capsys, caplog):
    # 333 rows (unequal folds), a third of the contexts far past MiniLM's 256 tokens.
    frame = pd.read_csv(PAIRED, dtype=str, keep_default_na=False).head(333).copy()
    frame.loc[::3, "context"] = frame.loc[::3, "context"].str.repeat(12)
    source = tmp_path / "long.csv"
    frame.to_csv(source, index=False)
    out = tmp_path / "report.json"
    caplog.set_level(logging.WARNING)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["report", str(source), "--models", "minilm", "--json", str(out), "--n-boot", "50"]) == 0
    printed = capsys.readouterr()
    said = [printed.out, printed.err, caplog.text, *(str(w.message) for w in caught)]
    assert not [text for text in said for phrase in HANDLED if phrase in text]
    foreign = [w for w in caught if not w.category.__module__.startswith("sgi_core")]
    assert not foreign, [f"{w.category.__name__}: {w.message}" for w in foreign]
    truncation = json.loads(out.read_text())["models"]["minilm"]["truncation"]
    assert truncation["n_truncated"] >= 100  # the project says it, once, in its own words
