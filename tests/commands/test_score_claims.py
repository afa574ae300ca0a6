"""``score --claims`` (and every per-row detector family's flag): its columns through the chunked writer."""

import numpy as np
import pandas as pd
import pytest

from sgi_core.cli import build_parser, main
from sgi_core.columns import SCORE_COLUMNS
from sgi_core.commands.score import run as cmd_score
from sgi_core.detectors.claims import CLAIM_COLUMNS, claim_scores
from sgi_core.detectors.registry import FAMILIES, DetectorInputs, per_row_families
from sgi_core.embedding import EmbeddingCache, load_encoder
from sgi_core.errors import SGIInputError
from sgi_core.geometry import l2_normalize
from sgi_core.io.triples import load_triples
from sgi_core.pipelines.local_engine import read_chunks, score_to_file
from sgi_core.text.sentences import split_pieces
from tests.conftest import SAMPLE_CSV

ROWS = pd.DataFrame({
    "question": ["Who wrote Hamlet?", "Where is Paris?", "What is 2+2?", "Same text here.", "Who painted it?",
                 "When was it built?"],
    "context": ["Hamlet is a tragedy. It was written by William Shakespeare around 1600.",
                "Paris is the capital of France. It lies on the Seine.", "Two plus two is four.",
                "Same text here.", "The Mona Lisa was painted by Leonardo. It hangs in the Louvre.", ""],
    "response": ["William Shakespeare wrote it. He was born in Stratford. He also wrote poems.",
                 "Paris is in France.", "", "Something else entirely.", "Leonardo painted it. It hangs in Rome.",
                 "In 1889."],
    "label": [1, 1, 0, 0, 0, 1],
})
NOT_SCORED = {3: "not scored: empty response", 6: "not scored: empty context"}


def write_rows(path):
    ROWS.to_csv(path, index=False)
    return path


def run_score(tmp_path, name, *extra):
    out = tmp_path / name
    assert main(["score", str(write_rows(tmp_path / "in.csv")), "-o", str(out), "--model", "hashing", *extra]) == 0
    return pd.read_parquet(out) if out.suffix == ".parquet" else pd.read_csv(out)


@pytest.mark.parametrize("chunk_rows", ["1", "4", "100"])
def test_claim_columns_equal_a_direct_call_on_the_same_rows(tmp_path, chunk_rows):
    scored = run_score(tmp_path, "out.parquet", "--claims", "--chunk-rows", chunk_rows)
    rows = load_triples(tmp_path / "in.csv").frame
    expected = claim_scores(rows, load_encoder("hashing"))
    assert list(scored.columns[-len(CLAIM_COLUMNS):]) == list(CLAIM_COLUMNS)
    pd.testing.assert_frame_equal(scored[list(CLAIM_COLUMNS)], expected, rtol=1e-12)
    # The rest of the table is what score writes without --claims, rows never dropped.
    plain = run_score(tmp_path, "plain.parquet", "--chunk-rows", chunk_rows)
    pd.testing.assert_frame_equal(scored.drop(columns=list(CLAIM_COLUMNS)), plain)
    assert scored["input_row"].tolist() == [1, 2, 3, 4, 5, 6]


def test_rows_not_scored_keep_their_status_and_get_no_claim_scores(tmp_path):
    scored = run_score(tmp_path, "out.csv", "--claims", "--chunk-rows", "2").set_index("input_row")
    scores = ["claim_min_support", "claim_mean_support", "claim_min_sgi", "claim_mean_sgi"]
    for row, status in NOT_SCORED.items():
        assert scored.at[row, "sgi_status"] == status
        assert scored.loc[row, scores].isna().all()
        assert scored.at[row, "claim_n_sentences"] == 0
    assert scored.at[4, "sgi_status"].startswith("degenerate: context equals question")
    assert np.isfinite(scored.at[4, "claim_min_support"])
    scored_rows = scored.drop(index=list(NOT_SCORED))
    assert scored_rows[["claim_min_support", "claim_mean_sgi"]].notna().all().all()
    assert scored_rows["claim_n_sentences"].tolist() == [3, 1, 1, 2]


def test_first_row_against_a_brute_force_oracle(tmp_path):
    scored = run_score(tmp_path, "out.parquet", "--claims")
    encoder = load_encoder("hashing")
    sentences = split_pieces(ROWS.at[0, "response"])
    pieces = split_pieces(ROWS.at[0, "context"])
    assert len(sentences) == 3 and len(pieces) == 2
    unit_s = l2_normalize(encoder.encode(sentences).astype(np.float64))
    unit_c = l2_normalize(encoder.encode(pieces).astype(np.float64))
    support = [max(float(s @ c) for c in unit_c) for s in unit_s]
    assert scored.at[0, "claim_min_support"] == pytest.approx(min(support), abs=1e-6)
    assert scored.at[0, "claim_mean_support"] == pytest.approx(sum(support) / 3, abs=1e-6)


