"""Rebuild halueval_qa_sample.csv from the full paired HaluEval QA file.

Usage: python sample_data/build_sample.py ../shared/data/halueval/halueval_qa.csv
Takes 150 questions chosen with a fixed seed and keeps both answers of each.
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd

N_PAIRS = 150
SEED = 20251215

source = Path(sys.argv[1])
paired = pd.read_csv(source, dtype=str, keep_default_na=False)
chosen = np.random.default_rng(SEED).choice(paired["pair_id"].unique(), size=N_PAIRS, replace=False)
sample = paired[paired["pair_id"].isin(set(chosen))]
sample.to_csv(Path(__file__).with_name("halueval_qa_sample.csv"), index=False)
print(f"{len(sample)} rows, {sample['label'].value_counts().to_dict()}")
