"""What `/graphql` accepts as a request: a bounded body, JSON of bounded nesting, one operation.

Each check raises `RequestRefusedError`, so a refusal reaches the client as
a coded GraphQL error (docs/security.md, "One error contract"). The body is
counted while it arrives and the JSON's depth is measured before it is
parsed: a body over the limit is never held whole, and no nesting reaches
the recursive JSON parser deeper than the cap.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from cross_web import parse_content_type
from starlette.datastructures import ImmutableMultiDict
from starlette.types import Message, Receive
from strawberry.http import GraphQLRequestData

from redstring.api.errors import ErrorCode, RequestRefusedError
from redstring.api.repeated_keys import RepeatedKeyError, unique_keys

JSON_MEDIA_TYPE = "application/json"

# What each byte does to the nesting depth outside strings; all other bytes, and
# every byte of a multi-byte UTF-8 character, do nothing.
_STEP = np.zeros(256, dtype=np.int8)
_STEP[[ord("["), ord("{")]] = 1
_STEP[[ord("]"), ord("}")]] = -1
_QUOTE = ord('"')
_BACKSLASH = ord("\\")


def too_large(limit: int) -> RequestRefusedError:
    """The refusal of a body over `limit` bytes; the connection is closed after it, so the
    rest of the body is never read."""
    return RequestRefusedError(
        413,
        ErrorCode.PAYLOAD_TOO_LARGE,
        f"The request body is larger than {limit} bytes",
        headers={"Connection": "close"},
    )


def refuse_declared_length(headers: Mapping[str, str], limit: int) -> None:
    """Raise when the request's `Content-Length` says its body is over `limit` bytes, so
    such a body is refused before a byte of it is read."""
    declared = headers.get("content-length")
    if declared is None:
        return
    if not declared.isdigit():
        raise RequestRefusedError(400, ErrorCode.BAD_REQUEST, "Content-Length is not a number")
    if int(declared) > limit:
        raise too_large(limit)


class BodyLimit:
    """An ASGI `receive` that counts the body bytes it passes on and raises the 413
    refusal as soon as they exceed `limit`: the check for a body without a
    `Content-Length` (chunked), and for one longer than it said. `cut_short` tells
    whether a wait for the client's bytes was cancelled (the request's deadline)."""

    def __init__(self, receive: Receive, limit: int) -> None:
        self._receive = receive
        self.limit = limit
        self.received = 0
        self.cut_short = False

    async def __call__(self) -> Message:
        try:
            message = await self._receive()
        except asyncio.CancelledError:
            self.cut_short = True
            raise
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.limit:
                raise too_large(self.limit)
        return message


def json_depth(text: str) -> int:
    """How deep the arrays and objects of JSON `text` nest (0 for a scalar), brackets
    inside strings not counted. Exact for valid JSON; for invalid JSON never less
    than what a parser reaches before it fails. Each step is one numpy pass over
    the text's UTF-8 bytes (where no byte of a multi-byte character is ASCII), so
    the time is linear in its length, with no loop in Python per byte.
    """
    code = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    quotes = code == _QUOTE
    backslashes = code == _BACKSLASH
    if backslashes.any():
        # A quote after an odd run of backslashes is escaped: it neither opens nor
        # closes a string. `run` is the length of the run of backslashes ending at
        # each byte (0 where there is none).
        index = np.arange(code.size, dtype=np.int64)
        run = index - np.maximum.accumulate(np.where(backslashes, -1, index))
        quotes[1:] &= run[:-1] % 2 == 0
    # A byte after an odd number of (unescaped) quotes is inside a string.
    steps = _STEP[code]
    steps[np.cumsum(quotes, dtype=np.int64) % 2 == 1] = 0
    return int(np.cumsum(steps, dtype=np.int64).max(initial=0))


def parse_json(data: str | bytes, max_depth: int, what: str = "The request") -> Any:
    """`data` parsed as JSON (bytes in UTF-8, -16 or -32, as `json.loads` reads them),
    refused when it is not JSON, nests deeper than `max_depth`, gives a key twice in
    one object (`redstring.api.repeated_keys`: which value a proxy or log in front
    read is unknown) or holds an integer too long for Python to read; the refusal
    names the data as `what` (a GET's `The variables parameter`)."""
    try:
        text = (
            data
            if isinstance(data, str)
            else data.decode(json.detect_encoding(data), "surrogatepass")
        )
    except UnicodeDecodeError:
        raise _not_json(what, "its bytes are not Unicode text") from None
    # Nesting needs an opening bracket per level: counting them settles most requests.
    if text.count("[") + text.count("{") > max_depth and json_depth(text) > max_depth:
        raise RequestRefusedError(
            400, ErrorCode.BAD_REQUEST, f"The request's JSON nests deeper than {max_depth} levels"
        )
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise _not_json(what, str(exc)) from None
    except RepeatedKeyError as exc:
        raise RequestRefusedError(
            400, ErrorCode.BAD_REQUEST, f"{what} is ambiguous: {exc}"
        ) from None
    except ValueError:
        # Python reads no integer of more digits than its limit (4300 by default), and
        # `json.loads` lets that `ValueError` out as it is, not as a `JSONDecodeError`.
        raise RequestRefusedError(
            400,
            ErrorCode.BAD_REQUEST,
            f"{what} holds an integer of more than {sys.get_int_max_str_digits()} digits",
        ) from None


def _not_json(what: str, why: str) -> RequestRefusedError:
    return RequestRefusedError(400, ErrorCode.BAD_REQUEST, f"{what} is not JSON: {why}")


def require_json_media_type(content_type: str | None) -> None:
    """Raise 415 unless a POST body is declared `application/json`, in any case and with
    any parameters (a charset): `parse_content_type` lowercases the media type."""
    media_type, _ = parse_content_type(content_type or "")
    if media_type != JSON_MEDIA_TYPE:
        raise RequestRefusedError(
            415,
            ErrorCode.UNSUPPORTED_MEDIA_TYPE,
            f"The request body must be {JSON_MEDIA_TYPE}, got {content_type or 'none'}",
        )


def refuse_content_coding(codings: Sequence[str]) -> None:
    """Raise 415 when a body's `Content-Encoding` (`codings`, each line of the header)
    names a coding other than `identity` (in any case): it is not decoded, since a
    small compressed body may inflate past any limit, nor read as if it were plain.
    The refusal names the codings and says, in `Accept-Encoding`, which one is taken
    (RFC 9110, 15.5.16)."""
    _refuse_codings(codings, "identity", "must not be encoded (Content-Encoding: identity)")


def refuse_transfer_coding(codings: Sequence[str]) -> None:
    """Raise 415 when a body's `Transfer-Encoding` (`codings`, each line of the header)
    names a coding other than `chunked`, the one the HTTP parser reads: it takes
    `gzip, chunked` as `chunked` alone, so such a body was read as if it were plain,
    where a proxy in front may have decoded it. Named and answered as a
    `Content-Encoding` is (`refuse_content_coding`)."""
    _refuse_codings(
        codings,
        "chunked",
        "must not be in a transfer coding but chunked (Transfer-Encoding: chunked)",
    )


def _refuse_codings(codings: Sequence[str], taken: str, rule: str) -> None:
    """415 naming the codings of a header's lines (`codings`, comma-separated) but
    `taken` (in any case), when there are any."""
    named = [c.strip() for line in codings for c in line.split(",")]
    refused = [c for c in named if c and c.lower() != taken]
    if refused:
        raise RequestRefusedError(
            415,
            ErrorCode.UNSUPPORTED_MEDIA_TYPE,
            f"The request body {rule}, got " + ", ".join(refused),
            headers={"Accept-Encoding": "identity"},
        )


def refuse_repeated_content_type(types: Sequence[str]) -> None:
    """Raise 400 when a request has several `Content-Type` headers: this server reads the
    first, and a proxy in front may have judged the body by another."""
    if len(types) > 1:
        raise _bad_field(f"The request has {len(types)} Content-Type headers; send one")


GRAPHQL_PARAMETERS = ("query", "variables", "operationName", "extensions")


def refuse_repeated_parameters(params: object) -> None:
    """Raise 400 when a GET gives one of the GraphQL parameters twice (`?query=A&query=B`):
    which one a proxy or log in front read is unknown. `params` is Starlette's
    `QueryParams`, which keeps every value; other parameters are not read."""
    if not isinstance(params, ImmutableMultiDict):
        return
    for name in GRAPHQL_PARAMETERS:
        if len(params.getlist(name)) > 1:
            raise _bad_field(f"The {name} parameter is given twice")


def graphql_request(fields: object) -> GraphQLRequestData:
    """The one operation a request's JSON object (or GET parameters) asks for.

    Refuses anything but an object with a string `query`, an object or null
    `variables` and `extensions`, and a string or null `operationName`. A list
    is a batch, and batching is off: one operation per request keeps each
    request's cost and deadline its own.
    """
    if isinstance(fields, list):
        raise _bad_field("Batched requests are not supported: send one operation per request")
    if not isinstance(fields, dict):
        raise _bad_field("The request must be a JSON object")
    query = fields.get("query")
    if not isinstance(query, str):
        raise _bad_field("The request has no `query` string")
    variables = fields.get("variables")
    if not isinstance(variables, dict | None):
        raise _bad_field("`variables` must be an object or null")
    operation_name = fields.get("operationName")
    if not isinstance(operation_name, str | None):
        raise _bad_field("`operationName` must be a string or null")
    extensions = fields.get("extensions")
    if not isinstance(extensions, dict | None):
        raise _bad_field("`extensions` must be an object or null")
    return GraphQLRequestData(
        query=query, variables=variables, operation_name=operation_name, extensions=extensions
    )


def _bad_field(message: str) -> RequestRefusedError:
    return RequestRefusedError(400, ErrorCode.BAD_REQUEST, message)
