"""Shared test settings: Hypothesis' example count comes from KG_COMPLIANCE_MAX_EXAMPLES,
no `REDSTRING_*` setting of the environment reaches the tests, and the compliance
suites' assertions report their values."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# The compliance suites' assertions live in the package, which pytest does not rewrite
# by itself: without this a failing one is a bare `AssertionError`, without its values.
# It must run before anything imports `redstring.testing`.
pytest.register_assert_rewrite("redstring.testing")

# The suite tests the defaults: `make test` sources an env file that also names its
# server for `redstring` itself (`REDSTRING_BACKEND=neo4j`, `REDSTRING_NEO4J_*`), and a
# developer's shell may export more. Tests that want a setting pass it explicitly.
for _name in [name for name in os.environ if name.startswith("REDSTRING_")]:
    del os.environ[_name]

settings.register_profile(
    "redstring",
    max_examples=int(os.environ.get("KG_COMPLIANCE_MAX_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("redstring")
