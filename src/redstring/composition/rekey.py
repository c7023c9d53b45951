"""`rekey`: a tenant's blocking keys derived again by this version's rules.

The keys an entity is found by are derived from its name, type and aliases
when it is written, and stored with it. When a version changes how they are
derived (a new kind of key, another normalisation), entities written before
keep the older keys until written again; `rekey` rewrites them in place,
page by page, without touching anything else of the entity or its vector.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from redstring.domain.arguments import page_size_of
from redstring.domain.ids import EntityId, TenantId, tenant_id_of
from redstring.ports.graph_store import GraphStore

DEFAULT_REKEY_PAGE_SIZE = 1_000


@dataclass(frozen=True)
class RekeyReport:
    """How far a re-keying got: entities `read`, those of them whose keys were `stale`
    (an earlier version's), and of those the number `rewritten`. A stale entity not
    rewritten was written, or deleted, between its read and its rewrite: its writer
    derived its keys. A dry run rewrites none."""

    read: int = 0
    stale: int = 0
    rewritten: int = 0


async def rekey(
    graph: GraphStore,
    tenant_id: TenantId,
    *,
    page_size: int = DEFAULT_REKEY_PAGE_SIZE,
    dry_run: bool = False,
    on_page: Callable[[RekeyReport], None] | None = None,
) -> RekeyReport:
    """Rewrite the normalised names and blocking keys of the tenant's entities that
    this version derives otherwise (`GraphStore.rewrite_keys`), reading `page_size`
    entities at a time in id order; with `dry_run`, only count them. `on_page` is
    called with the report so far after each page. Safe to run while the tenant is
    written to, and again after an interruption: entities already current are
    read and left alone."""
    tenant_id, page_size = tenant_id_of(tenant_id), page_size_of(page_size, "page_size")
    report = RekeyReport()
    after: EntityId | None = None
    while True:
        page = await graph.entity_page(tenant_id, after=after, limit=page_size)
        if not page:
            return report
        stale = [entity for entity in page if not entity.has_current_keys()]
        rewritten = await graph.rewrite_keys(stale) if stale and not dry_run else 0
        report = RekeyReport(
            read=report.read + len(page),
            stale=report.stale + len(stale),
            rewritten=report.rewritten + rewritten,
        )
        if on_page is not None:
            on_page(report)
        if len(page) < page_size:
            return report
        after = page[-1].id
