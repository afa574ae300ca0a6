"""Two real runs with the real MiniLM: the bundled sample's grounded answers against its hallucinated ones.

Each of the sample's 150 questions has a right answer and a hallucinated one; taken as a
base run and a new run of the same questions (matched by question), the labels must call
the new run a clear regression and ``gate --baseline --max-rate-increase`` must fail it.
SGI and word overlap drop clearly, but each run holds one class only, so neither score can
be shown to track the labels within a run: they keep their numbers and earn no word, and
``gate --score sgi`` is refused.
"""

import json

import pandas as pd
import pytest

from sgi_core.cli import main
from sgi_core.runs.comparison import RunComparison
from tests.conftest import SAMPLE_CSV

pytestmark = pytest.mark.slow


@pytest.fixture
def sample_runs(tmp_path):
    sample = pd.read_csv(SAMPLE_CSV)
    paths = (tmp_path / "grounded_answers.csv", tmp_path / "hallucinated_answers.csv")
    sample[sample["answer_type"] == "right"].to_csv(paths[0], index=False)
    sample[sample["answer_type"] != "right"].to_csv(paths[1], index=False)
    return paths


def test_hallucinated_answers_are_a_regression_by_the_labels_and_the_scores_earn_no_word(sample_runs, tmp_path,
                                                                                         capsys):
    out = tmp_path / "comparison.json"
    assert main(["compare", *map(str, sample_runs), "--model", "minilm", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    with capsys.disabled():
        print(f"\n{printed}")  # the numbers, for the record (pytest -s)
    result = RunComparison.from_dict(json.loads(out.read_text()))
    assert result.match.n_matched == 150 and not result.match.only_in_base and not result.match.only_in_new
    scores = {d.score: d for d in result.scores}
    for name in ("sgi", "lexical_groundedness"):
        assert scores[name].verdict == "not validated" and not scores[name].validated, scores[name]
        assert scores[name].ci[1] < 0 and scores[name].holm_p < 1e-6
    # MiniLM on this sample: grounded answers average SGI about 1.15, hallucinated ones about 0.88.
    assert scores["sgi"].mean_base > 1.1 > 1.0 > scores["sgi"].mean_new
    assert scores["sgi"].difference < -0.15
    # Same questions and contexts on both sides: theta(q,c) does not move at all.
    assert scores["neg_theta_qc"].difference == pytest.approx(0.0, abs=1e-9)
    assert (result.labels.rate_base, result.labels.rate_new, result.labels.verdict) == (0.0, 1.0, "regression")

    code = main(["gate", str(sample_runs[1]), "--baseline", str(sample_runs[0]), "--model", "minilm",
                 "--score", "sgi", "--max-drop", "0.05"])
    assert code == 2
    assert "not validated on these labels" in capsys.readouterr().err
    # Every key discordant: 150 labelled keys bound the increase to about +/-0.16, so 0.05 is refused and 0.2 decides.
    code = main(["gate", str(sample_runs[1]), "--baseline", str(sample_runs[0]), "--model", "minilm",
                 "--max-rate-increase", "0.05"])
    assert code == 2
    assert "a margin of 0.05 cannot pass" in capsys.readouterr().err
    code = main(["gate", str(sample_runs[1]), "--baseline", str(sample_runs[0]), "--model", "minilm",
                 "--max-rate-increase", "0.2"])
    assert code == 1
    assert capsys.readouterr().out.splitlines()[1].startswith("FAIL hallucination rate: upper 95% bound")
