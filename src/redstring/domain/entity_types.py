"""The entity types of a tenant with their counts, in the one order every store answers."""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from redstring.domain.arguments import storable_of


def _type(pair: tuple[str, int]) -> str:
    return pair[0]


def in_type_order(counts: Iterable[tuple[str, int]], limit: int | None = None) -> dict[str, int]:
    """`(entity type, count)` pairs, one per type, as a dict ordered by type in code point
    order (Python's string order), the first `limit` of them (all when None): what
    `GraphStore.entity_types` answers.

    Sorted here, not by a store, whose own order may differ: Neo4j compares two strings
    by UTF-8 bytes (code points) when it holds both as such, as it may strings read from
    nodes, else by UTF-16 code units, which put U+1D49C (a script capital A) before
    U+FF5A (a fullwidth z)."""
    if limit is None:
        return dict(sorted(counts, key=_type))
    return dict(heapq.nsmallest(limit, counts, key=_type))


def type_after_of(value: object, argument: str = "after") -> str | None:
    """A listing's `after` (the last type of the previous page) by
    `redstring.domain.arguments`' rule: None (from the first type) as it is, else a string
    a store can hold (no NUL, no lone surrogate), compared as it is, not stripped: the
    types listed are those after it in code point order, whether or not it is a type.
    Anything else is `InvalidInputError` naming `argument`."""
    if value is None:
        return None
    return storable_of(value, argument)
