"""The vectors of a batch of entities: embedded and checked once, written the one way
`build_graph` and `ingest` both write them."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from redstring.domain.entity import Entity
from redstring.domain.errors import EntityTextRefusedError, TextsRefusedError
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.vectors import (
    VectorRecord,
    all_finite,
    check_dimension,
    check_vector_count,
    rows_with_direction,
    vector_source,
)
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.vector_store import VectorStore


def provider_identity(provider: EmbeddingProvider) -> str:
    """What makes `provider`'s document vectors, for `vector_source`: its `identity`
    where it has one (every provider redstring ships, and its wrappers, name their model
    and settings), else its class and dimension. A provider of one's own should name
    its model in an `identity` string, or vectors of one model and of the next it
    loads pass for each other's."""
    identity = getattr(provider, "identity", None)
    if isinstance(identity, str):
        return identity
    kind = type(provider)
    return f"{kind.__module__}.{kind.__qualname__}/{provider.dimension}"


EntityKey = tuple[TenantId, EntityId]


def keys_of(entities: Iterable[Entity]) -> frozenset[EntityKey]:
    """The `(tenant_id, id)` of each of `entities`."""
    return frozenset((e.tenant_id, e.id) for e in entities)


def ids_by_tenant(keys: Iterable[EntityKey]) -> dict[TenantId, list[EntityId]]:
    """The ids of `keys` grouped by tenant, each once, in the order they come: a store
    reads or writes one tenant a call."""
    ids: dict[TenantId, list[EntityId]] = {}
    for tenant_id, entity_id in dict.fromkeys(keys):
        ids.setdefault(tenant_id, []).append(entity_id)
    return ids


@dataclass(frozen=True)
class Outdated:
    """What one read of a batch's stored sources found (`outdated`).

    `entities`: the last entity of each id whose stored vector is not the one its text
    embeds to (or who has none), those worth embedding. Of their keys, `replaced` have
    a vector of another text or model (or of no source), and `pending` are being
    written by the batch before (`being_written`), so what they have is not known until
    that write ends. Both are the vectors to delete before the entities are written
    (`delete_replaced`); an entity with no vector, or whose vector is current, costs none.
    """

    entities: list[Entity]
    replaced: tuple[EntityKey, ...] = ()
    pending: tuple[EntityKey, ...] = ()


async def outdated(
    entities: Sequence[Entity],
    embeddings: EmbeddingProvider,
    vectors: VectorStore,
    *,
    being_written: Collection[EntityKey] = frozenset(),
) -> Outdated:
    """The last entity of each id in `entities` whose vector `vectors` does not hold as
    `embeddings` would make it of its text (`VectorStore.sources`: another text or
    model, no source, or no vector), and which of them have a vector to delete first;
    one read a tenant.

    An entity whose key is in `being_written` (the batch before, whose vectors a
    pipeline writes while it reads this one) is always among them, and `pending`:
    the source read may be the one that write is replacing."""
    last = {(e.tenant_id, e.id): e for e in entities}
    stored: dict[EntityKey, str | None] = {}
    for tenant_id, of_tenant in ids_by_tenant(last).items():
        sources = await vectors.sources(of_tenant, tenant_id)
        stored.update(((tenant_id, entity_id), s) for entity_id, s in sources.items())
    identity = provider_identity(embeddings)
    changed: list[Entity] = []
    replaced: list[EntityKey] = []
    pending: list[EntityKey] = []
    for key, entity in last.items():
        if key in being_written:
            pending.append(key)
        elif key not in stored:  # no vector
            pass
        elif stored[key] != vector_source(identity, entity.embedding_text()):
            replaced.append(key)
        else:
            continue  # current
        changed.append(entity)
    return Outdated(changed, tuple(replaced), tuple(pending))


async def delete_replaced(
    found: Outdated, vectors: VectorStore, *, batch_before: asyncio.Future[None]
) -> None:
    """Delete the vectors `found` names (`Outdated.replaced` and `pending`), before their
    entities are written: a failure between that write and the new vectors' then leaves
    an entity without a vector (found lexically), never with its old text's, which the
    semantic channel would still find by its old name and type.

    With `pending` keys, the batch before's writes (`batch_before`) are waited for
    first, never cut short (a cancellation leaves them running): deleted earlier, that
    batch's vector could land after the delete. One call a tenant; none at all for a
    batch of new or unchanged entities."""
    keys = [*found.replaced, *found.pending]
    if not keys:
        return
    if found.pending:
        await asyncio.wait((batch_before,))  # its failure is the pipeline's to raise
    for tenant_id, of_tenant in ids_by_tenant(keys).items():
        await vectors.delete(of_tenant, tenant_id)


def check_fits(embeddings: EmbeddingProvider, vectors: VectorStore) -> None:
    """Raise `DimensionMismatchError` unless the provider embeds to the store's dimension."""
    check_dimension(vectors.dimension, embeddings.dimension, "the embedding provider")


