"""`GraphQLEndpoint`: Strawberry's ASGI view, with a `RequestContext` per request."""

from __future__ import annotations

from collections.abc import Callable

import strawberry
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL

from redstring.api.authorization import Caller
from redstring.api.context import RequestContext
from redstring.api.limits import Limits
from redstring.composition.services import Services


class GraphQLEndpoint(GraphQL[RequestContext, None]):
    """Serves `POST /graphql` (operations) and `GET /graphql` (GraphiQL).

    `services` is a callable because the app opens its services in its
    lifespan, after this endpoint exists. `graphiql` is the page a browser
    gets (see `redstring.api.graphiql`), or `None` for no GraphiQL.
    """

    def __init__(
        self,
        schema: strawberry.Schema,
        *,
        services: Callable[[], Services],
        limits: Limits,
        graphiql: str | None = None,
    ) -> None:
        super().__init__(schema, graphql_ide="graphiql" if graphiql is not None else None)
        self._services = services
        self._limits = limits
        self._graphiql = graphiql or ""

    async def render_graphql_ide(self, request: Request) -> Response:
        return HTMLResponse(self._graphiql)

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> RequestContext:
        return RequestContext(
            services=self._services(), limits=self._limits, caller=Caller.anonymous()
        )
