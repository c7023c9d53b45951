"""What a client sees of an error: a code in `extensions.code` and a message safe to show.

| code                        | when                                                        |
|-----------------------------|-------------------------------------------------------------|
| `BAD_REQUEST`               | the HTTP request is not a GraphQL request: malformed or too |
|                             | deeply nested JSON, not an object, no `query`, a malformed  |
|                             | `Redstring-Bookmark` header (HTTP 400)                      |
| `UNAUTHENTICATED`           | credentials missing or not accepted (HTTP 401)              |
| `NOT_FOUND`                 | no such path, or GraphiQL switched off (HTTP 404)           |
| `METHOD_NOT_ALLOWED`        | a method the path does not serve, a mutation over GET       |
|                             | (HTTP 405, with `Allow`)                                    |
| `PAYLOAD_TOO_LARGE`         | the request body is over the limit (HTTP 413)               |
| `REQUEST_HEADER_FIELDS_TOO_LARGE` | the request head (line and headers) is over the limit |
|                             | (HTTP 431); the connection is closed                        |
| `UNSUPPORTED_MEDIA_TYPE`    | a POST body that is not `application/json`, or that is      |
|                             | encoded (`Content-Encoding` not `identity`, a transfer      |
|                             | coding but `chunked`) (HTTP 415)                            |
| `REQUEST_TIMEOUT`           | the request ran past its deadline; its work was cancelled   |
|                             | (HTTP 504)                                                  |
| `GRAPHQL_PARSE_FAILED`      | the document is not GraphQL                                 |
| `GRAPHQL_VALIDATION_FAILED` | the document does not fit the schema or a limit (depth)     |
| `BAD_USER_INPUT`            | an argument or variable value is wrong (`InvalidInputError`,|
|                             | a pydantic `ValidationError`, a variable of the wrong type, |
|                             | an argument graphql-core cannot coerce while executing)     |
| `FORBIDDEN`                 | the caller may not use the tenant                           |
| `SERVICE_UNAVAILABLE`       | a store or the embedding provider did not answer            |
|                             | (`StoreUnavailableError`); HTTP 503 with `Retry-After` when |
|                             | it alone failed the whole request (`data` null or absent,   |
|                             | every error this code), and when the JWKS cannot be fetched |
|                             | (the wait an outage named, else 5 s: `api/retry_after.py`)  |
| `INTERNAL_SERVER_ERROR`     | anything else: message masked, cause logged server-side     |
|                             | (HTTP 500 when raised outside the operation's execution,    |
|                             | building its context or encoding its response); among them  |
|                             | a configuration fault, such as the embedding provider       |
|                             | refusing the server's requests (`EmbeddingRefusedError`),   |
|                             | which no wait cures                                         |

Every other error met while executing an operation comes with HTTP 200, as does every
result with data: GraphQL over HTTP asks a 200 of an `application/json` response whose
`data` is not null.

Plain `ValueError`s are not trusted as bad input: only the error types above
are, so a bug deep in a library never leaks its message to a client.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from enum import StrEnum
from typing import Any

from graphql import GraphQLError, GraphQLSyntaxError
from graphql.execution import values as graphql_values
from pydantic import ValidationError
from strawberry.extensions import SchemaExtension

from redstring.api.repeated_lines import RepeatedLines
from redstring.api.retry_after import note_outage_waits
from redstring.api.settings import variable_of
from redstring.composition.client import EMBEDDING_OPTION_SETTINGS
from redstring.domain.errors import (
    EmbeddingRefusedError,
    InvalidInputError,
    StoreRefusedError,
    StoreUnavailableError,
    TenantAccessDeniedError,
    describe_problems,
)
from redstring.domain.record import problems_of

logger = logging.getLogger("redstring.api")

INTERNAL_MESSAGE = "Internal server error"
UNAVAILABLE_MESSAGE = "A backing store is unavailable; try again later"

# The kinds of line `log_errors` logs once a window (`RepeatedLines`): each request a
# refused key or a store outage fails would write one more alike.
REFUSED_LINES = "embedding refused"
UNAVAILABLE_LINES = "store unavailable"


def one_line(error: BaseException) -> str:
    """`error`'s message on one line, for a log line or a command's `error:` line (a
    Neo4j driver's message may span several), or `(no message)`."""
    return " ".join(str(error).split()) or "(no message)"


# The settings behind each option of `Redstring.neo4j` a `StoreRefusedError` names.
_NEO4J_OPTION_SETTINGS: Mapping[str, tuple[str, ...]] = {
    "auth": ("neo4j_user", "neo4j_password"),
    "database": ("neo4j_database",),
    "transaction_timeout": ("neo4j_transaction_timeout",),
}


def described(error: BaseException) -> str:
    """`one_line(error)`, but for an embedding provider's or a store's refusal, which ends
    with the settings to check rather than the options: `...; check
    REDSTRING_EMBEDDING_MODEL, or REDSTRING_EMBEDDING_BASE_URL`, `...; check
    REDSTRING_NEO4J_USER and REDSTRING_NEO4J_PASSWORD`; and for a transaction Neo4j ended
    past the transaction timeout, the setting that makes it longer."""
    if isinstance(error, StoreUnavailableError) and error.options:
        longer = ", or ".join(
            " and ".join(map(variable_of, _NEO4J_OPTION_SETTINGS.get(option, (option,))))
            for option in error.options
        )
        return f"{one_line(error)}; {longer} sets the timeout"
    if isinstance(error, StoreRefusedError) and error.options:
        checks = ", or ".join(
            " and ".join(map(variable_of, _NEO4J_OPTION_SETTINGS.get(option, (option,))))
            for option in error.options
        )
        return f"{' '.join(error.reason.split())}; check {checks}"
    if not isinstance(error, EmbeddingRefusedError) or not error.options:
        return one_line(error)
    checks = ", or ".join(_setting_to_check(option) for option in error.options)
    return f"{' '.join(error.reason.split())}; check {checks}"


def _setting_to_check(option: str) -> str:
    setting = EMBEDDING_OPTION_SETTINGS.get(option)
    if setting is None:
        return option
    if option == "api_key_env":  # the setting names the variable that holds the key
        return f"{variable_of(setting)} and the key in the variable it names"
    return variable_of(setting)


class ErrorCode(StrEnum):
    """The values of `extensions.code`, as Apollo and most GraphQL clients name them."""

    BAD_REQUEST = "BAD_REQUEST"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    NOT_FOUND = "NOT_FOUND"
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    REQUEST_HEADER_FIELDS_TOO_LARGE = "REQUEST_HEADER_FIELDS_TOO_LARGE"
    UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
    REQUEST_TIMEOUT = "REQUEST_TIMEOUT"
    GRAPHQL_PARSE_FAILED = "GRAPHQL_PARSE_FAILED"
    GRAPHQL_VALIDATION_FAILED = "GRAPHQL_VALIDATION_FAILED"
    BAD_USER_INPUT = "BAD_USER_INPUT"
    FORBIDDEN = "FORBIDDEN"
    SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
    INTERNAL_SERVER_ERROR = "INTERNAL_SERVER_ERROR"


class RequestRefusedError(Exception):
    """A request refused before or instead of GraphQL execution, answered with an HTTP
    `status` and a GraphQL error body whose `extensions.code` is `code`.

    Raised by the transport (body, JSON, method, authentication) and caught by
    `GraphQLEndpoint`, so every refusal has the one error shape of the API.
    """

    def __init__(
        self,
        status: int,
        code: ErrorCode,
        message: str,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})

    def body(self) -> dict[str, object]:
        """The GraphQL response body: one error, no data."""
        return {"errors": [{"message": self.message, "extensions": {"code": self.code.value}}]}