@dataclass(frozen=True)
class EntityVectors:
    """What a batch of entities writes to a vector store: `records` to upsert, and
    `directionless`, the ids whose text embedded to a vector without direction
    (`has_direction`), whose vectors are deleted instead (`write`; `build_graph` and
    `ingest` delete them before writing the entities, `delete_replaced`, and `upsert`).
    An id is in one of the two, as its last entity in the batch had it."""

    records: list[VectorRecord]
    directionless: dict[TenantId, list[EntityId]]

    async def write(self, store: VectorStore) -> None:
        """Upsert `records`, then delete the vectors of `directionless`.

        Deleting, rather than upserting a directionless record, is what makes
        an entity renamed to text without direction stop matching on its old
        name's vector, whatever the store does with such a record."""
        await self.upsert(store)
        for tenant_id, entity_ids in self.directionless.items():
            await store.delete(entity_ids, tenant_id)

    def keys_without_direction(self) -> frozenset[EntityKey]:
        """The `(tenant_id, id)` of each of `directionless`."""
        return frozenset(
            (tenant_id, entity_id)
            for tenant_id, entity_ids in self.directionless.items()
            for entity_id in entity_ids
        )

    def leaving_out(self, keys: Collection[EntityKey]) -> EntityVectors:
        """These vectors without those of `keys`, in `records` or `directionless`."""
        records = [r for r in self.records if (r.tenant_id, r.entity_id) not in keys]
        directionless: dict[TenantId, list[EntityId]] = {}
        for tenant_id, entity_ids in self.directionless.items():
            kept = [entity_id for entity_id in entity_ids if (tenant_id, entity_id) not in keys]
            if kept:
                directionless[tenant_id] = kept
        return EntityVectors(records, directionless)

    async def upsert(self, store: VectorStore) -> None:
        """Upsert `records` alone (no call when there are none): for a writer that has
        deleted every vector of the batch that was not current (`delete_replaced`), which
        leaves none to the ids of `directionless`."""
        if self.records:
            await store.upsert(self.records)


async def embed_entities(
    entities: Sequence[Entity],
    embeddings: EmbeddingProvider,
    *,
    known: Mapping[str, Sequence[float]] | None = None,
) -> EntityVectors:
    """The vectors of `entities` (`embed_documents` of their `embedding_text`), checked as
    one array: one finite vector of the provider's dimension per entity, else
    `ValueError` / `DimensionMismatchError` before anything is written.

    A text in `known` is not asked for: its vector is the one there (what a call that
    refused other texts made of it, `EntityTextRefusedError.vectors`). When the provider
    refuses the texts of some entities (`TextsRefusedError`), raises
    `EntityTextRefusedError` naming them, with `known` and the vectors of the texts it
    took."""
    if not entities:
        return EntityVectors([], {})
    texts = [e.embedding_text() for e in entities]
    remembered = known or {}
    asked = [i for i, text in enumerate(texts) if text not in remembered]
    try:
        answered = await embeddings.embed_documents([texts[i] for i in asked]) if asked else []
    except TextsRefusedError as refusal:
        raise EntityTextRefusedError(
            [
                (entities[asked[position]].tenant_id, entities[asked[position]].id, answer)
                for position, answer in refusal.refused.items()
            ],
            {
                **remembered,
                **{texts[asked[position]]: v for position, v in refusal.vectors.items()},
            },
        ) from refusal
    check_vector_count(answered, len(asked))
    from_answer = dict(zip(asked, answered, strict=True))
    vectors = [
        from_answer[i] if i in from_answer else list(remembered[text])
        for i, text in enumerate(texts)
    ]
    for vector in vectors:
        check_dimension(embeddings.dimension, len(vector), "an embedding")
    matrix = np.asarray(vectors, dtype=np.float64)
    if not all_finite(matrix):
        raise ValueError(
            "the embedding provider returned a NaN or infinite component "
            "(at float32, the precision stores keep)"
        )
    # The last entity of an id decides, as in the graph store.
    last = {(e.tenant_id, e.id): i for i, e in enumerate(entities)}
    directed = rows_with_direction(matrix)
    identity = provider_identity(embeddings)
    records: list[VectorRecord] = []
    directionless: dict[TenantId, list[EntityId]] = {}
    for (tenant_id, entity_id), index in last.items():
        if directed[index]:
            entity = entities[index]
            # Checked above for the whole batch, so not validated again record by record.
            records.append(
                VectorRecord.model_construct(
                    entity_id=entity_id,
                    tenant_id=tenant_id,
                    vector=tuple(vectors[index]),
                    entity_type=entity.entity_type,
                    source=vector_source(identity, texts[index]),
                )
            )
        else:
            directionless.setdefault(tenant_id, []).append(entity_id)
    return EntityVectors(records, directionless)
