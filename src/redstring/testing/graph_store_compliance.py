"""The compliance suite of the `GraphStore` port."""

from __future__ import annotations

import re
import uuid
from itertools import product
from typing import Any

import pytest

from redstring.domain.blocking import lookup_keys, query_blocking_keys
from redstring.domain.entity import Entity
from redstring.domain.errors import InvalidInputError, MissingEndpointError
from redstring.domain.ids import EntityId, TenantId, id_order_key
from redstring.domain.neighbourhood import far_end
from redstring.domain.relationship import Direction, Relationship
from redstring.domain.relationship_order import RelationshipPlace, relationship_order_key
from redstring.domain.text import MAX_TYPE_LENGTH
from redstring.ports.graph_store import EndReads, GraphStore, TextReads
from redstring.testing.factories import make_entity, make_relationship, new_tenant


async def _ids(
    graph_store: GraphStore, *keys: str, tenant: TenantId, **options: Any
) -> list[EntityId]:
    """The ids of the lexical candidates of `keys`, in id order (a read's order is free)."""
    found = await graph_store.find_lexical_candidates(keys, tenant, **options)
    return sorted((c.id for c in found), key=id_order_key)


def _block(entities: list[Entity], key: str, types: list[str] | None = None) -> list[EntityId]:
    """The ids of the entities that a lookup of `key` reads, of `types`, in id order."""
    members = [
        e.id
        for e in entities
        if key in lookup_keys(e.blocking_keys) and (types is None or e.entity_type in types)
    ]
    return sorted(members, key=id_order_key)


def _ids_in_id_order(count: int) -> list[uuid.UUID]:
    """`count` random ids, in `id_order_key` order."""
    return sorted((uuid.uuid4() for _ in range(count)), key=id_order_key)


def _after(relationships: list[Relationship], place: RelationshipPlace) -> list[Relationship]:
    """Those of `relationships` strictly after `place`, in the order: what a read from
    `place` answers, computed apart from any store."""
    ordered = sorted(relationships, key=relationship_order_key)
    return [r for r in ordered if relationship_order_key(r) > place.order_key()]


def _end_reads(graph_store: GraphStore) -> EndReads:
    """The store as an `EndReads`; a store without that optional port skips the test."""
    if not isinstance(graph_store, EndReads):
        pytest.skip(f"{type(graph_store).__name__} does not read relationships' ends")
    return graph_store


def _text_reads(graph_store: GraphStore) -> TextReads:
    """The store as a `TextReads`; a store without that optional port skips the test."""
    if not isinstance(graph_store, TextReads):
        pytest.skip(f"{type(graph_store).__name__} does not read the texts entities embed")
    return graph_store


