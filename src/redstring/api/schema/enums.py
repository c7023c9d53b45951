"""The schema's enums, mirroring the domain's so that the domain stays free of Strawberry."""

from __future__ import annotations

from enum import Enum

import strawberry

from redstring.domain import relationship as domain_relationship
from redstring.domain import retrieval as domain_retrieval


@strawberry.enum(description="Which channels rank candidates.")
class RetrievalMode(Enum):
    SEMANTIC = "semantic"
    LEXICAL = "lexical"
    HYBRID = "hybrid"

    def to_domain(self) -> domain_retrieval.RetrievalMode:
        return domain_retrieval.RetrievalMode(self.value)


@strawberry.enum(description="Which edges of an entity to follow.")
class Direction(Enum):
    OUT = "OUT"
    IN = "IN"
    BOTH = "BOTH"

    def to_domain(self) -> domain_relationship.Direction:
        return domain_relationship.Direction(self.value)
