"""Pages past `first`: `Entity.relationships(after:)` with `Relationship.cursor`,
`Entity.relationshipCount`, and `entityTypes(after:)`."""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections import Counter
from typing import Any

import pytest

from redstring import Direction, EntityId
from redstring.api import cursors
from redstring.api.cursors import place_of_cursor, relationship_cursor
from redstring.composition.client import Redstring
from redstring.domain.errors import InvalidInputError
from redstring.domain.relationship import Relationship
from redstring.domain.relationship_order import RelationshipPlace, relationship_order_key
from redstring.domain.text import MAX_TYPE_LENGTH
from redstring.testing import make_entity, make_relationship, new_tenant
from tests.api.conftest import MakeClient
from tests.api.support import DEMO, GraphQLClient, counting_client
from tests.processes import REPO

PAGE = """query ($t: ID!, $id: ID!, $first: Int!, $after: String, $direction: Direction! = BOTH,
                 $types: [String!]) {
  entity(tenantId: $t, id: $id) {
    relationships(first: $first, after: $after, direction: $direction, types: $types) {
      id relationshipType cursor
    }
    relationshipCount(direction: $direction, types: $types)
  }
}"""
TYPES_PAGE = """query ($t: ID!, $first: Int!, $after: String) {
  entityTypes(tenantId: $t, first: $first, after: $after) { entityType count }
}"""


class Hub:
    """A hub with relationships of three types, `KNOWS` thrice, written against their id
    order, in and out, and a spoke's own relationship, in a fresh tenant."""

    def __init__(self) -> None:
        self.tenant = new_tenant()
        self.hub = make_entity(self.tenant, "Hub", "company")
        self.spokes = [make_entity(self.tenant, f"Spoke {i}", "person") for i in range(6)]
        ids = sorted((uuid.uuid4() for _ in range(3)), key=lambda u: u.int)
        self.relationships = [
            make_relationship(self.hub, self.spokes[0], "KNOWS", relationship_id=ids[2]),
            make_relationship(self.spokes[1], self.hub, "KNOWS", relationship_id=ids[0]),
            make_relationship(self.hub, self.spokes[2], "KNOWS", relationship_id=ids[1]),
            make_relationship(self.hub, self.spokes[3], "OWNS"),
            make_relationship(self.spokes[4], self.hub, "OWNS"),
            make_relationship(self.spokes[5], self.hub, "EMPLOYS"),
        ]
        self.elsewhere = make_relationship(self.spokes[0], self.spokes[1], "KNOWS")

    async def write(self, services: Redstring) -> None:
        await services.upsert(
            [self.hub, *self.spokes],
            [*self.relationships, self.elsewhere],
        )

    def ordered(self, direction: str = "BOTH", types: list[str] | None = None) -> list[str]:
        """The ids of the hub's relationships `relationships` lists, in its order."""
        kept = [
            r
            for r in sorted(self.relationships, key=relationship_order_key)
            if (types is None or r.relationship_type in types)
            and (direction == "BOTH" or (r.source_entity_id == self.hub.id) == (direction == "OUT"))
        ]
        return [str(r.id) for r in kept]


@pytest.fixture
async def hub(fresh_services: Redstring) -> Hub:
    made = Hub()
    await made.write(fresh_services)
    return made


async def _page(client: GraphQLClient, hub: Hub, **arguments: Any) -> dict[str, Any]:
    data = await client.data(PAGE, t=str(hub.tenant), id=str(hub.hub.id), **arguments)
    entity: dict[str, Any] = data["entity"]
    return entity


async def _walk(client: GraphQLClient, hub: Hub, first: int, **arguments: Any) -> list[list[str]]:
    """The ids of each page, each read after the last relationship of the one before."""
    pages: list[list[str]] = []
    after = None
    for _ in range(len(hub.relationships) + 1):  # a wrong cursor might never end
        page = (await _page(client, hub, first=first, after=after, **arguments))["relationships"]
        if not page:
            break
        pages.append([r["id"] for r in page])
        after = page[-1]["cursor"]
    return pages


