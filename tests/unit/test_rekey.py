"""`rekey`: a tenant's stale keys rewritten page by page; the command's refusals."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from redstring import (
    Entity,
    InMemoryGraphStore,
    InvalidInputError,
    Redstring,
    RekeyReport,
    RetrievalMode,
)
from redstring.api.cli import EXIT_USAGE, main
from redstring.composition.rekey import rekey
from redstring.domain.properties import FrozenProperties
from redstring.testing import CountingGraphStore, make_entity, new_tenant


def _stale(entity: Entity) -> Entity:
    """`entity` as a version before the Latin folding keyed it: `ł`, `ø`, `æ` dropped."""
    name = entity.name.lower()
    for letter in "łøæ":
        name = name.replace(letter, "")
    words = name.split()
    return entity.model_copy(
        update={
            "normalized_name": " ".join(words),
            "blocking_keys": (f"t:{entity.entity_type}", *(f"w:{w}" for w in words)),
        }
    )


def _tenant_of(stale: int, current: int) -> tuple[list[Entity], list[Entity]]:
    tenant = new_tenant()
    olds = [make_entity(tenant, f"Łukasz Ørsted {i}", "person") for i in range(stale)]
    news = [make_entity(tenant, f"Acme {i}", "org") for i in range(current)]
    return olds, news


async def test_every_stale_entity_is_rewritten_page_by_page() -> None:
    olds, news = _tenant_of(7, 3)
    store = CountingGraphStore(InMemoryGraphStore())
    await store.upsert_entities([*map(_stale, olds), *news])
    tenant = olds[0].tenant_id
    pages: list[RekeyReport] = []

    report = await rekey(store, tenant, page_size=3, on_page=pages.append)

    assert report == RekeyReport(read=10, stale=7, rewritten=7)
    assert [page.read for page in pages] == [3, 6, 9, 10]
    assert pages[-1] == report
    assert store.calls["entity_page"] == 4  # the short last page ends it
    stored = await store.get_entities([e.id for e in olds], tenant)
    assert stored == olds
    assert all(e.has_current_keys() for e in stored)
    assert await rekey(store, tenant, page_size=3) == RekeyReport(read=10, stale=0, rewritten=0)


async def test_an_entity_this_version_would_refuse_is_rekeyed_all_the_same() -> None:
    """Stored by a version that took an `aliases` of no names, which is now refused."""
    [old], _ = _tenant_of(1, 0)
    fields = {name: getattr(_stale(old), name) for name in Entity.model_fields}
    legacy = Entity.model_construct(**{**fields, "properties": FrozenProperties({"aliases": 5})})
    store = InMemoryGraphStore()
    await store.upsert_entities([legacy])
    assert await rekey(store, old.tenant_id) == RekeyReport(read=1, stale=1, rewritten=1)
    [stored] = await store.get_entities([old.id], old.tenant_id)
    assert (stored.normalized_name, stored.blocking_keys) == (
        old.normalized_name,
        old.blocking_keys,
    )


async def test_a_full_last_page_reads_one_empty_page_more() -> None:
    olds, _ = _tenant_of(4, 0)
    store = CountingGraphStore(InMemoryGraphStore())
    await store.upsert_entities([_stale(e) for e in olds])
    report = await rekey(store, olds[0].tenant_id, page_size=2)
    assert report == RekeyReport(read=4, stale=4, rewritten=4)
    assert store.calls["entity_page"] == 3
    assert store.calls["rewrite_keys"] == 2


async def test_a_dry_run_counts_and_rewrites_nothing() -> None:
    olds, news = _tenant_of(3, 2)
    store = InMemoryGraphStore()
    await store.upsert_entities([*map(_stale, olds), *news])
    tenant = olds[0].tenant_id
    assert await rekey(store, tenant, dry_run=True) == RekeyReport(read=5, stale=3, rewritten=0)
    stored = await store.get_entities([e.id for e in olds], tenant)
    assert not any(e.has_current_keys() for e in stored)


async def test_an_entity_written_during_the_run_is_counted_stale_not_rewritten() -> None:
    olds, _ = _tenant_of(3, 0)
    renamed = make_entity(olds[0].tenant_id, "Kraków", "person", entity_id=olds[1].id)

    class WrittenMeanwhile(InMemoryGraphStore):
        async def rewrite_keys(self, entities: Sequence[Entity]) -> int:
            await self.upsert_entities([renamed])
            return await super().rewrite_keys(entities)

    store = WrittenMeanwhile()
    await store.upsert_entities([_stale(e) for e in olds])
    report = await rekey(store, olds[0].tenant_id)
    assert report == RekeyReport(read=3, stale=3, rewritten=2)
    assert await store.get_entities([renamed.id], renamed.tenant_id) == [renamed]


async def test_the_tenant_and_page_size_are_checked() -> None:
    store = InMemoryGraphStore()
    with pytest.raises(InvalidInputError, match=r"^page_size must be at least 1"):
        await rekey(store, new_tenant(), page_size=0)
    with pytest.raises(InvalidInputError, match=r"^tenant_id must be a UUID"):
        await rekey(store, "acme")  # type: ignore[arg-type]


async def test_a_rekeyed_tenant_is_found_by_its_new_keys() -> None:
    """The point of it: `Aeroskobing` finds `Ærøskøbing Ferries` lexically once its keys
    are current (stale, `rskbing` is more than a typo away)."""
    tenant = new_tenant()
    ferries = make_entity(tenant, "Ærøskøbing Ferries", "org")
    async with Redstring.in_memory() as client:
        await client.upsert([make_entity(tenant, "Acme Ferries", "org")])
        await client.graph.upsert_entities([_stale(ferries)])

        async def found() -> list[Entity]:
            result = await client.retrieve("Aeroskobing", tenant, mode=RetrievalMode.LEXICAL)
            return [match.entity for match in result.matches]

        assert await found() == []
        assert await client.rekey(tenant) == RekeyReport(read=2, stale=1, rewritten=1)
        assert await found() == [ferries]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tenant", "acme"], "--tenant must be a UUID"),
        (["--tenant", str(new_tenant()), "--page-size", "0"], "--page-size must be at least 1"),
    ],
)
def test_the_command_refuses_bad_arguments(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rekey", *argv]) == EXIT_USAGE
    assert message in capsys.readouterr().err


def test_the_command_has_nothing_to_do_on_the_memory_backend(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("REDSTRING_BACKEND", "memory")
    assert main(["rekey", "--tenant", str(new_tenant())]) == EXIT_USAGE
    assert "the memory backend keeps no data between processes" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [[], ["--tenant", str(new_tenant()), "--all-tenants"]])
def test_the_command_takes_one_tenant_or_all(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["rekey", *argv])
    assert exited.value.code == EXIT_USAGE


async def test_the_tenants_are_those_with_an_entity() -> None:
    olds, _ = _tenant_of(1, 0)
    async with Redstring.in_memory() as client:
        assert await client.tenants() == []
        await client.upsert(olds)
        assert await client.tenants() == [olds[0].tenant_id]
