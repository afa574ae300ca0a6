"""Sections of docs/REPRODUCTION.md beyond the paper: SGI with length matched, and the seed's other detectors.

The numbers come from :func:`reproduce_paper.run`; every sentence that reads them is
computed from them here.
"""

from __future__ import annotations

import pandas as pd
from paper_tables import ci, markdown, num

from sgi_core.detectors import REFERENCE_DETECTORS

DATA_LABELS = {"paperlike": "paper protocol", "paired": "paired", "truthfulqa_ctx_question": "TruthfulQA ctx=q",
               "truthfulqa_references": "TruthfulQA refs"}


def length_matched_section(res: dict) -> list[str]:
    rows = []
    for key, label in DATA_LABELS.items():
        for model, entry in res["data"][key]["models"].items():
            matched = entry["length_matched"]
            rows.append({
                "data": label, "model": model, "SGI AUROC": num(matched.plain_auroc),
                "length-matched AUROC [95% CI]": num(matched.auroc) + ci(matched.auroc_ci),
                "length-matched d": num(matched.cohens_d, 3, True),
                "bins used / formed": f"{matched.n_bins - matched.n_bins_dropped} / {matched.n_bins}",
                "rows left out": f"{matched.n_dropped:,}",
            })
    return ["## SGI with response length matched", "",
            "Coarsened exact matching: rows fall into quantile bins of the pooled response length, each class is "
            "weighted so that its length distribution over the bins equals the other's, and bins holding one "
            "class only are left out. The AUROC is then the weighted Mann-Whitney AUROC (0.5 = nothing beyond "
            "length); the interval resamples rows within each class and recomputes the weights. Lengths still differ "
            "within a bin, so a score that reads the exact length (the combined detector below) keeps part of its "
            "advantage.", "",
            markdown(pd.DataFrame(rows)), ""]


def _verdicts(key: str, model: str, entry: dict) -> list[str]:
    detectors = entry["detectors"].detectors
    length = entry["report"].baselines["neg_response_length"].auroc
    inflation = {name: detectors[name].auroc_leaky - detectors[name].auroc for name in REFERENCE_DETECTORS}
    worst = max(inflation, key=inflation.get)
    beating = [name for name, s in detectors.items() if s.auroc > length]
    inverted = [name for name, s in detectors.items() if s.auroc < 0.5]
    lines = [f"- {DATA_LABELS[key]}, {model}: the leaky protocol adds up to {inflation[worst]:+.3f} AUROC "
             f"({worst}); response length alone scores {length:.3f}, and "
             + (f"{', '.join(beating)} beat{'s' if len(beating) == 1 else ''} it." if beating
                else "no detector beats it.")]
    if inverted:
        verb = "ranks" if len(inverted) == 1 else "rank"
        lines.append(f"- {DATA_LABELS[key]}, {model}: {', '.join(inverted)} {verb} hallucinated answers higher "
                     "(AUROC below 0.5) with the sign the definition gives.")
    best_matched = max(detectors, key=lambda name: detectors[name].length_matched_auroc)
    lines.append(f"- {DATA_LABELS[key]}, {model}: with length matched the best detector is {best_matched} "
                 f"({detectors[best_matched].length_matched_auroc:.3f}).")
    return lines


def detectors_section(res: dict) -> list[str]:
    lines = ["## The seed's other detectors, leakage-free", "",
             "Reference-set detectors score an answer against the grounded answers of its question's 10 nearest "
             "reference questions. Cross-fitted: rows are split into 5 folds by question group (both answers of a "
             "HaluEval question always together) and each fold's reference set is the grounded rows of the other "
             "folds. Leaky: the reference set is every grounded row, the scored one included, as in the reference "
             "README. Claim scores split the response into sentences and take each sentence's best cosine to a "
             "context sentence (weakest sentence and mean). Combined: a logistic model over SGI, the three angles, "
             "these detectors, response length and lexical groundedness, predicted out of fold on the same folds. "
             "All scores oriented high = grounded.", ""]
    for key in ("paperlike", "paired"):
        for model, entry in res["data"][key]["models"].items():
            if "detectors" not in entry:
                continue
            rows = [{"detector": name, "protocol": s.protocol,
                     "AUROC [95% CI]": num(s.auroc) + ci(s.auroc_ci), "AUROC leaky": num(s.auroc_leaky),
                     "d": num(s.cohens_d, 3, True), "length-matched AUROC": num(s.length_matched_auroc)}
                    for name, s in entry["detectors"].detectors.items()]
            lines += [f"### {DATA_LABELS[key]}, {model}", "", markdown(pd.DataFrame(rows)), "",
                      *_verdicts(key, model, entry), ""]
    return lines
