"""The lexical channel's score: name similarity, not BM25 (docs/adr/0003).

`lexical_score(query, entity)` is the best of `string_similarity` against the
name, against the normalised name, and `PROPERTY_WEIGHT` times that against
each string property value (aliases, tickers, former names).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from redstring.domain.entity import Entity
from redstring.domain.similarity import string_similarities

PROPERTY_WEIGHT = 0.6


def lexical_scores(query: str, entities: Sequence[Entity]) -> list[float]:
    """`lexical_score(query, e)` for every entity, with one batched similarity call."""
    texts: list[str] = []
    owners: list[int] = []
    weights: list[float] = []
    for index, entity in enumerate(entities):
        for text, weight in (
            (entity.name, 1.0),
            (entity.normalized_name, 1.0),
            *((value, PROPERTY_WEIGHT) for value in entity.property_strings()),
        ):
            texts.append(text)
            owners.append(index)
            weights.append(weight)
    scores = np.zeros(len(entities), dtype=np.float64)
    if texts:
        weighted = string_similarities(query, texts) * np.asarray(weights)
        np.maximum.at(scores, np.asarray(owners), weighted)
    return [float(s) for s in scores]


def lexical_score(query: str, entity: Entity) -> float:
    """How well `query` names `entity`, on 0..1."""
    return lexical_scores(query, [entity])[0]
