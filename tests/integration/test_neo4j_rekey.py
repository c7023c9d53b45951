"""`redstring rekey` against a real server: a tenant stored with an earlier version's keys
(or vectors) is found by this version's after it, and nothing else of it changes."""

from __future__ import annotations

import asyncio

import pytest

from redstring import Entity, RetrievalMode, TenantId, VectorRecord
from redstring.adapters.neo4j import Neo4jGraphStore, connect_driver
from redstring.api.cli import EXIT_OK, main
from redstring.api.settings import Settings
from redstring.api.startup import open_client
from redstring.composition.entity_vectors import provider_identity
from redstring.domain.vectors import vector_source
from redstring.testing import make_entity, new_tenant
from tests.embeddings.fake_server import EmbeddingAPI, Failure, serving


@pytest.fixture(autouse=True)
def _settings(neo4j_auth: tuple[str, tuple[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The command's settings name the suite's server, as a user's environment would."""
    uri, (user, password) = neo4j_auth
    monkeypatch.setenv("REDSTRING_BACKEND", "neo4j")
    monkeypatch.setenv("REDSTRING_NEO4J_URI", uri)
    monkeypatch.setenv("REDSTRING_NEO4J_USER", user)
    monkeypatch.setenv("REDSTRING_NEO4J_PASSWORD", password)


def _stale(entity: Entity) -> Entity:
    """`entity` as a version before the Latin folding keyed it (`æ` and `ø` dropped)."""
    return entity.model_copy(
        update={
            "normalized_name": "rskbing ferries",
            "blocking_keys": ("t:org", "w:rskbing", "w:ferries"),
        }
    )


def _write(auth: tuple[str, tuple[str, str]], entities: list[Entity]) -> None:
    async def write() -> None:
        async with connect_driver(*auth) as driver:
            store = Neo4jGraphStore(driver)
            await store.ensure_schema()
            await store.upsert_entities(entities)

    asyncio.run(write())


def _found(
    tenant: TenantId, query: str, mode: RetrievalMode = RetrievalMode.LEXICAL
) -> list[Entity]:
    async def retrieve() -> list[Entity]:
        client = await open_client(Settings())
        try:
            result = await client.retrieve(query, tenant, mode=mode)
            return [match.entity for match in result.matches]
        finally:
            await client.aclose()

    return asyncio.run(retrieve())


def test_rekey_rewrites_a_tenants_stale_keys(
    neo4j_auth: tuple[str, tuple[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    tenant, other = new_tenant(), new_tenant()
    ferries = make_entity(tenant, "Ærøskøbing Ferries", "org", description="a ferry line")
    acme = make_entity(tenant, "Acme Ferries", "org")
    _write(
        neo4j_auth, [_stale(ferries), acme, _stale(ferries.model_copy(update={"tenant_id": other}))]
    )
    assert _found(tenant, "Aeroskobing") == []
    argv = ["rekey", "--tenant", str(tenant), "--page-size", "1"]

    assert main([*argv, "--dry-run"]) == EXIT_OK
    assert "read 2 entities: 1 entity with keys of an earlier version; run without --dry-run" in (
        capsys.readouterr().err
    )
    assert _found(tenant, "Aeroskobing") == []

    assert main(argv) == EXIT_OK
    assert "read 2 entities: 1 entity with keys of an earlier version, 1 rewritten" in (
        capsys.readouterr().err
    )
    assert _found(tenant, "Aeroskobing") == [ferries]
    assert _found(other, "Aeroskobing") == []  # another tenant's stays as it was

    assert main(argv) == EXIT_OK
    assert "read 2 entities: every key is current" in capsys.readouterr().err


def test_rekey_vectors_embeds_each_entity_again(capsys: pytest.CaptureFixture[str]) -> None:
    """Stored with the vectors of each other's names and no source (as an earlier version
    stored them), the entities are found semantically by their own once embedded again,
    and a second run finds every vector current."""
    tenant = new_tenant()
    names = ["Acme Widgets", "Blue Harbour Bank", "Cobalt Mining Group"]
    entities = [make_entity(tenant, name, "org") for name in names]

    async def write_with_stale_vectors() -> None:
        client = await open_client(Settings())
        try:
            await client.graph.upsert_entities(entities)
            olds = await client.embeddings.embed_documents(names[1:] + names[:1])
            await client.vectors.upsert(
                [
                    VectorRecord(entity_id=e.id, tenant_id=tenant, vector=v, entity_type="org")
                    for e, v in zip(entities, olds, strict=True)
                ]
            )
        finally:
            await client.aclose()

    asyncio.run(write_with_stale_vectors())

    def firsts() -> list[Entity]:
        return [_found(tenant, name, RetrievalMode.SEMANTIC)[0] for name in names]

    assert firsts() == entities[2:] + entities[:2]
    argv = ["rekey", "--tenant", str(tenant), "--vectors"]

    stale = "3 entities with a vector of another text or model, or none"
    assert main([*argv, "--dry-run"]) == EXIT_OK
    assert f"nothing to rewrite; {stale}: run without --dry-run" in capsys.readouterr().err
    assert firsts() == entities[2:] + entities[:2]

    assert main(argv) == EXIT_OK
    assert f"nothing to rewrite; {stale}: 3 embedded again" in capsys.readouterr().err
    assert firsts() == entities

    assert main(argv) == EXIT_OK
    assert "every key is current, nothing to rewrite; every vector is current" in (
        capsys.readouterr().err
    )


def test_rekey_vectors_leaves_text_without_direction_without_a_vector(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`!` embeds to no direction, so has no vector: without one it is current on every run;
    renamed to such text with its old name's vector kept, it is stale until that vector
    is deleted, and the summary says it was deleted, not written."""
    tenant = new_tenant()
    acme, bare = make_entity(tenant, "Acme Widgets", "org"), make_entity(tenant, "!", "…")
    blue = make_entity(tenant, "Blue Harbour Bank", "org")
    renamed = make_entity(tenant, "!!!", "…", entity_id=blue.id)

    async def write() -> None:
        client = await open_client(Settings())
        try:
            await client.upsert([acme, bare, blue])
            await client.graph.upsert_entities([renamed])  # a writer that failed before its vector
        finally:
            await client.aclose()

    async def vector_ids() -> set[object]:
        client = await open_client(Settings())
        try:
            return set(await client.vectors.sources([acme.id, bare.id, blue.id], tenant))
        finally:
            await client.aclose()

    asyncio.run(write())
    assert asyncio.run(vector_ids()) == {acme.id, blue.id}
    argv = ["rekey", "--tenant", str(tenant), "--vectors"]
    stale = "; 1 entity with a vector of another text or model, or none"

    assert main([*argv, "--dry-run"]) == EXIT_OK
    assert f"read 3 entities: every key is current, nothing to rewrite{stale}: run without" in (
        capsys.readouterr().err
    )

    assert main(argv) == EXIT_OK
    said = capsys.readouterr().err
    assert f"{stale}: 1 embedded again, 1 of them to no direction (vector deleted)" in said
    assert asyncio.run(vector_ids()) == {acme.id}

    for dry_run in (["--dry-run"], []):
        assert main([*argv, *dry_run]) == EXIT_OK
        assert "read 3 entities: every key is current, nothing to rewrite; every vector is " in (
            capsys.readouterr().err
        )


def test_rekey_vectors_embeds_a_text_longer_than_is_embedded_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A description beyond what is embedded (`MAX_EMBEDDED_CHARACTERS`), stored with the
    vector of its whole text and that text's source, as a version before the cut stored
    it: stale at the first run, embedded again of its beginning, current at the next. A
    short text's vector, stored the same way, is current throughout."""
    tenant = new_tenant()
    long = make_entity(tenant, "Harbour Ferries", "org", description="ferries all year " * 500)
    short = make_entity(tenant, "Cobalt Mining", "org", description="a mine")
    whole = {long.id: f"Harbour Ferries. org. {long.description}", short.id: short.embedding_text()}

    async def write_as_before() -> None:
        client = await open_client(Settings())
        try:
            await client.graph.upsert_entities([long, short])
            identity = provider_identity(client.embeddings)
            made = await client.embeddings.embed_documents(list(whole.values()))
            await client.vectors.upsert(
                [
                    VectorRecord(
                        entity_id=entity_id,
                        tenant_id=tenant,
                        vector=vector,
                        entity_type="org",
                        source=vector_source(identity, text),
                    )
                    for (entity_id, text), vector in zip(whole.items(), made, strict=True)
                ]
            )
        finally:
            await client.aclose()

    async def sources() -> tuple[str, dict[object, str | None]]:
        client = await open_client(Settings())
        try:
            identity = provider_identity(client.embeddings)
            return identity, dict(await client.vectors.sources([long.id, short.id], tenant))
        finally:
            await client.aclose()

    asyncio.run(write_as_before())
    argv = ["rekey", "--tenant", str(tenant), "--vectors"]
    stale = "; 1 entity with a vector of another text or model, or none"

    assert main(argv) == EXIT_OK
    assert (
        f"read 2 entities: every key is current, nothing to rewrite{stale}: 1 embedded again"
        in (capsys.readouterr().err)
    )
    identity, stored = asyncio.run(sources())
    assert stored == {
        long.id: vector_source(identity, long.embedding_text()),
        short.id: vector_source(identity, whole[short.id]),
    }
    assert len(long.embedding_text()) < len(whole[long.id])

    assert main(argv) == EXIT_OK
    assert "read 2 entities: every key is current, nothing to rewrite; every vector is " in (
        capsys.readouterr().err
    )


def test_rekey_all_tenants_goes_through_each(
    neo4j_auth: tuple[str, tuple[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    tenants = sorted((new_tenant(), new_tenant()), key=str)
    ferries = [make_entity(t, "Ærøskøbing Ferries", "org") for t in tenants]
    _write(neo4j_auth, [_stale(f) for f in ferries] + [make_entity(tenants[0], "Acme", "org")])

    assert main(["rekey", "--all-tenants"]) == EXIT_OK
    err = capsys.readouterr().err
    first, second = (err.index(f"tenant {t}: ") for t in tenants)
    assert first < second  # in id order
    assert f"tenant {tenants[0]}: read 2 entities: 1 entity with keys" in err
    assert f"tenant {tenants[1]}: read 1 entity: 1 entity with keys" in err
    assert "in all: read " in err
    assert [_found(t, "Aeroskobing") for t in tenants] == [[f] for f in ferries]


async def test_rekey_vectors_stops_at_a_refusing_provider_naming_the_settings(
    neo4j_auth: tuple[str, tuple[str, str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A model the provider does not serve: the first embedding request is refused, and
    the run stops at once with the settings to fix, not waiting it out as an outage."""
    tenant = new_tenant()
    entity = make_entity(tenant, "Acme Widgets", "org")
    async with connect_driver(*neo4j_auth) as driver:
        await Neo4jGraphStore(driver).upsert_entities([entity])  # no vector: to embed
    api = EmbeddingAPI(dimension=384)  # the suite's default vector label's
    unknown = {"error": {"message": "The model `text-embedding-unknown` does not exist"}}
    api.failures.extend(Failure(404, body=unknown) for _ in range(10))
    async with serving(api) as base_url:
        for name, value in {
            "REDSTRING_EMBEDDINGS": "openai",
            "REDSTRING_EMBEDDING_BASE_URL": base_url,
            "REDSTRING_EMBEDDING_MODEL": "text-embedding-unknown",
            "REDSTRING_EMBEDDING_DIMENSION": "384",
        }.items():
            monkeypatch.setenv(name, value)
        argv = ["rekey", "--tenant", str(tenant), "--vectors"]
        status = await asyncio.to_thread(main, argv)  # its own event loop; the server uses this

    assert status == 1
    assert api.requests == 1
    said, stopped = [line for line in capsys.readouterr().err.splitlines() if line]
    assert said == (
        f"error: the embedding provider at {base_url}/embeddings refused a request for model "
        '\'text-embedding-unknown\' with HTTP 404: {"error":{"message":"The model '
        '`text-embedding-unknown` does not exist"}}; check REDSTRING_EMBEDDING_MODEL, or '
        "REDSTRING_EMBEDDING_BASE_URL"
    )
    assert stopped == (  # its one entity read, its keys current, its embedding refused
        "stopped after 1 entity read and 0 rewritten, 0 embedded again; what was rewritten "
        "stays, and once the settings the error says to check are fixed, running it again "
        "goes on from the stale ones left"
    )


def test_rekey_fails_in_one_line_when_the_server_is_down(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("REDSTRING_NEO4J_URI", "bolt://127.0.0.1:9")
    monkeypatch.setenv("REDSTRING_NEO4J_OUTAGE_RETRY", "0")
    assert main(["rekey", "--tenant", str(new_tenant())]) == 1
    said, stopped = capsys.readouterr().err.splitlines()  # the driver's message has two
    assert said.startswith("error: Neo4j is unavailable: Couldn't connect to 127.0.0.1:9 ")
    assert stopped == "stopped before reading an entity; nothing was rewritten"
