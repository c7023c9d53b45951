"""Whether the stored vectors are of the configured provider: a sample of their sources
compared with those the provider would give their entities' text now.

A vector's `source` (`vector_source`) names the provider, the text and the embedding
recipe it was made of. Configured with another model of the same dimension, or
upgraded to a version that embeds otherwise, a server compares queries of one model
with vectors of another, and nothing fails: the semantic channel just ranks poorly.
A few stored vectors tell, at a cost that does not grow with the stores.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum

from redstring.composition.entity_vectors import ids_by_tenant, provider_identity
from redstring.domain.arguments import page_size_of
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.vectors import vector_source
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.graph_store import GraphReader
from redstring.ports.vector_store import SourceSamples, VectorStore

# Enough to see a change of model (every vector differs) whatever the sample, and a
# partial re-keying often; a few reads, whatever the stores hold.
DEFAULT_SAMPLE_SIZE = 64

_FIX = "`redstring rekey --all-tenants --vectors`"


class Provenance(StrEnum):
    """What a sample says of the stored vectors (`VectorProvenance.verdict`)."""

    UNCHECKED = "unchecked"  # the vector store reads no sample (not `SourceSamples`)
    NO_VECTORS = "no_vectors"  # none to judge: no vector, or none of an entity still stored
    CURRENT = "current"  # each judged vector is the one the provider makes of its text
    MIXED = "mixed"  # some are, some are not
    OUTDATED = "outdated"  # none is


@dataclass(frozen=True)
class VectorProvenance:
    """What `check_provenance` found in a sample of `sampled` stored vectors, for the
    provider `provider` (`provider_identity`).

    Of those whose entity is stored, `current` hold the source the provider gives the
    entity's text now (`vector_source`); `differing` another one (another provider or
    model, another text, an earlier embedding recipe); `unsourced` none (stored by a
    version before sources were, or written without one). `gone` were not judged:
    their entity, or the vector itself, was deleted by the time it was read. `tenants`
    is how many tenants the judged vectors are of, `stale_tenants` how many of those
    hold a vector that is not current. `checked` is False when the vector store reads
    no sample (`SourceSamples`), and every count is 0.
    """

    provider: str
    sampled: int = 0
    current: int = 0
    differing: int = 0
    unsourced: int = 0
    gone: int = 0
    tenants: int = 0
    stale_tenants: int = 0
    checked: bool = True

    @property
    def stale(self) -> int:
        """The judged vectors that are not current: `differing` and `unsourced`."""
        return self.differing + self.unsourced

    @property
    def judged(self) -> int:
        """The sampled vectors whose entity is stored: `current` and `stale`."""
        return self.current + self.stale

    @property
    def verdict(self) -> Provenance:
        """`CURRENT` when every judged vector is, `OUTDATED` when none is, else `MIXED`;
        `NO_VECTORS` when none was judged, `UNCHECKED` when none could be sampled."""
        if not self.checked:
            return Provenance.UNCHECKED
        if not self.judged:
            return Provenance.NO_VECTORS
        if not self.stale:
            return Provenance.CURRENT
        return Provenance.MIXED if self.current else Provenance.OUTDATED

    def warning(self) -> str | None:
        """What to tell an operator when some judged vector is not current (`MIXED`,
        `OUTDATED`), with what to do; None otherwise."""
        verdict = self.verdict
        if verdict is Provenance.OUTDATED:
            return (
                f"stored vectors: none of the {self.judged} sampled (of "
                f"{_count(self.tenants, 'tenant')}) is of the configured embedding provider "
                f"({self.provider}) and this version's embedding recipe: {self._kinds()}. "
                f"{self._consequence()} Embed them again with {_FIX}, or configure the "
                "provider they were made with (docs/embeddings.md)"
            )
        if verdict is Provenance.MIXED:
            return (
                f"stored vectors: {self.stale} of the {self.judged} sampled (in "
                f"{self.stale_tenants} of {_count(self.tenants, 'tenant')}) are not of the "
                f"configured embedding provider ({self.provider}) and this version's "
                f"embedding recipe, and {self.current} are: {self._kinds()}. A re-keying "
                "not finished, some tenants re-keyed and others not, or entities written "
                "with other settings leave vectors of more than one provider. "
                f"{self._consequence()} {_FIX} embeds those again and leaves the current "
                "ones alone (docs/embeddings.md)"
            )
        return None

    def summary(self) -> str:
        """The counts in one line, whatever the verdict."""
        if not self.checked:
            return "not checked: the vector store reads no sample of its sources"
        return (
            f"{self.verdict.value}: of {self.sampled} sampled for {self.provider}, "
            f"{self.current} current, {self.differing} made otherwise, {self.unsourced} "
            f"without a source, {self.gone} whose entity or vector was gone; "
            f"{self.stale_tenants} of {_count(self.tenants, 'tenant')} with stale vectors"
        )

    def _kinds(self) -> str:
        kinds = []
        if self.differing:
            kinds.append(
                f"{self.differing} made by another provider or model, of another text, "
                "or by an earlier embedding recipe"
            )
        if self.unsourced:
            kinds.append(
                f"{self.unsourced} stored without a source (by a version before sources "
                "were stored, or written without one), so of no known provider"
            )
        return "; ".join(kinds)

    def _consequence(self) -> str:
        if self.differing:
            return (
                "Queries embedded by this provider are compared with vectors made "
                "otherwise, so the semantic channel, and HYBRID with it, ranks them poorly."
            )
        return "Whether this provider made them cannot be told from what is stored."


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


async def check_provenance(
    embeddings: EmbeddingProvider,
    vectors: VectorStore,
    graph: GraphReader,
    *,
    sample_size: int = DEFAULT_SAMPLE_SIZE,
) -> VectorProvenance:
    """Read up to `sample_size` stored vectors' sources (`SourceSamples.sample_sources`),
    their entities (`get_entities`, one read a tenant sampled), and compare each source
    with the one `embeddings` gives the entity's `embedding_text` now. Nothing is
    embedded or written.

    A vector whose source differs is read again after its entity: a writer deletes an
    entity's old vector, writes the entity, then its new vector, so a vector sampled
    before such a write and an entity read after it differ though nothing is stale.
    `sample_size` is read by `page_size_of`."""
    sample_size = page_size_of(sample_size, "sample_size")
    identity = provider_identity(embeddings)
    if not isinstance(vectors, SourceSamples):
        return VectorProvenance(identity, checked=False)
    sample = await vectors.sample_sources(sample_size)
    stored = {(s.tenant_id, s.entity_id): s.source for s in sample}
    counts: Counter[str] = Counter()
    tenants = stale_tenants = 0
    for tenant_id, ids in ids_by_tenant(stored).items():
        sources = {entity_id: stored[(tenant_id, entity_id)] for entity_id in ids}
        judged = await _judge(tenant_id, sources, identity, vectors, graph)
        counts.update(judged)
        tenants += any(judged[kind] for kind in _JUDGED)
        stale_tenants += any(judged[kind] for kind in _STALE)
    return VectorProvenance(
        identity,
        sampled=len(sample),
        current=counts["current"],
        differing=counts["differing"],
        unsourced=counts["unsourced"],
        gone=counts["gone"],
        tenants=tenants,
        stale_tenants=stale_tenants,
    )


_STALE = ("differing", "unsourced")
_JUDGED = ("current", *_STALE)


async def _judge(
    tenant_id: TenantId,
    sampled: dict[EntityId, str | None],
    identity: str,
    vectors: VectorStore,
    graph: GraphReader,
) -> Counter[str]:
    """How many of one tenant's sampled vectors are `current`, `differing`, `unsourced`
    or `gone` (`VectorProvenance`)."""
    entities = await graph.get_entities(list(sampled), tenant_id)
    expected = {e.id: vector_source(identity, e.embedding_text()) for e in entities}
    suspects = {i for i, source in sampled.items() if i in expected and source != expected[i]}
    again = await vectors.sources(list(suspects), tenant_id) if suspects else {}
    counts: Counter[str] = Counter()
    for entity_id, sampled_source in sampled.items():
        source = again.get(entity_id, sampled_source)
        if entity_id not in expected or (entity_id in suspects and entity_id not in again):
            counts["gone"] += 1
        elif source == expected[entity_id]:
            counts["current"] += 1
        elif source is None:
            counts["unsourced"] += 1
        else:
            counts["differing"] += 1
    return counts
