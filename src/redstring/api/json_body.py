"""How the API writes a JSON response body: in ASCII, every other character escaped.

A body may echo text the client sent (an `operationName`, a variable's value), and
that text may hold a lone surrogate: JSON lets one through as an escape (`\\ud800`),
and `request_body.parse_json` reads body bytes with `surrogatepass`. UTF-8 cannot
encode a lone surrogate, so a body written in UTF-8 (Starlette's `JSONResponse`)
fails to encode and the request becomes a 500; escaped, the text goes back as the
client sent it. Every GraphQL result, and every refusal of any route, is written here.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response


def encode_json(value: object) -> bytes:
    """`value` as compact JSON in ASCII, whatever characters its strings hold."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True).encode("ascii")


class JSONBody(Response):
    """A response whose body is `encode_json(content)`."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return encode_json(content)
