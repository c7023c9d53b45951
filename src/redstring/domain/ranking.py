"""Ordering scored ids: by score descending, then by the one tie-break rule."""

from __future__ import annotations

from collections.abc import Iterable

from redstring.domain.ids import EntityId, id_order_key


def rank_by_score(scored: Iterable[tuple[EntityId, float]]) -> list[tuple[EntityId, float]]:
    """Each id once, at its best score, ordered by score then `id_order_key`.

    The order is total, so it is the same whatever order the input came in.
    """
    # Keyed by `id_order_key`, an int: a UUID hashes in Python code, an int does not.
    best: dict[int, tuple[float, EntityId]] = {}
    for entity_id, score in scored:
        key = id_order_key(entity_id)
        kept = best.get(key)
        if kept is None or score > kept[0]:
            best[key] = (score, entity_id)
    # Decorated so the sort compares plain floats and ints; the keys are distinct.
    ordered = sorted([(-score, key) for key, (score, _) in best.items()])
    return [(best[key][1], -negated) for negated, key in ordered]
