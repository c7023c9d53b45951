"""Reciprocal rank fusion (docs/adr/0002).

`rrf(e) = sum over rankings containing e of 1 / (RRF_K + rank(e))`, ranks
counted from 1. The fused score is ordinal: it orders, it is not a
probability and has no 0..1 bound.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from redstring.domain.ids import EntityId, id_order_key
from redstring.domain.ranking import rank_by_score

# k = 60 as chosen by Cormack, Clarke and Buettcher, "Reciprocal Rank Fusion
# outperforms Condorcet and individual Rank Learning Methods", SIGIR 2009.
RRF_K = 60


def reciprocal_rank_fusion(rankings: Sequence[Sequence[EntityId]]) -> list[tuple[EntityId, float]]:
    """Fuse rankings (best first) into `(id, rrf score)` pairs, best first.

    An id repeated within one ranking counts once, at its best rank. Terms are
    summed with `math.fsum`, exactly rounded, so equal rank profiles give equal
    scores whatever the order of the rankings; ties then break by id.
    """
    # Keyed by `id_order_key`, an int: a UUID hashes in Python code, an int does not.
    ids: dict[int, EntityId] = {}
    terms: dict[int, list[float]] = {}
    for ranking in rankings:
        seen: set[int] = set()
        for rank, entity_id in enumerate(ranking, start=1):
            key = id_order_key(entity_id)
            if key in seen:
                continue
            seen.add(key)
            ids[key] = entity_id
            terms.setdefault(key, []).append(1.0 / (RRF_K + rank))
    return rank_by_score((ids[key], math.fsum(parts)) for key, parts in terms.items())