class GraphStoreCompliance:
    """Subclass and override the `graph_store` fixture with the adapter under test.

    The tests of `relationships_with_ends` skip a store that is not an `EndReads`, and
    those of `embedding_texts` one that is not a `TextReads`.
    """

    @pytest.fixture
    def graph_store(self) -> GraphStore:
        raise NotImplementedError("override the graph_store fixture")

    async def test_round_trip_keeps_every_field(self, graph_store: GraphStore) -> None:
        tenant = new_tenant()
        entity = make_entity(
            tenant,
            "Zoë Ångström-Müller 東京",
            "person",
            description="línea\ttwo\nthree",
            properties={"aliases": ("Zoe", "Z."), "age": 41, "ratio": 0.5, "active": True},
        )
        await graph_store.upsert_entities([entity])
        [got] = await graph_store.get_entities([entity.id], tenant)
        assert got == entity
        assert got.blocking_keys == entity.blocking_keys
        assert dict(got.properties) == {
            "aliases": ("Zoe", "Z."),
            "age": 41,
            "ratio": 0.5,
            "active": True,
        }

    async def test_get_entities_keeps_order_and_omits_missing(
        self, graph_store: GraphStore
    ) -> None:
        tenant = new_tenant()
        a, b, c = (make_entity(tenant, n) for n in ("Alpha", "Beta", "Gamma"))
        await graph_store.upsert_entities([a, b, c])
        missing = EntityId(uuid.uuid4())
        got = await graph_store.get_entities([c.id, missing, a.id, c.id], tenant)
        assert [e.id for e in got] == [c.id, a.id]
        assert await graph_store.get_entities([], tenant) == []

    async def test_embedding_texts_are_those_of_the_entities_read_whole(
        self, graph_store: GraphStore
    ) -> None:
        """Whatever makes the text (aliases as a string or a list, beyond the keyed ones;
        a name `romanised` reads; no description; properties without aliases; a text cut
        at its bound), each id found once, in the order asked; a missing id, or another
        tenant's, omitted."""
        texts = _text_reads(graph_store)
        tenant, other = new_tenant(), new_tenant()
        entities = [
            make_entity(tenant, "IBM", "company", properties={"aliases": "Big Blue"}),
            make_entity(
                tenant,
                "International Widgets",
                "company",
                description="widgets, since 1911",
                properties={"aliases": tuple(f"Widgets {i}" for i in range(12)), "size": 3},
            ),
            make_entity(tenant, "Москва", "city"),
            make_entity(tenant, "Ada Moreau", "person", properties={"born": 1815, "ok": True}),
            make_entity(tenant, "Long", "note", description="many words " * 900),
        ]
        elsewhere = make_entity(other, "IBM", "company", properties={"aliases": "Big Blue"})
        await graph_store.upsert_entities(entities)
        await graph_store.upsert_entities([elsewhere])
        ids = [e.id for e in reversed(entities)]
        missing = EntityId(uuid.uuid4())
        asked = [ids[0], missing, *ids, elsewhere.id, ids[1]]
        got = await texts.embedding_texts(asked, tenant)
        assert list(got.items()) == [(e.id, e.embedding_text()) for e in reversed(entities)]
        whole = await graph_store.get_entities(asked, tenant)
        assert got == {e.id: e.embedding_text() for e in whole}
        assert await texts.embedding_texts([], tenant) == {}
        assert await texts.embedding_texts([str(elsewhere.id)], str(other)) == {  # type: ignore[list-item,arg-type]
            elsewhere.id: elsewhere.embedding_text()
        }

    async def test_embedding_texts_follow_renames_and_deletes(
        self, graph_store: GraphStore
    ) -> None:
        texts = _text_reads(graph_store)
        tenant = new_tenant()
        acme = make_entity(tenant, "Acme Corp", "company", description="anvils")
        await graph_store.upsert_entities([acme])
        renamed = make_entity(
            tenant, "Zephyr Holdings", "person", entity_id=acme.id, properties={"aliases": "Z"}
        )
        await graph_store.upsert_entities([renamed])
        assert await texts.embedding_texts([acme.id], tenant) == {acme.id: renamed.embedding_text()}
        assert renamed.embedding_text() != acme.embedding_text()
        await graph_store.delete_entities([acme.id], tenant)
        assert await texts.embedding_texts([acme.id], tenant) == {}

    async def test_upsert_is_idempotent_and_replaces(self, graph_store: GraphStore) -> None:
        tenant = new_tenant()
        entity = make_entity(tenant, "Globex Corporation", "org")
        await graph_store.upsert_entities([entity])
        await graph_store.upsert_entities([entity])
        renamed = make_entity(tenant, "Initech", "org", entity_id=entity.id)
        await graph_store.upsert_entities([renamed])
        [got] = await graph_store.get_entities([entity.id], tenant)
        assert got.name == "Initech"
        assert await _ids(graph_store, "w:globex", tenant=tenant) == []
        assert await _ids(graph_store, "w:initech", tenant=tenant) == [entity.id]

    async def test_blocks_serve_the_latest_version(self, graph_store: GraphStore) -> None:
        """An entity upserted again under the same name (so the same keys) is read from
        its blocks as it now is, whole blocks and capped ones alike."""
        tenant = new_tenant()
        entities = [make_entity(tenant, f"Common {i}") for i in range(6)]
        await graph_store.upsert_entities(entities)
        await graph_store.find_lexical_candidates(["w:common"], tenant, limit_per_key=3)
        first = min(entities, key=lambda e: id_order_key(e.id))
        changed = make_entity(
            tenant,
            first.name,
            first.entity_type,
            entity_id=first.id,
            properties={"aliases": ("New Alias",)},
        )
        await graph_store.upsert_entities([changed])
        for limit in (None, 3):
            found = await graph_store.find_lexical_candidates(
                ["w:common"], tenant, limit_per_key=limit
            )
            [got] = [c for c in found if c.id == first.id]
            assert got.property_strings() == ["New Alias"]

    async def test_lexical_candidates_share_a_key(self, graph_store: GraphStore) -> None:
        tenant = new_tenant()
        acme = make_entity(tenant, "Acme Corp", "org")
        widgets = make_entity(tenant, "Acme Widgets", "org")
        apex = make_entity(tenant, "Apex Corporation", "org")
        await graph_store.upsert_entities([acme, widgets, apex])
        keys = [*query_blocking_keys("ACME Corporation"), "w:nothing-here"]
        expected = sorted([acme.id, widgets.id], key=id_order_key)
        assert await _ids(graph_store, *keys, tenant=tenant) == expected
        assert await _ids(graph_store, "w:acme", tenant=tenant) == expected
        assert await _ids(graph_store, "w:nothing-here", tenant=tenant) == []
        assert await graph_store.find_lexical_candidates([], tenant) == []

    async def test_an_entity_is_a_candidate_under_its_aliases_keys(
        self, graph_store: GraphStore
    ) -> None:
        """An alias adds its keys; an alias taken away takes its keys with it."""
        tenant = new_tenant()
        ibm = make_entity(
            tenant,
            "International Business Machines",
            "org",
            properties={"aliases": ("IBM", "Big Blue"), "city": "Armonk"},
        )
        await graph_store.upsert_entities([ibm])
        for query in ("IBM", "Big Blue", "International Business Machines"):
            assert await _ids(graph_store, *query_blocking_keys(query), tenant=tenant) == [ibm.id]
        # Other string properties are scored, not keyed.
        assert await _ids(graph_store, *query_blocking_keys("Armonk"), tenant=tenant) == []
        fewer = make_entity(
            tenant,
            "International Business Machines",
            "org",
            entity_id=ibm.id,
            properties={"aliases": ("IBM",)},
        )
        await graph_store.upsert_entities([fewer])
        assert await _ids(graph_store, *query_blocking_keys("Big Blue"), tenant=tenant) == []
        assert await _ids(graph_store, *query_blocking_keys("IBM"), tenant=tenant) == [ibm.id]

    async def test_an_entity_is_a_candidate_under_its_initials(
        self, graph_store: GraphStore
    ) -> None:
        """A query of one short word meets the names and aliases it is the initials of
        (their identifying words'); a new name takes the old initials away."""
        tenant = new_tenant()
        alder = make_entity(tenant, "Alder & Birchwood Foods Ltd", "org")
        apex = make_entity(tenant, "Apex Birchwood Corp", "org")
        zephyr = make_entity(
            tenant, "Zephyr", "org", properties={"aliases": ("Big Blue Holdings",)}
        )
        await graph_store.upsert_entities([alder, apex, zephyr])
        for query, found in (("ABF", alder), ("a.b.f.", alder), ("AB", apex), ("bbh", zephyr)):
            keys = query_blocking_keys(query)
            assert await _ids(graph_store, *keys, tenant=tenant) == [found.id], query
        renamed = make_entity(tenant, "Alder Foods Ltd", "org", entity_id=alder.id)
        await graph_store.upsert_entities([renamed])
        assert await _ids(graph_store, *query_blocking_keys("ABF"), tenant=tenant) == []
        assert await _ids(graph_store, *query_blocking_keys("AF"), tenant=tenant) == [alder.id]

    async def test_each_block_reads_its_members(self, graph_store: GraphStore) -> None:
        """A key reads exactly its block, with the fields the lexical channel scores,
        also for an entity in several blocks and next to entities without a
        description or properties."""
        tenant = new_tenant()
        bare = make_entity(tenant, "Acme Corp", "org")
        described = make_entity(
            tenant,
            "Acme Widgets",
            "org",
            description="makes widgets",
            properties={"aliases": ("AW", "Widgets Inc"), "founded": 1990},
        )
        other_type = make_entity(tenant, "Acme", "person", description="")
        written = [bare, described, other_type]
        await graph_store.upsert_entities(written)
        by_id = {e.id: e for e in written}
        for key in query_blocking_keys("Acme Widgets"):
            found = await graph_store.find_lexical_candidates([key], tenant)
            ids = sorted((c.id for c in found), key=id_order_key)
            assert ids == _block(written, key), key
            for candidate in found:
                entity = by_id[candidate.id]
                assert candidate.tenant_id == tenant
                assert candidate.entity_type == entity.entity_type
                assert candidate.name == entity.name
                assert candidate.normalized_name == entity.normalized_name
                assert dict(candidate.properties) == dict(entity.properties)
                assert sorted(candidate.property_strings()) == sorted(entity.property_strings())
        everyone = sorted([bare.id, described.id, other_type.id], key=id_order_key)
        assert await _ids(graph_store, "w:acme", tenant=tenant) == everyone

    async def test_blocks_are_capped_in_id_order(self, graph_store: GraphStore) -> None:
        tenant = new_tenant()
        entities = [make_entity(tenant, f"Common {i}") for i in range(12)]
        await graph_store.upsert_entities(entities)
        found = await _ids(graph_store, "w:common", tenant=tenant, limit_per_key=5)
        assert found == sorted((e.id for e in entities), key=id_order_key)[:5]
        everything = await _ids(graph_store, "w:common", tenant=tenant)
        assert everything == sorted((e.id for e in entities), key=id_order_key)

    async def test_types_filter_blocks_before_the_cap(self, graph_store: GraphStore) -> None:
        """A type that is rare in a capped block keeps every member: the cap counts
        only entities of the asked types."""
        tenant = new_tenant()
        common = [make_entity(tenant, f"Common {i}", "org") for i in range(12)]
        await graph_store.upsert_entities(common)
        first_ids = sorted((e.id for e in common), key=id_order_key)[:5]
        # Rare entities whose ids all sort after the first five of the block.
        rare: list[Entity] = []
        while len(rare) < 2:
            candidate = make_entity(tenant, f"Common rare {len(rare)}", "person")
            if id_order_key(candidate.id) > id_order_key(first_ids[-1]):
                rare.append(candidate)
        await graph_store.upsert_entities(rare)
        rare_ids = sorted((e.id for e in rare), key=id_order_key)
        typed = await _ids(
            graph_store, "w:common", tenant=tenant, limit_per_key=5, entity_types=["person"]
        )
        assert typed == rare_ids
        mixed = await _ids(
            graph_store, "w:common", tenant=tenant, limit_per_key=5, entity_types=["person", "org"]
        )
        assert mixed == sorted((e.id for e in [*common, *rare]), key=id_order_key)[:5]
        whole = await _ids(graph_store, "w:common", tenant=tenant, entity_types=["person"])
        assert whole == rare_ids
        place = await _ids(
            graph_store, "w:common", tenant=tenant, limit_per_key=5, entity_types=["place"]
        )
        assert place == []
        assert await _ids(graph_store, "w:common", tenant=tenant, entity_types=[]) == []

    async def test_a_type_filter_is_a_list_of_names_never_a_strings_letters(
        self, graph_store: GraphStore
    ) -> None:
        """`entity_types` is read by `names_of`, keys or prefixes alike, whatever is
        read: a lone string is refused where it would otherwise filter by its letters
        (`"ot"` finding type `o`), each name is compared stripped as types are stored,
        and a blank one is refused."""
        tenant = new_tenant()
        letter = make_entity(tenant, "Lettered", "o")
        await graph_store.upsert_entities([letter])
        # By a key, by a prefix, and by nothing at all: the filter is read first.
        lookups: list[tuple[list[str], list[str]]] = [(["w:lettered"], []), ([], ["w:let"])]
        for keys, prefixes in [*lookups, ([], [])]:
            with pytest.raises(InvalidInputError, match=r"^entity_types must be a list of strings"):
                await graph_store.find_lexical_candidates(
                    keys, tenant, prefixes=prefixes, entity_types="ot"
                )
            with pytest.raises(InvalidInputError, match=r"^entity_types\[0\] must not be blank"):
                await graph_store.find_lexical_candidates(
                    keys, tenant, prefixes=prefixes, entity_types=[""]
                )
        for keys, prefixes in lookups:
            found = await graph_store.find_lexical_candidates(
                keys, tenant, prefixes=prefixes, entity_types=[" o"]
            )
            assert [c.id for c in found] == [letter.id]
            assert not await graph_store.find_lexical_candidates(
                keys, tenant, prefixes=prefixes, entity_types=["t"]
            )

    async def test_lexical_candidates_are_the_block_members_once(
        self, graph_store: GraphStore
    ) -> None:
        """Several keys read the union of their (capped, typed) blocks, each entity once,
        with the fields the lexical channel scores."""
        tenant = new_tenant()
        entities = [make_entity(tenant, f"Acme Widget {i}", "org") for i in range(8)]
        entities.append(
            make_entity(
                tenant,
                "Acme Person",
                "person",
                properties={"aliases": ("AP", "Ace"), "age": 3, "note": "widget maker"},
            )
        )
        await graph_store.upsert_entities(entities)
        by_id = {e.id: e for e in entities}
        keys = query_blocking_keys("Acme Widget")
        for limit, types in ((None, None), (3, None), (3, ["person"]), (None, ["org"])):
            candidates = await graph_store.find_lexical_candidates(
                keys, tenant, limit_per_key=limit, entity_types=types
            )
            ids = [c.id for c in candidates]
            assert len(ids) == len(set(ids))
            expected = {i for key in keys for i in _block(entities, key, types)[:limit]}
            assert set(ids) == expected, (limit, types)
            for candidate in candidates:
                entity = by_id[candidate.id]
                assert candidate.tenant_id == tenant
                assert candidate.entity_type == entity.entity_type
                assert candidate.name == entity.name
                assert candidate.normalized_name == entity.normalized_name
                assert sorted(candidate.property_strings()) == sorted(entity.property_strings())
        assert await graph_store.find_lexical_candidates([], tenant) == []
        assert await graph_store.find_lexical_candidates(keys, new_tenant()) == []
        assert await graph_store.find_lexical_candidates(keys, tenant, entity_types=[]) == []

    async def test_every_lookup_key_finds_its_entity(self, graph_store: GraphStore) -> None:
        """Word, deletion (`d:`), prefix and soundex keys alike; the type key need not."""
        tenant = new_tenant()
        entity = make_entity(tenant, "Dr Zoë Holdings-Lovelace", "person")
        await graph_store.upsert_entities([entity])
        keys = lookup_keys(entity.blocking_keys)
        assert any(k.startswith("d:") for k in keys)
        for key in keys:
            assert await _ids(graph_store, key, tenant=tenant) == [entity.id], key

    async def test_prefix_seek_reads_blocks_in_key_then_id_order(
        self, graph_store: GraphStore
    ) -> None:
        """A prefix reads the blocks whose keys begin with it, key after key, each in
        id order, the first `limit_per_prefix` rows (an entity once per block it is in),
        of the asked types only; the cut is the same on every backend."""
        tenant = new_tenant()
        names = [
            *(f"Lovelace {i}" for i in range(4)),
            *(f"Lovell {i}" for i in range(3)),
            "Lov Lovage",  # in two blocks of the range
            "Lo",  # too short to begin with the prefix
            "Glove",  # holds it, does not begin with it
            "Lyon Lava",
        ]
        entities = [make_entity(tenant, n, "person" if "1" in n else "org") for n in names]
        await graph_store.upsert_entities(entities)
        await graph_store.upsert_entities([make_entity(new_tenant(), "Lovelace other", "org")])

        def rows(types: set[str] | None) -> list[EntityId]:
            pairs = sorted(
                (key, id_order_key(e.id), e.id)
                for e in entities
                for key in lookup_keys(e.blocking_keys)
                if key.startswith("w:lov") and (types is None or e.entity_type in types)
            )
            return [entity_id for _, _, entity_id in pairs]

        for limit, types in ((None, None), (3, None), (5, None), (2, ["person"]), (None, ["org"])):
            found = await graph_store.find_lexical_candidates(
                [], tenant, prefixes=["w:lov"], limit_per_prefix=limit, entity_types=types
            )
            expected = rows(None if types is None else set(types))[:limit]
            assert sorted(c.id for c in found) == sorted(set(expected)), (limit, types)
        # The key cap bounds keys, not prefixes, and the prefix cap prefixes, not keys.
        lovelace = sorted(
            (e for e in entities if "Lovelace" in e.name), key=lambda e: id_order_key(e.id)
        )
        for key_cap, prefix_cap in ((1, None), (None, 1), (2, 3)):
            found = await graph_store.find_lexical_candidates(
                ["w:lovelace"],
                tenant,
                prefixes=["w:lov"],
                limit_per_key=key_cap,
                limit_per_prefix=prefix_cap,
            )
            cut = {e.id for e in lovelace[:key_cap]} | set(rows(None)[:prefix_cap])
            assert sorted(c.id for c in found) == sorted(cut), (key_cap, prefix_cap)
        both = await graph_store.find_lexical_candidates(
            ["w:lyon"], tenant, prefixes=["w:lovell", "w:lovell"]
        )
        assert sorted(c.name for c in both) == ["Lovell 0", "Lovell 1", "Lovell 2", "Lyon Lava"]
        assert await graph_store.find_lexical_candidates([], tenant, prefixes=["w:zzz"]) == []
        assert (
            await graph_store.find_lexical_candidates(
                [], tenant, prefixes=["w:lov"], entity_types=[]
            )
            == []
        )

    async def test_prefix_seek_follows_writes_and_deletes(self, graph_store: GraphStore) -> None:
        tenant = new_tenant()
        first = make_entity(tenant, "Lovelace", "person")
        await graph_store.upsert_entities([first])

        async def names() -> list[str]:
            found = await graph_store.find_lexical_candidates([], tenant, prefixes=["w:lov"])
            return sorted(c.name for c in found)

        assert await names() == ["Lovelace"]
        second = make_entity(tenant, "Lovell", "person")
        await graph_store.upsert_entities([second])
        assert await names() == ["Lovelace", "Lovell"]
        await graph_store.delete_entities([first.id], tenant)
        assert await names() == ["Lovell"]
        renamed = make_entity(tenant, "Byron", "person", entity_id=second.id)
        await graph_store.upsert_entities([renamed])
        assert await names() == []
        await graph_store.upsert_entities([first])
        assert await names() == ["Lovelace"]

    async def test_entity_page_reads_a_tenant_in_id_order(self, graph_store: GraphStore) -> None:
        tenant, other = new_tenant(), new_tenant()
        entities = [make_entity(tenant, f"Paged {i}", properties={"n": i}) for i in range(7)]
        await graph_store.upsert_entities(entities)
        await graph_store.upsert_entities([make_entity(other, "Paged 0")])
        ordered = sorted(entities, key=lambda e: id_order_key(e.id))
        pages: list[list[Entity]] = []
        after: EntityId | None = None
        for _ in range(5):  # a store that pages wrongly may never reach an empty page
            page = await graph_store.entity_page(tenant, after=after, limit=3)
            if not page:
                break
            pages.append(page)
            after = page[-1].id
        assert [len(page) for page in pages] == [3, 3, 1]
        assert [e for page in pages for e in page] == ordered  # whole entities
        # From the first id after `after`, stored or not; a UUID's string is that UUID.
        next_id = EntityId(uuid.UUID(int=ordered[2].id.int + 1))
        assert await graph_store.entity_page(tenant, after=next_id, limit=2) == ordered[3:5]
        assert await graph_store.entity_page(str(tenant), after=str(ordered[5].id), limit=9) == [  # type: ignore[arg-type]
            ordered[6]
        ]
        assert await graph_store.entity_page(new_tenant(), limit=3) == []
        assert await graph_store.entity_page(tenant, limit=2**63 - 1) == ordered
        for limit in (0, -1, 2**63):  # the last more than a Neo4j integer holds
            with pytest.raises(InvalidInputError, match=r"^limit must "):
                await graph_store.entity_page(tenant, limit=limit)

    async def test_tenants_are_those_with_an_entity_in_id_order(
        self, graph_store: GraphStore
    ) -> None:
        """Among whatever else the store holds (a shared server's other tenants)."""
        kept, emptied, never = new_tenant(), new_tenant(), new_tenant()
        gone = make_entity(emptied, "Gone")
        await graph_store.upsert_entities([make_entity(kept, "Kept"), gone])
        assert {kept, emptied} <= set(await graph_store.tenants())
        await graph_store.delete_entities([gone.id], emptied)
        held = await graph_store.tenants()
        assert kept in held
        assert emptied not in held
        assert never not in held
        assert held == sorted(held, key=id_order_key)

    async def test_entity_types_count_one_tenants_entities_by_exact_type_in_code_point_order(
        self, graph_store: GraphStore
    ) -> None:
        """Types differing in case are two, as type filters tell them apart; the order is
        Python's, by code point, not the order of writing nor that of UTF-16 code units
        (which puts U+1D49C, a script capital A, before U+FF5A, a fullwidth z); another
        tenant's entities, the same ids among them, are not counted."""
        tenant, other = new_tenant(), new_tenant()
        wide_z, script_a = "\uff5a", "\U0001d49c"
        mine = [
            make_entity(tenant, "Ada", "person"),
            make_entity(tenant, "Grace", "person"),
            make_entity(tenant, "Acme Corp", "company"),
            make_entity(tenant, "Globex", "Company"),
            make_entity(tenant, "Zeta", wide_z),
            make_entity(tenant, "Alpha", script_a),
            make_entity(tenant, "Émile", "été"),
        ]
        theirs = [
            make_entity(other, "Ada", "person", entity_id=mine[0].id),
            make_entity(other, "Hidden", "secret"),
            make_entity(other, "Zeta", wide_z),
        ]
        await graph_store.upsert_entities([*mine, *theirs])
        await graph_store.upsert_relationships([make_relationship(mine[0], mine[2], "WORKS_AT")])
        counted = await graph_store.entity_types(tenant)
        order = ["Company", "company", "person", "été", wide_z, script_a]
        assert counted == {
            "Company": 1,
            "company": 1,
            "person": 2,
            "été": 1,
            wide_z: 1,
            script_a: 1,
        }
        assert list(counted) == order
        assert await graph_store.entity_types(other) == {"person": 1, "secret": 1, wide_z: 1}
        assert await graph_store.entity_types(str(tenant)) == counted  # type: ignore[arg-type]
        assert await graph_store.entity_types(new_tenant()) == {}

    async def test_entity_types_up_to_a_limit_are_the_first_of_the_code_point_order(
        self, graph_store: GraphStore
    ) -> None:
        """`limit` keeps the first types of the whole order, whatever order a store sorts
        by: UTF-16 code units put a character beyond U+FFFF (a surrogate pair) before
        U+E000 to U+FFFF, so a store cutting in that order keeps the wrong types at
        the limits where the two orders part (4, 5, 7 and 10 here; `y\\n...` are types of
        two lines). A limit past the types gives them all, 0 none; a negative or
        non-integer limit, or one past a 64-bit integer, is `InvalidInputError`."""
        tenant = new_tenant()
        types = [
            "x\U0001f600y", "x\ue000", "x", "x\uffffz", "\U0001d49c", "\uff5a",
            "y\n\U0001f600", "y\n\uff5a", "Company", "company", "été",
        ]  # fmt: skip
        entities = [make_entity(tenant, f"Thing {i}", t) for i, t in enumerate(types)]
        await graph_store.upsert_entities([*entities, make_entity(tenant, "More", "x")])
        ordered = [
            "Company", "company", "x", "x\ue000", "x\uffffz", "x\U0001f600y",
            "y\n\uff5a", "y\n\U0001f600", "été", "\uff5a", "\U0001d49c",
        ]  # fmt: skip
        assert ordered == sorted(types)  # the first 4, 5, 7 and 10 differ in UTF-16's order
        counts = {t: 2 if t == "x" else 1 for t in ordered}
        for limit in range(len(types) + 2):
            kept = await graph_store.entity_types(tenant, limit=limit)
            assert list(kept.items()) == list(counts.items())[:limit], limit
        assert await graph_store.entity_types(tenant, limit=None) == counts
        assert await graph_store.entity_types(tenant, limit=2**63 - 1) == counts
        assert await graph_store.entity_types(new_tenant(), limit=3) == {}
        for wrong, message in [
            (2**63, "limit must be at most 2**63 - 1, got 9223372036854775808"),
            (-1, "limit must not be negative, got -1"),
            (1.5, "limit must be an integer, got 1.5"),
            (True, "limit must be an integer, got True"),
        ]:
            with pytest.raises(InvalidInputError, match=f"^{re.escape(message)}"):
                await graph_store.entity_types(tenant, limit=wrong)  # type: ignore[arg-type]

    async def test_entity_types_after_a_type_are_those_after_it_in_code_point_order(
        self, graph_store: GraphStore
    ) -> None:
        """A page boundary follows Python's order whatever a store compares strings by:
        `after` is a type or any string between types, and the types after it come, the
        first `limit` of them. Types beyond U+FFFF lie on both sides of each boundary,
        and some boundaries are between a type beyond U+FFFF and one from U+E000 to
        U+FFFF, where UTF-16 code units and code points part (`x\ue000` is before
        `x\U0001f600y` by code point, after it by code unit). Pages read one after the
        other, each from the last type of the one before, give the whole list once."""
        tenant = new_tenant()
        ordered = [
            "Company", "company", "x", "x\ue000", "x\uffffz", "x\U0001f600y",
            "y\n\uff5a", "y\n\U0001f600", "été", "\uff5a", "\U0001d49c",
        ]  # fmt: skip
        entities = [make_entity(tenant, f"Thing {i}", t) for i, t in enumerate(ordered)]
        await graph_store.upsert_entities([*entities, make_entity(tenant, "More", "x")])
        counts = {t: 2 if t == "x" else 1 for t in ordered}
        between = [
            "", " ", "Company ", "x\ud7ff", "x\ue000 ", "x\uf000", "x\U0001f600",
            "x\U0001f600z", "y", "y\n\uff5a\U0001f600", "\uffff", "\U0001d49b", "\U0010ffff",
        ]  # fmt: skip
        for after in [*ordered, *between]:
            later = [(t, n) for t, n in counts.items() if t > after]
            assert list((await graph_store.entity_types(tenant, after=after)).items()) == later
            for limit in (0, 1, 2, 3):
                got = await graph_store.entity_types(tenant, after=after, limit=limit)
                assert list(got.items()) == later[:limit], (after, limit)
        for size in (1, 2, 3, 4):
            pages: list[list[str]] = []
            last: str | None = None
            for _ in range(len(ordered) + 1):  # a store paging wrongly may never end
                page = list(await graph_store.entity_types(tenant, limit=size, after=last))
                if not page:
                    break
                pages.append(page)
                last = page[-1]
            assert [t for page in pages for t in page] == ordered, size
            assert all(len(page) == size for page in pages[:-1]), size
        assert await graph_store.entity_types(new_tenant(), after="a") == {}
        for wrong, message in [
            (5, "after must be a string, got 5"),
            (b"x", "after must be a string, got b'x'"),
            ("x\ud800", "after contains a lone surrogate at position 1"),
        ]:
            with pytest.raises(InvalidInputError, match=f"^{re.escape(message)}"):
                await graph_store.entity_types(tenant, after=wrong)  # type: ignore[arg-type]

    async def test_entity_types_follow_every_write(self, graph_store: GraphStore) -> None:
        """An upsert that changes an entity's type moves it to the new type, one that
        does not counts it once, a delete takes it away, and a type left with no entity
        is not listed; the same id in another tenant keeps its own."""
        tenant, other = new_tenant(), new_tenant()
        shared = EntityId(uuid.uuid4())
        moving = make_entity(tenant, "Mercury", "planet", entity_id=shared)
        staying = make_entity(tenant, "Venus", "planet")
        twin = make_entity(other, "Mercury", "planet", entity_id=shared)
        await graph_store.upsert_entities([moving, staying, twin])
        await graph_store.upsert_entities([moving, staying])  # again: no change
        assert await graph_store.entity_types(tenant) == {"planet": 2}
        moved = make_entity(tenant, "Mercury", "element", entity_id=shared)
        await graph_store.upsert_entities([moved])
        assert await graph_store.entity_types(tenant) == {"element": 1, "planet": 1}
        await graph_store.delete_entities([staying.id], tenant)
        assert await graph_store.entity_types(tenant) == {"element": 1}
        await graph_store.delete_entities([shared, shared], tenant)
        assert await graph_store.entity_types(tenant) == {}
        assert await graph_store.entity_types(other) == {"planet": 1}

    async def test_rewrite_keys_derives_stale_keys_again_in_place(
        self, graph_store: GraphStore
    ) -> None:
        """An entity stored with an earlier version's keys (here: `ł`, `ø` dropped, not
        written in ASCII) gets this version's, and is found by them alone; nothing else
        of it changes, and the same id in another tenant keeps its own keys."""
        tenant, other = new_tenant(), new_tenant()
        current = make_entity(
            tenant,
            "Łódź Ørsted Holdings",
            "org",
            description="a holding",
            properties={"aliases": ("Łódź Power",), "founded": 1901},
        )
        old_keys = ("t:org", "w:odz", "w:rsted", "w:holdings")
        stale = current.model_copy(
            update={"normalized_name": "odz rsted holdings", "blocking_keys": old_keys}
        )
        twin = stale.model_copy(update={"tenant_id": other})
        acme = make_entity(tenant, "Acme Corp")
        await graph_store.upsert_entities([stale, twin, acme])
        read = await graph_store.entity_page(tenant, limit=10)
        assert not stale.has_current_keys()
        assert stale.rekeyed() == current

        assert await graph_store.rewrite_keys(read) == 1
        [got, same_acme] = await graph_store.get_entities([stale.id, acme.id], tenant)
        assert got == current
        assert (got.normalized_name, got.blocking_keys, got.description, got.properties) == (
            current.normalized_name,
            current.blocking_keys,
            "a holding",
            current.properties,
        )
        assert same_acme == acme
        assert await graph_store.entity_types(tenant) == {"org": 1, "thing": 1}
        assert await _ids(graph_store, "w:odz", "w:rsted", tenant=tenant) == []
        for key in lookup_keys(current.blocking_keys):
            assert stale.id in await _ids(graph_store, key, tenant=tenant), key
        seek = await graph_store.find_lexical_candidates([], tenant, prefixes=["w:ors"])
        assert [c.id for c in seek] == [stale.id]
        [other_twin] = await graph_store.get_entities([twin.id], other)
        assert other_twin.blocking_keys == old_keys
        assert await _ids(graph_store, "w:odz", tenant=other) == [twin.id]
        assert await graph_store.rewrite_keys([got, acme]) == 0  # current already
        assert await graph_store.rewrite_keys([]) == 0

    async def test_rewrite_keys_leaves_what_was_written_since_the_read(
        self, graph_store: GraphStore
    ) -> None:
        """A stale entity renamed, given other aliases, or deleted between the read and
        the rewrite is left as its writer left it: the rewrite would derive keys from a
        name or aliases that are no longer its own (or bring a deleted entity back)."""
        tenant = new_tenant()

        def stale(name: str, **fields: Any) -> Entity:
            entity = make_entity(tenant, name, "org", **fields)
            return entity.model_copy(update={"blocking_keys": ("t:org", "w:stale")})

        renamed, realiased, deleted = (
            stale("Łódź Works"),
            stale("Ørsted Mills", properties={"aliases": ("Orsted",)}),
            stale("Żabka Stores"),
        )
        await graph_store.upsert_entities([renamed, realiased, deleted])
        read = await graph_store.get_entities([renamed.id, realiased.id, deleted.id], tenant)
        now = [
            make_entity(tenant, "Kraków Works", "org", entity_id=renamed.id),
            make_entity(
                tenant, "Ørsted Mills", "org", entity_id=realiased.id,
                properties={"aliases": ("Ørsted Textiles",)},
            ),
        ]  # fmt: skip
        await graph_store.upsert_entities(now)
        await graph_store.delete_entities([deleted.id], tenant)
        assert await graph_store.rewrite_keys(read) == 0
        assert await graph_store.get_entities([e.id for e in read], tenant) == now
        assert await _ids(graph_store, "w:krakow", tenant=tenant) == [renamed.id]
        assert await _ids(graph_store, "w:textiles", tenant=tenant) == [realiased.id]
        assert await _ids(graph_store, "w:stale", "w:lodz", "w:zabka", tenant=tenant) == []

    async def test_tenants_never_see_each_other(self, graph_store: GraphStore) -> None:
        tenant_a, tenant_b = new_tenant(), new_tenant()
        shared_id = uuid.uuid4()
        other_id = uuid.uuid4()
        in_a = make_entity(tenant_a, "Acme Corp", "org", entity_id=shared_id)
        in_b = make_entity(tenant_b, "Umbrella", "org", entity_id=shared_id)
        peer_a = make_entity(tenant_a, "Peer A", entity_id=other_id)
        peer_b = make_entity(tenant_b, "Peer B", entity_id=other_id)
        await graph_store.upsert_entities([in_a, in_b, peer_a, peer_b])
        rel_a = make_relationship(in_a, peer_a, "KNOWS")
        rel_b = make_relationship(in_b, peer_b, "OWNS")
        await graph_store.upsert_relationships([rel_a, rel_b])

        [got_a] = await graph_store.get_entities([in_a.id], tenant_a)
        [got_b] = await graph_store.get_entities([in_b.id], tenant_b)
        assert (got_a.name, got_b.name) == ("Acme Corp", "Umbrella")
        assert await _ids(graph_store, "w:umbrella", tenant=tenant_a) == []
        rels_a = await graph_store.relationships_of([in_a.id], tenant_a)
        assert [r.relationship_type for r in rels_a[in_a.id]] == ["KNOWS"]

        assert await graph_store.delete_entities([in_a.id], tenant_a) == 1
        assert await graph_store.get_entities([in_a.id], tenant_a) == []
        assert [e.name for e in await graph_store.get_entities([in_b.id], tenant_b)] == ["Umbrella"]
        rels_b = await graph_store.relationships_of([in_b.id], tenant_b)
        assert [r.id for r in rels_b[in_b.id]] == [rel_b.id]

    async def test_relationships_of_directions_types_and_limits(
        self, graph_store: GraphStore
    ) -> None:
        tenant = new_tenant()
        hub, x, y, z = (make_entity(tenant, n) for n in ("Hub", "X", "Y", "Z"))
        lonely = make_entity(tenant, "Lonely")
        await graph_store.upsert_entities([hub, x, y, z, lonely])
        out_x = make_relationship(hub, x, "OWNS", confidence=0.25, properties={"since": 2001})
        out_y = make_relationship(hub, y, "KNOWS")
        in_z = make_relationship(z, hub, "KNOWS")
        await graph_store.upsert_relationships([out_x, out_y, in_z])

        both = await graph_store.relationships_of([hub.id, lonely.id], tenant)
        assert both[lonely.id] == []
        expected = sorted(
            [out_x, out_y, in_z], key=lambda r: (r.relationship_type, id_order_key(r.id))
        )
        assert both[hub.id] == expected
        got_out = await graph_store.relationships_of([hub.id], tenant, direction=Direction.OUT)
        assert {r.id for r in got_out[hub.id]} == {out_x.id, out_y.id}
        got_in = await graph_store.relationships_of([hub.id], tenant, direction=Direction.IN)
        assert [r.id for r in got_in[hub.id]] == [in_z.id]
        knows = await graph_store.relationships_of([hub.id], tenant, types=["KNOWS"])
        assert {r.id for r in knows[hub.id]} == {out_y.id, in_z.id}
        capped = await graph_store.relationships_of([hub.id], tenant, limit_per_entity=1)
        assert capped[hub.id] == expected[:1]
        many = await graph_store.relationships_of([hub.id, x.id, z.id], tenant)
        assert [r.id for r in many[x.id]] == [out_x.id]
        assert [r.id for r in many[z.id]] == [in_z.id]
        [owned] = [r for r in both[hub.id] if r.id == out_x.id]
        assert owned.confidence == 0.25
        assert dict(owned.properties) == {"since": 2001}

    async def test_relationships_after_a_place_are_those_strictly_after_it(
        self, graph_store: GraphStore
    ) -> None:
        """For every direction, type filter and cap, from every place of the order: the
        relationships after it, those of its own type after its id first. Three `KNOWS`
        are written against their id order, so that a store ordering by writing, or
        comparing a place by type alone, answers other ones; a place taken from an `OUT`
        read names the same point of a `BOTH` one; a place whose relationship is gone,
        or between two, still names its point; one past the end answers nothing."""
        tenant = new_tenant()
        hub, x, y, z, w = (make_entity(tenant, n) for n in ("Hub", "X", "Y", "Z", "W"))
        await graph_store.upsert_entities([hub, x, y, z, w])
        low, middle, high, *others = _ids_in_id_order(7)
        knows = [
            make_relationship(hub, x, "KNOWS", relationship_id=high),
            make_relationship(z, hub, "KNOWS", relationship_id=low),
            make_relationship(hub, y, "KNOWS", relationship_id=middle),
        ]
        rest = [
            make_relationship(hub, z, "OWNS", relationship_id=others[3]),
            make_relationship(w, hub, "EMPLOYS", relationship_id=others[0]),
            make_relationship(hub, w, "OWNS", relationship_id=others[1]),
            make_relationship(y, hub, "OWNS", relationship_id=others[2]),
            make_relationship(x, y, "KNOWS"),  # not the hub's
        ]
        await graph_store.upsert_relationships([*knows, *rest])
        hubs = [r for r in [*knows, *rest] if hub.id in (r.source_entity_id, r.target_entity_id)]
        ordered = sorted(hubs, key=relationship_order_key)
        assert [r.relationship_type for r in ordered] == ["EMPLOYS", *["KNOWS"] * 3, *["OWNS"] * 3]
        assert [r.id for r in ordered[1:4]] == [low, middle, high]

        def listed(direction: Direction, types: list[str] | None) -> list[Relationship]:
            return [
                r
                for r in ordered
                if (types is None or r.relationship_type in types)
                and (direction is Direction.BOTH
                     or (r.source_entity_id == hub.id) == (direction is Direction.OUT))
            ]  # fmt: skip

        places = [RelationshipPlace.of(r) for r in ordered]
        places += [
            RelationshipPlace("KNOWS", uuid.UUID(int=middle.int + 1)),  # between two
            RelationshipPlace("KNOWS", uuid.UUID(int=0)),  # before every KNOWS
            RelationshipPlace("A", uuid.UUID(int=2**128 - 1)),  # before every type
            RelationshipPlace("KNOWS ", uuid.UUID(int=0)),  # between KNOWS and OWNS
            RelationshipPlace("OWNS", uuid.UUID(int=2**128 - 1)),  # past the end
            RelationshipPlace("ZZZ", uuid.UUID(int=0)),  # past the end
        ]
        for direction in Direction:
            for types in (None, ["KNOWS"], ["OWNS", "EMPLOYS"], ["NOTHING"]):
                everything = listed(direction, types)
                for place in places:
                    for limit in (None, 0, 1, 2):
                        got = await graph_store.relationships_of(
                            [hub.id, x.id],
                            tenant,
                            direction=direction,
                            types=types,
                            limit_per_entity=limit,
                            after=place,
                        )
                        case = (direction, types, place, limit)
                        assert got[hub.id] == _after(everything, place)[:limit], case
        # From an `OUT` page's last relationship, a `BOTH` read goes on from that point.
        out = await graph_store.relationships_of(
            [hub.id], tenant, direction=Direction.OUT, limit_per_entity=2
        )
        assert [r.id for r in out[hub.id]] == [middle, high]
        both = await graph_store.relationships_of([hub.id], tenant, after=out[hub.id][-1])
        assert both[hub.id] == ordered[4:]
        # The place of a relationship deleted since still names its point.
        assert await graph_store.delete_entities([y.id], tenant) == 1
        gone = RelationshipPlace.of(knows[2])
        after_gone = await graph_store.relationships_of([hub.id], tenant, after=gone)
        assert [r.id for r in after_gone[hub.id]] == [high, others[1], others[3]]
        assert await graph_store.relationships_of([hub.id], new_tenant(), after=gone) == {
            hub.id: []
        }

    async def test_relationship_pages_follow_code_point_order_of_types(
        self, graph_store: GraphStore
    ) -> None:
        """Relationship types beyond U+FFFF on both sides of a page's boundary, and
        boundaries of types from U+E000 to U+FFFF, where UTF-16 code units and code
        points part (`x\ue000` is before `x\U0001f600y` by code point, after it by code
        unit): reading page after page, each from the last relationship of the one
        before, gives every relationship once, in code point order, whatever the page
        size; and so does a read from each place."""
        tenant = new_tenant()
        hub = make_entity(tenant, "Hub")
        types = [
            "x\U0001f600y", "x\ue000", "x", "x\uffffz", "\U0001d49c", "\uff5a",
            "y\n\U0001f600", "Company", "été", "x\ue000",
        ]  # fmt: skip
        peers = [make_entity(tenant, f"Peer {i}") for i in range(len(types))]
        await graph_store.upsert_entities([hub, *peers])
        written = [
            make_relationship(hub, peer, kind) if i % 2 else make_relationship(peer, hub, kind)
            for i, (peer, kind) in enumerate(zip(peers, types, strict=True))
        ]
        await graph_store.upsert_relationships(written)
        ordered = sorted(written, key=relationship_order_key)
        assert [r.relationship_type for r in ordered][1:6] == [
            "x", "x\ue000", "x\ue000", "x\uffffz", "x\U0001f600y",
        ]  # fmt: skip
        whole = await graph_store.relationships_of([hub.id], tenant)
        assert whole[hub.id] == ordered
        for size in (1, 2, 3):
            pages: list[list[Relationship]] = []
            last: Relationship | None = None
            for _ in range(len(types) + 1):  # a store paging wrongly may never end
                read = await graph_store.relationships_of(
                    [hub.id], tenant, limit_per_entity=size, after=last
                )
                if not read[hub.id]:
                    break
                pages.append(read[hub.id])
                last = read[hub.id][-1]
            assert [r for page in pages for r in page] == ordered, size
        between = [
            RelationshipPlace("x\ue000", uuid.UUID(int=0)),
            RelationshipPlace("x\uf000", uuid.UUID(int=0)),
            RelationshipPlace("x\U0001f600", uuid.UUID(int=0)),
            RelationshipPlace("\uff00", uuid.UUID(int=0)),
            RelationshipPlace("\U0010ffff", uuid.UUID(int=0)),
        ]
        for place in [*map(RelationshipPlace.of, ordered), *between]:
            for limit in (None, 1, 2):
                got = await graph_store.relationships_of(
                    [hub.id], tenant, limit_per_entity=limit, after=place
                )
                assert got[hub.id] == _after(ordered, place)[:limit], (place, limit)

    async def test_relationship_counts_are_what_relationships_of_lists(
        self, graph_store: GraphStore
    ) -> None:
        """For every direction and type filter, each asked id's count is the length of
        its `relationships_of` read without a cap; an id without relationships, or
        without an entity, counts 0. Another tenant's relationships of the same ids are
        not counted, and a delete takes its relationships from the counts."""
        tenant, other = new_tenant(), new_tenant()
        hub, x, y, z, lonely = (make_entity(tenant, n) for n in ("Hub", "X", "Y", "Z", "Lonely"))
        await graph_store.upsert_entities([hub, x, y, z, lonely])
        await graph_store.upsert_relationships(
            [
                make_relationship(hub, x, "OWNS"),
                make_relationship(hub, y, "KNOWS"),
                make_relationship(z, hub, "KNOWS"),
                make_relationship(y, hub, "KNOWS"),
                make_relationship(x, y, "OWNS"),
            ]
        )
        twin_hub = make_entity(other, "Hub", entity_id=hub.id)
        twin_x = make_entity(other, "X", entity_id=x.id)
        await graph_store.upsert_entities([twin_hub, twin_x])
        await graph_store.upsert_relationships([make_relationship(twin_hub, twin_x, "KNOWS")])
        missing = EntityId(uuid.uuid4())
        asked = [hub.id, x.id, lonely.id, missing, hub.id]
        for direction in Direction:
            for types in (None, ["KNOWS"], ["OWNS", "NOTHING"], []):
                counts = await graph_store.relationship_counts(
                    asked, tenant, direction=direction, types=types
                )
                listed = await graph_store.relationships_of(
                    asked, tenant, direction=direction, types=types
                )
                assert counts == {i: len(rs) for i, rs in listed.items()}, (direction, types)
        both = await graph_store.relationship_counts(asked, tenant)
        assert both == {hub.id: 4, x.id: 2, lonely.id: 0, missing: 0}
        assert await graph_store.relationship_counts(
            [hub.id], tenant, direction=Direction.IN, types=["KNOWS"]
        ) == {hub.id: 2}
        assert await graph_store.relationship_counts([hub.id, x.id], other) == {hub.id: 1, x.id: 1}
        assert await graph_store.relationship_counts([], tenant) == {}
        assert await graph_store.delete_entities([y.id], tenant) == 1
        assert await graph_store.relationship_counts([hub.id, x.id], tenant) == {
            hub.id: 2,
            x.id: 1,
        }
        store: Any = graph_store  # called with what its types refuse
        spelled = await store.relationship_counts([str(hub.id)], str(tenant), direction="out")
        assert spelled == {hub.id: 1}  # ids are read as every read reads them

    async def test_relationship_filters_are_read_alike_or_refused(
        self, graph_store: GraphStore
    ) -> None:
        """A direction's name in any case is that direction; a lone string of types, a
        type no store can hold (a lone surrogate, a NUL), a negative or non-integer cap or
        one past a 64-bit integer (2**63 - 1 reads all), an unknown direction or an `after` that is no place is `InvalidInputError`, the
        same on every store and for counts too, never a different answer (`relationship_filters_of`, `relationship_place_of`)."""
        tenant = new_tenant()
        hub, x, z = (make_entity(tenant, n) for n in ("Hub", "X", "Z"))
        await graph_store.upsert_entities([hub, x, z])
        out_x, in_z = make_relationship(hub, x, "OWNS"), make_relationship(z, hub, "KNOWS")
        await graph_store.upsert_relationships([out_x, in_z])
        reads = _relationship_reads(graph_store)
        wrong: list[tuple[str, dict[str, Any]]] = [
            (
                "direction must be one of OUT, IN, BOTH, got 'sideways'",
                {"direction": "sideways"},
            ),
            ("direction must be one of", {"direction": 1}),
            ("types must be a list of strings, got 'OWNS'", {"types": "OWNS"}),
            (r"types\[0\] must be a string, got 7", {"types": [7]}),
            (
                r"types\[1\] contains a lone surrogate at position 0, which cannot be stored",
                {"types": ["OWNS", "\udc00"]},
            ),
            (r"types\[0\] contains a NUL character", {"types": ["OW\x00NS"]}),
            ("limit_per_entity must not be negative, got -1", {"limit_per_entity": -1}),
            ("limit_per_entity must be an integer, got 1.5", {"limit_per_entity": 1.5}),
            ("limit_per_entity must be an integer, got True", {"limit_per_entity": True}),
            (
                r"limit_per_entity must be at most 2\*\*63 - 1, got 9223372036854775808",
                {"limit_per_entity": 2**63},
            ),
            (
                "after must be a RelationshipPlace or a Relationship, got 'OWNS'",
                {"after": "OWNS"},
            ),
            ("after must be a RelationshipPlace", {"after": ("OWNS", out_x.id)}),
        ]
        for read in reads:
            for spelled in ("out", "OUT", "Out"):
                got = await read([hub.id], tenant, direction=spelled)
                assert [r.id for r in got[hub.id]] == [out_x.id]
            got = await read([hub.id], tenant, direction="in", types=("KNOWS",))
            assert [r.id for r in got[hub.id]] == [in_z.id]
            got = await read([hub.id], tenant, limit_per_entity=2**63 - 1)  # Neo4j's largest
            assert [r.id for r in got[hub.id]] == [in_z.id, out_x.id]
            for message, arguments in wrong:
                with pytest.raises(InvalidInputError, match=f"^{message}"):
                    await read([hub.id], tenant, **arguments)
        # A count reads its filters as the reads do.
        store: Any = graph_store  # called with what its types refuse
        for spelled in ("in", "IN", "In"):
            counted = await store.relationship_counts([hub.id], tenant, direction=spelled)
            assert counted == {hub.id: 1}
        for message, arguments in wrong[:6]:  # the direction's and the types'
            with pytest.raises(InvalidInputError, match=f"^{message}"):
                await store.relationship_counts([hub.id], tenant, **arguments)

    async def test_types_of_the_longest_length_and_longer_ones_stored_before_the_cap(
        self, graph_store: GraphStore
    ) -> None:
        """A relationship type of `MAX_TYPE_LENGTH` characters (each four UTF-8 bytes) is
        stored and read back. One longer, which a store written before the cap may hold
        (built here unchecked, as no `Relationship` can now be), is still read, listed,
        counted, found by a `types` filter naming it and paged past from its place; a
        filter naming a longer type the store does not hold finds nothing."""
        tenant = new_tenant()
        hub, x, y, z = (make_entity(tenant, n) for n in ("Hub", "X", "Y", "Z"))
        await graph_store.upsert_entities([hub, x, y, z])
        longest = make_relationship(hub, x, "\U0001f600" * MAX_TYPE_LENGTH)
        kept = Relationship.model_construct(
            **{**dict(make_relationship(y, hub, "KNOWS")), "relationship_type": "L" * 300}
        )
        short = make_relationship(hub, z, "A")
        await graph_store.upsert_relationships([longest, kept, short])
        ordered = [short, kept, longest]
        read = await graph_store.relationships_of([hub.id], tenant)
        assert read == {hub.id: ordered}
        reads = _relationship_reads(graph_store)
        for read_of in reads:
            named = await read_of([hub.id, y.id], tenant, types=["L" * 300])
            assert named == {hub.id: [kept], y.id: [kept]}
            after = await read_of([hub.id], tenant, after=RelationshipPlace.of(kept))
            assert after == {hub.id: [longest]}
            assert await read_of([hub.id], tenant, types=["L" * 301]) == {hub.id: []}
        assert await graph_store.relationship_counts([hub.id], tenant) == {hub.id: 3}
        counted = await graph_store.relationship_counts(
            [hub.id], tenant, types=["L" * 300, longest.relationship_type, "L" * 301]
        )
        assert counted == {hub.id: 2}

    async def test_relationships_with_ends_read_relationships_of_and_their_far_ends(
        self, graph_store: GraphStore
    ) -> None:
        """For every direction, type filter, cap and place to read after: the
        relationships `relationships_of` reads, and the far end of each, whole, once
        however many lead to it (and no end of a relationship before the place)."""
        ends = _end_reads(graph_store)
        tenant = new_tenant()
        hub, other_hub, x, y, z, lonely = (
            make_entity(tenant, n, properties={"n": i})
            for i, n in enumerate(("Hub", "Other Hub", "X", "Y", "Z", "Lonely"))
        )
        await graph_store.upsert_entities([hub, other_hub, x, y, z, lonely])
        await graph_store.upsert_relationships(
            [
                make_relationship(hub, x, "OWNS", confidence=0.25, properties={"since": 2001}),
                make_relationship(hub, y, "KNOWS"),
                make_relationship(z, hub, "KNOWS"),
                make_relationship(other_hub, x, "KNOWS"),
                make_relationship(x, other_hub, "OWNS"),
                make_relationship(other_hub, hub, "KNOWS"),
            ]
        )
        stored = {e.id: e for e in (hub, other_hub, x, y, z, lonely)}
        asked = [hub.id, other_hub.id, lonely.id, EntityId(uuid.uuid4()), hub.id]
        middle = RelationshipPlace("KNOWS", uuid.UUID(int=2**127))
        places = [None, middle, RelationshipPlace("K\uff5a", uuid.UUID(int=0))]
        for direction in Direction:
            for types in (None, ["KNOWS"], ["OWNS", "NOTHING"], []):
                for limit, after in product((None, 0, 1, 2), places):
                    options: dict[str, Any] = {
                        "direction": direction,
                        "types": types,
                        "limit_per_entity": limit,
                        "after": after,
                    }
                    case = (direction, types, limit, after)
                    read = await ends.relationships_with_ends(asked, tenant, **options)
                    alone = await graph_store.relationships_of(asked, tenant, **options)
                    assert read.relationships == alone, case
                    far = {far_end(r, i) for i, rs in alone.items() for r in rs}
                    assert read.entities == {i: stored[i] for i in far}, case
        everything = await ends.relationships_with_ends([hub.id, other_hub.id], tenant)
        # `x` is the far end of three relationships; each hub, of the other's.
        assert set(everything.entities) == {hub.id, other_hub.id, x.id, y.id, z.id}
        empty = await ends.relationships_with_ends([], tenant)
        assert (empty.relationships, empty.entities) == ({}, {})

    async def test_relationships_with_ends_omit_missing_ends_and_other_tenants(
        self, graph_store: GraphStore
    ) -> None:
        ends = _end_reads(graph_store)
        tenant_a, tenant_b = new_tenant(), new_tenant()
        shared_id, peer_id = uuid.uuid4(), uuid.uuid4()
        in_a = make_entity(tenant_a, "Acme Corp", "org", entity_id=shared_id)
        in_b = make_entity(tenant_b, "Umbrella", "org", entity_id=shared_id)
        peer_a = make_entity(tenant_a, "Peer A", entity_id=peer_id)
        peer_b = make_entity(tenant_b, "Peer B", entity_id=peer_id)
        gone = make_entity(tenant_a, "Gone")
        await graph_store.upsert_entities([in_a, in_b, peer_a, peer_b, gone])
        rel_a = make_relationship(in_a, peer_a, "KNOWS")
        await graph_store.upsert_relationships(
            [rel_a, make_relationship(gone, in_a, "KNOWS"), make_relationship(in_b, peer_b, "OWNS")]
        )
        assert await graph_store.delete_entities([gone.id], tenant_a) == 1

        read = await ends.relationships_with_ends([in_a.id, gone.id], tenant_a)
        assert read.relationships == {in_a.id: [rel_a], gone.id: []}
        assert read.entities == {peer_a.id: peer_a}
        # The same ids read in the other tenant: its own entities.
        read_b = await ends.relationships_with_ends([in_b.id], tenant_b)
        assert [r.relationship_type for r in read_b.relationships[in_b.id]] == ["OWNS"]
        assert read_b.entities == {peer_b.id: peer_b}
        elsewhere = await ends.relationships_with_ends([in_a.id], new_tenant())
        assert (elsewhere.relationships, elsewhere.entities) == ({in_a.id: []}, {})

    async def test_missing_endpoint_fails_the_whole_batch(self, graph_store: GraphStore) -> None:
        tenant = new_tenant()
        a, b = make_entity(tenant, "A"), make_entity(tenant, "B")
        await graph_store.upsert_entities([a, b])
        ghost = make_entity(tenant, "Ghost")  # never written
        good = make_relationship(a, b)
        bad = make_relationship(a, ghost)
        with pytest.raises(MissingEndpointError) as raised:
            await graph_store.upsert_relationships([good, bad])
        assert str(ghost.id) in str(raised.value)
        found = await graph_store.relationships_of([a.id], tenant)
        assert found[a.id] == []

    async def test_endpoint_in_another_tenant_is_missing(self, graph_store: GraphStore) -> None:
        tenant_a, tenant_b = new_tenant(), new_tenant()
        a = make_entity(tenant_a, "A")
        b = make_entity(tenant_b, "B")
        await graph_store.upsert_entities([a, b])
        crossing = make_relationship(a, b.model_copy(update={"tenant_id": tenant_a}))
        with pytest.raises(MissingEndpointError):
            await graph_store.upsert_relationships([crossing])

    async def test_relationship_upsert_is_idempotent(self, graph_store: GraphStore) -> None:
        tenant = new_tenant()
        a, b = make_entity(tenant, "A"), make_entity(tenant, "B")
        await graph_store.upsert_entities([a, b])
        rel = make_relationship(a, b, "KNOWS", confidence=0.5)
        await graph_store.upsert_relationships([rel, rel])
        updated = rel.model_copy(update={"confidence": 0.75})
        await graph_store.upsert_relationships([updated])
        found = await graph_store.relationships_of([a.id, b.id], tenant)
        assert [r.confidence for r in found[a.id]] == [0.75]
        assert [r.id for r in found[b.id]] == [rel.id]

    async def test_delete_removes_relationships(self, graph_store: GraphStore) -> None:
        tenant = new_tenant()
        a, b, c = (make_entity(tenant, n) for n in ("A", "B", "C"))
        await graph_store.upsert_entities([a, b, c])
        await graph_store.upsert_relationships([make_relationship(a, b), make_relationship(c, a)])
        assert await graph_store.delete_entities([a.id, EntityId(uuid.uuid4())], tenant) == 1
        found = await graph_store.relationships_of([a.id, b.id, c.id], tenant)
        assert found == {a.id: [], b.id: [], c.id: []}
        assert await _ids(graph_store, "p:a", tenant=tenant) == []
        assert await graph_store.delete_entities([a.id], tenant) == 0

    @pytest.mark.parametrize("wrong", ["not-a-tenant", 5, None])
    async def test_a_wrong_typed_id_is_invalid_input(
        self, graph_store: GraphStore, wrong: object
    ) -> None:
        """Not a silent empty answer: the caller's typo is named (`tenant_id_of`)."""
        tenant = new_tenant()
        entity = make_entity(tenant, "Acme Corp")
        await graph_store.upsert_entities([entity])
        keys = query_blocking_keys("Acme Corp")
        reads: list[tuple[str, Any]] = [
            ("tenant_id", lambda t: graph_store.get_entities([entity.id], t)),
            ("tenant_id", lambda t: graph_store.find_lexical_candidates(keys, t)),
            ("tenant_id", lambda t: graph_store.relationships_of([entity.id], t)),
            ("tenant_id", lambda t: graph_store.delete_entities([entity.id], t)),
            ("tenant_id", lambda t: graph_store.entity_page(t, limit=1)),
            ("tenant_id", lambda t: graph_store.entity_types(t)),
            ("tenant_id", lambda t: graph_store.entity_types(t, limit=0)),  # read or not
            ("ids[1]", lambda i: graph_store.get_entities([entity.id, i], tenant)),
            ("entity_ids[0]", lambda i: graph_store.relationships_of([i], tenant)),
            ("tenant_id", lambda t: graph_store.relationship_counts([entity.id], t)),
            ("entity_ids[1]", lambda i: graph_store.relationship_counts([entity.id, i], tenant)),
            ("ids[0]", lambda i: graph_store.delete_entities([i], tenant)),
        ]
        if wrong is not None:  # None is the first page's `after`
            reads.append(("after", lambda i: graph_store.entity_page(tenant, after=i, limit=1)))
        if isinstance(graph_store, EndReads):
            ends = graph_store
            reads += [
                ("tenant_id", lambda t: ends.relationships_with_ends([entity.id], t)),
                ("entity_ids[1]", lambda i: ends.relationships_with_ends([entity.id, i], tenant)),
            ]
        if isinstance(graph_store, TextReads):
            texts = graph_store
            reads += [
                ("tenant_id", lambda t: texts.embedding_texts([entity.id], t)),
                ("ids[1]", lambda i: texts.embedding_texts([entity.id, i], tenant)),
            ]
        for argument, read in reads:
            with pytest.raises(InvalidInputError, match=rf"^{re.escape(argument)} must be a UUID"):
                await read(wrong)
        # A UUID's string is that UUID.
        [got] = await graph_store.get_entities([str(entity.id)], str(tenant))  # type: ignore[list-item,arg-type]
        assert got == entity
        assert await graph_store.delete_entities([entity.id], tenant) == 1

    async def test_a_write_of_anything_but_its_records_is_invalid_input(
        self, graph_store: GraphStore
    ) -> None:
        """The writes read their arguments by `redstring.domain.arguments.items_of` (and
        `delete_entities` its ids by `entity_ids_of`): a record alone, a string, a dict
        or a record of the other kind is named, not an `AttributeError` from inside the
        store, and nothing of the refused call is written."""
        tenant = new_tenant()
        a, b = make_entity(tenant, "Acme Corp"), make_entity(tenant, "Globex")
        link = make_relationship(a, b)
        store: Any = graph_store  # called with what its types refuse
        writes: list[tuple[str, Any]] = [
            ("entities must be a sequence of Entity, got", lambda: store.upsert_entities(a)),
            ("entities must be a sequence of Entity", lambda: store.upsert_entities("Acme")),
            ("entities[1] must be an Entity, got {", lambda: store.upsert_entities([a, {}])),
            ("entities[1] must be an Entity", lambda: store.upsert_entities([a, link])),
            ("relationships must be a sequence of Relationship", lambda: store.upsert_relationships(link)),
            ("relationships[0] must be a Relationship", lambda: store.upsert_relationships([b])),
            ("ids must be a sequence of UUIDs", lambda: store.delete_entities(a.id, tenant)),
            ("entities must be a sequence of Entity", lambda: store.rewrite_keys(a)),
            ("entities[0] must be an Entity", lambda: store.rewrite_keys([link])),
        ]  # fmt: skip
        for message, write in writes:
            with pytest.raises(InvalidInputError, match=f"^{re.escape(message)}"):
                await write()
        assert await graph_store.get_entities([a.id, b.id], tenant) == []
        await graph_store.upsert_entities((a, b))  # any sequence: a tuple too
        with pytest.raises(InvalidInputError, match=r"^relationships\[1\] must be a Relationship"):
            await store.upsert_relationships([link, a])
        assert await graph_store.relationships_of([a.id], tenant) == {a.id: []}


def _relationship_reads(graph_store: GraphStore) -> list[Any]:
    """The store's reads of relationships, each answering `relationships_of`'s mapping:
    `relationships_of`, and `relationships_with_ends`'s relationships when it has them."""
    reads: list[Any] = [graph_store.relationships_of]
    if isinstance(graph_store, EndReads):
        ends = graph_store

        async def with_ends(*args: Any, **kwargs: Any) -> Any:
            return (await ends.relationships_with_ends(*args, **kwargs)).relationships

        reads.append(with_ends)
    return reads
