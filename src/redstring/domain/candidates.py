"""`Candidates`: what one read of both channels' stores answers for a query."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from redstring.domain.entity import Entity
from redstring.domain.ids import EntityId
from redstring.domain.lexical import LexicalCandidate
from redstring.domain.vectors import VectorMatch


@dataclass(frozen=True)
class Candidates:
    """The semantic channel's nearest matches, the lexical channel's candidates, and the
    whole entities read along with them.

    `entities` holds whole entities of the tenant that the reader read along
    (any, or none; typically the semantic matches'): the retriever reads those
    of its matches that are not there with one `get_entities`, so a reader that
    reads them in the same round trip spares it that call.
    """

    semantic: Sequence[VectorMatch] = ()
    lexical: Sequence[LexicalCandidate] = ()
    entities: Mapping[EntityId, Entity] = field(default_factory=dict)
