"""Build ``runs/``: two runs of a system on the sample's 150 questions, and a labelled sample of both.

Each run answers every question once with the sample's right or hallucinated answer: the
base run hallucinates on about 40% of the questions, the new run on about 20% (drawn
independently per question with a fixed seed). The run files carry no label, as a
system's output does not; ``labels_sample.csv`` holds the labels of 40 randomly drawn
questions in both runs, as a reviewer would label them.

    python sample_data/build_runs.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent
HALLUCINATION_RATE = {"base": 0.4, "new": 0.2}
LABELLED_QUESTIONS = 40
COLUMNS = ["id", "question", "context", "response"]


def main() -> None:
    sample = pd.read_csv(HERE / "halueval_qa_sample.csv")
    rng = np.random.default_rng(2025)
    pairs = sample["pair_id"].drop_duplicates().to_numpy()
    labelled = set(rng.choice(pairs, LABELLED_QUESTIONS, replace=False).tolist())
    out = HERE / "runs"
    out.mkdir(exist_ok=True)
    labels = []
    for run, rate in HALLUCINATION_RATE.items():
        wrong = dict(zip(pairs, rng.random(len(pairs)) < rate))
        answer = np.where(sample["pair_id"].map(wrong), "hallucinated", "right")
        rows = sample[sample["answer_type"] == answer].assign(id=lambda f: f["pair_id"]).sort_values("pair_id")
        rows[COLUMNS].to_csv(out / f"{run}.csv", index=False)
        labels.append(rows[rows["pair_id"].isin(labelled)][["question", "context", "response", "label"]])
    pd.concat(labels).to_csv(out / "labels_sample.csv", index=False)


if __name__ == "__main__":
    main()