@pytest.mark.parametrize("first", [1, 2, 3, 4, 6])
async def test_pages_read_after_each_last_cursor_are_the_whole_list_once(
    make_client: MakeClient, fresh_services: Redstring, hub: Hub, first: int
) -> None:
    """Across a boundary inside `KNOWS` (three of them, in id order, not written so) and
    between types; each page beside the total of all."""
    client = make_client(fresh_services)
    pages = await _walk(client, hub, first)
    assert [i for page in pages for i in page] == hub.ordered()
    assert all(len(page) == first for page in pages[:-1])
    counted = await _page(client, hub, first=0)
    assert counted == {"relationships": [], "relationshipCount": len(hub.relationships)}


@pytest.mark.parametrize(
    ("direction", "types"),
    [("OUT", None), ("IN", None), ("BOTH", ["KNOWS"]), ("IN", ["KNOWS", "EMPLOYS"])],
)
async def test_pages_and_counts_follow_direction_and_types(
    make_client: MakeClient, fresh_services: Redstring, hub: Hub, direction: str, types: Any
) -> None:
    client = make_client(fresh_services)
    pages = await _walk(client, hub, 1, direction=direction, types=types)
    assert [i for page in pages for i in page] == hub.ordered(direction, types)
    counted = await _page(client, hub, first=0, direction=direction, types=types)
    assert counted["relationshipCount"] == len(hub.ordered(direction, types))


async def test_a_cursor_names_a_place_whatever_the_read_it_came_from(
    make_client: MakeClient, fresh_services: Redstring, hub: Hub
) -> None:
    """The last cursor of an `OUT` page, given to a `BOTH` read, goes on from the same
    point of the one order, the `IN` relationships after it included; a cursor of a
    relationship deleted since still does; one past the end gives `[]`."""
    client = make_client(fresh_services)
    out = (await _page(client, hub, first=2, direction="OUT"))["relationships"]
    assert [r["id"] for r in out] == hub.ordered("OUT")[:2]
    both = await _page(client, hub, first=50, after=out[-1]["cursor"])
    everything = hub.ordered()
    assert [r["id"] for r in both["relationships"]] == everything[
        everything.index(out[-1]["id"]) + 1 :
    ]
    assert [r["relationshipType"] for r in both["relationships"]] == ["OWNS", "OWNS"]
    await fresh_services.delete([hub.spokes[0].id], hub.tenant)  # the cursor's own
    after_gone = await _page(client, hub, first=50, after=out[-1]["cursor"])
    assert after_gone["relationships"] == both["relationships"]
    past = relationship_cursor(
        make_relationship(hub.hub, hub.spokes[0], "ZZZ", relationship_id=uuid.UUID(int=0))
    )
    assert (await _page(client, hub, first=50, after=past))["relationships"] == []


def _encoded(value: object) -> str:
    """`value`'s JSON as a cursor spells it (compact, not ASCII-escaped); bytes as they are."""
    if not isinstance(value, bytes):
        value = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(value).decode().rstrip("=")


