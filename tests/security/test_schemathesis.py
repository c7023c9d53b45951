"""schemathesis' GraphQL mode against `redstring serve --demo` on a loopback port: each
root field's generated cases keep the contract of `tests.security.contract`, and pass
schemathesis' own server-error check.

The schema is the live one (`schema_sdl`); `ID` values are mostly the demo tenant and its
entities' ids so resolvers are reached. `KG_SCHEMATHESIS_MAX_EXAMPLES` bounds the cases
per root field (default 80, five root fields).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.graphql import nodes

from redstring.api.demo import DEMO_TENANT_ID, demo_dataset
from redstring.api.schema.build import schema_sdl
from tests.processes import free_loopback_port, redstring_server
from tests.security.contract import contract_violations, json_values, uuid_ids, value_node

MAX_EXAMPLES = int(os.environ.get("KG_SCHEMATHESIS_MAX_EXAMPLES", "80"))

schemathesis.graphql.scalar(
    "ID", uuid_ids(DEMO_TENANT_ID, [e.id for e in demo_dataset()[0]]).map(nodes.String)
)
schemathesis.graphql.scalar("JSON", json_values().map(value_node))
schema = schemathesis.graphql.from_file(schema_sdl())


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The GraphQL URL of a real `redstring serve --demo` (memory backend, one worker)."""
    port = free_loopback_port()
    process = redstring_server(port)
    base = f"http://127.0.0.1:{port}"
    try:
        process.wait_until_answering(f"{base}/readyz")
        yield f"{base}/graphql"
    finally:
        process.stop()


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
def test_generated_cases_keep_the_contract(case: schemathesis.Case, server: str) -> None:
    started = time.perf_counter()
    response = case.call(base_url=server)
    elapsed = time.perf_counter() - started
    text = response.content.decode("utf-8", "replace")
    problems = contract_violations(response.status_code, text, elapsed)
    assert not problems, f"{problems}\n--- body:\n{case.body}\n--- response:\n{text}"
    case.validate_response(response, checks=[not_a_server_error])
