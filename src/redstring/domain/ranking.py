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
    return sorted(best.items(), key=lambda item: (-item[1], id_order_key(item[0])))