_ID = uuid.UUID("0f3c2b1a-9d8e-4f7a-8b6c-5d4e3f2a1b0c")
_BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _spare_bits_set(cursor: str) -> str:
    """`cursor`, ending in a lone byte's two characters, with the unused low bits of the
    last one set: it decodes to the same bytes, but is not what an encoder writes."""
    assert len(cursor) % 4 == 2
    return cursor[:-1] + _BASE64URL[_BASE64URL.index(cursor[-1]) + 1]


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "not a cursor",
        "WyJLTk9XUyJd!",
        "A",
        _encoded(b"\xff\xfe"),
        _encoded(b"KNOWS"),
        _encoded([1, "KNOWS"]),
        _encoded([1, "KNOWS", "not-a-uuid"]),
        _encoded([1, "KNOWS", str(uuid.uuid4()), "more"]),
        _encoded({"v": 1, "type": "KNOWS", "id": str(uuid.uuid4())}),
        _encoded([1, 7, str(uuid.uuid4())]),
        _encoded(json.dumps([1, "KN\ud800", str(uuid.uuid4())], separators=(",", ":")).encode()),
        _encoded(b"[" * 100_000),
        relationship_cursor(make_relationship(make_entity(new_tenant(), "A"), make_entity(new_tenant(), "B"))) + "==",
        _encoded(f'[1, "KNOWS", "{_ID}"]'.encode()),
        _encoded(f'[1,"\\u0057ORKS_AT","{_ID}"]'.encode()),
        _encoded(f'[1,"KNOWS","{_ID}"] '.encode()),
        _encoded([1, "KNOWS", str(_ID).upper()]),
        _encoded([1, "KNOWS", "{" + str(_ID) + "}"]),
        _encoded([1, "KNOWS", _ID.urn]),
        _encoded([1, "KNOWS", _ID.hex]),
        _encoded([1, "", str(_ID)]),
        _encoded([1, "   ", str(_ID)]),
        _encoded([1, " KNOWS", str(_ID)]),
        _encoded([1, "KNOWS\n", str(_ID)]),
        _encoded([1, "KN\x00OWS", str(_ID)]),
        _spare_bits_set(_encoded([1, "KNOWSXY", str(_ID)])),
        _encoded(["KNOWS", str(_ID)]),
        _encoded([2, "KNOWS", str(_ID)]),
        _encoded([0, "KNOWS", str(_ID)]),
        _encoded(["1", "KNOWS", str(_ID)]),
        _encoded(f'[1.0,"KNOWS","{_ID}"]'.encode()),
        _encoded(f'[true,"KNOWS","{_ID}"]'.encode()),
        _encoded(f'[01,"KNOWS","{_ID}"]'.encode()),
        _encoded([]),
        _encoded([1, "K" * (MAX_TYPE_LENGTH + 1), str(_ID)]),
        _encoded([1, "\x01" * (MAX_TYPE_LENGTH + 1), str(_ID)]),
        _encoded([1, "K" * 700_000, str(_ID)]),
    ],
    ids=["empty", "spaces", "bang", "one-char", "not-utf8", "not-json", "short", "bad-id",
         "long", "object", "number", "lone-surrogate", "deep", "padded", "json-spaces",
         "json-escape", "json-trailing-space", "upper-case-id", "braced-id", "urn-id",
         "hex-id", "empty-type", "blank-type", "type-spaced-before", "type-spaced-after",
         "nul-type", "base64-spare-bits", "no-version", "version-2", "version-0",
         "version-string", "version-float", "version-true", "version-leading-zero",
         "empty-array", "type-over-cap", "escaped-type-over-cap", "type-of-700-000"],
)  # fmt: skip
async def test_a_malformed_cursor_is_bad_user_input_before_any_store_call(
    make_client: MakeClient, demo_services: Redstring, cursor: str
) -> None:
    counting, client = counting_client(make_client, demo_services)
    acme = str((await demo_services.retrieve("Acme Corp", DEMO, k=1)).matches[0].entity.id)
    body = await client.execute(PAGE, t=DEMO, id=acme, first=5, after=cursor)
    [error] = body["errors"]
    assert error["extensions"] == {"code": "BAD_USER_INPUT"}
    assert error["message"] == (
        "after is not a relationship cursor: pass a relationship's `cursor` as it came"
    )
    assert error["path"] == ["entity", "relationships"]
    assert "Traceback" not in str(body)
    assert counting.calls["relationships_of"] + counting.calls["relationships_with_ends"] == 0