# The code of each error a resolver raises on purpose (redstring.domain.errors), first
# match wins; any other exception is `INTERNAL_SERVER_ERROR`, its message masked, an
# embedding provider's refusal (`EmbeddingRefusedError`) among them: no client can cure
# it, and a wait does not, so it is not `SERVICE_UNAVAILABLE`.
CODE_OF_ERROR: tuple[tuple[type[Exception], ErrorCode], ...] = (
    (InvalidInputError, ErrorCode.BAD_USER_INPUT),
    (ValidationError, ErrorCode.BAD_USER_INPUT),
    (TenantAccessDeniedError, ErrorCode.FORBIDDEN),
    (StoreUnavailableError, ErrorCode.SERVICE_UNAVAILABLE),
)

_CODE_OF_STATUS = {
    400: ErrorCode.BAD_REQUEST,
    401: ErrorCode.UNAUTHENTICATED,
    403: ErrorCode.FORBIDDEN,
    404: ErrorCode.NOT_FOUND,
    405: ErrorCode.METHOD_NOT_ALLOWED,
    413: ErrorCode.PAYLOAD_TOO_LARGE,
    415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    503: ErrorCode.SERVICE_UNAVAILABLE,
    504: ErrorCode.REQUEST_TIMEOUT,
}


def failed_only_for_unavailable(body: Mapping[str, Any]) -> bool:
    """Whether the GraphQL response `body` holds no data (`data` null or left out) and
    only `SERVICE_UNAVAILABLE` errors: the request failed only because a store did not
    answer, so the same request may succeed later. Such a response is a 503
    (`GraphQLEndpoint`); one with data, or with another error beside, is a 200."""
    errors = body.get("errors")
    if body.get("data") is not None or not isinstance(errors, list) or not errors:
        return False
    unavailable = ErrorCode.SERVICE_UNAVAILABLE.value
    return all((error.get("extensions") or {}).get("code") == unavailable for error in errors)


