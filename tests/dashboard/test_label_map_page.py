"""The Data page maps label values to grounded / hallucinated / unlabelled; unmapped rows stay, counted."""

import numpy as np
import pandas as pd

from tests.conftest import SAMPLE_CSV
from tests.dashboard.conftest import goto, metric, upload

SAMPLE = pd.read_csv(SAMPLE_CSV, dtype=str, keep_default_na=False)


def faithdial_file() -> bytes:
    begin = np.where(SAMPLE["label"] == "1", "Entailment", "Partial Hallucination")
    begin[:3] = "Generic"
    return SAMPLE.drop(columns=["answer_type"]).assign(label=begin).to_csv(index=False).encode()


def test_label_values_are_mapped_and_unmapped_rows_kept_unlabelled(app):
    upload(app, "faithdial.csv", faithdial_file())
    assert any("unknown label values" in e.value for e in app.error)
    assert app.multiselect(key="data.label_map.grounded").options == ["Generic", "Partial Hallucination",
                                                                       "Entailment"]
    app.multiselect(key="data.label_map.grounded").set_value(["Entailment"])
    app.multiselect(key="data.label_map.hallucinated").set_value(["Partial Hallucination"])
    app.run()
    assert not app.exception and not app.error
    assert metric(app, "Rows read") == "300"
    assert any(w.value.replace("\\", "").startswith("3 rows have label values the label map does not name "
                                                     "('Generic'): they are kept, unlabelled (rows 1, 2, 3)")
               for w in app.warning)
    goto(app, "overview")
    grounded = int((SAMPLE["label"].iloc[3:] == "1").sum())
    assert metric(app, "Labelled grounded") == f"{grounded:,}"
    assert metric(app, "Labelled hallucinated") == f"{297 - grounded:,}"


def test_a_value_chosen_twice_is_refused(app):
    upload(app, "faithdial.csv", faithdial_file())
    app.multiselect(key="data.label_map.grounded").set_value(["Entailment"])
    app.multiselect(key="data.label_map.unlabelled").set_value(["Entailment"])
    app.run()
    assert any("Each value can mean one thing only: Entailment is chosen twice" in e.value for e in app.error)