def test_the_cursors_it_writes_are_read_back_exactly() -> None:
    """What `relationship_cursor` writes for any type a relationship can have, one of
    `MAX_TYPE_LENGTH` characters too (of control characters, which JSON spells longest,
    or of emoji), `place_of_cursor` reads back."""
    tenant = new_tenant()
    a, b = make_entity(tenant, "A"), make_entity(tenant, "B")
    longest = ["K" * MAX_TYPE_LENGTH, "\x01" * MAX_TYPE_LENGTH, "\U0001f600" * MAX_TYPE_LENGTH]
    for kind in ["KNOWS", "a\nb", '"\\/\u2028\x7f', "\U0001f600\uffff", *longest]:
        relationship = make_relationship(a, b, kind, relationship_id=_ID)
        cursor = relationship_cursor(relationship)
        assert cursor == _encoded([1, kind, str(_ID)])
        assert place_of_cursor(cursor) == RelationshipPlace(kind, _ID)


async def test_a_cursor_of_a_type_of_the_longest_length_pages_on_from_there(
    make_client: MakeClient, fresh_services: Redstring, hub: Hub
) -> None:
    """Such a type can be stored, so its cursor is one the server may have written."""
    client = make_client(fresh_services)
    after = _encoded([1, "K" * MAX_TYPE_LENGTH, str(_ID)])  # between EMPLOYS and KNOWS
    page = await _page(client, hub, first=50, after=after)
    assert [r["id"] for r in page["relationships"]] == hub.ordered()[1:]


