"""The lexical channel's score: name similarity, not BM25 (docs/adr/0003).

`lexical_score(query, entity)` is the best of `string_similarity` against the
name, against the normalised name, against each alias (the `aliases` property,
other names: each counts as the name does) and against each other string property
value (tickers, former names, a city), whose similarity counts
`PROPERTY_WEIGHT` times unless it is exact: a value equal to the query once
normalised scores `EXACT_PROPERTY`, just below an equal name, so `Corvid` ranks
the entity whose alias is `Corvid` above `Corvid Lowpower MCU`, and `Berlin`
still ranks the city named `Berlin` above a company whose `city` is `Berlin`
(a string property is not always another name). When the query
may end in an unfinished word (`query_prefix`), a name word it begins counts
as a match worth less than the whole word (`string_similarities(open_end=True)`),
so `Ada Lov` finds `Ada Lovelace` while `Acme` still ranks `Acme` over `Acmeson`.
A query that may be initials (`query_initials`: `ABF`) and is those of the name or
of an alias (`name_initials`) scores at least `INITIALS_MATCH`, below any name
whose word such a query begins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from redstring.domain.blocking import name_initials, query_initials, query_prefix
from redstring.domain.entity import Entity
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.normalization import normalize_name
from redstring.domain.properties import PropertyValue, alias_names
from redstring.domain.similarity import BELOW_EXACT, string_similarities

PROPERTY_WEIGHT = 0.6
# A property value equal to the query: the tier of a name with the same words in
# another order, below an equal name (1.0).
EXACT_PROPERTY = BELOW_EXACT
# A query that is the initials of the name or of an alias (`query_initials`): below
# every name a three-letter query begins a word of (0.56 at the least) by more than
# the lexical vote margin, so an unfinished word is read as a beginning first.
INITIALS_MATCH = 0.5


class LexicalCandidate(Protocol):
    """What the lexical channel reads of an entity: its identity, type and names.

    An `Entity` is one. A remote store may hand out lighter objects instead, so
    that a query does not build a few hundred whole entities to keep ten.
    """

    @property
    def id(self) -> EntityId: ...

    @property
    def tenant_id(self) -> TenantId: ...

    @property
    def entity_type(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def normalized_name(self) -> str: ...

    @property
    def properties(self) -> Mapping[str, PropertyValue]: ...

    def property_strings(self) -> list[str]:
        """Every string property value, list items included."""
        ...


def lexical_scores(query: str, entities: Sequence[LexicalCandidate]) -> list[float]:
    """`lexical_score(query, e)` for every entity, with one batched similarity call."""
    count = len(entities)
    if not count:
        return []
    # The name, and the stored normalised name where it is not the name's (a caller
    # may give one): names normalise alike, so the name alone is scored otherwise.
    texts = [e.name for e in entities]
    owners: list[int] = []
    weights: list[float] = []
    for index, entity in enumerate(entities):
        if entity.normalized_name != normalize_name(texts[index]):
            texts.append(entity.normalized_name)
            owners.append(index)
            weights.append(1.0)
        strings = entity.property_strings()
        if strings:
            # An alias is another name: it counts as the name does, other values less.
            aliases = set(alias_names(entity.properties))
            texts += strings
            owners += [index] * len(strings)
            weights += [1.0 if s in aliases else PROPERTY_WEIGHT for s in strings]
    similarities = string_similarities(query, texts, open_end=query_prefix(query) is not None)
    scores = similarities[:count]
    if owners:
        found = similarities[count:]
        # The weight is for inexact matches: 1.0 is an equal normalised value.
        weighted = np.where(found == 1.0, EXACT_PROPERTY, np.asarray(weights) * found)
        np.maximum.at(scores, np.asarray(owners), weighted)
    initials = query_initials(query)
    if initials is not None:
        for index, entity in enumerate(entities):
            names = [entity.name, *alias_names(entity.properties)]
            if any(name_initials(name) == initials for name in names):
                scores[index] = max(scores[index], INITIALS_MATCH)
    return scores.tolist()  # type: ignore[no-any-return]


def lexical_score(query: str, entity: Entity) -> float:
    """How well `query` names `entity`, on 0..1."""
    return lexical_scores(query, [entity])[0]
