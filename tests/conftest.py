"""Shared test settings: Hypothesis' example count comes from KG_COMPLIANCE_MAX_EXAMPLES."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "redstring",
    max_examples=int(os.environ.get("KG_COMPLIANCE_MAX_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("redstring")