def test_a_cursor_longer_than_any_the_server_writes_is_refused_undecoded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cursor of a type over the cap, up to the body limit, costs no decoding: its
    length alone refuses it."""
    huge = _encoded([1, "K" * 700_000, str(_ID)])

    def undecodable(*_: object) -> bytes:
        raise AssertionError("decoded")

    monkeypatch.setattr(cursors.base64, "urlsafe_b64decode", undecodable)
    with pytest.raises(InvalidInputError, match=r"^after is not a relationship cursor"):
        place_of_cursor(huge)


def test_a_cursor_is_url_safe_base64_of_its_version_type_and_id() -> None:
    tenant = new_tenant()
    a, b = make_entity(tenant, "A"), make_entity(tenant, "B")
    relationship = make_relationship(a, b, "KNOWS 😀 ~?/+", relationship_id=uuid.UUID(int=3))
    cursor = relationship_cursor(relationship)
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    padded = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    assert json.loads(padded) == [1, "KNOWS 😀 ~?/+", str(uuid.UUID(int=3))]
    assert place_of_cursor(cursor) == RelationshipPlace.of(relationship)


async def test_one_store_call_per_depth_for_pages_and_counts(
    make_client: MakeClient, demo_services: Redstring
) -> None:
    """Every match's `relationshipCount` in one `relationship_counts` call, and its
    `relationships(after:)` in one read, for the same arguments; other arguments, one
    more each."""
    counting, client = counting_client(make_client, demo_services)
    first = await client.data(
        """query ($t: ID!) { retrieve(query: "Acme", tenantId: $t, k: 5) {
             matches { entity { relationships(first: 1) { cursor } } } } }""",
        t=DEMO,
    )
    cursor = first["retrieve"]["matches"][0]["entity"]["relationships"][0]["cursor"]
    counting.calls.clear()
    data = await client.data(
        """query ($t: ID!, $c: String) { retrieve(query: "Acme", tenantId: $t, k: 5) {
             matches { entity {
               id
               all: relationshipCount
               again: relationshipCount
               out: relationshipCount(direction: OUT)
               relationships(first: 3, after: $c) { id }
             } } } }""",
        t=DEMO,
        c=cursor,
    )
    matches = [m["entity"] for m in data["retrieve"]["matches"]]
    assert len(matches) == 5
    ids = [EntityId(uuid.UUID(m["id"])) for m in matches]
    every = await demo_services.relationship_counts(ids, DEMO)
    out = await demo_services.relationship_counts(ids, DEMO, direction=Direction.OUT)
    assert [(m["all"], m["again"], m["out"]) for m in matches] == [
        (every[i], every[i], out[i]) for i in ids
    ]
    assert len({m["all"] for m in matches}) > 1  # counts that tell the entities apart
    assert counting.calls["relationship_counts"] == 2
    assert counting.calls["relationships_of"] == 1
    for match in data["retrieve"]["matches"]:
        listed = match["entity"]
        assert len(listed["relationships"]) <= 3


async def test_fields_differing_only_in_after_read_their_own_pages(
    make_client: MakeClient, fresh_services: Redstring, hub: Hub
) -> None:
    """Two `relationships` fields of one entity, one from the first and one after a
    cursor: two reads, each its own page (not the first page twice)."""
    counting, client = counting_client(make_client, fresh_services)
    first = (await _page(client, hub, first=2))["relationships"]
    counting.calls.clear()
    data = await client.data(
        """query ($t: ID!, $id: ID!, $c: String) { entity(tenantId: $t, id: $id) {
             a: relationships(first: 2) { id }
             b: relationships(first: 2, after: $c) { id } } }""",
        t=str(hub.tenant),
        id=str(hub.hub.id),
        c=first[-1]["cursor"],
    )
    assert [r["id"] for r in data["entity"]["a"]] == hub.ordered()[:2]
    assert [r["id"] for r in data["entity"]["b"]] == hub.ordered()[2:4]
    assert counting.calls["relationships_of"] == 2


async def test_counts_are_the_stores_and_only_the_tenants(
    make_client: MakeClient, fresh_services: Redstring, hub: Hub
) -> None:
    """A relationship of another tenant between entities of the same ids is not
    counted, nor listed."""
    other = new_tenant()
    twin = make_entity(other, "Hub", entity_id=hub.hub.id)
    peer = make_entity(other, "Peer", entity_id=hub.spokes[0].id)
    await fresh_services.upsert([twin, peer], [make_relationship(twin, peer, "KNOWS")])
    client = make_client(fresh_services)
    counts = await fresh_services.relationship_counts([hub.hub.id], hub.tenant)
    mine = await _page(client, hub, first=50)
    assert mine["relationshipCount"] == counts[hub.hub.id] == len(hub.relationships)
    assert [r["id"] for r in mine["relationships"]] == hub.ordered()
    theirs = await client.data(PAGE, t=str(other), id=str(twin.id), first=50)
    assert theirs["entity"]["relationshipCount"] == 1


async def test_a_relationship_of_a_type_stored_before_the_cap_is_listed_and_counted(
    make_client: MakeClient, fresh_services: Redstring, hub: Hub
) -> None:
    """A store written before relationship types had a cap may hold a longer one (built
    here unchecked, as no `Relationship` can now be): `relationships` lists it with a
    cursor, the pages before it reach it, `relationshipCount` counts it and a `types`
    filter naming it finds it; its own cursor is refused as `after`."""
    kind = "L" * (MAX_TYPE_LENGTH + 1)
    made = make_relationship(hub.spokes[0], hub.hub, "LONG")
    kept = Relationship.model_construct(**{**dict(made), "relationship_type": kind})
    await fresh_services.upsert([], [kept])
    client = make_client(fresh_services)
    ordered = [str(r.id) for r in sorted([*hub.relationships, kept], key=relationship_order_key)]
    assert ordered.index(str(kept.id)) == 4  # after the three KNOWS, before OWNS
    whole = await _page(client, hub, first=50)
    assert [r["id"] for r in whole["relationships"]] == ordered
    assert whole["relationshipCount"] == len(ordered)
    named = await _page(client, hub, first=50, types=[kind])
    assert [(r["id"], r["relationshipType"]) for r in named["relationships"]] == [
        (str(kept.id), kind)
    ]
    assert named["relationshipCount"] == 1
    before = whole["relationships"][3]["cursor"]
    reached = await _page(client, hub, first=1, after=before)
    assert [r["id"] for r in reached["relationships"]] == [str(kept.id)]
    body = await client.execute(
        PAGE,
        t=str(hub.tenant),
        id=str(hub.hub.id),
        first=5,
        after=named["relationships"][0]["cursor"],
    )
    [error] = body["errors"]
    assert error["extensions"] == {"code": "BAD_USER_INPUT"}
    assert error["message"].startswith("after is not a relationship cursor")


@pytest.mark.parametrize(
    ("field", "short"),
    [("relationships", "WORKS_AT"), ("relationshipCount", "WORKS_AT"), ("retrieve", "company")],
)
async def test_a_type_filter_longer_than_a_type_may_be_finds_only_what_it_names(
    make_client: MakeClient, demo_services: Redstring, field: str, short: str
) -> None:
    """A `types` (or `entityTypes`) entry over `MAX_TYPE_LENGTH` characters is a type no
    new relationship (entity) can have, and not refused: a store written before the cap
    may hold it. Beside a short type, the answer is the short type's alone."""
    client = make_client(demo_services)
    acme = str((await demo_services.retrieve("Acme Corp", DEMO, k=1)).matches[0].entity.id)
    answers = []
    for types in ([short], [short, short[0] * (MAX_TYPE_LENGTH + 1)]):
        variables: dict[str, Any] = {"t": DEMO, "types": types}
        if field != "retrieve":
            variables["id"] = acme
        answers.append(await client.data(OF_TYPES[field], **variables))
    assert answers[0] == answers[1]
    assert answers[0] != await client.data(
        OF_TYPES[field], **{**variables, "types": [short[0] * (MAX_TYPE_LENGTH + 1)]}
    )


