"""An embedding provider that refuses one entity's text, or one query, and takes others
(a model past its token limit, behind a server that refuses rather than cuts): the
client's input is at fault, so GraphQL answers `BAD_USER_INPUT` naming it, where a
provider that takes no text stays an internal error. Against a real HTTP server on a
loopback port."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from redstring.adapters.embeddings.openai_compatible import PROBE_TEXT
from redstring.testing import new_tenant
from tests.api.support import app_over_provider
from tests.embeddings.fake_server import EmbeddingAPI, Failure, serving

UPSERT = """mutation ($t: ID!, $entities: [EntityInput!]!) {
  upsertEntities(tenantId: $t, entities: $entities) { count }
}"""
RETRIEVE = """query ($t: ID!, $q: String!, $mode: RetrievalMode!) {
  retrieve(query: $q, tenantId: $t, k: 3, mode: $mode) { matches { entity { name } } }
}"""
ANSWER = (
    'HTTP 413: {"error":{"message":"Input validation error: input 0 is not taken by this model"}}'
)
NAMES = ("Acme Company", "Zeta Company", "Bolt Company", "Cobalt Company")
LONG = "A maker of widgets since 1948, REFUSED by a model of 512 tokens. "


@pytest.fixture
def api() -> EmbeddingAPI:
    return EmbeddingAPI(dimension=8, refused_words=("REFUSED",), refusal_status=413)


@pytest.fixture
async def http(api: EmbeddingAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with serving(api) as base_url, app_over_provider(base_url, "bge-small", None) as http:
        yield http


async def _post(http: httpx.AsyncClient, query: str, **variables: Any) -> dict[str, Any]:
    response = await http.post("/graphql", json={"query": query, "variables": variables})
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def _entity(name: str, description: str | None = None) -> dict[str, str]:
    entity = {"name": name, "entityType": "company"}
    return entity if description is None else {**entity, "description": description}


async def _names(http: httpx.AsyncClient, tenant: str) -> list[str]:
    """The names of the tenant's entities, as a lexical retrieve of each name finds them."""
    found = set()
    for name in NAMES:
        body = await _post(http, RETRIEVE, t=tenant, q=name, mode="LEXICAL")
        found.update(m["entity"]["name"] for m in body["data"]["retrieve"]["matches"])
    return sorted(found)


async def test_an_entity_whose_text_is_refused_is_bad_input_naming_it_and_none_is_written(
    api: EmbeddingAPI, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    tenant = str(new_tenant())
    entities = [
        _entity("Acme Company"),
        _entity("Zeta Company", LONG),
        _entity("Bolt Company"),
        _entity("Cobalt Company", LONG),
    ]

    body = await _post(http, UPSERT, t=tenant, entities=entities)

    assert body == {
        "data": None,
        "errors": [
            {
                "message": f"entities[1]: the embedding provider refuses the text of this "
                f"entity ({ANSWER}); entities[3]: the embedding provider refuses the text of "
                f"this entity ({ANSWER})",
                "locations": [{"line": 2, "column": 3}],
                "path": ["upsertEntities"],
                "extensions": {"code": "BAD_USER_INPUT"},
            }
        ],
    }
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []  # the client's own
    assert await _names(http, tenant) == []  # nothing of the mutation is written
    assert [PROBE_TEXT] in api.inputs_of()

    accepted = await _post(http, UPSERT, t=tenant, entities=[entities[0], entities[2]])
    assert accepted == {"data": {"upsertEntities": {"count": 2}}}
    assert await _names(http, tenant) == ["Acme Company", "Bolt Company"]


async def test_an_entity_given_twice_is_named_by_its_last_index(
    http: httpx.AsyncClient,
) -> None:
    """The last of an id is the one written, whose text is embedded."""
    tenant = str(new_tenant())
    entities = [_entity("Zeta Company", LONG), _entity("Acme Company"), _entity("Zeta Company")]
    entities[2]["description"] = LONG + "again"

    body = await _post(http, UPSERT, t=tenant, entities=entities)

    [error] = body["errors"]
    assert error["message"].startswith("entities[2]: the embedding provider refuses the text")
    assert error["extensions"] == {"code": "BAD_USER_INPUT"}


@pytest.mark.parametrize("mode", ["SEMANTIC", "HYBRID"])
async def test_a_query_whose_text_is_refused_is_bad_input(
    http: httpx.AsyncClient, mode: str
) -> None:
    body = await _post(http, RETRIEVE, t=str(new_tenant()), q="widgets REFUSED", mode=mode)

    assert body["data"] is None
    [error] = body["errors"]
    assert error["message"] == f"query: the embedding provider refuses its text ({ANSWER})"
    assert error["extensions"] == {"code": "BAD_USER_INPUT"}


async def test_a_provider_that_refuses_every_text_with_400_is_still_an_internal_error(
    api: EmbeddingAPI, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A wrong model some servers answer with 400: the probe is refused too, so it is the
    settings, with the line that says which to check, as before."""
    api.failures.extend(
        Failure(400, body={"error": {"message": "model 'bge-small' not found"}}) for _ in range(2)
    )

    body = await _post(http, UPSERT, t=str(new_tenant()), entities=[_entity("Acme Company")])

    assert [e["extensions"]["code"] for e in body["errors"]] == ["INTERNAL_SERVER_ERROR"]
    assert body["errors"][0]["message"] == "Internal server error"
    [line] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    said = line.getMessage()
    assert said.startswith(
        "the embedding provider refuses the server's requests, at upsertEntities: "
    )
    assert "with HTTP 400: " in said
    assert said.endswith("; check REDSTRING_EMBEDDING_MODEL, or REDSTRING_EMBEDDING_BASE_URL")
    assert api.inputs_of() == [["Acme Company. company"], [PROBE_TEXT]]
