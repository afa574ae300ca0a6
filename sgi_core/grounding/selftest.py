"""The load-time self-test: plain entailments must score clearly above plain contradictions.

Each built-in premise comes with one hypothesis it states outright and one it
contradicts outright; any working checker gives the entailment the higher
P(supported). The test compares the means over the pairs,

    passed  <=>  mean P(supported | entailments) - mean P(supported | contradictions) >= MIN_SEPARATION

A model below the margin is refused: with the contradictions on top its labels are most
likely read the wrong way round (``id2label`` names them in another order than the
weights use); near equality it does not tell the two apart (random or mislabelled
weights). Models trained on another task, and random-weight test models, skip it
(``--no-self-test``); the result, run or skipped, is recorded in the scored file's provenance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sgi_core.errors import SGIInputError
from sgi_core.results import JsonResult

#: Least gap between the two means: a random-weight classifier's means differ by a few hundredths,
#: a working checker's by more than half the scale.
MIN_SEPARATION = 0.2
#: (premise, entailed hypothesis, contradicted hypothesis).
SELF_TEST_PAIRS = (
    ("The museum opens at nine in the morning and closes at five in the afternoon.",
     "The museum opens at nine in the morning.", "The museum is closed all day."),
    ("Maria bought three apples and a loaf of bread at the market.",
     "Maria bought bread at the market.", "Maria bought nothing at the market."),
    ("The bridge was completed in 1932 after six years of construction.",
     "The bridge was completed in 1932.", "The bridge has never been built."),
    ("Tom is a doctor who works at the city hospital.",
     "Tom works at a hospital.", "Tom has never worked in a hospital."),
    ("It rained heavily in Oslo all day on Monday.",
     "It rained in Oslo on Monday.", "It was dry in Oslo all day on Monday."),
)


@dataclass(frozen=True)
class SelfTest(JsonResult):
    """The self-test's outcome.

    Attributes
    ----------
    ran : bool
        False when it was skipped.
    entailment_mean, contradiction_mean : float
        Mean P(supported) over the entailed and the contradicted hypotheses (NaN when skipped).
    passed : bool or None
        None when skipped.
    """

    ran: bool
    entailment_mean: float
    contradiction_mean: float
    passed: bool | None

    @classmethod
    def not_run(cls) -> SelfTest:
        return cls(False, float("nan"), float("nan"), None)


def run_self_test(support: Callable[[list[str], list[str]], np.ndarray], *, source: str) -> SelfTest:
    """Score :data:`SELF_TEST_PAIRS` with ``support(premises, hypotheses)`` and refuse an inverted model.

    Raises
    ------
    SGIInputError
        "labels look inverted" when the contradictions score above the entailments by the
        margin; "does not separate" when the two means are within it.
    """
    premises = [premise for premise, _, _ in SELF_TEST_PAIRS]
    entailed = support(premises, [hypothesis for _, hypothesis, _ in SELF_TEST_PAIRS])
    contradicted = support(premises, [hypothesis for _, _, hypothesis in SELF_TEST_PAIRS])
    result = SelfTest(True, float(np.mean(entailed)), float(np.mean(contradicted)),
                      bool(np.mean(entailed) - np.mean(contradicted) >= MIN_SEPARATION))
    if result.passed:
        return result
    means = (f"mean P(supported) {result.entailment_mean:.3f} on the entailments against "
             f"{result.contradiction_mean:.3f} on the contradictions")
    if result.contradiction_mean > result.entailment_mean + MIN_SEPARATION:
        raise SGIInputError(f"the grounding model scores plain contradictions above plain entailments ({means}): "
                            "labels look inverted: check id2label", source=source,
                            hint="Name the supported label in the folder's sgi_grounding.json ('supported_label'), "
                                 "or pass --no-self-test for a model trained on another task")
    raise SGIInputError(f"the grounding model does not separate entailments from contradictions ({means}, a gap "
                        f"under {MIN_SEPARATION}): random or mislabelled weights?", source=source,
                        hint="Give the folder of a trained checker; pass --no-self-test only for a model trained "
                             "on another task")
