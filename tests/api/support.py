"""Helpers shared by the API tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
from starlette.applications import Starlette

from redstring import GraphStore, HashingEmbeddingProvider
from redstring.adapters.embeddings import OpenAICompatibleEmbeddings, RetryPolicy
from redstring.api import create_app
from redstring.api.demo import DEMO_TENANT_ID
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from redstring.testing import CountingGraphStore, counting_graph_store

DEMO = str(DEMO_TENANT_ID)
DIMENSION = 64

README_QUERY = """
query ($tenant: ID!) {
  retrieve(query: "ACME Corporation", tenantId: $tenant, k: 5) {
    matches {
      score semantic lexical
      entity { name entityType relationships(first: 5) { source { name } relationshipType target { name } } }
    }
  }
}
"""


# One operation that embeds a query and one that embeds an entity, of tenant `$t`.
ACME_RETRIEVE = """query ($t: ID!) {
  retrieve(query: "Acme", tenantId: $t, k: 3, mode: HYBRID) { matches { entity { name } } }
}"""
ACME_UPSERT = """mutation ($t: ID!) {
  upsertEntities(tenantId: $t, entities: [{name: "Acme Corp", entityType: "company"}]) { count }
}"""


def memory_services() -> Redstring:
    """Empty in-memory services with a small hashing provider."""
    return Redstring.in_memory(HashingEmbeddingProvider(DIMENSION))


def services_with_graph(base: Redstring, graph: GraphStore) -> Redstring:
    """`base`'s provider and vectors with another graph store (a double)."""
    return Redstring(embeddings=base.embeddings, vectors=base.vectors, graph=graph)


def counting_client(
    make_client: Callable[[Redstring, Settings | None], GraphQLClient],
    base: Redstring,
    settings: Settings | None = None,
    *,
    ends: bool = True,
) -> tuple[CountingGraphStore, GraphQLClient]:
    """A client over `base` whose graph store calls are counted; with `ends`, the counted
    store reads relationships with their ends when `base`'s does (`EndReads`), else never."""
    counting = counting_graph_store(base.graph) if ends else CountingGraphStore(base.graph)
    return counting, make_client(services_with_graph(base, counting), settings)


class GraphQLClient:
    """Posts operations to `/graphql` and hands back the decoded body."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    async def execute(self, query: str, **variables: Any) -> dict[str, Any]:
        response = await self.http.post("/graphql", json={"query": query, "variables": variables})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def data(self, query: str, **variables: Any) -> dict[str, Any]:
        """The `data` of a response that must have no errors."""
        body = await self.execute(query, **variables)
        assert "errors" not in body, body["errors"]
        data: dict[str, Any] = body["data"]
        return data

    async def error(self, query: str, **variables: Any) -> dict[str, Any]:
        """The one error of a response that must fail."""
        body = await self.execute(query, **variables)
        assert len(body.get("errors") or []) == 1, body
        error: dict[str, Any] = body["errors"][0]
        return error


@asynccontextmanager
async def started(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """`app` with its lifespan run (its services opened, closed on exit), and an HTTP
    client of it over ASGI."""
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
        ) as http,
    ):
        yield http


@asynccontextmanager
async def app_over_provider(
    base_url: str, model: str, api_key_env: str | None
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of the app over in-memory stores and the `openai` provider at `base_url`
    (a fake server's), which gives up after two quick attempts."""
    provider = OpenAICompatibleEmbeddings(
        base_url=base_url,
        model=model,
        dimension=8,
        api_key_env=api_key_env,
        retry=RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.01),
    )
    async with Redstring.in_memory(provider) as services:
        app = create_app(Settings(), services=services)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield http