def test_claim_texts_are_counted_and_served_from_the_cache(tmp_path):
    write_rows(tmp_path / "in.csv")
    rows = load_triples(tmp_path / "in.csv").frame.drop(index=[2, 5])  # the two rows not scored
    whole = set(rows["question"]) | set(rows["context"]) | set(rows["response"])
    parts = set(rows["question"]).union(*map(split_pieces, rows["response"]), *map(split_pieces, rows["context"]))
    encoder = load_encoder("hashing")
    cache = EmbeddingCache(encoder.model_id, tmp_path / "cache")

    def score(name, **options):
        return score_to_file(read_chunks(tmp_path / "in.csv"), tmp_path / name, encoder, families=("claims",),
                             **options)

    assert score("none.parquet").new_texts == len(whole) + len(parts)
    assert score("first.parquet", cache=cache).new_texts == len(whole | parts)
    assert score("again.parquet", cache=cache).new_texts == 0
    again, uncached = (pd.read_parquet(tmp_path / name) for name in ("again.parquet", "none.parquet"))
    pd.testing.assert_frame_equal(again, uncached)


def test_an_input_column_named_like_a_claim_column_is_refused(tmp_path):
    source = tmp_path / "in.csv"
    ROWS.assign(claim_min_support=0.5).to_csv(source, index=False)
    with pytest.raises(SGIInputError, match="already has columns named claim_min_support, which the detector scores"):
        score_to_file(read_chunks(source), tmp_path / "out.csv", load_encoder("hashing"), families=("claims",))
    assert not (tmp_path / "out.csv").exists()
    assert score_to_file(read_chunks(source), tmp_path / "out.csv", load_encoder("hashing")).rows == len(ROWS)


def test_claims_with_the_ray_engine_check_the_input_before_anything_runs(tmp_path):
    # The Ray engine adds the claim columns (tests/pipelines/test_ray_grounding.py); a bad input fails first.
    args = build_parser().parse_args(["score", str(tmp_path / "absent.csv"), "-o", str(tmp_path / "out"),
                                      "--engine", "ray", "--claims"])
    with pytest.raises(SGIInputError, match="no input files match"):
        cmd_score(args)


def test_every_per_row_family_has_a_flag_writing_its_columns(tmp_path):
    write_rows(tmp_path / "in.csv")
    encoder = load_encoder("hashing")
    table = load_triples(tmp_path / "in.csv")
    # A family given a resource has its option instead (--grounding-model, tests/grounding/test_cli.py).
    for family in (family for family in per_row_families() if family.resource is None):
        out = tmp_path / f"{family.name}.parquet"
        assert main(["score", str(tmp_path / "in.csv"), "-o", str(out), "--model", "hashing", f"--{family.name}",
                     "--chunk-rows", "4"]) == 0
        expected = family.compute(DetectorInputs(table, encoder)).columns
        pd.testing.assert_frame_equal(pd.read_parquet(out)[list(family.columns)], expected, rtol=1e-12)


def test_a_cross_fitted_family_is_not_offered_per_row(tmp_path):
    write_rows(tmp_path / "in.csv")
    assert FAMILIES["reference"].fitting == "cross-fitted"
    with pytest.raises(SGIInputError, match="'reference' is fitted on labelled folds.*report --detectors reference"):
        score_to_file(read_chunks(tmp_path / "in.csv"), tmp_path / "out.csv", load_encoder("hashing"),
                      families=("reference",))
    with pytest.raises(SystemExit):
        build_parser().parse_args(["score", "in.csv", "-o", "out.csv", "--reference"])


@pytest.mark.slow
def test_minilm_claim_columns_equal_a_direct_call(tmp_path, minilm):
    source = tmp_path / "sample.csv"
    pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False).head(6).to_csv(source, index=False)
    out = tmp_path / "out.parquet"
    assert main(["score", str(source), "-o", str(out), "--claims", "--chunk-rows", "4"]) == 0
    scored = pd.read_parquet(out)
    expected = claim_scores(load_triples(source).frame, minilm)
    assert scored["claim_n_sentences"].tolist() == expected["claim_n_sentences"].tolist()
    assert (scored["claim_n_sentences"] >= 1).all() and set(scored.columns) >= set(SCORE_COLUMNS)
    pd.testing.assert_frame_equal(scored[list(CLAIM_COLUMNS)], expected, atol=1e-5, rtol=0)