def code_for_status(status: int) -> ErrorCode:
    """The code of a transport refusal that only has an HTTP status (a framework's own):
    the table above, else `BAD_REQUEST` for a 4xx and `INTERNAL_SERVER_ERROR` for the rest."""
    if status in _CODE_OF_STATUS:
        return _CODE_OF_STATUS[status]
    return ErrorCode.BAD_REQUEST if 400 <= status < 500 else ErrorCode.INTERNAL_SERVER_ERROR


def describe_validation_error(
    error: ValidationError, where: str = "", names: Mapping[str, str] | None = None
) -> str:
    """A pydantic error as `where.field: what is wrong` per problem, without pydantic's URLs.

    `names` renames fields (domain spelling to schema spelling).
    """
    return describe_problems(problems_of(error), where, names)


def error_code(error: GraphQLError) -> ErrorCode:
    """The code of `error`; see the module docstring for the rules."""
    preset = (error.extensions or {}).get("code")
    if isinstance(preset, str) and preset in ErrorCode.__members__:
        return ErrorCode(preset)
    original = error.original_error
    if original is None or isinstance(original, GraphQLError):
        # graphql-core's own error: about the request when no field was being
        # resolved, or when a field's argument did not fit its type; else a value a
        # resolver returned did not fit (a server bug).
        if error.path is not None:
            if original is not None and raised_coercing_arguments(original):
                return ErrorCode.BAD_USER_INPUT
            return ErrorCode.INTERNAL_SERVER_ERROR
        if isinstance(error, GraphQLSyntaxError):
            return ErrorCode.GRAPHQL_PARSE_FAILED
        return ErrorCode.BAD_USER_INPUT
    for error_type, code in CODE_OF_ERROR:
        if isinstance(original, error_type):
            return code
    return ErrorCode.INTERNAL_SERVER_ERROR


