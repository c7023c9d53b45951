"""Bookmarks through the API: a write's positions answered, sent back, read after.

The graph store double stands for a replicating store: it reports a position per
upsert (`record_written`) and notes which positions each read was asked to follow
(`required_positions`), as the Neo4j adapter does with its bookmarks. The apps seal
bookmarks with `SECRET`, as replicas configured alike do.
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from collections.abc import Sequence

import pytest
from pydantic import SecretStr, ValidationError

from redstring import Entity, EntityId, TenantId
from redstring.api import bookmarks
from redstring.api.bookmarks import BookmarkSeal
from redstring.api.errors import RequestRefusedError
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from redstring.ports.consistency import record_written, required_positions
from redstring.testing import CountingGraphStore
from tests.api.conftest import MakeClient
from tests.api.support import services_with_graph

UPSERT = """mutation ($t: ID!) {
  upsertEntities(tenantId: $t, entities: [{name: "Quayside Ferries", entityType: "company"}]) { ids }
}"""
ENTITY = """query ($t: ID!, $id: ID!) { entity(tenantId: $t, id: $id) { name } }"""

SECRET = "a deployment's bookmark secret, 32+"
SEAL = BookmarkSeal(SECRET.encode(), configured=True)
CONFIGURED = Settings(bookmark_secret=SecretStr(SECRET))


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
    http = make_client(services_with_graph(fresh_services, positioned), CONFIGURED).http
    tenant = str(uuid.uuid4())

    written = await http.post("/graphql", json={"query": UPSERT, "variables": {"t": tenant}})
    body = written.json()
    token = written.headers[bookmarks.HEADER]
    assert body["extensions"]["bookmark"] == token
    assert SEAL.decode(token) == ("w1",)
    assert "w1" not in base64.urlsafe_b64decode(token[4:] + "==").decode("latin-1")

    [entity_id] = body["data"]["upsertEntities"]["ids"]
    read = {"query": ENTITY, "variables": {"t": tenant, "id": entity_id}}
    positioned.followed.clear()  # the upsert's own read-back (`settle`)
    answer = await http.post("/graphql", json=read, headers={bookmarks.HEADER: token})
    assert answer.json() == {"data": {"entity": {"name": "Quayside Ferries"}}}
    assert bookmarks.HEADER not in answer.headers  # a read leaves no bookmark
    assert positioned.followed == [("w1",)]

    await http.post("/graphql", json=read)
    assert positioned.followed[-1] == ()  # without the header, nothing to follow


def _unsigned(positions: object) -> str:
    """A token of the earlier, unsigned format: base64url JSON behind `rb1.`."""
    raw = base64.urlsafe_b64encode(json.dumps(positions).encode()).decode().rstrip("=")
    return "rb1." + raw


def _signed_by(seal: BookmarkSeal, raw: bytes) -> str:
    """A sealed token of any content, as only the key's holder can make."""
    return seal._sealed(raw)


def _tampered(token: str) -> str:
    """`token` with one bit of its encrypted positions flipped."""
    raw = bytearray(base64.urlsafe_b64decode(token[4:] + "=="))
    raw[20] ^= 1
    return "rb2." + base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")


FORGED = "FB:kcwQoH431YxlTaq4b1/cuwrrQ8p/////kA=="  # a Neo4j bookmark of a far transaction


@pytest.mark.parametrize(
    ("header", "why"),
    [
        ("w1", "send back the value"),  # not a token at all
        ("rb2.%%%", "send back the value"),  # not base64
        ("rb2." + "QUJD", "send back the value"),  # too short to be signed
        (SEAL.encode(["w1"])[:-4], "not signed with this deployment's"),  # cut short
        (_tampered(SEAL.encode(["w1"])), "not signed with this deployment's"),
        (BookmarkSeal(b"another secret", configured=True).encode(["w1"]), "not signed"),
        (_signed_by(SEAL, b'{"a":1}'), "send back the value"),  # JSON, but an object
        (_signed_by(SEAL, b"[]"), "send back the value"),  # an empty list
        (_signed_by(SEAL, b"[1]"), "send back the value"),  # a list of a number
        ("rb2." + "A" * bookmarks.MAX_TOKEN_CHARS, "send back the value"),  # too long
        (_unsigned([FORGED]), "earlier, unsigned format"),  # what 0.1's API answered
    ],
)
async def test_a_bookmark_this_deployment_did_not_seal_is_a_coded_400(
    make_client: MakeClient,
    fresh_services: Redstring,
    positioned: PositionedGraphStore,
    header: str,
    why: str,
) -> None:
    http = make_client(services_with_graph(fresh_services, positioned), CONFIGURED).http
    read = {"query": ENTITY, "variables": {"t": str(uuid.uuid4()), "id": str(uuid.uuid4())}}
    answer = await http.post("/graphql", json=read, headers={bookmarks.HEADER: header})
    assert answer.status_code == 400
    [error] = answer.json()["errors"]
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert error["message"].startswith(f"The {bookmarks.HEADER} header is not a bookmark: ")
    assert why in error["message"]
    assert positioned.followed == []  # refused before any store read


