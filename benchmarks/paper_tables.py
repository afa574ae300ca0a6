"""The paper's values and the sections of docs/REPRODUCTION.md that set ours beside them.

Each section function takes the numbers :func:`reproduce_paper.run` gathered and
returns the Markdown lines of one part of the document.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sgi_core.render.numbers import format_ci

# The paper's numbers (arXiv 2512.13771, as quoted in the reference README and
# ../shared/docs/FINDINGS.md). Cells the available sources do not give are left out.
PAPER_TABLE1 = {  # model: (SGI valid, SGI hallucinated, d, AUROC)
    "mpnet": (1.142, 0.921, 0.92, 0.776),
    "minilm": (1.203, 0.856, 1.28, 0.824),
    "bge": (1.231, 0.948, 1.27, 0.823),
    "e5": (1.138, 0.912, 1.03, 0.794),
    "gte": (1.224, 0.927, 1.13, 0.811),
}
PAPER_TABLE1_MEAN = (1.188, 0.913, 1.13, 0.806)
PAPER_TABLE2_MPNET = {  # tercile: (lo, hi, d, AUROC)
    "low": (0.42, 0.89, 0.61, 0.721),
    "medium": (0.89, 1.12, 0.90, 0.768),
    "high": (1.12, 1.57, 1.27, 0.832),
}
PAPER_TABLE3 = {("response", "high"): 2.05, ("question", "low"): 1.22}  # d
PAPER_TABLE4 = {"auroc": 0.478, "d": -0.14}
PAPER_TABLE5 = {"theta_rq": (1.39, 1.62), "theta_rc": (0.38, 0.45)}  # range of d over the 5 models
PAPER_ECE = 0.10
PAPER_AGREEMENT = (0.85, 0.87)

#: Differences within which a cell counts as reproduced.
D_TOLERANCE = 0.10
AUROC_TOLERANCE = 0.02


def markdown(frame: pd.DataFrame) -> str:
    """A DataFrame as a GitHub table (cells already formatted as text)."""
    cells = frame.astype(str)
    lines = ["| " + " | ".join(cells.columns) + " |", "|" + "---|" * len(cells.columns)]
    lines += ["| " + " | ".join(row) + " |" for row in cells.itertuples(index=False)]
    return "\n".join(lines)


def num(x, digits: int = 3, sign: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


def ci(pair) -> str:
    """`` [lo, hi]`` after a number, or nothing when the interval is undefined."""
    return f" {format_ci(pair)}".rstrip()


def table1_section(res: dict) -> list[str]:
    rows = []
    for key, label in (("paperlike", "paper protocol, n=5,000"), ("paired", "paired, n=20,000")):
        for model, entry in res["data"][key]["models"].items():
            es, roc = entry["report"].effect_size, entry["report"].roc
            paper = PAPER_TABLE1.get(model) if key == "paperlike" else None
            rows.append({
                "data": label, "model": model, "n valid / halluc": f"{es.n_valid} / {es.n_halluc}",
                "SGI valid (paper)": num(paper[0]) if paper else "-", "SGI valid (ours)": num(es.mean_valid),
                "SGI halluc (paper)": num(paper[1]) if paper else "-", "SGI halluc (ours)": num(es.mean_halluc),
                "d (paper)": num(paper[2], 2, True) if paper else "-",
                "d (ours) [95% CI]": num(es.cohens_d, 3, True) + ci(es.cohens_d_ci),
                "AUROC (paper)": num(paper[3]) if paper else "-",
                "AUROC (ours) [95% CI]": num(roc.auroc) + ci(roc.auroc_ci),
            })
    models = res["data"]["paperlike"]["models"]
    for model, paper in PAPER_TABLE1.items():
        if model not in models:
            rows.append({
                "data": "paper protocol, n=5,000", "model": model, "n valid / halluc": "not run",
                "SGI valid (paper)": num(paper[0]), "SGI valid (ours)": "-", "SGI halluc (paper)": num(paper[1]),
                "SGI halluc (ours)": "-", "d (paper)": num(paper[2], 2, True), "d (ours) [95% CI]": "-",
                "AUROC (paper)": num(paper[3]), "AUROC (ours) [95% CI]": "-",
            })
    mean = [np.mean([getattr(e["report"].effect_size, f) for e in models.values()])
            for f in ("mean_valid", "mean_halluc", "cohens_d")]
    rows.append({
        "data": "paper protocol", "model": f"mean of {len(models)} (paper: of 5)", "n valid / halluc": "",
        "SGI valid (paper)": num(PAPER_TABLE1_MEAN[0]), "SGI valid (ours)": num(mean[0]),
        "SGI halluc (paper)": num(PAPER_TABLE1_MEAN[1]), "SGI halluc (ours)": num(mean[1]),
        "d (paper)": num(PAPER_TABLE1_MEAN[2], 2, True), "d (ours) [95% CI]": num(mean[2], 3, True),
        "AUROC (paper)": num(PAPER_TABLE1_MEAN[3]),
        "AUROC (ours) [95% CI]": num(np.mean([e["report"].roc.auroc for e in models.values()])),
    })
    return ["## Table 1: SGI by label, Cohen's d and AUROC", "",
            "d = (mean valid - mean hallucinated) / pooled SD (ddof=1); AUROC with grounded as the positive "
            f"class and SGI as the score. Intervals: percentile bootstrap, {res['n_boot']} resamples, classes "
            "resampled independently, seed 0.", "", markdown(pd.DataFrame(rows)), ""]


def table2_section(res: dict) -> list[str]:
    lines = ["## Table 2: SGI within theta(q,c) terciles (paper protocol)", "",
             "Tercile edges are quantiles of theta(q,c) over all 5,000 rows, both labels pooled. The paper's "
             "values are for mpnet.", ""]
    for model, entry in res["data"]["paperlike"]["models"].items():
        rows = []
        for st in entry["report"].theta_qc_strata.strata:
            paper = PAPER_TABLE2_MPNET.get(st.label) if model == "mpnet" else None
            rows.append({
                "tercile": st.label,
                "edges rad (paper)": f"[{paper[0]:.2f}, {paper[1]:.2f}]" if paper else "-",
                "edges rad (ours)": f"[{st.lo:.2f}, {st.hi:.2f}]", "n valid / halluc": f"{st.n_valid} / {st.n_halluc}",
                "SGI valid / halluc": f"{num(st.mean_valid)} / {num(st.mean_halluc)}",
                "d (paper)": num(paper[2], 2, True) if paper else "-", "d (ours)": num(st.cohens_d, 3, True),
                "AUROC (paper)": num(paper[3]) if paper else "-", "AUROC (ours)": num(st.auroc),
            })
        lines += [f"### {model}", "", markdown(pd.DataFrame(rows)), ""]
    return lines


def table3_section(res: dict) -> list[str]:
    lines = ["## Table 3: SGI within character-length terciles (paper protocol)", "",
             "Lengths tie (integers), so rows are ranked (ties in file order) and cut into equal thirds. The "
             "sources give two of the paper's cells: long responses d = 2.05 and short questions d = 1.22.", ""]
    for model, entry in res["data"]["paperlike"]["models"].items():
        rows = []
        for strata in entry["report"].length_strata:
            for st in strata.strata:
                paper = PAPER_TABLE3.get((strata.name, st.label))
                rows.append({
                    "text": strata.name, "tercile": st.label, "chars": f"{st.lo:.0f}-{st.hi:.0f}",
                    "n valid / halluc": f"{st.n_valid} / {st.n_halluc}",
                    "d (paper)": num(paper, 2, True) if paper else "-", "d (ours)": num(st.cohens_d, 3, True),
                    "AUROC (ours)": num(st.auroc),
                })
        lines += [f"### {model}", "", markdown(pd.DataFrame(rows)), ""]
    return lines


def table4_section(res: dict) -> list[str]:
    rows = []
    for key, label in (("truthfulqa_ctx_question", "context = question (paper's code)"),
                       ("truthfulqa_references", "context = all reference answers")):
        for model, entry in res["data"][key]["models"].items():
            rep, rq = entry["report"], entry["theta_rq_roc"]
            papers = key == "truthfulqa_ctx_question"
            rows.append({
                "setup": label, "model": model, "n truthful / false": f"{rep.n_valid} / {rep.n_halluc}",
                "median abs(SGI - 1)": f"{entry['median_abs_sgi_minus_1']:.1e}",
                "AUC (paper)": num(PAPER_TABLE4["auroc"]) if papers else "-",
                "SGI AUROC (ours)": num(rep.roc.auroc) + ci(rep.roc.auroc_ci),
                "theta(r,q) AUROC (ours)": num(rq.auroc), "1 - theta(r,q) AUROC": num(1 - rq.auroc),
                "d (paper)": num(PAPER_TABLE4["d"], 2, True) if papers else "-",
                "d false - truthful (ours)": num(-rep.effect_size.cohens_d, 3, True),
            })
    return ["## Table 4: TruthfulQA", "",
            "The paper's code sets context = question, which makes theta(r,c) = theta(r,q) and SGI = "
            "theta / (theta + 1e-8): 1 on every row up to about 1e-8, yet an increasing function of theta(r,q), so "
            "SGI then ranks rows exactly as theta(r,q) does. Table 4's d is false - truthful. The second setup "
            "gives SGI a real context.", "",
            markdown(pd.DataFrame(rows)), ""]


def table5_section(res: dict) -> list[str]:
    rows = []
    for model, entry in res["data"]["paperlike"]["models"].items():
        ang = entry["report"].angle_effects
        rows.append({
            "model": model,
            "d theta(r,q) (paper, 5-model range)": "+{:.2f} .. +{:.2f}".format(*PAPER_TABLE5["theta_rq"]),
            "d theta(r,q) (ours)": num(ang.cohens_d_theta_rq, 3, True),
            "d theta(r,c) (paper, 5-model range)": "+{:.2f} .. +{:.2f}".format(*PAPER_TABLE5["theta_rc"]),
            "d theta(r,c) (ours)": num(ang.cohens_d_theta_rc, 3, True),
            "theta(r,q) valid / halluc": f"{num(ang.mean_theta_rq_valid)} / {num(ang.mean_theta_rq_halluc)}",
            "theta(r,c) valid / halluc": f"{num(ang.mean_theta_rc_valid)} / {num(ang.mean_theta_rc_halluc)}",
        })
    return ["## Table 5: each angle alone (paper protocol)", "",
            "d = valid - hallucinated: positive means valid answers lie farther away.", "",
            markdown(pd.DataFrame(rows)), ""]


def calibration_section(res: dict) -> list[str]:
    rows = []
    for model, entry in res["data"]["paperlike"]["models"].items():
        for name, cal in entry["calibration"].items():
            rows.append({
                "model": model, "calibrator": name, "fit / eval rows": f"{cal.n_fit} / {cal.n_eval}",
                "ECE equal-frequency (paper: 0.10, min-max in sample)": num(cal.ece_quantile),
                "ECE equal-width": num(cal.ece_uniform), "Brier": num(cal.brier),
            })
    first = next(iter(res["data"]["paperlike"]["models"].values()))["calibration"]["platt_split"]
    deciles = ", ".join(num(r, 2) for r in first.halluc_rate_by_decile)
    return ["## Calibration (paper protocol)", "",
            "P(grounded) from SGI, 10 bins. Min-max in sample is the paper's method (fitted on the rows it is "
            "measured on); the split rows fit on a stratified half and measure on the other half.", "",
            markdown(pd.DataFrame(rows)), "",
            f"Share hallucinated per SGI decile, lowest SGI first ({next(iter(res['data']['paperlike']['models']))}): "
            f"{deciles}.", ""]


def agreement_section(res: dict) -> list[str]:
    lines = ["## Cross-model agreement", ""]
    for key in ("paperlike", "paired"):
        agreement = res["data"][key].get("agreement")
        if agreement is None:
            lines.append(f"- {key}: one model only, no agreement to measure.")
            continue
        lines.append(
            f"- {key} ({', '.join(agreement.names)}; {agreement.n_rows} rows): mean off-diagonal Pearson "
            f"{num(agreement.mean_offdiag_pearson)} (paper {PAPER_AGREEMENT[0]:.2f} over 5 models), Spearman "
            f"{num(agreement.mean_offdiag_spearman)} (paper {PAPER_AGREEMENT[1]:.2f})."
        )
    return lines + [""]


def confound_section(res: dict) -> list[str]:
    rows, strata_rows, verdicts = [], [], []
    for key in ("paperlike", "paired"):
        for model, entry in res["data"][key]["models"].items():
            rep = entry["report"]
            row = {"data": key, "model": model, "SGI": num(rep.roc.auroc) + ci(rep.roc.auroc_ci)}
            for name, base in rep.baselines.items():
                row[name] = num(base.auroc) + ci(base.auroc_ci)
            bl = rep.beyond_length
            row["length alone (CV)"] = num(bl.auroc_length)
            row["length + SGI (CV)"] = num(bl.auroc_length_score)
            rows.append(row)
            for st in rep.strata_by_name("response").strata:
                strata_rows.append({
                    "data": key, "model": model, "response tercile": st.label, "chars": f"{st.lo:.0f}-{st.hi:.0f}",
                    "n valid / halluc": f"{st.n_valid} / {st.n_halluc}", "SGI AUROC": num(st.auroc),
                    "SGI d": num(st.cohens_d, 3, True),
                })
            verdicts.append(f"- {key}, {model}: {bl.verdict}")
    return ["## The length confound", "",
            "AUROC (grounded positive) of SGI beside trivial baselines, every score oriented higher = grounded: "
            "neg_response_length is minus the answer's length in characters, lexical_groundedness the share of "
            "the answer's content words found in the context, theta_rq the response-question angle alone. The "
            "last two columns are 5-fold cross-validated logistic models on response length alone and on length "
            "+ SGI.", "", markdown(pd.DataFrame(rows)), "",
            "SGI within response-length terciles (equal thirds by rank):", "",
            markdown(pd.DataFrame(strata_rows)), "", *verdicts, ""]


def long_context_section(res: dict) -> list[str]:
    rows = []
    for key in ("paperlike", "paired"):
        for model, entry in res["data"][key]["models"].items():
            trunc, rep = entry["truncation"], entry["report"]
            if trunc.max_seq_length is None:
                continue
            row = {"data": key, "model": model,
                   "contexts truncated": f"{trunc.n_truncated} of {trunc.n_texts} (> {trunc.max_seq_length} tokens)",
                   "longest (tokens)": f"{trunc.max_tokens:.0f}",
                   "AUROC truncated": num(rep.roc.auroc), "d truncated": num(rep.effect_size.cohens_d, 3, True)}
            for strategy, values in entry.get("chunked", {}).items():
                row[f"AUROC chunk-{strategy}"] = num(values["auroc"])
                row[f"d chunk-{strategy}"] = num(values["d"], 3, True)
            rows.append(row)
    return ["## Long contexts", "",
            "The paper truncates contexts at the model's maximum sequence length. The chunked strategies embed "
            "consecutive windows that fit and take their mean, or the window nearest the response; contexts that "
            "fit score the same under every strategy.", "", markdown(pd.DataFrame(rows)), ""]


def verdict_section(res: dict) -> list[str]:
    lines = ["## Verdict", ""]
    for model, entry in res["data"]["paperlike"]["models"].items():
        paper = PAPER_TABLE1.get(model)
        es, roc = entry["report"].effect_size, entry["report"].roc
        if paper is None:
            continue
        d_ok = abs(es.cohens_d - paper[2]) <= D_TOLERANCE
        auc_ok = abs(roc.auroc - paper[3]) <= AUROC_TOLERANCE
        status = "reproduces" if d_ok and auc_ok else "does not reproduce"
        lines.append(
            f"- {model}, Table 1 {status}: d {es.cohens_d:+.3f} against the paper's {paper[2]:+.2f}, AUROC "
            f"{roc.auroc:.3f} against {paper[3]:.3f} (tolerance {D_TOLERANCE} in d, {AUROC_TOLERANCE} in AUROC). "
            f"The direction holds: grounded answers have the higher SGI."
            if es.cohens_d > 0 else f"- {model}: the direction is reversed (d {es.cohens_d:+.3f})."
        )
    paperlike = res["data"]["paperlike"]["models"]
    for key in ("paperlike", "paired"):
        for model, entry in res["data"][key]["models"].items():
            rep = entry["report"]
            beaten = [f"{name} {b.auroc:.3f}" for name, b in rep.baselines.items() if b.auroc > rep.roc.auroc]
            lines.append(
                f"- {key}, {model}: SGI AUROC {rep.roc.auroc:.3f}; "
                + (f"beaten by the trivial baselines {', '.join(beaten)}." if beaten
                   else "above every trivial baseline.")
            )
    for model, entry in res["data"]["truthfulqa_ctx_question"]["models"].items():
        sgi_auc, rq_auc = entry["report"].roc.auroc, entry["theta_rq_roc"].auroc
        same = "equals" if abs(sgi_auc - rq_auc) < 1e-9 else "differs from"
        paper = PAPER_TABLE4["auroc"]
        closer = (f"our orientation ({sgi_auc:.3f})" if abs(paper - sgi_auc) <= abs(paper - (1 - sgi_auc))
                  else f"the opposite orientation (1 - {sgi_auc:.3f} = {1 - sgi_auc:.3f})")
        lines.append(
            f"- TruthfulQA with context = question, {model}: median |SGI - 1| is "
            f"{entry['median_abs_sgi_minus_1']:.1e}; SGI's AUROC {sgi_auc:.3f} {same} theta(r,q)'s {rq_auc:.3f}. "
            f"The paper's {paper:.3f} is closer to {closer}. This setup measures how far answers move from the "
            "question, not grounding."
        )
    for model, entry in res["data"]["truthfulqa_references"]["models"].items():
        lines.append(
            f"- TruthfulQA with the reference answers as context, {model}: SGI AUROC "
            f"{entry['report'].roc.auroc:.3f}{ci(entry['report'].roc.auroc_ci)}."
        )
    for model, entry in paperlike.items():
        strata = entry["report"].theta_qc_strata.strata
        growing = all(a.cohens_d < b.cohens_d for a, b in zip(strata, strata[1:]))
        line = (f"- Table 2, {model}: separation {'grows' if growing else 'does not grow'} with theta(q,c) "
                f"(d by tercile {', '.join(f'{st.cohens_d:+.2f}' for st in strata)})")
        if model == "mpnet":
            d_gap = max(abs(st.cohens_d - PAPER_TABLE2_MPNET[st.label][2]) for st in strata)
            auc_gap = max(abs(st.auroc - PAPER_TABLE2_MPNET[st.label][3]) for st in strata)
            edge_gap = max(abs(st.hi - PAPER_TABLE2_MPNET[st.label][1]) for st in strata[:-1])
            line += (f"; against the paper's mpnet cells d differs by at most {d_gap:.2f} and AUROC by at most "
                     f"{auc_gap:.3f}, while our inner tercile edges lie up to {edge_gap:.2f} rad from the paper's")
        lines.append(line + ".")
    for model, entry in paperlike.items():
        cells = []
        for (text, label), paper in PAPER_TABLE3.items():
            st = next(st for st in entry["report"].strata_by_name(text).strata if st.label == label)
            cells.append(f"{'long' if label == 'high' else 'short'} {text}s d {st.cohens_d:+.2f} (paper {paper:+.2f})")
        lines.append(f"- Table 3, {model}: " + "; ".join(cells) + ".")
    for model, entry in paperlike.items():
        ang = entry["report"].angle_effects
        inside = [name for name, value in (("theta_rq", ang.cohens_d_theta_rq), ("theta_rc", ang.cohens_d_theta_rc))
                  if PAPER_TABLE5[name][0] - 0.005 <= value <= PAPER_TABLE5[name][1] + 0.005]
        where = "both inside" if len(inside) == 2 else f"only {inside[0]} inside" if inside else "neither inside"
        lines.append(
            f"- Table 5, {model}: d theta(r,q) {ang.cohens_d_theta_rq:+.2f}, "
            f"d theta(r,c) {ang.cohens_d_theta_rc:+.2f}; {where} "
            "the paper's 5-model ranges. Valid answers lie farther from the question and slightly farther from the "
            "context." if ang.cohens_d_theta_rc > 0 else
            f"- Table 5, {model}: d theta(r,q) {ang.cohens_d_theta_rq:+.2f}, d theta(r,c) {ang.cohens_d_theta_rc:+.2f}."
        )
    for model, entry in paperlike.items():
        cal = entry["calibration"]
        lines.append(
            f"- Calibration, {model}: min-max in sample gives ECE {cal['minmax_in_sample'].ece_quantile:.3f} "
            f"(paper {PAPER_ECE:.2f}); measured on held-out rows min-max gives "
            f"{cal['minmax_split'].ece_quantile:.3f}, Platt {cal['platt_split'].ece_quantile:.3f} and isotonic "
            f"{cal['isotonic_split'].ece_quantile:.3f}."
        )
    agreement = res["data"]["paperlike"].get("agreement")
    if agreement is not None:
        lines.append(
            f"- Agreement over {len(agreement.names)} models: Pearson {agreement.mean_offdiag_pearson:.2f}, Spearman "
            f"{agreement.mean_offdiag_spearman:.2f} (paper {PAPER_AGREEMENT[0]:.2f} / {PAPER_AGREEMENT[1]:.2f} over 5)."
        )
    return lines + [""]