def raised_coercing_arguments(error: GraphQLError) -> bool:
    """Whether graphql-core raised `error` in `graphql.execution.values`, where it coerces
    the arguments of a field or directive to their types while executing.

    Validation lets through what only coercion finds, such as a null sent for a
    variable whose default allowed it where its argument is non-null, so the error
    is the request's, though it comes at a field's path. graphql-core's other errors
    at a path are about values resolvers returned ("Expected Iterable", a null for a
    non-null field), which are the server's bugs.
    """
    frame = error.__traceback__
    if frame is None:
        return False
    while frame.tb_next is not None:
        frame = frame.tb_next
    return bool(frame.tb_frame.f_globals.get("__name__") == graphql_values.__name__)


def _public_message(error: GraphQLError, code: ErrorCode) -> str:
    if code is ErrorCode.INTERNAL_SERVER_ERROR:
        return INTERNAL_MESSAGE
    if code is ErrorCode.SERVICE_UNAVAILABLE:
        return UNAVAILABLE_MESSAGE
    if isinstance(error.original_error, ValidationError):
        return describe_validation_error(error.original_error)
    return error.message


def public_error(error: GraphQLError) -> GraphQLError:
    """`error` as the client may see it: a safe message, a code, no original exception."""
    code = error_code(error)
    extensions = {} if code is ErrorCode.INTERNAL_SERVER_ERROR else dict(error.extensions or {})
    extensions["code"] = code.value
    return GraphQLError(
        _public_message(error, code),
        nodes=error.nodes,
        source=error.source,
        positions=error.positions,
        path=error.path,
        original_error=None,
        extensions=extensions,
    )


def repeated_error_lines() -> RepeatedLines:
    """What `log_errors` logs its repeated lines through: one for each schema (each app)."""
    return RepeatedLines(logger)


def log_errors(errors: Sequence[GraphQLError], repeated: RepeatedLines) -> None:
    """Log each error server-side at a level fitting its code: internal ones at ERROR
    with traceback, every one (each is a bug to see); an embedding provider's refusal at
    ERROR with the settings to check instead (its traceback at DEBUG: a configuration
    fault, no bug), and a store unavailable at WARNING, each once a window of
    `repeated` with a count of the ones left out (a refused key or a store down fails
    every request alike); the client's own at DEBUG."""
    for error in errors:
        code = error_code(error)
        original = error.original_error
        if isinstance(original, EmbeddingRefusedError):
            if repeated.log(
                REFUSED_LINES,
                logging.ERROR,
                "the embedding provider refuses the server's requests, at %s: %s",
                _where(error),
                described(original),
            ):
                logger.debug("the refusal's traceback", exc_info=original)
        elif code is ErrorCode.INTERNAL_SERVER_ERROR:
            logger.error(
                "internal error at %s: %s",
                _where(error),
                error.message,
                exc_info=(type(original), original, original.__traceback__) if original else None,
            )
        elif code is ErrorCode.SERVICE_UNAVAILABLE:
            repeated.log(
                UNAVAILABLE_LINES,
                logging.WARNING,
                "store unavailable at %s: %s",
                _where(error),
                str(original),  # kept for the window's count line: not its frames
            )
        else:  # the client's matter: its code is on the access line, at INFO
            logger.debug("%s at %s: %s", code.value, _where(error), error.message)


def _where(error: GraphQLError) -> str:
    return ".".join(str(p) for p in error.path) if error.path else "request"


class ErrorCodes(SchemaExtension):
    """Replaces every error of a result by its `public_error`, once the waits its outages
    named are noted (`note_outage_waits`).

    Validation errors are marked while the validation step runs, because
    afterwards they look exactly like errors in variable values.
    """

    def on_validate(self) -> Iterator[None]:
        yield
        for error in self.execution_context.pre_execution_errors or ():
            error.extensions = {
                **(error.extensions or {}),
                "code": ErrorCode.GRAPHQL_VALIDATION_FAILED.value,
            }

    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        if result is not None and result.errors:
            note_outage_waits(result.errors)  # for a 503's `Retry-After`, before they go
            result.errors = [public_error(error) for error in result.errors]
