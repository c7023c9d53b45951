"""The `Query` resolvers: `retrieve` runs the `Retriever`, `entity` reads one entity,
`entity_types` lists a tenant's types."""

from __future__ import annotations

import strawberry

from redstring.api.arguments import entity_id_arg, none_if_unset
from redstring.api.authorization import authorized_tenant
from redstring.api.context import RequestContext
from redstring.api.loaders import EntityKey
from redstring.api.schema.enums import RetrievalMode
from redstring.api.schema.types import Entity, EntityTypeCount, RetrievalResult
from redstring.domain.arguments import names_of


async def retrieve(
    info: strawberry.Info[RequestContext, None],
    query: str,
    tenant_id: strawberry.ID,
    k: int = 10,
    entity_types: list[str] | None = strawberry.UNSET,
    mode: RetrievalMode = RetrievalMode.HYBRID,
) -> RetrievalResult:
    context = info.context
    tenant = authorized_tenant(context, tenant_id)
    context.limits.check_retrieve(query, k)
    # Retrieval over the in-memory stores computes without awaiting anything: the
    # `retrieve` fields of one operation would all run in the same turn of the loop.
    await context.loop_share.turn()
    # Checked here to be named as the schema spells it (the retriever checks it again).
    types = names_of(none_if_unset(entity_types), "entityTypes")
    result = await context.client.retriever.retrieve(
        query, tenant, k=k, entity_types=types, mode=mode.to_domain()
    )
    context.loaders.prime_entities([m.entity for m in result.matches])
    await context.loop_share.turn()
    return RetrievalResult.from_domain(result)


async def entity(
    info: strawberry.Info[RequestContext, None], tenant_id: strawberry.ID, id: strawberry.ID
) -> Entity | None:
    context = info.context
    tenant = authorized_tenant(context, tenant_id)
    found = await context.loaders.entities.load(EntityKey(tenant, entity_id_arg(id)))
    await context.loop_share.turn()
    return None if found is None else Entity.from_domain(found)


# How many types `entityTypes` lists when not asked: a search box's filters, not a dump
# of a tenant that may have as many types as entities.
DEFAULT_TYPES_FIRST = 100


async def entity_types(
    info: strawberry.Info[RequestContext, None],
    tenant_id: strawberry.ID,
    first: int = DEFAULT_TYPES_FIRST,
    after: str | None = strawberry.UNSET,
) -> list[EntityTypeCount]:
    context = info.context
    tenant = authorized_tenant(context, tenant_id)
    context.limits.check_first(first)
    counts = await context.client.entity_types(tenant, limit=first, after=none_if_unset(after))
    await context.loop_share.turn()
    return [EntityTypeCount(entity_type=t, count=n) for t, n in counts.items()]
