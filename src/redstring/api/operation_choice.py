"""`OperationChoice`: a document with several operations must name the one to run.

GraphQL over HTTP says a request whose document holds several operations
and no `operationName` is an error. Strawberry instead runs the first
operation, so a client that forgot the name gets an answer to a question it
may not have meant. Here such a request is refused the way Strawberry
refuses an unknown `operationName`: HTTP 400, `BAD_REQUEST`.
"""

from __future__ import annotations

from collections.abc import Iterator

from graphql import OperationDefinitionNode
from strawberry.extensions import SchemaExtension
from strawberry.schema.exceptions import CannotGetOperationTypeError
from strawberry.types import ExecutionContext

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


def requested_operation_name(context: ExecutionContext) -> str | None:
    """The `operationName` the request gave. Strawberry keeps it only privately: its
    public `operation_name` falls back to the first operation's name."""
    name = vars(context).get("_provided_operation_name")
    return name if isinstance(name, str) else None


class OperationChoice(SchemaExtension):
    """Refuses a document of several operations sent without an
    `operationName` (`OperationNotChosenError`), before it is validated."""

    def on_validate(self) -> Iterator[None]:
        document = self.execution_context.graphql_document
        if document is not None and requested_operation_name(self.execution_context) is None:
            operations = sum(isinstance(d, OperationDefinitionNode) for d in document.definitions)
            if operations > 1:
                raise OperationNotChosenError
        yield
