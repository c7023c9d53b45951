"""An exception escaping a schema extension still reaches the client coded and masked.

Strawberry answers such an exception with an error of its own, without running
the remaining extensions (so `ErrorCodes` never sees it); `GraphQLEndpoint`
codes whatever is left uncoded before the body is written.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
from starlette.applications import Starlette
from starlette.routing import Route
from strawberry.extensions import SchemaExtension

from redstring import StoreUnavailableError
from redstring.api.endpoint import GraphQLEndpoint
from redstring.api.limits import Limits
from redstring.api.schema.build import RedstringSchema, schema_extensions
from redstring.api.schema.mutation import Mutation
from redstring.api.schema.query import Query
from tests.api.support import memory_services

SECRET = "connection string with a password in it"


class FailingExtension(SchemaExtension):
    """Fails the way a bug in an extension would, with a message not meant for clients."""

    def on_execute(self) -> Iterator[None]:
        raise RuntimeError(SECRET)
        yield  # pragma: no cover


class UnavailableExtension(SchemaExtension):
    """Fails as an extension that asks a store would when the store is throttling."""

    def on_execute(self) -> Iterator[None]:
        raise StoreUnavailableError(SECRET, retry_after=16.5)
        yield  # pragma: no cover


async def _post_through(extension: type[SchemaExtension]) -> httpx.Response:
    """`{ __typename }` posted to an endpoint whose schema runs `extension` last."""
    limits = Limits()
    schema = RedstringSchema(
        query=Query,
        mutation=Mutation,
        extensions=[*schema_extensions(limits), extension],
    )
    services = memory_services()
    endpoint = GraphQLEndpoint(schema, services=lambda: services, limits=limits)
    app = Starlette(routes=[Route("/graphql", endpoint, methods=["GET", "POST"])])
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as http:
        return await http.post("/graphql", json={"query": "{ __typename }"})


async def test_an_error_escaping_an_extension_is_coded_and_masked() -> None:
    response = await _post_through(FailingExtension)
    body = response.json()
    assert [e["extensions"]["code"] for e in body["errors"]] == ["INTERNAL_SERVER_ERROR"]
    assert SECRET not in response.text


async def test_an_outage_escaping_an_extension_is_a_503_asking_for_its_wait() -> None:
    response = await _post_through(UnavailableExtension)
    body = response.json()
    assert [e["extensions"]["code"] for e in body["errors"]] == ["SERVICE_UNAVAILABLE"]
    assert SECRET not in response.text
    assert (response.status_code, response.headers["retry-after"]) == (503, "17")
