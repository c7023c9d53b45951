"""A wrong-typed id at a public entry point is an `InvalidInputError` naming the argument;
a UUID's string is accepted as that UUID (`redstring.domain.ids.tenant_id_of`). The
stores' share of the rule is in their compliance suites (`redstring.testing`)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, get_type_hints

import pytest

from redstring import (
    Entity,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    InvalidInputError,
    Redstring,
    Relationship,
    Retriever,
    TenantId,
    build_graph,
)
from redstring.domain.ids import (
    entity_id_for,
    entity_id_of,
    id_order_key,
    relationship_id_for,
    relationship_id_of,
    tenant_id_of,
)

TENANT = TenantId(uuid.UUID("6f1c1f3e-2b0a-4d7e-9a57-1e2d3c4b5a69"))
WRONG = ["not-a-tenant", 5, None, b"6f1c1f3e2b0a4d7e9a571e2d3c4b5a69", ""]
DIMENSION = 16
_TEXT, _HEX = str(TENANT), TENANT.hex
# What a UUID's string may be: hyphenated 8-4-4-4-12 or 32 hex digits, either case, the
# hyphenated form also in braces or after `urn:uuid:` (what a record's id field takes).
SPELLINGS = [_TEXT, _TEXT.upper(), _HEX, _HEX.upper(), "{" + _TEXT + "}", "urn:uuid:" + _TEXT]
# Strings that `uuid.UUID(text)` reads as a UUID (some as another one) and that are none:
# it takes what `int(text, 16)` takes once braces, `urn:`, `uuid:` and hyphens are gone.
LOOKALIKES = [
    "\uff16" + _TEXT[1:],  # a fullwidth digit
    "\u0666" + _TEXT[1:],  # an Arabic-Indic digit
    "0x" + _HEX[2:],
    _HEX[:4] + "_" + _HEX[5:],
    " " + _HEX[1:],
    _HEX[:31] + "\n",
    _HEX[:4] + "-" + _HEX[4:],  # hyphens elsewhere than 8-4-4-4-12
    _TEXT[:8] + _TEXT[9:],  # some hyphens, not all
    "{{" + _TEXT + "}}",
    "{" + _TEXT,
    "urn:" + _TEXT,
    "uuid:" + _TEXT,
    "{" + _HEX + "}",
    "urn:uuid:" + _HEX,
]


def test_the_rule_takes_uuids_and_their_strings_and_names_the_argument() -> None:
    assert tenant_id_of(TENANT) is TENANT
    assert tenant_id_of(str(TENANT)) == TENANT
    assert entity_id_of(str(TENANT).upper()) == TENANT
    assert relationship_id_of(TENANT.hex) == TENANT
    for wrong in WRONG:
        with pytest.raises(InvalidInputError, match=r"^my_arg must be a UUID, got "):
            tenant_id_of(wrong, "my_arg")
    with pytest.raises(InvalidInputError, match=r"got a str$"):
        tenant_id_of("x" * 100)  # a long value is not repeated whole


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_each_spelling_of_a_uuid_is_that_uuid(spelling: str) -> None:
    assert tenant_id_of(spelling) == TENANT
    assert Entity(**{**_ENTITY, "tenant_id": spelling}).tenant_id == TENANT


@pytest.mark.parametrize("lookalike", LOOKALIKES)
def test_a_string_that_only_int_reads_as_hex_is_no_uuid(lookalike: str) -> None:
    """The rule is the records' (pydantic's): ASCII hex digits in a UUID's layouts."""
    with pytest.raises(InvalidInputError, match=r"^tenant_id must be a UUID, got "):
        tenant_id_of(lookalike)
    with pytest.raises(InvalidInputError, match=r"must be a UUID"):
        Entity(**{**_ENTITY, "tenant_id": lookalike})


def test_the_tie_break_key_reads_ids_by_the_rule() -> None:
    """A UUID's string orders as that UUID; anything else is named, not an `AttributeError`."""
    assert id_order_key(str(TENANT).upper()) == id_order_key(TENANT) == TENANT.int  # type: ignore[arg-type]
    for wrong in WRONG:
        with pytest.raises(InvalidInputError, match=r"^entity_id must be a UUID, got "):
            id_order_key(wrong)  # type: ignore[arg-type]


_ENTITY: dict[str, object] = {
    "id": uuid.UUID(int=1),
    "tenant_id": TENANT,
    "name": "Acme Corp",
    "entity_type": "company",
}


