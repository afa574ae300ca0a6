"""The empty ``label`` column that ``score`` writes is not warned about again by the commands that read its output."""

import pandas as pd

from sgi_core.cli import main

EMPTY_LABELS = "the label column 'label' is empty in every row"


def test_commands_after_score_do_not_warn_about_the_label_column_score_added(tmp_path, capsys):
    rows = pd.DataFrame({"question": ["What is 2+2?", "Who wrote Hamlet?", "Where is Paris?"],
                         "context": ["Two plus two is four.", "Hamlet is by Shakespeare.", "Paris is in France."],
                         "response": ["Four.", "Shakespeare.", "France."]})
    rows.to_csv(tmp_path / "plain.csv", index=False)
    assert main(["score", str(tmp_path / "plain.csv"), "--model", "hashing", "-o", str(tmp_path / "scored.csv")]) == 0
    assert EMPTY_LABELS not in capsys.readouterr().err
    assert "label" in pd.read_csv(tmp_path / "scored.csv").columns
    assert main(["report", str(tmp_path / "scored.csv")]) == 0
    assert EMPTY_LABELS not in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "scored.csv"), str(tmp_path / "scored.csv"), "--n-boot", "10"]) == 0
    assert EMPTY_LABELS not in capsys.readouterr().err


def test_an_empty_label_column_the_user_supplied_is_reported_when_score_reads_it(tmp_path, capsys):
    rows = pd.DataFrame({"question": ["What is 2+2?", "Who wrote Hamlet?"], "context": ["Two plus two is four.",
                         "Hamlet is by Shakespeare."], "response": ["Four.", "Shakespeare."], "label": [None, None]})
    rows.to_csv(tmp_path / "empty_labels.csv", index=False)
    assert main(["score", str(tmp_path / "empty_labels.csv"), "--model", "hashing", "-o",
                 str(tmp_path / "scored.csv")]) == 0
    assert EMPTY_LABELS in capsys.readouterr().err


def test_a_scored_file_with_labels_still_warns_about_one_class(tmp_path, capsys):
    rows = pd.DataFrame({"question": ["What is 2+2?", "Who wrote Hamlet?"], "context": ["Two plus two is four.",
                         "Hamlet is by Shakespeare."], "response": ["Four.", "Shakespeare."], "label": [1, 1]})
    rows.to_csv(tmp_path / "one_class.csv", index=False)
    assert main(["score", str(tmp_path / "one_class.csv"), "--model", "hashing", "-o",
                 str(tmp_path / "scored.csv")]) == 0
    capsys.readouterr()
    main(["report", str(tmp_path / "scored.csv")])
    assert "only one label class is present" in capsys.readouterr().err
