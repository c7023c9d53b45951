"""`Relationship.cursor` and the `after` of `Entity.relationships`: a place of the
relationships' order as an opaque string.

A cursor is the URL-safe base64 (RFC 4648 section 5, without `=` padding) of the
compact UTF-8 JSON array `[version, relationship type, relationship id]`: the version
of its format, `CURSOR_VERSION` (1), then the place, the id a UUID's canonical string.
Clients treat it as opaque; the server reads back what it wrote and refuses anything
else as `InvalidInputError` (`BAD_USER_INPUT`), never a guessed place: a cursor is read
only when its version is one this module reads, when writing its place again gives it
back, and when its type is one a relationship can have (`check_type`: not blank,
nothing around it to strip, at most `MAX_TYPE_LENGTH` characters). A later format
takes the next version and still reads the cursors of this one, which clients may hold.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid

from redstring.domain.errors import InvalidInputError
from redstring.domain.ids import id_text
from redstring.domain.relationship import Relationship
from redstring.domain.relationship_order import RelationshipPlace
from redstring.domain.text import MAX_TYPE_LENGTH, check_type

_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")

# The format `relationship_cursor` writes, the first member of the array.
CURSOR_VERSION = 1


def relationship_cursor(relationship: Relationship) -> str:
    """The cursor naming `relationship`'s place: a page read `after` it begins with the
    next relationship. A relationship of a type over `MAX_TYPE_LENGTH` characters, stored
    before that cap, gets one too, which `place_of_cursor` refuses."""
    return _cursor_of(relationship.relationship_type, relationship.id)


def _cursor_of(relationship_type: str, relationship_id: uuid.UUID) -> str:
    place = [CURSOR_VERSION, relationship_type, id_text(relationship_id)]
    text = json.dumps(place, ensure_ascii=False, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode("ascii").rstrip("=")


# The longest cursor of a type a relationship can have: JSON spells no character longer
# than a control character (`\u0001`, six bytes), so a string longer than this is
# refused before it is decoded.
_LONGEST = len(_cursor_of("\x01" * MAX_TYPE_LENGTH, uuid.UUID(int=0)))


def place_of_cursor(cursor: str, argument: str = "after") -> RelationshipPlace:
    """The place a cursor names; `InvalidInputError` naming `argument` when `cursor` is
    not one `relationship_cursor` makes (another version, or any alphabet, padding,
    JSON spelling, id spelling or shape that it does not write, or a type no
    relationship can have: blank, with spaces around it, or over `MAX_TYPE_LENGTH`
    characters)."""
    refused = InvalidInputError(
        f"{argument} is not a relationship cursor: pass a relationship's `cursor` as it came"
    )
    if len(cursor) > _LONGEST or not _BASE64URL.fullmatch(cursor) or len(cursor) % 4 == 1:
        raise refused
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        place = json.loads(text)
    except (binascii.Error, ValueError, RecursionError):  # a JSON decode error is a ValueError
        raise refused from None
    # The version first, which says what the rest is: only `CURSOR_VERSION` is read
    # (`1.0` and `true` equal 1 to Python, and writing the place again refuses them).
    if not (isinstance(place, list) and place and place[0] == CURSOR_VERSION):
        raise refused
    if not (len(place) == 3 and all(isinstance(p, str) for p in place[1:])):
        raise refused
    try:
        read = RelationshipPlace(place[1], place[2])
        stored = check_type(read.relationship_type, "relationship_type")
    except (InvalidInputError, ValueError):
        raise refused from None
    if stored != read.relationship_type or _cursor_of(read.relationship_type, read.id) != cursor:
        raise refused
    return read
