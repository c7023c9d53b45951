"""`OperationChoice`: a document with several operations must name the one to run.

GraphQL over HTTP says a request whose document holds several operations
and no `operationName` is an error. Strawberry instead runs the first
operation, so a client that forgot the name gets an answer to a question it
may not have meant. Here such a request is refused the way Strawberry
refuses an unknown `operationName`: HTTP 400, `BAD_REQUEST`.

Strawberry's `ExecutionContext.operation_name` falls back to the first
operation's name, so the HTTP endpoint records the name the request gave
(`provide_operation_name`) for the request's own context; an execution that
came through no HTTP request (a direct `Schema.execute`) is not checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextvars import ContextVar

from graphql import OperationDefinitionNode
from strawberry.extensions import SchemaExtension
from strawberry.schema.exceptions import CannotGetOperationTypeError

MESSAGE = "Must provide operation name if query contains multiple operations."


class OperationNotChosenError(CannotGetOperationTypeError):
    """The document holds several operations and the request names none.

    A `CannotGetOperationTypeError`, because that is the error Strawberry lets
    out of `Schema.execute` for its view to answer with HTTP 400.
    """

    def __init__(self) -> None:
        super().__init__(None)

    def as_http_error_reason(self) -> str:
        return MESSAGE


class _NoRequest:
    """An execution that came through no HTTP request."""


NO_REQUEST = _NoRequest()
# The `operationName` of the HTTP request being served, in its own context (each
# request is served in a task of its own, which copies the context it starts from).
_requested: ContextVar[str | _NoRequest | None] = ContextVar(
    "redstring_requested_operation_name", default=NO_REQUEST
)


def provide_operation_name(name: str | None) -> None:
    """Records the `operationName` the HTTP request being served gave (`None`: none)."""
    _requested.set(name)


def requested_operation_name() -> str | _NoRequest | None:
    """The `operationName` the HTTP request being served gave, or `NO_REQUEST`."""
    return _requested.get()


class OperationChoice(SchemaExtension):
    """Refuses a document of several operations sent without an
    `operationName` (`OperationNotChosenError`), before it is validated."""

    def on_validate(self) -> Iterator[None]:
        document = self.execution_context.graphql_document
        if document is not None and requested_operation_name() is None:
            operations = sum(isinstance(d, OperationDefinitionNode) for d in document.definitions)
            if operations > 1:
                raise OperationNotChosenError
        yield
