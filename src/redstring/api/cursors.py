"""`Relationship.cursor` and the `after` of `Entity.relationships`: a place of the
relationships' order as an opaque string.

A cursor is the URL-safe base64 (RFC 4648 section 5, without `=` padding) of the
compact UTF-8 JSON array `[relationship type, relationship id]`, the id a UUID's
canonical string. Clients treat it as opaque; the server reads back what it wrote and
refuses anything else as `InvalidInputError` (`BAD_USER_INPUT`), never a guessed place.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from redstring.domain.errors import InvalidInputError
from redstring.domain.ids import id_text
from redstring.domain.relationship import Relationship
from redstring.domain.relationship_order import RelationshipPlace

_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")


def relationship_cursor(relationship: Relationship) -> str:
    """The cursor naming `relationship`'s place: a page read `after` it begins with the
    next relationship."""
    place = [relationship.relationship_type, id_text(relationship.id)]
    text = json.dumps(place, ensure_ascii=False, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode("ascii").rstrip("=")


def place_of_cursor(cursor: str, argument: str = "after") -> RelationshipPlace:
    """The place a cursor names; `InvalidInputError` naming `argument` when `cursor` is
    not one `relationship_cursor` makes (any alphabet, padding, JSON or shape that it
    does not write)."""
    refused = InvalidInputError(
        f"{argument} is not a relationship cursor: pass a relationship's `cursor` as it came"
    )
    if not _BASE64URL.fullmatch(cursor) or len(cursor) % 4 == 1:
        raise refused
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        place = json.loads(text)
    except (binascii.Error, ValueError, RecursionError):  # a JSON decode error is a ValueError
        raise refused from None
    if not (isinstance(place, list) and len(place) == 2 and all(isinstance(p, str) for p in place)):
        raise refused
    try:
        return RelationshipPlace(place[0], place[1])
    except InvalidInputError:
        raise refused from None