async def test_entity_types_page_after_the_last_type(client: GraphQLClient) -> None:
    seen: list[str] = []
    after = None
    for _ in range(10):
        page = (await client.data(TYPES_PAGE, t=DEMO, first=4, after=after))["entityTypes"]
        if not page:
            break
        seen += [t["entityType"] for t in page]
        after = page[-1]["entityType"]
    assert seen == ["city", "company", "country", "industry", "person", "product"]
    between = await client.data(TYPES_PAGE, t=DEMO, first=2, after="country ")
    assert [t["entityType"] for t in between["entityTypes"]] == ["industry", "person"]
    assert (await client.data(TYPES_PAGE, t=DEMO, first=5, after="zzz"))["entityTypes"] == []


async def test_entity_types_page_in_code_point_order_beyond_u_ffff(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    """A type beyond U+FFFF on both sides of `after`, and `after` from U+E000 to U+FFFF."""
    tenant = new_tenant()
    types = ["x\U0001f600y", "x\ue000", "x", "\U0001d49c", "\uff5a", "été"]
    await fresh_services.upsert([make_entity(tenant, f"T{i}", t) for i, t in enumerate(types)])
    client = make_client(fresh_services)
    for after in [*types, "x\uf000"]:
        page = await client.data(TYPES_PAGE, t=str(tenant), first=10, after=after)
        assert [t["entityType"] for t in page["entityTypes"]] == [
            t for t in sorted(types) if t > after
        ]


@pytest.mark.parametrize(
    ("after", "message"),
    [("a\ud800", "after contains a lone surrogate at position 1"),
     ("a\x00", "after contains a NUL character")],
    ids=["lone-surrogate", "nul"],
)  # fmt: skip
async def test_an_entity_types_after_no_store_holds_is_bad_user_input(
    make_client: MakeClient, demo_services: Redstring, after: str, message: str
) -> None:
    """JSON escapes a lone surrogate (`"\\ud800"`) and a NUL, which GraphQL takes as a
    `String`."""
    counting, client = counting_client(make_client, demo_services)
    body = json.dumps({"query": TYPES_PAGE, "variables": {"t": DEMO, "first": 5, "after": after}})
    response = await client.http.post(
        "/graphql", content=body, headers={"content-type": "application/json"}
    )
    [error] = response.json()["errors"]
    assert error["extensions"] == {"code": "BAD_USER_INPUT"}
    assert error["message"].startswith(message)
    assert counting.calls == Counter()


OF_TYPES = {
    "relationships": """query ($t: ID!, $id: ID!, $types: [String!]) {
      entity(tenantId: $t, id: $id) { relationships(types: $types) { id } }
    }""",
    "relationshipCount": """query ($t: ID!, $id: ID!, $types: [String!]) {
      entity(tenantId: $t, id: $id) { relationshipCount(types: $types) }
    }""",
    "retrieve": """query ($t: ID!, $types: [String!]) {
      retrieve(query: "Acme", tenantId: $t, entityTypes: $types) { matches { score } }
    }""",
}


@pytest.mark.parametrize("name", ["\udc00", "KN\x00OWS"], ids=["lone-surrogate", "nul"])
@pytest.mark.parametrize("field", list(OF_TYPES))
async def test_a_type_no_store_can_hold_is_bad_user_input(
    make_client: MakeClient, demo_services: Redstring, field: str, name: str
) -> None:
    """JSON carries a lone surrogate (`"\\udc00"`) and a NUL, which GraphQL takes as a
    `String`; Neo4j's driver cannot send the first, so every store refuses both alike
    (the stores' share is in the compliance suite)."""
    client = make_client(demo_services)
    acme = str((await demo_services.retrieve("Acme Corp", DEMO, k=1)).matches[0].entity.id)
    variables: dict[str, Any] = {"t": DEMO, "types": ["KNOWS", name]}
    if field != "retrieve":
        variables["id"] = acme
    response = await client.http.post(
        "/graphql",
        content=json.dumps({"query": OF_TYPES[field], "variables": variables}),
        headers={"content-type": "application/json"},
    )
    [error] = response.json()["errors"]
    assert error["extensions"] == {"code": "BAD_USER_INPUT"}
    assert error["path"] == (["retrieve"] if field == "retrieve" else ["entity", field])
    named = "entityTypes" if field == "retrieve" else "types"  # as the schema spells it
    assert re.match(rf"^{named}\[1\] contains a (lone surrogate|NUL)", error["message"])
    assert "Traceback" not in str(response.json())


async def test_the_paging_example_of_the_api_docs_is_what_the_demo_answers(
    client: GraphQLClient,
) -> None:
    """docs/api.md, "Pages of relationships and of types": its query, its pages and the
    cursor it quotes."""
    docs = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    section = docs.split("### Pages of relationships and of types", 1)[1].split("\n## ", 1)[0]
    query = re.search(r"```graphql\n(.*?)```", section, re.S)
    assert query is not None
    pages: list[list[str]] = []
    cursors: list[str] = []
    after = None
    for _ in range(5):
        data = await client.data(query.group(1), tenant=DEMO, after=after)
        entity = data["entity"]
        assert entity["relationshipCount"] == 8
        pages.append([r["relationshipType"] for r in entity["relationships"]])
        if not entity["relationships"]:
            break
        after = entity["relationships"][-1]["cursor"]
        cursors.append(after)
    assert pages == [
        ["FOUNDED", "HEADQUARTERED_IN", "IN_INDUSTRY"],
        ["MAKES", "MAKES", "WORKS_AT"],
        ["WORKS_AT", "WORKS_AT"],
        [],
    ]
    assert f"`{cursors[0]}`" in " ".join(section.split())
    types = await client.data(TYPES_PAGE, t=DEMO, first=2, after="company")
    assert types["entityTypes"] == [
        {"entityType": "country", "count": 4},
        {"entityType": "industry", "count": 10},
    ]
