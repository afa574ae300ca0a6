"""The Overview's verdict is about the file open: its best trivial score, and SGI near chance or beaten."""

import numpy as np
import pandas as pd

from sgi_core import evaluation
from sgi_core.scores.oriented import oriented_scores
from sgi_core.scores.selection import trivial_names
from sgi_core.stats.ranking import roc_analysis
from tests.dashboard.conftest import app_n_boot, assert_clean, goto, upload

WORDS = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega river stone cloud ember".split()


def scored_file(sgi_signal: float, seed: int = 0, n_pairs: int = 150) -> pd.DataFrame:
    """A scored file whose grounded responses reuse the context's words (word overlap separates well).

    Response lengths are drawn alike for both classes, so length separates nothing;
    ``sgi_signal`` sets how far grounded rows' SGI sits above hallucinated ones'.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_pairs):
        context_words = list(rng.choice(WORDS[:8], 6))
        for label in (1, 0):
            pool = context_words if label == 1 else WORDS[8:]
            n_words = int(rng.integers(3, 7))
            own = list(rng.choice(pool, n_words))
            if rng.random() < 0.15:  # some noise: a grounded answer in other words, a wrong one in the context's
                own = list(rng.choice(WORDS[8:] if label == 1 else context_words, n_words))
            rows.append({"question": f"question {i}?", "context": " ".join(context_words),
                         "response": " ".join(own), "label": label,
                         "theta_qc": 1.0, "theta_rq": rng.uniform(0.5, 1.5), "theta_rc": 1.0,
                         "sgi": 1.0 + sgi_signal * label + rng.normal(0, 0.3), "sgi_status": "ok"})
    return pd.DataFrame(rows)


def verdict_boxes(app) -> list[str]:
    return [box.value for box in [*app.success, *app.warning]]


def test_word_overlap_beating_sgi_is_named(app):
    frame = scored_file(sgi_signal=0.15)
    upload(app, "overlap.csv", frame.to_csv(index=False).encode())
    goto(app, "overview")
    assert not app.exception
    baselines = oriented_scores(frame, trivial_names(frame.columns))
    verdict = evaluation.file_verdict(frame["label"], {"sgi": frame["sgi"]},
                                      {name: baselines[name] for name in baselines.columns}, n_boot=app_n_boot())
    assert verdict.best_trivial == "lexical_groundedness" and verdict.comparisons[0].outcome == "loses"
    overlap = verdict.standing("lexical_groundedness")
    (headline,) = [text for text in verdict_boxes(app) if text.startswith("No detector beats")]
    assert (f"the best trivial score on this file, word overlap with the context (AUROC {overlap.auroc.value:.3f} "
            f"[{overlap.auroc.interval[0]:.3f}, {overlap.auroc.interval[1]:.3f}])") in headline.replace("\\", "")
    assert not app.success
    assert not any("HaluEval" in text.value for text in app.markdown)


def test_sgi_at_chance_is_said_plainly(app):
    frame = scored_file(sgi_signal=0.0, seed=3)
    upload(app, "chance.csv", frame.to_csv(index=False).encode())
    goto(app, "overview")
    sgi = roc_analysis(frame["label"], frame["sgi"], n_boot=app_n_boot())
    assert sgi.auroc_ci[0] < 0.5 < sgi.auroc_ci[1]
    (box,) = [w.value for w in app.warning if w.value.startswith("SGI is near chance")]
    assert box.replace("\\", "").startswith(
        f"SGI is near chance here: its interval holds 0.5 (AUROC {sgi.auroc:.3f} "
        f"[{sgi.auroc_ci[0]:.3f}, {sgi.auroc_ci[1]:.3f}])")


def test_the_bundled_sample_is_said_to_look_like_halueval(app):
    goto(app, "overview")
    assert_clean(app)
    assert any("as on HaluEval" in text.value for text in app.markdown)
    assert any(text.startswith("No detector beats the best trivial score on this file, response length")
               for text in verdict_boxes(app))


def test_an_inverted_sgi_is_said_to_be_inverted(app):
    frame = scored_file(sgi_signal=-0.6, seed=5)
    upload(app, "inverted.csv", frame.to_csv(index=False).encode())
    goto(app, "overview")
    (box,) = [w.value for w in app.warning if w.value.startswith("SGI is inverted")]
    assert box.replace("\\", "").startswith("SGI is inverted here: its interval lies below 0.5")


def test_an_inverted_detector_column_is_named_with_where_to_fix_its_direction():
    from dashboard.views import texts

    rng = np.random.default_rng(7)
    y = np.tile([1.0, 0.0], 200)
    verdict = evaluation.file_verdict(y, {"sgi": y + rng.normal(0, 0.5, 400), "judge": -y + rng.normal(0, 0.8, 400)},
                                      {"theta_rq": 0.2 * y + rng.normal(0, 1, 400)}, n_boot=200)
    level, headline, notes = texts.verdict_text(verdict)
    judge = verdict.standing("judge")
    assert level == "success" and headline.startswith("Beats the best trivial score on this file, θ(r,q) alone")
    assert notes == [f"judge (file column) is inverted here: its interval lies below 0.5, so its high values go "
                     f"with hallucinated rows (AUROC {judge.auroc.value:.3f} [{judge.auroc.interval[0]:.3f}, "
                     f"{judge.auroc.interval[1]:.3f}]). Check what its high values mean (the Detectors page, or "
                     "--detector COLUMN:hallucinated)."]
