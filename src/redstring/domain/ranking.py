"""Ordering scored ids: by score descending, then by the one tie-break rule."""

from __future__ import annotations

from collections.abc import Iterable

from redstring.domain.ids import EntityId, id_order_key


def rank_by_score(scored: Iterable[tuple[EntityId, float]]) -> list[tuple[EntityId, float]]:
    """Each id once, at its best score, ordered by score then `id_order_key`.

    The order is total, so it is the same whatever order the input came in.
    """
    best: dict[EntityId, float] = {}
    for entity_id, score in scored:
        if entity_id not in best or score > best[entity_id]:
            best[entity_id] = score
    # Decorated so the sort compares plain floats and ints; the id keys are distinct.
    ordered = sorted([(-score, id_order_key(e), e) for e, score in best.items()])
    return [(e, -negated) for negated, _, e in ordered]
