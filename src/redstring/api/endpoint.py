"""`GraphQLEndpoint`: Strawberry's ASGI view, with a `RequestContext` per request."""

from __future__ import annotations

from collections.abc import Callable

import strawberry
from cross_web import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL

from redstring.api.authorization import Caller
from redstring.api.context import RequestContext
from redstring.api.errors import ErrorCode, RequestRefusedError
from redstring.api.limits import Limits
from redstring.api.request_record import note_error_codes
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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Strawberry's view, with every refusal answered as a GraphQL error body."""
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        try:
            response = await self.run(Request(scope=scope, receive=receive))
        except RequestRefusedError as refused:
            response = refusal_response(refused)
        except HTTPException as exc:  # Strawberry's own transport refusals
            response = refusal_response(
                RequestRefusedError(exc.status_code, ErrorCode.BAD_REQUEST, exc.reason)
            )
        await response(scope, receive, send)

    async def render_graphql_ide(self, request: Request) -> Response:
        return HTMLResponse(self._graphiql)

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> RequestContext:
        return RequestContext(
            services=self._services(), limits=self._limits, caller=Caller.anonymous()
        )


def refusal_response(refused: RequestRefusedError) -> JSONResponse:
    """`refused` as an HTTP response: its status, headers and GraphQL error body."""
    note_error_codes([refused.code.value])
    return JSONResponse(refused.body(), status_code=refused.status, headers=refused.headers)
