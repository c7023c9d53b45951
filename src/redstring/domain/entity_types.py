"""The entity types of a tenant with their counts, in the one order every store answers."""

from __future__ import annotations

from collections.abc import Iterable


def in_type_order(counts: Iterable[tuple[str, int]]) -> dict[str, int]:
    """`(entity type, count)` pairs, one per type, as a dict ordered by type in code point
    order (Python's string order): what `GraphStore.entity_types` answers.

    Sorted here, not by a store, whose own order may differ: Neo4j sorts strings sent
    as parameters by UTF-16 code units, which puts U+1D49C (a script capital A) before
    U+FF5A (a fullwidth z), and strings read from nodes by code points."""
    return dict(sorted(counts, key=lambda pair: pair[0]))
