"""The entity types of a tenant with their counts, in the one order every store answers."""

from __future__ import annotations

import heapq
from collections.abc import Iterable


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