def _world() -> tuple[Retriever, InMemoryGraphStore, InMemoryVectorStore, Entity]:
    embeddings = HashingEmbeddingProvider(DIMENSION)
    vectors, graph = InMemoryVectorStore(DIMENSION), InMemoryGraphStore()
    acme = Entity(
        id=entity_id_for(TENANT, "company", "Acme Corp"),
        tenant_id=TENANT,
        name="Acme Corp",
        entity_type="company",
    )
    asyncio.run(build_graph([acme], embeddings=embeddings, vectors=vectors, graph=graph))
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    return retriever, graph, vectors, acme


@pytest.mark.parametrize("wrong", WRONG)
def test_retrieve_refuses_a_wrong_tenant_and_takes_a_uuid_string(wrong: object) -> None:
    retriever, _, _, acme = _world()
    with pytest.raises(InvalidInputError, match=r"^tenant_id must be a UUID"):
        asyncio.run(retriever.retrieve("acme", wrong))  # type: ignore[arg-type]
    result = asyncio.run(retriever.retrieve("acme", str(TENANT)))  # type: ignore[arg-type]
    assert [m.entity.id for m in result.matches] == [acme.id]


@pytest.mark.parametrize("wrong", WRONG)
def test_derived_ids_refuse_a_wrong_tenant_or_end(wrong: object) -> None:
    with pytest.raises(InvalidInputError, match=r"^tenant_id must be a UUID"):
        entity_id_for(wrong, "company", "Acme Corp")  # type: ignore[arg-type]
    acme = entity_id_for(TENANT, "company", "Acme Corp")
    with pytest.raises(InvalidInputError, match=r"^tenant_id must be a UUID"):
        relationship_id_for(wrong, acme, "R", acme)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"^target must be a UUID"):
        relationship_id_for(TENANT, acme, "R", wrong)  # type: ignore[arg-type]
    assert entity_id_for(str(TENANT), "company", "Acme Corp") == acme  # type: ignore[arg-type]


Call = Callable[[InMemoryGraphStore, InMemoryVectorStore, Any, Any], Coroutine[Any, Any, object]]
STORE_CALLS: dict[str, Call] = {
    "get_entities": lambda g, v, ids, t: g.get_entities(ids, t),
    "find_lexical_candidates": lambda g, v, ids, t: g.find_lexical_candidates(["acme"], t),
    "relationships_of": lambda g, v, ids, t: g.relationships_of(ids, t),
    "delete_entities": lambda g, v, ids, t: g.delete_entities(ids, t),
    "search": lambda g, v, ids, t: v.search([1.0] * DIMENSION, t, k=3),
    "delete": lambda g, v, ids, t: v.delete(ids, t),
}


@pytest.mark.parametrize(
    "method", ["get_entities", "relationships_of", "delete_entities", "delete"]
)
def test_the_memory_stores_refuse_a_wrong_entity_id_and_take_uuid_strings(method: str) -> None:
    _, graph, vectors, acme = _world()
    with pytest.raises(InvalidInputError, match=r"ids\[1\] must be a UUID, got 'acme'"):
        asyncio.run(STORE_CALLS[method](graph, vectors, [acme.id, "acme"], TENANT))
    with pytest.raises(InvalidInputError, match="ids must be a sequence of UUIDs"):
        asyncio.run(STORE_CALLS[method](graph, vectors, str(acme.id), TENANT))
    asyncio.run(STORE_CALLS[method](graph, vectors, [str(acme.id)], str(TENANT)))


def test_a_uuid_string_finds_what_the_uuid_finds() -> None:
    _, graph, _, acme = _world()
    found = asyncio.run(graph.get_entities([str(acme.id)], str(TENANT)))  # type: ignore[list-item,arg-type]
    assert found == [acme]


def test_the_client_s_id_lists_are_typed_as_what_they_take() -> None:
    """UUIDs and their strings, as `tenant_id` is: a `list[uuid.UUID]` type-checks."""
    for method in (Redstring.delete, Redstring.relationships, Redstring.relationship_counts):
        assert get_type_hints(method)["entity_ids"] == Sequence[uuid.UUID | str], method


def test_the_client_takes_id_strings_and_answers_by_uuid() -> None:
    rs = Redstring.in_memory(HashingEmbeddingProvider(DIMENSION))
    acme = Entity.create(TENANT, "Acme Corp", "company")
    wile = Entity.create(TENANT, "Wile E. Coyote", "person")
    buys = Relationship.create(TENANT, wile.id, "CUSTOMER_OF", acme.id)
    asyncio.run(rs.upsert([acme, wile], [buys]))
    assert asyncio.run(rs.relationships([str(acme.id)], TENANT)) == {acme.id: [buys]}
    assert asyncio.run(rs.relationship_counts([str(acme.id).upper()], TENANT)) == {acme.id: 1}
    assert asyncio.run(rs.delete([str(acme.id), wile.id], TENANT)) == 2
