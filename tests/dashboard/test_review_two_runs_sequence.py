"""Review page, two runs: the running estimate is a confidence sequence over the keys in the order they were
labelled."""

import numpy as np

from dashboard.app_pages.review_panel import label_button_key
from sgi_core.stats.confidence_sequence import sequential_mean
from tests.dashboard.test_review_two_runs import N, queue, two_runs_mode


def test_the_running_estimate_is_the_sequence_of_the_labels_in_queue_order(app):
    page, base, new = two_runs_mode(app)
    order, _, new_row = queue(base, new)
    order = order[:16]
    halluc_new = np.asarray(new_row)[order] % 2  # the new run hallucinates on its odd rows; the base run on none
    for position, halluc in zip(order, halluc_new):
        page.button(key=label_button_key("grounded", position, "base")).click().run()
        page.button(key=label_button_key("hallucinated" if halluc else "grounded", position, "new")).click().run()
    # y_new - y_base, in labelling order, drawn without replacement from the N matched keys.
    expected = sequential_mean(halluc_new.astype(float), lower=-1.0, upper=1.0, population=N)
    (shown,) = [m for m in page.metric if m.label.startswith("New − base")]
    assert shown.value == f"{expected.estimate:+.3f}"
    assert shown.delta == f"[{expected.ci[0]:+.3f}, {expected.ci[1]:+.3f}]"
    verdict = "regression" if expected.ci[0] > 0 else "no clear change"
    assert shown.label == f"New − base: {verdict}"
    assert any("confidence sequence: it stays valid when you stop" in c.value for c in page.caption)
