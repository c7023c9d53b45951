"""Read-your-writes across API replicas: the bookmark a mutation answers with, sent back.

A request whose operation wrote answers with a bookmark, an opaque token
naming the store state its writes left, in the `Redstring-Bookmark` response
header and in `extensions.bookmark` of its body. A request that sends a
bookmark back in the `Redstring-Bookmark` request header reads at least
that state, whichever replica of the API serves it and whichever member of a
Neo4j cluster answers its reads. Within one replica this order holds without
a bookmark. A header that is not a bookmark is refused (400, `BAD_REQUEST`).

The token is the store's positions (Neo4j bookmarks) as a JSON list,
base64url-encoded without padding, behind a version prefix.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence

from redstring.api.errors import ErrorCode, RequestRefusedError

HEADER = "Redstring-Bookmark"
_PREFIX = "rb1."
# Bounds that no token redstring makes comes near: a position is some tens of bytes.
MAX_TOKEN_CHARS = 8192
MAX_POSITIONS = 64
MAX_POSITION_CHARS = 512


def encode(positions: Sequence[str]) -> str:
    """The token of `positions` (at least one)."""
    raw = json.dumps(list(positions), separators=(",", ":")).encode()
    return _PREFIX + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(token: str) -> tuple[str, ...]:
    """The positions of a token `encode` made; `RequestRefusedError` (400) for anything
    else."""
    if len(token) > MAX_TOKEN_CHARS or not token.startswith(_PREFIX):
        raise _malformed()
    body = token[len(_PREFIX) :]
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        positions = json.loads(raw)
    except (binascii.Error, ValueError):
        raise _malformed() from None
    if (
        not isinstance(positions, list)
        or not 0 < len(positions) <= MAX_POSITIONS
        or not all(isinstance(p, str) and 0 < len(p) <= MAX_POSITION_CHARS for p in positions)
    ):
        raise _malformed()
    return tuple(positions)


def from_header(value: str | None) -> tuple[str, ...]:
    """The positions a request's `Redstring-Bookmark` header asks for (none without one)."""
    if value is None:
        return ()
    return decode(value.strip())


def _malformed() -> RequestRefusedError:
    return RequestRefusedError(
        400,
        ErrorCode.BAD_REQUEST,
        f"The {HEADER} header is not a bookmark: send back the value a mutation answered with",
    )
