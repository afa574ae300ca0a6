"""The paper's tables as DataFrames, built from :class:`EvaluationReport` objects only.

Table 1: SGI by label, d and AUROC per model. Table 2: theta(q,c) strata. Table 3:
question/context/response length strata. Table 5: d of theta(r,q) and theta(r,c).
Plus the baselines beside SGI. The CLI prints these frames (:mod:`sgi_core.render.report`)
and the dashboard shows them (renaming columns for display only); the reproduction
benchmark puts the paper's values beside them.
"""

from __future__ import annotations

import pandas as pd

from sgi_core.evaluation.report import EvaluationReport
from sgi_core.render.numbers import format_ci
from sgi_core.scores.registry import spec_for

#: What the SGI row of the judgements table measures.
SGI_DESCRIPTION = "θ(r,q) / θ(r,c), the Semantic Grounding Index"


def table1(reports: dict[str, EvaluationReport]) -> pd.DataFrame:
    """One row per model: n, mean SGI by label, Cohen's d and AUROC with their intervals."""
    rows = []
    for name, rep in reports.items():
        es, roc = rep.effect_size, rep.roc
        rows.append({
            "model": name, "n": rep.n_scored, "n_valid": rep.n_valid, "n_halluc": rep.n_halluc,
            "sgi_valid": es.mean_valid, "sgi_halluc": es.mean_halluc,
            "cohens_d": es.cohens_d, "d_ci": format_ci(es.cohens_d_ci), "auroc": roc.auroc,
            "auroc_ci": format_ci(roc.auroc_ci),
        })
    return pd.DataFrame(rows)


def strata_table(strata) -> pd.DataFrame:
    """One row per stratum of a ``StrataResult``, its intervals as ``"[lo, hi]"`` beside their estimates.

    ``n_degenerate`` counts rows left out of the means and d (kept in n and AUROC).
    """
    frame = strata.to_frame()
    frame["cohens_d_ci"] = [format_ci(s.cohens_d_ci, ".2f") for s in strata.strata]
    frame["auroc_ci"] = [format_ci(s.auroc_ci) for s in strata.strata]
    order = ["label", "lo", "hi", "n", "n_valid", "n_halluc", "n_degenerate", "mean_valid", "mean_halluc",
             "cohens_d", "cohens_d_ci", "auroc", "auroc_ci"]
    return frame[order].rename(columns={"cohens_d_ci": "d_ci"})


def table2(report: EvaluationReport) -> pd.DataFrame:
    """theta(q,c) strata of one model: range, n, mean SGI by label, d and AUROC with intervals."""
    if report.theta_qc_strata is None:
        return pd.DataFrame()
    return strata_table(report.theta_qc_strata)


def table3(report: EvaluationReport) -> pd.DataFrame:
    """Length strata of question, context and response for one model."""
    frames = [strata_table(strata).assign(text=strata.name) for strata in report.length_strata]
    if not frames:
        return pd.DataFrame()
    frame = pd.concat(frames, ignore_index=True)
    return frame[["text", *[c for c in frame.columns if c != "text"]]]


def table5(reports: dict[str, EvaluationReport]) -> pd.DataFrame:
    """Per model: d (valid minus hallucinated) of theta(r,q) and of theta(r,c), and their means."""
    rows = []
    for name, rep in reports.items():
        if rep.angle_effects is not None:
            rows.append({"model": name, **rep.angle_effects.to_dict()})
    return pd.DataFrame(rows)


def angle_table(report: EvaluationReport) -> pd.DataFrame:
    """One model's Table 5 in long form: per angle, its mean by label and d (valid - hallucinated)."""
    angles = report.angle_effects
    if angles is None:
        return pd.DataFrame()
    return pd.DataFrame([
        {"angle": "theta_rq", "mean_valid": angles.mean_theta_rq_valid, "mean_halluc": angles.mean_theta_rq_halluc,
         "cohens_d": angles.cohens_d_theta_rq},
        {"angle": "theta_rc", "mean_valid": angles.mean_theta_rc_valid, "mean_halluc": angles.mean_theta_rc_halluc,
         "cohens_d": angles.cohens_d_theta_rc},
    ])


def baselines_table(reports: dict[str, EvaluationReport]) -> pd.DataFrame:
    """SGI of each model beside the baselines: AUROC with interval and d (all higher = grounded).

    Model-independent baselines (length, lexical) are listed once; theta(r,q) once per model.
    """
    rows, seen = [], set()
    for name, rep in reports.items():
        rows.append({"score": f"sgi ({name})", "auroc": rep.roc.auroc, "auroc_ci": format_ci(rep.roc.auroc_ci),
                     "cohens_d": rep.effect_size.cohens_d})
        for base, judged in rep.baselines.items():
            label = f"{base} ({name})" if base == "theta_rq" else base
            if label not in seen:
                seen.add(label)
                rows.append({"score": label, "auroc": judged.auroc, "auroc_ci": format_ci(judged.auroc_ci),
                             "cohens_d": judged.cohens_d})
    return pd.DataFrame(rows)


def judgements_table(report: EvaluationReport) -> pd.DataFrame:
    """Every score the verdict reads from ``report``, in its order (:attr:`EvaluationReport.held_fixed`): the score,
    the other judged scores (declared, carried, the detector families'), the trivial scores; AUROC with its interval,
    d and what each measures (all higher = grounded)."""
    def described(name: str) -> str:
        return SGI_DESCRIPTION if name == "sgi" else spec_for(name).description

    return pd.DataFrame([{"score": name, "description": described(name),
                          "auroc": judged.auroc, "auroc_ci": format_ci(judged.auroc_ci), "cohens_d": judged.cohens_d}
                         for name, judged in report.held_fixed.items()])