async def test_without_a_secret_a_bookmark_of_another_server_is_refused_naming_the_setting(
    make_client: MakeClient, fresh_services: Redstring, positioned: PositionedGraphStore
) -> None:
    """Two apps without `REDSTRING_BOOKMARK_SECRET` stand for two replicas (or one
    server before and after a restart): each seals with a key of its own."""
    services = services_with_graph(fresh_services, positioned)
    first, second = make_client(services).http, make_client(services).http
    tenant = str(uuid.uuid4())
    written = await first.post("/graphql", json={"query": UPSERT, "variables": {"t": tenant}})
    token = written.headers[bookmarks.HEADER]
    [entity_id] = written.json()["data"]["upsertEntities"]["ids"]
    read = {"query": ENTITY, "variables": {"t": tenant, "id": entity_id}}

    again = await first.post("/graphql", json=read, headers={bookmarks.HEADER: token})
    assert again.json() == {"data": {"entity": {"name": "Quayside Ferries"}}}
    elsewhere = await second.post("/graphql", json=read, headers={bookmarks.HEADER: token})
    assert elsewhere.status_code == 400
    [error] = elsewhere.json()["errors"]
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert "not made by this server since it started" in error["message"]
    assert bookmarks.SECRET_SETTING in error["message"]


def test_a_token_carries_its_positions_exactly_and_hides_them() -> None:
    positions = ("FB:kcwQ1rWt+kZ1", "FB:x/y=", "é")
    token = SEAL.encode(positions)
    assert SEAL.decode(token) == positions
    assert token == SEAL.encode(positions)  # the header and the body agree
    assert SEAL.encode(["FB:kcwQ1rWt+kZ2"]) != SEAL.encode(["FB:kcwQ1rWt+kZ1"])
    raw = base64.urlsafe_b64decode(token[4:] + "==")
    assert b"kcwQ" not in raw
    assert b"FB:" not in raw
    with pytest.raises(RequestRefusedError):
        SEAL.decode(SEAL.encode(["a" * (bookmarks.MAX_POSITION_CHARS + 1)]))


def test_the_workers_of_one_serve_share_the_key_it_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(bookmarks.WORKERS_KEY, "")  # unset again after the test
    monkeypatch.delenv(bookmarks.WORKERS_KEY)
    bookmarks.hand_to_workers(None)
    one, other = BookmarkSeal.for_server(None), BookmarkSeal.for_server(None)
    assert other.decode(one.encode(["w1"])) == ("w1",)
    assert not one.configured
    alone = BookmarkSeal.for_server(None, environ={})
    with pytest.raises(RequestRefusedError, match=bookmarks.SECRET_SETTING):
        alone.decode(one.encode(["w1"]))
    # A configured secret wins over a handed key, and makes no key of its own.
    monkeypatch.delenv(bookmarks.WORKERS_KEY)
    bookmarks.hand_to_workers(SECRET)
    assert bookmarks.WORKERS_KEY not in os.environ
    assert BookmarkSeal.for_server(SECRET).decode(SEAL.encode(["w1"])) == ("w1",)


def test_a_short_secret_is_refused_as_bad_settings() -> None:
    with pytest.raises(ValidationError, match="at least 32 characters"):
        Settings(bookmark_secret=SecretStr("too short"))


async def test_the_memory_backend_answers_no_bookmark_and_takes_one(
    make_client: MakeClient, fresh_services: Redstring
) -> None:
    http = make_client(fresh_services, CONFIGURED).http
    tenant = str(uuid.uuid4())
    written = await http.post("/graphql", json={"query": UPSERT, "variables": {"t": tenant}})
    assert bookmarks.HEADER not in written.headers
    assert "extensions" not in written.json()
    [entity_id] = written.json()["data"]["upsertEntities"]["ids"]
    read = {"query": ENTITY, "variables": {"t": tenant, "id": entity_id}}
    token = SEAL.encode(["from-another-replica"])
    answer = await http.post("/graphql", json=read, headers={bookmarks.HEADER: token})
    assert answer.json() == {"data": {"entity": {"name": "Quayside Ferries"}}}
