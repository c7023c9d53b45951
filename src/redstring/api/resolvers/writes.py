"""The `Mutation` resolvers: inputs to domain objects, written through composition."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

import strawberry

from redstring.api.arguments import entity_ids_arg
from redstring.api.authorization import Role, authorized_tenant
from redstring.api.context import RequestContext
from redstring.api.schema.inputs import EntityInput, RelationshipInput
from redstring.api.schema.results import DeleteResult, UpsertResult
from redstring.domain.entity import Entity as DomainEntity
from redstring.domain.errors import EntityTextRefusedError, InvalidInputError


def _upserted(ids: Sequence[UUID]) -> UpsertResult:
    return UpsertResult(count=len(set(ids)), ids=[strawberry.ID(str(i)) for i in ids])


async def upsert_entities(
    info: strawberry.Info[RequestContext, None],
    tenant_id: strawberry.ID,
    entities: list[EntityInput],
) -> UpsertResult:
    context = info.context
    tenant = authorized_tenant(context, tenant_id, Role.WRITE)
    context.limits.check_batch(len(entities), "entities")
    domain = [e.to_domain(tenant, f"entities[{i}]") for i, e in enumerate(entities)]
    try:
        await context.client.upsert(domain)
    except EntityTextRefusedError as refusal:
        raise InvalidInputError(_refused_entities(domain, refusal)) from None
    return _upserted([e.id for e in domain])


def _refused_entities(entities: Sequence[DomainEntity], refusal: EntityTextRefusedError) -> str:
    """Which `entities[i]` have a text the provider refuses, and what it answered: of an
    id given twice, the last (the one written, whose text was embedded)."""
    last: dict[UUID, int] = {entity.id: i for i, entity in enumerate(entities)}
    refused = sorted((last[entity_id], answer) for _, entity_id, answer in refusal.refused)
    return "; ".join(
        f"entities[{i}]: {EntityTextRefusedError.of_one(answer)}" for i, answer in refused
    )


async def upsert_relationships(
    info: strawberry.Info[RequestContext, None],
    tenant_id: strawberry.ID,
    relationships: list[RelationshipInput],
) -> UpsertResult:
    context = info.context
    tenant = authorized_tenant(context, tenant_id, Role.WRITE)
    context.limits.check_batch(len(relationships), "relationships")
    domain = [r.to_domain(tenant, f"relationships[{i}]") for i, r in enumerate(relationships)]
    # One batch, so that the mutation is written whole or not at all.
    await context.client.upsert((), domain, batch_size=max(1, len(domain)))
    return _upserted([r.id for r in domain])


async def delete_entities(
    info: strawberry.Info[RequestContext, None],
    tenant_id: strawberry.ID,
    ids: list[strawberry.ID],
) -> DeleteResult:
    context = info.context
    tenant = authorized_tenant(context, tenant_id, Role.WRITE)
    context.limits.check_batch(len(ids), "ids")
    count = await context.client.delete(entity_ids_arg(ids), tenant)
    return DeleteResult(count=count)
