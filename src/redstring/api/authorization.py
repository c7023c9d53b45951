"""Who is calling, and the one place that decides what they may do with a tenant.

Every resolver that takes a `tenantId` starts with `authorized_tenant`; the
mutation resolvers ask it for `Role.WRITE`, so a `read` caller's mutation is
refused before anything is written. Traversal from an entity stays inside its
tenant, so it needs no second check. Who the caller is comes from
`redstring.api.authentication`, before any resolver runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

import strawberry

from redstring.api.arguments import tenant_id_arg
from redstring.api.request_record import note_tenant
from redstring.domain.errors import TenantAccessDeniedError
from redstring.domain.ids import TenantId


class Role(StrEnum):
    """What a caller may do in its tenants: `read` (queries) or `write` (mutations too)."""

    READ = "read"
    WRITE = "write"


@dataclass(frozen=True)
class Caller:
    """The identity behind a request. `tenants` is `None` for "every tenant"."""

    subject: str | None = None
    tenants: frozenset[TenantId] | None = None
    role: Role = Role.WRITE

    @classmethod
    def anonymous(cls) -> Caller:
        """The caller of a server without authentication: every tenant, `write`."""
        return cls()


class HasCaller(Protocol):
    """What `check_tenant_access` needs of a request context."""

    @property
    def caller(self) -> Caller: ...


def check_tenant_access(context: HasCaller, tenant_id: TenantId, role: Role = Role.READ) -> None:
    """Raise `TenantAccessDeniedError` unless the request's caller may use `tenant_id`
    with `role` (`Role.WRITE` for anything that writes)."""
    caller = context.caller
    if caller.tenants is not None and tenant_id not in caller.tenants:
        raise TenantAccessDeniedError("this caller may not use the requested tenant")
    if role is Role.WRITE and caller.role is not Role.WRITE:
        raise TenantAccessDeniedError("this caller may only read")


def authorized_tenant(
    context: HasCaller, tenant_id: strawberry.ID, role: Role = Role.READ
) -> TenantId:
    """The tenant a GraphQL argument names, once the caller may use it with `role`: the
    one step every resolver taking a `tenantId` starts with (mutations with `Role.WRITE`)."""
    tenant = tenant_id_arg(tenant_id)
    check_tenant_access(context, tenant, role)
    note_tenant(tenant)  # for the request's log line
    return tenant
