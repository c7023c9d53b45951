"""A repeated operation is parsed and validated once, and the document limits hold on
every repeat."""

from __future__ import annotations

from typing import Any

import pytest
from strawberry.extensions.validation_cache import _get_validate_cache

from redstring.api.schema.build import VALIDATED_DOCUMENTS, _parsed
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from tests.api.conftest import MakeClient
from tests.api.support import DEMO

SHALLOW = """query ($t: ID!) { retrieve(query: "Acme", tenantId: $t, k: 2) {
  matches { entity { name } } } }"""
DEEP = """query ($t: ID!) { retrieve(query: "Acme", tenantId: $t) {
  matches { entity { relationships { target { relationships { target { name } } } } } } } }"""


@pytest.mark.parametrize(
    "cache",
    [_get_validate_cache(VALIDATED_DOCUMENTS), _parsed],
    ids=["validated", "parsed"],
)
async def test_a_repeated_operation_hits_the_cache(
    make_client: MakeClient, demo_services: Redstring, cache: Any
) -> None:
    client = make_client(demo_services, Settings())
    await client.data(SHALLOW, t=DEMO)
    before = cache.cache_info()
    for _ in range(3):
        await client.data(SHALLOW, t=DEMO)
    after = cache.cache_info()
    assert after.hits - before.hits == 3
    assert after.misses == before.misses


async def test_the_depth_limit_holds_when_the_document_is_cached(
    make_client: MakeClient, demo_services: Redstring
) -> None:
    client = make_client(demo_services, Settings(max_depth=5))
    for _ in range(3):
        error = await client.error(DEEP, t=DEMO)
        assert error["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
        assert "exceeds maximum operation depth of 5" in error["message"]


async def test_the_token_limit_holds_when_the_document_is_cached(
    make_client: MakeClient, demo_services: Redstring
) -> None:
    await make_client(demo_services, Settings()).data(SHALLOW, t=DEMO)
    strict = make_client(demo_services, Settings(max_tokens=10))
    for _ in range(2):
        error = await strict.error(SHALLOW, t=DEMO)
        assert error["extensions"]["code"] == "GRAPHQL_PARSE_FAILED"
        assert "more than 10 tokens" in error["message"]
