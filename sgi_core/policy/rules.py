"""The rules a policy is written and applied under, shared by ``gate`` and the Calibration page.

* :func:`write_refusal`: a policy is not written for a score whose AUROC on the file is near
  chance or inverted (its 95% interval holds 0.5 or lies below it) unless forced: a
  threshold on it flags rows no better than a coin flip.
* :func:`check_policy_model`: a policy naming a model outside the registry (an API model
  would send the file to that API, a huge test encoder would take any memory) is refused
  unless trusted.
* :func:`check_made_by`: scores made by another model, precision or backend than the
  policy's are refused: the threshold is in that model's SGI units.
* :func:`save_policy`: written atomically (a reader never sees half a policy).
"""

from __future__ import annotations

from sgi_core.errors import SGIInputError

#: Largest ``hashing-<dim>`` test encoder a policy may name without trusting it.
MAX_TEST_ENCODER_DIM = 4096


def write_refusal(standing: str, score_column: str) -> str | None:
    """Why no policy should be written for a score of this standing (:func:`~sgi_core.evaluation.verdict.standing_of`),
    or None.

    Examples
    --------
    >>> write_refusal("separates", "sgi") is None
    True
    >>> print(write_refusal("near chance", "sgi"))  # doctest: +NORMALIZE_WHITESPACE
    the AUROC of 'sgi' on this file is near chance (its 95% interval holds 0.5): a threshold on it flags rows
    no better than a coin flip
    """
    if standing not in ("near chance", "inverted"):
        return None
    where = "holds 0.5" if standing == "near chance" else "lies below 0.5"
    return (f"the AUROC of '{score_column}' on this file is {standing} (its 95% interval {where}): a threshold on it "
            "flags rows no better than a coin flip")


def check_policy_model(policy, source: str, *, trust: bool) -> None:
    """Refuse a policy model outside the registry (an API model, a huge test encoder) unless trusted."""
    from sgi_core.embedding.registry import resolve_spec

    name = policy.model
    dim = name.partition("-")[2] if name.startswith("hashing-") else "256" if name == "hashing" else ""
    test_encoder = dim.isdigit() and 0 < int(dim) <= MAX_TEST_ENCODER_DIM
    if not (trust or resolve_spec(name) is not None or test_encoder):
        raise SGIInputError(
            f"the policy names model '{name}', which is not a registered model: loading it could send this file "
            "to an API or take any amount of memory", source=source,
            hint="Write the policy with a registered model (python -m sgi_core models), or pass "
                 "--trust-policy-model if you trust this policy file")


def check_made_by(policy, made_by: dict | None, source: str) -> None:
    """Refuse scores made by another model, precision, backend or context strategy than the policy's.

    Nothing is checked where ``made_by`` (or one of its fields) is unrecorded.
    """
    if made_by is None:
        return
    if made_by["model"] != policy.model:
        raise SGIInputError(
            f"the file's sgi column was made by model '{made_by['model']}', the policy by '{policy.model}': "
            "its threshold is in that model's SGI units", source=source,
            hint=f"Score the file again with --model {policy.model}, or write a policy for '{made_by['model']}'")
    if policy.model_precision is not None and made_by.get("precision") not in (None, policy.model_precision):
        raise SGIInputError(
            f"the scores were made at precision {made_by['precision']}, the policy's at {policy.model_precision}: "
            "a different precision moves SGI", source=source, hint=f"Pass --precision {policy.model_precision}")
    if policy.model_backend is not None and made_by.get("backend") not in (None, policy.model_backend):
        raise SGIInputError(
            f"the scores were made with backend {made_by['backend']}, the policy's with {policy.model_backend}: "
            "int8 weights move SGI", source=source, hint=f"Pass --backend {policy.model_backend}")
    if made_by.get("context_strategy") not in (None, policy.context_strategy):
        raise SGIInputError(
            f"the contexts were embedded with strategy {made_by['context_strategy']}, the policy's with "
            f"{policy.context_strategy}: each embeds a different context, so SGI moves", source=source,
            hint=f"Pass --context-strategy {policy.context_strategy}")


def save_policy(policy, path) -> None:
    """Write the policy as JSON at ``path`` atomically (:func:`sgi_core.io.export.atomic_output`)."""
    from sgi_core.io.export import atomic_output
    from sgi_core.policy.file import policy_to_json

    with atomic_output(path) as handle:
        handle.write((policy_to_json(policy) + "\n").encode("utf-8"))
