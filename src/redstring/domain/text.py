"""What text redstring can store: everything but NUL and lone surrogates.

Both are refused at the boundary because no store keeps them faithfully:
Neo4j and JSON reject lone surrogates, and NUL truncates in many drivers.
"""

from __future__ import annotations


def check_storable(text: str, what: str) -> str:
    """Return `text` unchanged, or raise `ValueError` naming `what` is wrong with it."""
    if "\x00" in text:
        raise ValueError(f"{what} contains a NUL character, which cannot be stored")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{what} contains a lone surrogate at position {exc.start}, which cannot be stored"
        ) from None
    return text


def check_nonblank(text: str, what: str) -> str:
    """`text` stripped of surrounding whitespace; `ValueError` when nothing is left."""
    stripped = check_storable(text, what).strip()
    if not stripped:
        raise ValueError(f"{what} must not be blank")
    return stripped


# A name (and an alias, another name) is what a person types or reads in a list: no
# registry's name is near this long. Each word of a name is a key to write and a word
# to compare on every query that reads the entity, so an unbounded name let one writer
# slow every tenant's queries (a 900 KB name took 2 s a lexical retrieve).
MAX_NAME_LENGTH = 500


def check_name(value: str, what: str) -> str:
    """A name stripped, or `ValueError` when it is blank or longer than `MAX_NAME_LENGTH`
    characters."""
    stripped = check_nonblank(value, what)
    if len(stripped) > MAX_NAME_LENGTH:
        raise ValueError(
            f"{what} must be at most {MAX_NAME_LENGTH} characters, got {len(stripped)}"
        )
    return stripped


# An entity's description is read with every match that returns it (and embedded, cut
# at `MAX_EMBEDDED_CHARACTERS`): a paragraph or a page, not a document, whose passages a
# store of documents would hold.
MAX_DESCRIPTION_LENGTH = 10_000


def check_description(value: str, what: str) -> str:
    """A description as it is, or `ValueError` naming `what` when it holds what no store
    keeps (`check_storable`) or is longer than `MAX_DESCRIPTION_LENGTH` characters."""
    check_storable(value, what)
    if len(value) > MAX_DESCRIPTION_LENGTH:
        raise ValueError(
            f"{what} must be at most {MAX_DESCRIPTION_LENGTH:,} characters, got {len(value):,}"
        )
    return value


# A type (an entity's or a relationship's) is a label. The Neo4j vector index holds an
# entity's type as one term of its filter (Lucene refuses a term over 32,766 bytes, and
# Neo4j then stops the database); a relationship's type is in its cursor, which a client
# sends back, so the same bound keeps every cursor short.
MAX_TYPE_LENGTH = 200


def check_type(value: str, what: str) -> str:
    """A type stripped, or `ValueError` naming `what` when it is blank or longer than
    `MAX_TYPE_LENGTH` characters."""
    stripped = check_nonblank(value, what)
    if len(stripped) > MAX_TYPE_LENGTH:
        raise ValueError(
            f"{what} must be at most {MAX_TYPE_LENGTH} characters, got {len(stripped)}"
        )
    return stripped
