"""`rekey`: a tenant's blocking keys, and on request its vectors, derived again.

The keys an entity is found by are derived from its name, type and aliases
when it is written, and stored with it; so is its vector, with its `source`
(what it was made from: the provider and the text). When a version changes
how keys are derived (a new kind of key, another normalisation), entities
written before keep the older keys until written again; `rekey` rewrites
them in place, page by page, without touching anything else of the entity.
With an embedding provider and a vector store it also embeds again the
entities whose vector this provider would not make as stored (another text,
another model, or one stored without its source), and those without a vector
whose text embeds to a direction (`embed_again`); a vector is deleted where the
text embeds to none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from redstring.composition.build_graph import DEFAULT_BATCH_SIZE
from redstring.composition.embed_again import NOTHING_EMBEDDED, EmbeddedAgain, embed_again
from redstring.composition.entity_vectors import (
    EntityVectors,
    check_fits,
    embed_entities,
    outdated,
)
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
    again, `directionless` of those to a vector without direction, so their vectors were
    deleted and none written, and `unsettled` of them changed by another writer on every
    read-back (`embed_again`). An entity whose text embeds to no direction is to have
    no vector: without one, it is current. A dry run rewrites none, and embeds only the
    entities without a vector (to tell whether their text has a direction)."""

    read: int = 0
    stale: int = 0
    rewritten: int = 0
    stale_vectors: int = 0
    embedded: int = 0
    unsettled: int = 0
    directionless: int = 0


@dataclass(frozen=True)
class _Stale:
    """The entities of a page whose vectors are stale (`_Vectors.stale`), and their vectors
    when they were embedded to find them."""

    entities: list[Entity]
    embedded: EntityVectors | None = None

    def without_direction(self) -> int:
        """How many of `entities` embedded to no direction (0 when not embedded)."""
        return 0 if self.embedded is None else len(self.embedded.keys_without_direction())


class _Vectors:
    """The provider and the vector store that `rekey` embeds again with."""

    def __init__(self, embeddings: EmbeddingProvider, vectors: VectorStore) -> None:
        check_fits(embeddings, vectors)
        self.embeddings = embeddings
        self.store = vectors

    async def stale(self, page: Sequence[Entity], *, dry_run: bool) -> _Stale:
        """The entities of `page` whose stored vector this provider would not make as
        stored (another text or model, no source), and those without one whose text embeds
        to a direction: one whose text embeds to none is to have none (`EntityVectors`).
        The entities without a vector are embedded to tell them apart; unless `dry_run`,
        so are the others, and their vectors are kept for the write (`embed_again`)."""
        found = await outdated(page, self.embeddings, self.store)
        holding = set(found.replaced)  # the others have no vector
        to_embed = [e for e in found.entities if not dry_run or (e.tenant_id, e.id) not in holding]
        embedded = await embed_entities(to_embed, self.embeddings)
        current = embedded.keys_without_direction() - holding
        stale = [e for e in found.entities if (e.tenant_id, e.id) not in current]
        return _Stale(stale, None if dry_run else embedded.leaving_out(current))

    async def embed_again(self, stale: _Stale, graph: GraphStore) -> EmbeddedAgain:
        return await embed_again(
            stale.entities,
            embeddings=self.embeddings,
            vectors=self.store,
            graph=graph,
            embedded=stale.embedded,
        )


async def rekey(
    graph: GraphStore,
    tenant_id: TenantId,
    *,
    page_size: int | None = None,
    dry_run: bool = False,
    on_page: Callable[[RekeyReport], None] | None = None,
    on_progress: Callable[[RekeyReport], None] | None = None,
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
    each page; `on_progress` after each step of a page too (once it is read, once its
    keys are rewritten, and with vectors once they are written), so that a run that
    stops within a page is known to have read it, and rewritten what it counts. Safe
    to run while the tenant is written to, and again after an interruption: what is
    current is left alone."""

    def progress(so_far: RekeyReport) -> None:
        if on_progress is not None:
            on_progress(so_far)

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
        report = replace(report, read=report.read + len(page))
        progress(report)
        stale = [entity for entity in page if not entity.has_current_keys()]
        rewritten = await graph.rewrite_keys(stale) if stale and not dry_run else 0
        report = replace(
            report, stale=report.stale + len(stale), rewritten=report.rewritten + rewritten
        )
        progress(report)
        if again is not None:
            stale_vectors = await again.stale(page, dry_run=dry_run)
            embedded = (
                NOTHING_EMBEDDED if dry_run else await again.embed_again(stale_vectors, graph)
            )
            report = replace(
                report,
                stale_vectors=report.stale_vectors + len(stale_vectors.entities),
                embedded=report.embedded + embedded.embedded,
                directionless=report.directionless + stale_vectors.without_direction(),
                unsettled=report.unsettled + embedded.unsettled,
            )
            progress(report)
        if on_page is not None:
            on_page(report)
        if len(page) < page_size:
            return report
        after = page[-1].id
