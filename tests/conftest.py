"""Shared fixtures: an isolated embedding cache, the real MiniLM model, a counter of ROC analyses; Hypothesis
profiles."""

import hashlib
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
SAMPLE_CSV = REPO / "sample_data" / "halueval_qa_sample.csv"

# The app's pages make every interval from 200 bootstrap resamples here, and the tests build their expected values
# with the same count (dashboard.services.resamples): a page equals the library at any count, and the intervals'
# own properties are tested in tests/stats. Set by the environment, so browser tests' app servers inherit it.
os.environ.setdefault("SGI_APP_RESAMPLES", "200")

# Property tests run 300 examples by default (and in CI); HYPOTHESIS_PROFILE=dev runs 30 while editing.
settings.register_profile("ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    """Every test gets its own embedding cache folder and its own data folder (annotations): never the user's."""
    folder = tmp_path / "emb-cache"
    monkeypatch.setenv("SGI_CACHE_DIR", str(folder))
    monkeypatch.setenv("SGI_DATA_DIR", str(tmp_path / "sgi-data"))
    return folder


@pytest.fixture(scope="session")
def minilm():
    """The real all-MiniLM-L6-v2, loaded offline from its PyPI package (default backend: ONNX on the CPU)."""
    from sgi_core.embedding import load_encoder

    return load_encoder("minilm")


@pytest.fixture(scope="session")
def minilm_torch():
    """The same model run by torch: the reference the ONNX backends are held to."""
    from sgi_core.embedding import load_encoder

    return load_encoder("minilm", device="cpu", backend="torch")


@pytest.fixture
def shared_data():
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is not beside the repository")
    return SHARED_DATA


@pytest.fixture
def roc_counts(monkeypatch) -> Counter:
    """Counts of ROC analyses by (labels, values) while the test runs.

    Counted at their one computing step, :func:`sklearn.metrics.roc_curve` inside
    :func:`sgi_core.stats.ranking.roc_analysis`.
    """
    from sgi_core.stats import ranking

    counts = Counter()
    compute = ranking.roc_curve

    def counted(labels, scores, **kwargs):
        analysed = np.asarray(labels, float).tobytes() + np.asarray(scores, float).tobytes()
        counts[hashlib.sha256(analysed).hexdigest()] += 1
        return compute(labels, scores, **kwargs)

    monkeypatch.setattr(ranking, "roc_curve", counted)
    return counts
