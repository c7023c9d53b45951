"""Bookmarks through the API: a write's positions answered, sent back, read after.

The graph store double stands for a replicating store: it reports a position per
upsert (`record_written`) and notes which positions each read was asked to follow
(`required_positions`), as the Neo4j adapter does with its bookmarks.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import pytest

from redstring import Entity, EntityId, TenantId
from redstring.api import bookmarks
from redstring.api.errors import RequestRefusedError
from redstring.composition.client import Redstring
from redstring.ports.consistency import record_written, required_positions
from redstring.testing import CountingGraphStore
from tests.api.conftest import MakeClient
from tests.api.support import services_with_graph

UPSERT = """mutation ($t: ID!) {
  upsertEntities(tenantId: $t, entities: [{name: "Quayside Ferries", entityType: "company"}]) { ids }
}"""
ENTITY = """query ($t: ID!, $id: ID!) { entity(tenantId: $t, id: $id) { name } }"""


class PositionedGraphStore(CountingGraphStore):
    """Reports position `w<n>` for its n-th upsert; keeps what each read had to follow."""

    def __init__(self, inner: CountingGraphStore) -> None:
        super().__init__(inner.inner)
        self.followed: list[tuple[str, ...]] = []

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        await super().upsert_entities(entities)
        record_written([f"w{self.calls['upsert_entities']}"])

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        self.followed.append(required_positions())
        return await super().get_entities(ids, tenant_id)


@pytest.fixture
def positioned(fresh_services: Redstring) -> PositionedGraphStore:
    return PositionedGraphStore(CountingGraphStore(fresh_services.graph))


async def test_a_write_answers_its_bookmark_and_a_read_follows_the_one_sent_back(
    make_client: MakeClient, fresh_services: Redstring, positioned: PositionedGraphStore
) -> None:
    http = make_client(services_with_graph(fresh_services, positioned)).http
    tenant = str(uuid.uuid4())

    written = await http.post("/graphql", json={"query": UPSERT, "variables": {"t": tenant}})
    body = written.json()
    token = written.headers[bookmarks.HEADER]
    assert body["extensions"]["bookmark"] == token
    assert bookmarks.decode(token) == ("w1",)

    [entity_id] = body["data"]["upsertEntities"]["ids"]
    read = {"query": ENTITY, "variables": {"t": tenant, "id": entity_id}}
    positioned.followed.clear()  # the upsert's own read-back (`settle`)
    answer = await http.post("/graphql", json=read, headers={bookmarks.HEADER: token})
    assert answer.json() == {"data": {"entity": {"name": "Quayside Ferries"}}}
    assert bookmarks.HEADER not in answer.headers  # a read leaves no bookmark
    assert positioned.followed == [("w1",)]

    await http.post("/graphql", json=read)
    assert positioned.followed[-1] == ()  # without the header, nothing to follow


@pytest.mark.parametrize(
    "header",
    [
        "w1",  # not a token at all
        "rb1.%%%",  # not base64
        bookmarks.encode(["w1"])[:-3],  # cut short
        "rb1." + "eyJhIjoxfQ",  # JSON, but an object
        "rb1." + "W10",  # an empty list
        "rb1." + "WzFd",  # a list of a number
        "rb1." + "A" * bookmarks.MAX_TOKEN_CHARS,  # too long
    ],
)
async def test_a_malformed_bookmark_is_a_coded_400(
    make_client: MakeClient, fresh_services: Redstring, header: str
) -> None:
    http = make_client(fresh_services).http
    read = {"query": ENTITY, "variables": {"t": str(uuid.uuid4()), "id": str(uuid.uuid4())}}
    answer = await http.post("/graphql", json=read, headers={bookmarks.HEADER: header})
    assert answer.status_code == 400
    [error] = answer.json()["errors"]
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert bookmarks.HEADER in error["message"]


def test_a_token_carries_its_positions_exactly() -> None:
    positions = ("FB:kcwQ1rWt+kZ1", "FB:x/y=", "é")
    assert bookmarks.decode(bookmarks.encode(positions)) == positions
    with pytest.raises(RequestRefusedError):
        bookmarks.decode(bookmarks.encode(["a" * (bookmarks.MAX_POSITION_CHARS + 1)]))


async def test_the_memory_backend_answers_no_bookmark_and_takes_one(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    http = make_client(fresh_services).http
    tenant = str(uuid.uuid4())
    written = await http.post("/graphql", json={"query": UPSERT, "variables": {"t": tenant}})
    assert bookmarks.HEADER not in written.headers
    assert "extensions" not in written.json()
    [entity_id] = written.json()["data"]["upsertEntities"]["ids"]
    read = {"query": ENTITY, "variables": {"t": tenant, "id": entity_id}}
    token = bookmarks.encode(["from-another-replica"])
    answer = await http.post("/graphql", json=read, headers={bookmarks.HEADER: token})
    assert answer.json() == {"data": {"entity": {"name": "Quayside Ferries"}}}
