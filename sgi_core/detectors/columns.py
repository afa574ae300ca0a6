"""The per-row columns each detector family writes, named once (the registry and the families read them)."""

#: The reference-set displacement scores (:mod:`sgi_core.detectors.reference`).
REFERENCE_DETECTORS = (
    "displacement_consistency",
    "expected_response_deviation",
    "displacement_magnitude",
    "tangent_space_residual",
    "lsgi",
)
#: Claim-level support per row (:mod:`sgi_core.detectors.claims`).
CLAIM_COLUMNS = ("claim_min_support", "claim_mean_support", "claim_min_sgi", "claim_mean_sgi", "claim_n_sentences")
#: Unsupported specifics per row (:mod:`sgi_core.detectors.specifics`).
SPECIFICS_COLUMNS = ("specifics_unsupported_share", "specifics_n", "specifics_n_unsupported")
