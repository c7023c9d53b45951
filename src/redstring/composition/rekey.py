"""`rekey`: a tenant's blocking keys, and on request its vectors, derived again.

The keys an entity is found by are derived from its name, type and aliases
when it is written, and stored with it; so is its vector, with its `source`
(what it was made from: the provider and the text). When a version changes
how keys are derived (a new kind of key, another normalisation), entities
written before keep the older keys until written again; `rekey` rewrites
them in place, page by page, without touching anything else of the entity.
With an embedding provider and a vector store it also embeds again the
entities whose vector this provider would not make as stored (another text,
another model, no vector, or one stored without its source) (`embed_again`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from redstring.composition.build_graph import DEFAULT_BATCH_SIZE
from redstring.composition.embed_again import NOTHING_EMBEDDED, EmbeddedAgain, embed_again
from redstring.composition.entity_vectors import check_fits, not_current
from redstring.domain.arguments import page_size_of
from redstring.domain.entity import Entity
from redstring.domain.ids import EntityId, TenantId, tenant_id_of
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.graph_store import GraphStore
from redstring.ports.vector_store import VectorStore

DEFAULT_REKEY_PAGE_SIZE = 1_000
# With vectors, a page's vectors are one write: a Neo4j vector store makes each
# write's vectors an index segment of their own, and searches walk every segment.
DEFAULT_EMBED_PAGE_SIZE = DEFAULT_BATCH_SIZE


@dataclass(frozen=True)
class RekeyReport:
    """How far a re-keying got: entities `read`, those of them whose keys were `stale`
    (an earlier version's), and of those the number `rewritten`. A stale entity not
    rewritten was written, or deleted, between its read and its rewrite: its writer
    derived its keys. With vectors, `stale_vectors` entities had a vector this
    provider would not make as stored; `embedded` of them were embedded and written
    again, `unsettled` of those changed by another writer on every read-back
    (`embed_again`). A dry run rewrites and embeds none."""

    read: int = 0
    stale: int = 0
    rewritten: int = 0
    stale_vectors: int = 0
    embedded: int = 0
    unsettled: int = 0


class _Vectors:
    """The provider and the vector store that `rekey` embeds again with."""

    def __init__(self, embeddings: EmbeddingProvider, vectors: VectorStore) -> None:
        check_fits(embeddings, vectors)
        self.embeddings = embeddings
        self.store = vectors

    async def stale(self, page: Sequence[Entity]) -> list[Entity]:
        """The entities of `page` whose stored vector this provider would not make as
        stored, or who have none."""
        return await not_current(page, self.embeddings, self.store)

    async def embed_again(self, entities: list[Entity], graph: GraphStore) -> EmbeddedAgain:
        return await embed_again(
            entities, embeddings=self.embeddings, vectors=self.store, graph=graph
        )


async def rekey(
    graph: GraphStore,
    tenant_id: TenantId,
    *,
    page_size: int | None = None,
    dry_run: bool = False,
    on_page: Callable[[RekeyReport], None] | None = None,
    embeddings: EmbeddingProvider | None = None,
    vectors: VectorStore | None = None,
) -> RekeyReport:
    """Rewrite the normalised names and blocking keys of the tenant's entities that
    this version derives otherwise (`GraphStore.rewrite_keys`), reading `page_size`
    entities at a time in id order (`DEFAULT_REKEY_PAGE_SIZE`, or with vectors
    `DEFAULT_EMBED_PAGE_SIZE`); with `dry_run`, only count them. Given `embeddings`
    and `vectors` (both or neither), embed again the entities whose stored vector is
    not the one `embeddings` makes of their text (`VectorStore.sources`), and write
    their vectors (`embed_again`). `on_page` is called with the report so far after
    each page. Safe to run while the tenant is written to, and again after an
    interruption: what is current is left alone."""
    if (embeddings is None) != (vectors is None):
        raise ValueError("rekey embeds again with both embeddings and vectors, or neither")
    again = None if embeddings is None or vectors is None else _Vectors(embeddings, vectors)
    default_size = DEFAULT_REKEY_PAGE_SIZE if again is None else DEFAULT_EMBED_PAGE_SIZE
    tenant_id = tenant_id_of(tenant_id)
    page_size = page_size_of(default_size if page_size is None else page_size, "page_size")
    report = RekeyReport()
    after: EntityId | None = None
    while True:
        page = await graph.entity_page(tenant_id, after=after, limit=page_size)
        if not page:
            return report
        stale = [entity for entity in page if not entity.has_current_keys()]
        rewritten = await graph.rewrite_keys(stale) if stale and not dry_run else 0
        stale_vectors = [] if again is None else await again.stale(page)
        embedded = (
            NOTHING_EMBEDDED
            if again is None or dry_run
            else await again.embed_again(stale_vectors, graph)
        )
        report = RekeyReport(
            read=report.read + len(page),
            stale=report.stale + len(stale),
            rewritten=report.rewritten + rewritten,
            stale_vectors=report.stale_vectors + len(stale_vectors),
            embedded=report.embedded + embedded.embedded,
            unsettled=report.unsettled + embedded.unsettled,
        )
        if on_page is not None:
            on_page(report)
        if len(page) < page_size:
            return report
        after = page[-1].id
