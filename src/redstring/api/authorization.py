"""Who is calling, and the one place that decides whether they may touch a tenant.

Every resolver that takes a `tenantId` calls `authorize_tenant` before
reading or writing; traversal from an entity stays inside its tenant, so it
needs no second check. Until the security issue lands every caller is
anonymous and may use every tenant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import strawberry

from redstring.api.arguments import tenant_id_arg
from redstring.api.request_record import note_tenant
from redstring.domain.errors import RedstringError
from redstring.domain.ids import TenantId


class TenantAccessDeniedError(RedstringError):
    """The caller may not use this tenant."""


@dataclass(frozen=True)
class Caller:
    """The identity behind a request. `tenants` is `None` for "every tenant"."""

    subject: str | None = None
    tenants: frozenset[TenantId] | None = None

    @classmethod
    def anonymous(cls) -> Caller:
        """The caller of a server without authentication."""
        return cls()


class HasCaller(Protocol):
    """What `authorize_tenant` needs of a request context."""

    @property
    def caller(self) -> Caller: ...


def authorize_tenant(context: HasCaller, tenant_id: TenantId) -> None:
    """Raise `TenantAccessDeniedError` unless the request's caller may use `tenant_id`."""
    tenants = context.caller.tenants
    if tenants is not None and tenant_id not in tenants:
        raise TenantAccessDeniedError("this caller may not use the requested tenant")


def authorized_tenant(context: HasCaller, tenant_id: strawberry.ID) -> TenantId:
    """The tenant a GraphQL argument names, once the caller is allowed to use it: the one
    step every resolver taking a `tenantId` starts with."""
    tenant = tenant_id_arg(tenant_id)
    authorize_tenant(context, tenant)
    note_tenant(tenant)  # for the request's log line
    return tenant
