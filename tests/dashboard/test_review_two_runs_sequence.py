"""Review page, two runs: the running estimate is a confidence sequence over the keys in the order they were labelled."""

import numpy as np

from dashboard.review_panel import label_button_key
from sgi_core.review.queues import paired_queue
from sgi_core.stats.confidence_sequence import sequential_mean
from tests.dashboard.test_review_two_runs import N, two_runs_mode


def test_the_running_estimate_is_the_sequence_of_the_labels_in_queue_order(app):
    page, _, _ = two_runs_mode(app)
    order = paired_queue(np.zeros(N, bool), np.zeros(N, bool), seed=0)[:16]
    for position in order:
        page.button(key=label_button_key("grounded", position, "base")).click().run()
        page.button(key=label_button_key("hallucinated" if position % 2 else "grounded", position, "new")).click().run()
    # The new run hallucinates on the odd questions; the base run on none: y_new - y_base, in labelling order.
    expected = sequential_mean((order % 2).astype(float), lower=-1.0, upper=1.0)
    (shown,) = [m for m in page.metric if m.label.startswith("New − base")]
    assert shown.value == f"{expected.estimate:+.3f}"
    assert shown.delta == f"[{expected.ci[0]:+.3f}, {expected.ci[1]:+.3f}]"
    verdict = "regression" if expected.ci[0] > 0 else "no clear change"
    assert shown.label == f"New − base: {verdict}"
    assert any("confidence sequence: it stays valid when you stop" in c.value for c in page.caption)
