"""`GraphQLEndpoint`: Strawberry's ASGI view, with a `RequestContext` per request."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

import strawberry
from cross_web import AsyncHTTPRequestAdapter, HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.http.types import QueryParams
from strawberry.types import ExecutionResult

from redstring.api import bookmarks, json_body, request_body
from redstring.api.authentication import NO_AUTHENTICATION, Authenticator
from redstring.api.authorization import Caller, Role
from redstring.api.bookmarks import BookmarkSeal
from redstring.api.context import RequestContext
from redstring.api.errors import (
    ErrorCode,
    RequestRefusedError,
    failed_only_for_unavailable,
    public_error,
)
from redstring.api.limits import Limits
from redstring.api.operation_choice import provide_operation_name
from redstring.api.refusals import internal_error, refusal_response, view_refusal
from redstring.api.request_record import note_caller
from redstring.api.retry_after import (
    known_outage_wait,
    note_outage_waits,
    outage_wait,
    unavailable_headers,
)
from redstring.composition.client import Redstring
from redstring.ports.consistency import consistent_after, written_positions

__all__ = ["GraphQLEndpoint", "refusal_response"]

logger = logging.getLogger("redstring.api")


class GraphQLEndpoint(GraphQL[RequestContext, None]):
    """Serves `POST /graphql` and `GET /graphql` (operations; GraphiQL for a browser),
    and `HEAD /graphql` as GET.

    `services` is a callable because the app opens its services in its
    lifespan, after this endpoint exists. `graphiql` is the page a browser
    gets (see `redstring.api.graphiql`), or `None` for no GraphiQL.
    `authenticator` names the caller of each operation (none by default);
    `bookmark_seal` seals the bookmarks it answers and opens those sent back (a key of
    its own by default).
    """

    def __init__(
        self,
        schema: strawberry.Schema,
        *,
        services: Callable[[], Redstring],
        limits: Limits,
        graphiql: str | None = None,
        authenticator: Authenticator = NO_AUTHENTICATION,
        bookmark_seal: BookmarkSeal | None = None,
    ) -> None:
        super().__init__(schema, graphql_ide="graphiql" if graphiql is not None else None)
        self._services = services
        self._bookmarks = bookmark_seal or BookmarkSeal.generated()
        self._limits = limits
        self._graphiql = graphiql or ""
        self._authenticator = authenticator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Strawberry's view within the request's deadline, its body counted as it
        arrives; every failure answered as a GraphQL error body. HEAD is answered as
        GET (RFC 9110), which Strawberry serves and HEAD it refuses; the server sends
        a HEAD response's head alone."""
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        limit = self._limits.max_body_bytes
        served = {**scope, "method": "GET"} if scope["method"] == "HEAD" else scope
        body = request_body.BodyLimit(receive, limit)
        response = await self._answer(Request(scope=served, receive=body), body)
        await response(scope, receive, send)

    async def _answer(self, request: Request, body: request_body.BodyLimit) -> Response:
        """The response to `request` (its body read through `body`): Strawberry's, or a
        refusal for whatever it raised.

        Its reads see at least the state of the bookmark the request sent, and
        when it wrote, the response carries the bookmark of its writes
        (`redstring.api.bookmarks`)."""
        deadline = asyncio.timeout(self._limits.request_timeout)
        try:
            request_body.refuse_declared_length(request.headers, self._limits.max_body_bytes)
            request_body.refuse_transfer_coding(request.headers.getlist("transfer-encoding"))
            if request.method == "POST":
                request_body.refuse_repeated_content_type(request.headers.getlist("content-type"))
                request_body.refuse_content_coding(request.headers.getlist("content-encoding"))
            after = self._bookmarks.from_header(request.headers.get(bookmarks.HEADER))
            with consistent_after(after) as unit, outage_wait():
                async with deadline:
                    response = await self.run(request)
            if unit.written:
                response.headers[bookmarks.HEADER] = self._bookmarks.encode(unit.written)
            return response
        except RequestRefusedError as refused:
            return refusal_response(refused)
        except HTTPException as exc:  # Strawberry's own transport refusals
            return refusal_response(view_refusal(exc, request.method))
        except ClientDisconnect:
            return refusal_response(
                RequestRefusedError(400, ErrorCode.BAD_REQUEST, "The client left mid-request")
            )
        except Exception as exc:
            if isinstance(exc, TimeoutError) and deadline.expired():
                return refusal_response(
                    self._body_late() if body.cut_short else self._past_deadline()
                )
            logger.error("internal error in %s %s", request.method, request.url.path, exc_info=True)
            return refusal_response(internal_error())

    def _past_deadline(self) -> RequestRefusedError:
        """504: the server, a gateway to its stores, did not answer in time. The same
        request would most likely time out again, which 503 would not say."""
        return RequestRefusedError(
            504,
            ErrorCode.REQUEST_TIMEOUT,
            f"The request did not finish within {self._limits.request_timeout:g} s;"
            " its work was cancelled",
        )

    def _body_late(self) -> RequestRefusedError:
        """408: the client had not sent the whole body at the deadline, so the request
        never ran; the client's fault, where the 504 is the server's."""
        return RequestRefusedError(
            408,
            ErrorCode.REQUEST_TIMEOUT,
            f"The request's body did not arrive within {self._limits.request_timeout:g} s",
        )

    def create_response(
        self,
        response_data: GraphQLHTTPResponse | list[GraphQLHTTPResponse],
        sub_response: Response,
    ) -> Response:
        """Strawberry's response to a result, a 200, unless the result failed only because
        a store did not answer (`failed_only_for_unavailable`): then 503 with
        `Retry-After`, the same body; its wait is the longest an outage named (an
        embedding provider's own `Retry-After`), else the default. A result with data
        stays a 200, as GraphQL over HTTP asks of any with `data` not null."""
        response = super().create_response(response_data, sub_response)
        if isinstance(response_data, dict) and failed_only_for_unavailable(response_data):
            response.status_code = HTTPStatus.SERVICE_UNAVAILABLE
            response.headers.update(unavailable_headers(known_outage_wait()))
        return response

    def encode_json(self, data: object) -> bytes:
        """A result's body, in ASCII as every body of the API (`json_body`): an error
        message or a value may echo a lone surrogate the client sent."""
        return json_body.encode_json(data)

    def parse_json(self, data: str | bytes) -> Any:
        """Every JSON a request carries (a POST body, GET `variables` and `extensions`),
        refused when malformed or nested deeper than `max_json_depth`."""
        return request_body.parse_json(data, self._limits.max_json_depth)

    def parse_query_params(self, params: QueryParams) -> dict[str, Any]:
        """A GET's parameters, its `variables` and `extensions` parsed as `parse_json`
        parses a body, a refusal naming the parameter that is not JSON; a GraphQL
        parameter given twice is refused."""
        request_body.refuse_repeated_parameters(params)
        fields: dict[str, Any] = dict(params)
        for name in ("variables", "extensions"):
            if fields.get(name):
                fields[name] = request_body.parse_json(
                    fields[name], self._limits.max_json_depth, f"The {name} parameter"
                )
        return fields

    async def parse_http_body(self, request: AsyncHTTPRequestAdapter) -> GraphQLRequestData:
        """The one operation of a request: GET parameters, or a POST body of JSON. Its
        `operationName` is recorded for `OperationChoice` (`provide_operation_name`)."""
        if request.method == "GET":
            fields: object = self.parse_query_params(request.query_params)
        else:
            request_body.require_json_media_type(request.content_type)
            fields = self.parse_json(await request.get_body())
        data = request_body.graphql_request(fields)
        provide_operation_name(data.operation_name)
        return data

    async def process_result(
        self, request: Request, result: ExecutionResult
    ) -> GraphQLHTTPResponse:
        """The response body, with every error coded: the `ErrorCodes` extension codes
        them, but Strawberry answers an exception escaping any extension hook without
        running the rest, so an uncoded error is made public (masked) here. A result
        refused before execution has no `data`."""
        if result.errors and any("code" not in (e.extensions or {}) for e in result.errors):
            note_outage_waits(result.errors)  # the uncoded ones still hold their outage
            result.errors = [
                e if "code" in (e.extensions or {}) else public_error(e) for e in result.errors
            ]
        body = await super().process_result(request, result)
        if result.data is None and result.errors and all(e.path is None for e in result.errors):
            # Refused before execution (parse, validation, cost, variables): the GraphQL
            # spec leaves `data` out, where an execution that failed at its root has null.
            body.pop("data", None)
        written = written_positions()
        if written:
            body["extensions"] = {
                **(body.get("extensions") or {}),
                "bookmark": self._bookmarks.encode(written),
            }
        return body

    async def render_graphql_ide(self, request: Request) -> Response:
        return HTMLResponse(self._graphiql)

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> RequestContext:
        """The request's context, its caller authenticated (401 when it cannot be).

        Strawberry asks for the context before it decides to render GraphiQL's
        page, which carries no data, and before it refuses a method other than GET
        and POST with 405: both requests are let through with a caller granted
        nothing, so only executing an operation needs credentials.
        """
        adapter = self.request_adapter_class(request) if isinstance(request, Request) else None
        if adapter is not None and (
            not self.is_request_allowed(adapter) or self.should_render_graphql_ide(adapter)
        ):
            caller = _PAGE_CALLER
        else:
            caller = await self._authenticator.caller(_authorization(request))
            note_caller(caller.subject)
        return RequestContext(client=self._services(), limits=self._limits, caller=caller)


_PAGE_CALLER = Caller(subject=None, tenants=frozenset(), role=Role.READ)


def _authorization(request: Request | WebSocket) -> str | None:
    """The request's `Authorization` header, refused (400) when it has several: a proxy
    in front may have checked another one than the first, which this server read."""
    given = request.headers.getlist("authorization")
    if len(given) > 1:
        raise RequestRefusedError(
            400,
            ErrorCode.BAD_REQUEST,
            f"The request has {len(given)} Authorization headers; send one",
        )
    return given[0] if given else None
