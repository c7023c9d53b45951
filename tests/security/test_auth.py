"""Authentication and tenant grants, through `create_app` over ASGI: API keys, HS256 and
RS256 tokens, every refusal a 401 `UNAUTHENTICATED` or a `FORBIDDEN` with no data of the
tenant refused, and the routes that need no credentials."""

from __future__ import annotations

import http.server
import json
import logging
import math
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from redstring.api import create_app
from redstring.api.api_keys import add_key, key_digest
from redstring.api.authentication import REFUSED_MESSAGE
from redstring.api.authorization import Role
from redstring.api.cli import main
from redstring.api.schema.build import build_schema
from redstring.api.settings import AuthMode, Settings
from redstring.api.startup import check_settings
from redstring.composition.client import Redstring
from redstring.domain.errors import InvalidInputError
from redstring.domain.ids import TenantId
from tests.api.support import memory_services
from tests.security.waiting import without_waiting_on
from tests.unit.test_id_arguments import LOOKALIKES

TENANT_A = TenantId(uuid.UUID("0a000000-0000-4000-8000-00000000000a"))
TENANT_B = TenantId(uuid.UUID("0b000000-0000-4000-8000-00000000000b"))
A, B = str(TENANT_A), str(TENANT_B)
A_NAME, B_NAME = "Quayside Ferries", "Brackwater Mills"
SECRET = "a-test-secret-of-more-than-32-bytes-for-hs256"
ISSUER, AUDIENCE = "https://issuer.test", "redstring-tests"

RETRIEVE = """query ($t: ID!, $q: String!) {
  retrieve(query: $q, tenantId: $t, k: 5) { matches { entity { id name } } }
}"""
ENTITY = "query ($t: ID!, $id: ID!) { entity(tenantId: $t, id: $id) { id name } }"
ENTITY_TYPES = "query ($t: ID!) { entityTypes(tenantId: $t) { entityType count } }"
UPSERT = """mutation ($t: ID!, $name: String!) {
  upsertEntities(tenantId: $t, entities: [{name: $name, entityType: "company"}]) { count ids }
}"""
DELETE = "mutation ($t: ID!, $ids: [ID!]!) { deleteEntities(tenantId: $t, ids: $ids) { count } }"
FEDERATED_ENTITIES = """query ($representations: [_Any!]!) {
  _entities(representations: $representations) { ... on Entity { id name } }
}"""


# --- set-up: two tenants with one entity each, and clients over the app ---------------------


@dataclass
class Seeded:
    services: Redstring
    a_id: str
    b_id: str


async def _post(
    http: httpx.AsyncClient, query: str, credential: str | None = None, **variables: Any
) -> httpx.Response:
    headers = {} if credential is None else {"Authorization": f"Bearer {credential}"}
    return await http.post(
        "/graphql", json={"query": query, "variables": variables}, headers=headers
    )


@pytest.fixture
async def seeded() -> Seeded:
    """Fresh services holding `A_NAME` in tenant A and `B_NAME` in tenant B, written
    through an app without authentication."""
    services = memory_services()
    async with _http(services, Settings()) as http:
        ids = []
        for tenant, name in ((A, A_NAME), (B, B_NAME)):
            body = (await _post(http, UPSERT, t=tenant, name=name)).json()
            ids.append(body["data"]["upsertEntities"]["ids"][0])
    return Seeded(services, *ids)


def _http(services: Redstring, settings: Settings) -> httpx.AsyncClient:
    app = create_app(settings, services=services)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    return tmp_path / "keys.json"


@dataclass
class Keys:
    """A running app in `apikey` mode and the keys issued for it."""

    http: httpx.AsyncClient
    file: Path
    write_a: str
    read_a: str
    write_a_id: str


@pytest.fixture
async def keys(seeded: Seeded, key_file: Path) -> AsyncIterator[Keys]:
    write_a = add_key(key_file, [TENANT_A], Role.WRITE, "writer")
    read_a = add_key(key_file, [TENANT_A], Role.READ, "reader")
    settings = Settings(auth=AuthMode.APIKEY, api_keys_file=key_file)
    async with _http(seeded.services, settings) as http:
        yield Keys(http, key_file, write_a.key, read_a.key, write_a.record.id)


def _hs256(claims: dict[str, Any], secret: str = SECRET, **headers: Any) -> str:
    return jwt.encode(claims, secret, algorithm="HS256", headers=headers or None)


def _claims(**overrides: Any) -> dict[str, Any]:
    claims: dict[str, Any] = {
        "sub": "someone",
        "iss": ISSUER,
        "aud": AUDIENCE,
        # A day: the parametrised tokens are made when the tests are collected, and a
        # suite on a busy machine reached them more than ten minutes later.
        "exp": int(time.time()) + 86_400,
        "tenants": [A],
        "role": "write",
    }
    claims.update(overrides)
    return {name: value for name, value in claims.items() if value is not None}


JWT_SETTINGS = Settings(
    auth=AuthMode.JWT, jwt_secret=SECRET, jwt_issuer=ISSUER, jwt_audience=AUDIENCE
)


@pytest.fixture
async def tokens(seeded: Seeded) -> AsyncIterator[httpx.AsyncClient]:
    """A running app in `jwt` mode with an HS256 secret, an issuer and an audience."""
    async with _http(seeded.services, JWT_SETTINGS) as http:
        yield http


# --- 401: missing or bad credentials ----------------------------------------------------------


def _assert_unauthenticated(response: httpx.Response, message: str = REFUSED_MESSAGE) -> None:
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json() == {
        "errors": [{"message": message, "extensions": {"code": "UNAUTHENTICATED"}}]
    }


def _refusal_reasons(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.INFO and r.getMessage().startswith("credentials refused")
    ]


async def test_no_credentials_is_401_and_says_how_to_authenticate(keys: Keys) -> None:
    for headers in ({}, {"Authorization": "Basic dXNlcjpwYXNz"}, {"Authorization": "Bearer "}):
        response = await keys.http.post(
            "/graphql", json={"query": "{ __typename }"}, headers=headers
        )
        _assert_unauthenticated(
            response, "credentials required: send Authorization: Bearer <credential>"
        )
        assert response.headers["www-authenticate"] == "Bearer"


async def test_the_bearer_scheme_is_read_in_any_case(keys: Keys) -> None:
    for scheme in ("Bearer", "bearer", "BEARER"):
        response = await keys.http.post(
            "/graphql",
            json={"query": RETRIEVE, "variables": {"t": A, "q": A_NAME}},
            headers={"Authorization": f"{scheme} {keys.read_a}"},
        )
        assert response.status_code == 200, scheme
        assert A_NAME in response.text


@pytest.mark.parametrize(
    ("credential", "reason"),
    [
        ("garbage", "not an API key"),
        ("rs_000000000000_" + "x" * 43, "unknown or revoked"),
    ],
    ids=["garbage", "unknown key id"],
)
async def test_a_bad_api_key_is_401_with_the_reason_logged(
    keys: Keys, credential: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="redstring.api")
    response = await _post(keys.http, RETRIEVE, credential, t=A, q=A_NAME)
    _assert_unauthenticated(response)
    assert response.headers["www-authenticate"] == 'Bearer error="invalid_token"'
    [logged] = _refusal_reasons(caplog)
    assert reason.lower() in logged.lower()
    assert credential not in logged


async def test_a_known_key_id_with_a_wrong_secret_is_401(
    keys: Keys, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="redstring.api")
    prefix, key_id, secret = keys.write_a.split("_", 2)
    forged = f"{prefix}_{key_id}_{secret[::-1]}"
    assert forged != keys.write_a
    _assert_unauthenticated(await _post(keys.http, RETRIEVE, forged, t=A, q=A_NAME))
    assert any("wrong secret" in reason for reason in _refusal_reasons(caplog))


async def test_a_key_revoked_with_the_cli_stops_working_on_the_running_app(
    keys: Keys, capsys: pytest.CaptureFixture[str]
) -> None:
    before = await _post(keys.http, RETRIEVE, keys.write_a, t=A, q=A_NAME)
    assert before.status_code == 200
    assert A_NAME in before.text
    assert main(["keys", "revoke", keys.write_a_id, "--file", str(keys.file)]) == 0
    _assert_unauthenticated(await _post(keys.http, RETRIEVE, keys.write_a, t=A, q=A_NAME))
    still = await _post(keys.http, RETRIEVE, keys.read_a, t=A, q=A_NAME)
    assert still.status_code == 200
    assert A_NAME in still.text


def _edit_in_place_keeping_size_and_mtime(path: Path, old: str, new: str) -> None:
    """Overwrite `old` by `new` (as long) in the file itself, and set its modification time
    back: an edit within one coarse timestamp tick. Only its change time (ctime) moves."""
    before = os.stat(path)
    text = path.read_text(encoding="utf-8")
    assert len(old) == len(new)
    assert old in text
    with path.open("r+", encoding="utf-8") as file:
        file.write(text.replace(old, new))
    for _ in range(500):  # the ctime moves by clock ticks: wait for the next one
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = os.stat(path)
        if after.st_ctime_ns != before.st_ctime_ns:
            break
        time.sleep(0.01)
    assert (after.st_ino, after.st_size, after.st_mtime_ns, after.st_mode) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
        before.st_mode,
    )
    assert after.st_ctime_ns != before.st_ctime_ns


async def test_a_key_file_edited_in_place_within_one_tick_is_read_again(keys: Keys) -> None:
    assert (await _post(keys.http, RETRIEVE, keys.write_a, t=A, q=A_NAME)).status_code == 200
    _edit_in_place_keeping_size_and_mtime(keys.file, key_digest(keys.write_a), "0" * 64)
    _assert_unauthenticated(await _post(keys.http, RETRIEVE, keys.write_a, t=A, q=A_NAME))
    assert (await _post(keys.http, RETRIEVE, keys.read_a, t=A, q=A_NAME)).status_code == 200


async def test_a_key_file_that_disappears_refuses_every_key(keys: Keys) -> None:
    keys.file.unlink()
    _assert_unauthenticated(await _post(keys.http, RETRIEVE, keys.read_a, t=A, q=A_NAME))


async def test_a_key_file_others_can_read_is_served_and_warned_about(
    seeded: Seeded, key_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`0640` serves its keys, with a warning when the server owns the file (it does not
    need its group's read; a server in the file's group does, `_exposure`)."""
    issued = add_key(key_file, [TENANT_A], Role.READ)
    os.chmod(key_file, 0o640)
    caplog.set_level(logging.WARNING, logger="redstring.api")
    settings = Settings(auth=AuthMode.APIKEY, api_keys_file=key_file)
    async with _http(seeded.services, settings) as http:
        response = await _post(http, RETRIEVE, issued.key, t=A, q=A_NAME)
    assert response.status_code == 200
    assert A_NAME in response.text
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "API key file" in r.getMessage()
    ]
    assert warnings == [
        f"the API key file {key_file} is readable by its group, which this server, its owner, "
        "does not need; chmod g-r it"
    ]


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        (_hs256(_claims(exp=int(time.time()) - 60)), "expired"),
        (_hs256(_claims(exp=None)), '"exp"'),
        (_hs256(_claims(aud="another-service")), "audience"),
        (_hs256(_claims(aud=None)), '"aud"'),
        (_hs256(_claims(iss="https://elsewhere.test")), "issuer"),
        (_hs256(_claims(), secret="another-secret-of-more-than-32-bytes-long"), "Signature"),
        (jwt.encode(_claims(), None, algorithm="none"), "alg"),
        (_hs256(_claims(tenants=None)), "'tenants'"),
        (_hs256(_claims(tenants=A)), "'tenants'"),
        (_hs256(_claims(tenants=[])), "'tenants'"),
        (_hs256(_claims(tenants=["not-a-uuid"])), "non-UUID"),
        (_hs256(_claims(role=None)), "'role'"),
        (_hs256(_claims(role="admin")), "'role'"),
        (_hs256(_claims(role=["write"])), "'role'"),
        (_hs256(_claims(role={"write": True})), "'role'"),
        # A day ahead: made at collection, the tokens may be read many minutes later.
        (_hs256(_claims(iat=int(time.time()) + 86_400)), "ahead of this server's clock (iat)"),
        (_hs256(_claims(nbf=int(time.time()) + 86_400)), "ahead of this server's clock (nbf)"),
        (_hs256(_claims(exp=str(int(time.time()) + 86_400))), "exp must be a number"),
        (_hs256(_claims(iat="yesterday")), "iat must be a number"),
        (_hs256(_claims(iat=True)), "iat must be a number"),
        # NaN compares false with every time, so `nbf` of NaN was never ahead.
        (_hs256(_claims(nbf=math.nan)), "nbf must be a number"),
        (_hs256(_claims(iat=math.nan)), "iat must be a number"),
        (_hs256(_claims(nbf=-math.inf)), "nbf must be a number"),
        (_hs256(_claims(iat=math.inf)), "iat must be a number"),
        (_hs256(_claims(nbf=10**400)), "ahead of this server's clock (nbf)"),
        ("not.a.token", "token"),
    ],
    ids=[
        "expired",
        "no expiry",
        "wrong audience",
        "no audience",
        "wrong issuer",
        "wrong signature",
        "alg none",
        "no tenants",
        "tenants not a list",
        "no tenant listed",
        "tenant not a UUID",
        "no role",
        "unknown role",
        "role a list",
        "role an object",
        "issued a day ahead",
        "valid a day ahead",
        "expiry a string",
        "issued a string",
        "issued true",
        "valid from NaN",
        "issued NaN",
        "valid from minus infinity",
        "issued at infinity",
        "valid from a 401-digit time",
        "garbage",
    ],
)
async def test_a_bad_token_is_401_with_the_reason_logged(
    tokens: httpx.AsyncClient, token: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="redstring.api")
    _assert_unauthenticated(await _post(tokens, RETRIEVE, token, t=A, q=A_NAME))
    [logged] = _refusal_reasons(caplog)
    assert reason.lower() in logged.lower()


@pytest.mark.parametrize("lookalike", ["\uff10" + A[1:], "\u0660" + A[1:], *LOOKALIKES])
async def test_a_tenants_claim_of_a_string_only_int_reads_as_hex_is_401(
    tokens: httpx.AsyncClient, lookalike: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A claim's tenant is read by the rule of a `tenantId` argument: `\uff10` (a fullwidth
    zero) and the rest of A's string granted A."""
    caplog.set_level(logging.INFO, logger="redstring.api")
    token = _hs256(_claims(tenants=[lookalike]))
    _assert_unauthenticated(await _post(tokens, RETRIEVE, token, t=A, q=A_NAME))
    [logged] = _refusal_reasons(caplog)
    assert "non-UUID" in logged


@pytest.mark.parametrize("second", ["Bearer not-a-token", None])
async def test_two_authorization_headers_are_400(
    tokens: httpx.AsyncClient, second: str | None
) -> None:
    """A proxy in front may check the second where the server read the first: which one
    is the caller's is not guessed (the good one first here; the same twice too)."""
    good = f"Bearer {_hs256(_claims())}"
    headers = [("content-type", "application/json"), ("authorization", good)]
    headers.append(("authorization", second or good))
    body = {"query": RETRIEVE, "variables": {"t": A, "q": A_NAME}}
    response = await tokens.post("/graphql", json=body, headers=headers)
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert error["message"] == "The request has 2 Authorization headers; send one"
    assert A_NAME not in response.text


async def test_a_good_token_reads_its_tenant(tokens: httpx.AsyncClient) -> None:
    response = await _post(tokens, RETRIEVE, _hs256(_claims()), t=A, q=A_NAME)
    assert response.status_code == 200
    assert "errors" not in response.json()
    assert A_NAME in response.text


async def test_a_token_from_an_issuer_whose_clock_runs_ahead_is_taken(
    tokens: httpx.AsyncClient,
) -> None:
    """Issued, and valid from, half a minute in this server's future: the issuer's clock
    runs ahead (`CLOCK_SKEW_SECONDS`)."""
    ahead = int(time.time()) + 30
    response = await _post(tokens, RETRIEVE, _hs256(_claims(iat=ahead, nbf=ahead)), t=A, q=A_NAME)
    assert response.status_code == 200
    assert A_NAME in response.text


def _access_callers(caplog: pytest.LogCaptureFixture) -> list[str | None]:
    return [getattr(r, "caller", None) for r in caplog.records if r.name == "redstring.api.access"]


async def test_the_access_line_names_the_caller_the_credentials_name(
    tokens: httpx.AsyncClient, keys: Keys, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="redstring.api.access")
    await _post(tokens, RETRIEVE, _hs256(_claims(sub="loader\n1")), t=A, q=A_NAME)
    await _post(tokens, RETRIEVE, _hs256(_claims(sub=None)), t=A, q=A_NAME)
    await _post(keys.http, RETRIEVE, keys.write_a, t=A, q=A_NAME)
    await _post(keys.http, RETRIEVE, "rk_unknown", t=A, q=A_NAME)  # refused: no caller
    # A long one: its first 128 characters, escaped whole.
    await _post(tokens, RETRIEVE, _hs256(_claims(sub="x" * 127 + "é" * 10)), t=A, q=A_NAME)
    assert _access_callers(caplog) == [
        "loader\\n1",
        None,
        f"key {keys.write_a_id}",
        None,
        "x" * 127 + "\\xe9",
    ]


# --- FORBIDDEN: a tenant not granted, a read role writing -------------------------------------


def _assert_forbidden_without_b(response: httpx.Response, seeded: Seeded) -> None:
    assert response.status_code == 200
    body = response.json()
    assert [e["extensions"]["code"] for e in body["errors"]] == ["FORBIDDEN"]
    assert B_NAME not in response.text
    assert seeded.b_id not in response.text


async def _b_is_intact(seeded: Seeded) -> None:
    async with _http(seeded.services, Settings()) as http:
        body = (await _post(http, ENTITY, t=B, id=seeded.b_id)).json()
        assert body["data"]["entity"]["name"] == B_NAME
        listed = (await _post(http, RETRIEVE, t=B, q="Intruder")).json()
        assert "Intruder" not in json.dumps(listed)


def _granted_a(mode: str, role: Role, key_file: Path) -> tuple[Settings, str]:
    """Settings of `mode` and the credential of a `role` caller granted tenant A only."""
    if mode == "apikey":
        issued = add_key(key_file, [TENANT_A], role)
        return Settings(auth=AuthMode.APIKEY, api_keys_file=key_file), issued.key
    return JWT_SETTINGS, _hs256(_claims(role=role.value))


@pytest.fixture(params=["apikey", "jwt"])
async def a_writer(
    request: pytest.FixtureRequest, seeded: Seeded, key_file: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """A client and the credential of a `write` caller granted tenant A only, per mode."""
    settings, credential = _granted_a(request.param, Role.WRITE, key_file)
    async with _http(seeded.services, settings) as http:
        yield http, credential


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        (RETRIEVE, {"t": B, "q": B_NAME}),
        (ENTITY, {"t": B, "id": "B_ID"}),
        (ENTITY_TYPES, {"t": B}),
        (UPSERT, {"t": B, "name": "Intruder"}),
        (DELETE, {"t": B, "ids": ["B_ID"]}),
    ],
    ids=["retrieve", "entity", "entity-types", "upsert", "delete"],
)
async def test_tenant_a_asking_for_b_is_forbidden_and_sees_nothing_of_b(
    a_writer: tuple[httpx.AsyncClient, str],
    seeded: Seeded,
    query: str,
    variables: dict[str, Any],
) -> None:
    http, credential = a_writer
    filled = {k: seeded.b_id if v == "B_ID" else v for k, v in variables.items()}
    filled = {k: [seeded.b_id] if v == ["B_ID"] else v for k, v in filled.items()}
    response = await _post(http, query, credential, **filled)
    _assert_forbidden_without_b(response, seeded)
    assert not any((response.json()["data"] or {}).values())  # nor B's types and counts
    await _b_is_intact(seeded)


async def test_one_request_for_a_and_b_answers_a_and_refuses_b(
    a_writer: tuple[httpx.AsyncClient, str], seeded: Seeded
) -> None:
    http, credential = a_writer
    query = """query ($a: ID!, $b: ID!, $q: String!) {
      mine: retrieve(query: $q, tenantId: $a, k: 5) { matches { entity { name } } }
      theirs: retrieve(query: $q, tenantId: $b, k: 5) { matches { entity { name } } }
    }"""
    response = await _post(http, query, credential, a=A, b=B, q="Mills Ferries")
    body = response.json()
    assert body["data"] is None or body["data"].get("theirs") is None
    assert [e["extensions"]["code"] for e in body["errors"]] == ["FORBIDDEN"]
    assert body["errors"][0]["path"] == ["theirs"]
    assert B_NAME not in response.text


async def test_federated_entities_obey_the_same_grants(seeded: Seeded, key_file: Path) -> None:
    issued = add_key(key_file, [TENANT_A], Role.READ)
    settings = Settings(auth=AuthMode.APIKEY, api_keys_file=key_file, federation=True)
    representations = [
        {"__typename": "Entity", "tenantId": A, "id": seeded.a_id},
        {"__typename": "Entity", "tenantId": B, "id": seeded.b_id},
    ]
    async with _http(seeded.services, settings) as http:
        response = await _post(
            http, FEDERATED_ENTITIES, issued.key, representations=representations
        )
        _assert_forbidden_without_b(response, seeded)
        assert response.json()["data"]["_entities"] == [{"id": seeded.a_id, "name": A_NAME}, None]
        _assert_unauthenticated(
            await _post(http, FEDERATED_ENTITIES, None, representations=representations),
            "credentials required: send Authorization: Bearer <credential>",
        )


# Every mutation of the schema, with arguments that would write or delete in tenant A.
MUTATIONS = {
    "upsertEntities": UPSERT,
    "upsertRelationships": """mutation ($t: ID!, $s: ID!) {
      upsertRelationships(tenantId: $t, relationships: [
        {sourceId: $s, targetId: $s, relationshipType: "KNOWS"}]) { count }
    }""",
    "deleteEntities": DELETE,
}


def test_the_read_role_table_covers_every_mutation() -> None:
    types = build_schema().introspect()["__schema"]["types"]
    [mutation] = [t for t in types if t["name"] == "Mutation"]
    assert {field["name"] for field in mutation["fields"]} == set(MUTATIONS)


@pytest.fixture(params=["apikey", "jwt"])
async def a_reader(
    request: pytest.FixtureRequest, seeded: Seeded, key_file: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """A client and the credential of a `read` caller granted tenant A, per mode."""
    settings, credential = _granted_a(request.param, Role.READ, key_file)
    async with _http(seeded.services, settings) as http:
        yield http, credential


@pytest.mark.parametrize("name", sorted(MUTATIONS))
async def test_a_read_role_mutating_its_own_tenant_is_forbidden_and_writes_nothing(
    a_reader: tuple[httpx.AsyncClient, str], seeded: Seeded, name: str
) -> None:
    http, credential = a_reader
    variables = {"t": A, "name": "Written Anyway", "ids": [seeded.a_id], "s": seeded.a_id}
    used = {k: v for k, v in variables.items() if f"${k}" in MUTATIONS[name]}
    response = await _post(http, MUTATIONS[name], credential, **used)
    body = response.json()
    assert [e["extensions"]["code"] for e in body["errors"]] == ["FORBIDDEN"]
    assert body["data"] is None
    readable = await _post(http, ENTITY, credential, t=A, id=seeded.a_id)
    assert readable.json()["data"]["entity"] == {"id": seeded.a_id, "name": A_NAME}
    found = await _post(http, RETRIEVE, credential, t=A, q="Written Anyway")
    assert "Written Anyway" not in found.text
    relationships = await _post(
        http,
        "query ($t: ID!, $id: ID!) { entity(tenantId: $t, id: $id) { relationships { id } } }",
        credential,
        t=A,
        id=seeded.a_id,
    )
    assert relationships.json()["data"]["entity"]["relationships"] == []


async def test_a_reader_lists_the_types_of_its_tenant_alone(
    a_reader: tuple[httpx.AsyncClient, str], seeded: Seeded
) -> None:
    """A and B each hold one `company`: A's reader counts one, and B's is refused in
    the same request, as `retrieve` is."""
    http, credential = a_reader
    query = """query ($a: ID!, $b: ID!) {
      mine: entityTypes(tenantId: $a) { entityType count }
      theirs: entityTypes(tenantId: $b) { entityType count }
    }"""
    body = (await _post(http, query, credential, a=A, b=B)).json()
    assert body["data"] is None  # a non-null field failed: the whole data is null
    assert [(e["extensions"]["code"], e["path"]) for e in body["errors"]] == [
        ("FORBIDDEN", ["theirs"])
    ]
    mine = (await _post(http, ENTITY_TYPES, credential, t=A)).json()
    assert mine == {"data": {"entityTypes": [{"entityType": "company", "count": 1}]}}


async def test_a_write_role_writes_and_deletes_in_its_own_tenant(
    a_writer: tuple[httpx.AsyncClient, str],
) -> None:
    http, credential = a_writer
    upserted = (await _post(http, UPSERT, credential, t=A, name="Newly Written")).json()
    assert "errors" not in upserted
    [new_id] = upserted["data"]["upsertEntities"]["ids"]
    found = await _post(http, ENTITY, credential, t=A, id=new_id)
    assert found.json()["data"]["entity"]["name"] == "Newly Written"
    deleted = (await _post(http, DELETE, credential, t=A, ids=[new_id])).json()
    assert deleted == {"data": {"deleteEntities": {"count": 1}}}


# --- RS256 through a JWKS file ----------------------------------------------------------------


@dataclass(frozen=True)
class RsaKeys:
    private_pem: bytes
    public_pem: bytes
    other_private_pem: bytes
    other_jwk: dict[str, Any]
    jwks: Path


@pytest.fixture(scope="module")
def rsa_keys(tmp_path_factory: pytest.TempPathFactory) -> RsaKeys:
    def private_key() -> rsa.RSAPrivateKey:
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)

    key, other = private_key(), private_key()
    jwk = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    jwks = tmp_path_factory.mktemp("jwks") / "jwks.json"
    jwks.write_text(json.dumps({"keys": [{**jwk, "kid": "k1", "use": "sig"}]}), encoding="utf-8")

    def pem(k: rsa.RSAPrivateKey) -> bytes:
        return k.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    other_jwk = json.loads(RSAAlgorithm.to_jwk(other.public_key()))
    return RsaKeys(pem(key), public, pem(other), other_jwk, jwks)


@pytest.fixture
async def rs256(seeded: Seeded, rsa_keys: RsaKeys) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(auth=AuthMode.JWT, jwt_jwks=str(rsa_keys.jwks), jwt_audience=AUDIENCE)
    async with _http(seeded.services, settings) as http:
        yield http


async def test_an_rs256_token_checked_against_a_jwks_file_reads_its_tenant(
    rs256: httpx.AsyncClient, rsa_keys: RsaKeys, seeded: Seeded
) -> None:
    token = jwt.encode(_claims(), rsa_keys.private_pem, algorithm="RS256", headers={"kid": "k1"})
    response = await _post(rs256, RETRIEVE, token, t=A, q=A_NAME)
    assert response.status_code == 200
    assert A_NAME in response.text
    _assert_forbidden_without_b(await _post(rs256, RETRIEVE, token, t=B, q=B_NAME), seeded)


@pytest.mark.parametrize("kind", ["other key", "unknown kid", "HS256 with the public key"])
async def test_an_rs256_token_not_signed_by_the_jwks_key_is_401(
    rs256: httpx.AsyncClient, rsa_keys: RsaKeys, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="redstring.api")
    if kind == "other key":
        token = jwt.encode(_claims(), rsa_keys.other_private_pem, "RS256", headers={"kid": "k1"})
        reason = "Signature verification failed"
    elif kind == "unknown kid":
        token = jwt.encode(_claims(), rsa_keys.private_pem, "RS256", headers={"kid": "k2"})
        reason = "kid 'k2'"
    else:
        # The classic confusion: the public key used as an HMAC secret. PyJWT refuses to
        # sign with a PEM, so the token is assembled by hand.
        token = _hmac_token_signed_with(rsa_keys.public_pem)
        reason = "alg"
    _assert_unauthenticated(await _post(rs256, RETRIEVE, token, t=A, q=A_NAME))
    [logged] = _refusal_reasons(caplog)
    assert reason.lower() in logged.lower()


async def test_a_jwks_file_rotated_on_the_running_app_is_read_again(
    seeded: Seeded, rsa_keys: RsaKeys, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    jwks = tmp_path / "jwks.json"
    jwks.write_bytes(rsa_keys.jwks.read_bytes())
    old = jwt.encode(_claims(), rsa_keys.private_pem, "RS256", headers={"kid": "k1"})
    new = jwt.encode(_claims(), rsa_keys.other_private_pem, "RS256", headers={"kid": "k2"})
    settings = Settings(auth=AuthMode.JWT, jwt_jwks=str(jwks), jwt_audience=AUDIENCE)

    def replace(content: str) -> None:
        staged = tmp_path / "staged.json"
        staged.write_text(content, encoding="utf-8")
        os.replace(staged, jwks)

    async with _http(seeded.services, settings) as http:
        assert (await _post(http, RETRIEVE, old, t=A, q=A_NAME)).status_code == 200
        _assert_unauthenticated(await _post(http, RETRIEVE, new, t=A, q=A_NAME))

        replace(json.dumps({"keys": [{**rsa_keys.other_jwk, "kid": "k2", "use": "sig"}]}))
        assert (await _post(http, RETRIEVE, new, t=A, q=A_NAME)).status_code == 200
        _assert_unauthenticated(await _post(http, RETRIEVE, old, t=A, q=A_NAME))

        # A file that breaks refuses every token until it is fixed.
        caplog.set_level(logging.ERROR, logger="redstring.api")
        replace('{"keys": "nope"}')
        _assert_unauthenticated(await _post(http, RETRIEVE, new, t=A, q=A_NAME))
        assert any("JWKS file is fixed" in r.getMessage() for r in caplog.records)
        jwks.unlink()
        _assert_unauthenticated(await _post(http, RETRIEVE, new, t=A, q=A_NAME))
        replace(json.dumps({"keys": [{**rsa_keys.other_jwk, "kid": "k2", "use": "sig"}]}))
        assert (await _post(http, RETRIEVE, new, t=A, q=A_NAME)).status_code == 200


def _hmac_token_signed_with(secret: bytes) -> str:
    import base64
    import hashlib
    import hmac

    def part(value: bytes) -> str:
        return base64.urlsafe_b64encode(value).rstrip(b"=").decode()

    header = part(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "k1"}).encode())
    payload = part(json.dumps(_claims()).encode())
    signature = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{part(signature)}"


# --- what needs no credentials ----------------------------------------------------------------


@pytest.fixture(params=["apikey", "jwt"])
def locked_settings(request: pytest.FixtureRequest, key_file: Path) -> Settings:
    if request.param == "apikey":
        add_key(key_file, [TENANT_A], Role.READ)
        return Settings(auth=AuthMode.APIKEY, api_keys_file=key_file)
    return JWT_SETTINGS


async def test_health_readiness_and_the_graphiql_page_need_no_credentials(
    seeded: Seeded, locked_settings: Settings
) -> None:
    async with _http(seeded.services, locked_settings) as http:
        health = await http.get("/healthz")
        assert health.status_code == 200
        assert health.json() == {"status": "ok", "auth": locked_settings.auth.value}
        assert (await http.get("/readyz")).status_code == 200
        page = await http.get("/graphql", headers={"accept": "text/html"})
        assert page.status_code == 200
        assert "graphiql" in page.text.lower()
        # A method /graphql never serves is refused as such, credentials or not.
        for method in ("PUT", "DELETE", "PATCH", "OPTIONS"):
            refused = await http.request(method, "/graphql")
            assert refused.status_code == 405, method
            assert "www-authenticate" not in refused.headers
        # A query over GET is an operation: it needs credentials, over HEAD too.
        _assert_unauthenticated(
            await http.get("/graphql", params={"query": "{ __typename }"}),
            "credentials required: send Authorization: Bearer <credential>",
        )
        head = await http.head("/graphql", params={"query": "{ __typename }"})
        assert head.status_code == 401
        assert head.headers["www-authenticate"].startswith("Bearer")


# --- `none`, and settings refused at start ----------------------------------------------------


async def test_none_is_warned_about_at_start_and_reported_by_healthz(
    seeded: Seeded, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(Settings(), services=seeded.services)
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http,
    ):
        assert (await http.get("/healthz")).json() == {"status": "ok", "auth": "none"}
        anyone = await _post(http, ENTITY, "garbage", t=B, id=seeded.b_id)
        assert anyone.json()["data"]["entity"]["name"] == B_NAME
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [w for w in warnings if "every caller may read and write every tenant" in w]


async def test_a_locked_server_does_not_warn_about_none(
    seeded: Seeded, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(JWT_SETTINGS, services=seeded.services)
    async with app.router.lifespan_context(app):
        pass
    assert not [r for r in caplog.records if "every caller" in r.getMessage()]


def _write_jwks_without_rsa(path: Path) -> Path:
    path.write_text(json.dumps({"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "x"}]}))
    return path


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"auth": "apikey"}, "needs REDSTRING_API_KEYS_FILE"),
        ({"auth": "apikey", "api_keys_file": "missing.json"}, "cannot read the API key file"),
        ({"auth": "apikey", "api_keys_file": "not-keys.json"}, "is not an API key file"),
        ({"auth": "jwt"}, "exactly one of"),
        ({"auth": "jwt", "jwt_secret": SECRET, "jwt_jwks": "jwks.json"}, "exactly one of"),
        ({"auth": "jwt", "jwt_secret": "short"}, "at least 32 bytes"),
        ({"auth": "jwt", "jwt_jwks": "missing.json"}, "cannot read the JWKS file"),
        ({"auth": "jwt", "jwt_jwks": "not-keys.json"}, "not a JWKS"),
        ({"auth": "jwt", "jwt_jwks": "oct.json"}, "no RSA key"),
        ({"auth": "jwt", "jwt_jwks": "ftp://keys.test/jwks"}, "http(s) URL"),
    ],
)
def test_settings_that_cannot_be_honoured_are_refused_at_start(
    tmp_path: Path, overrides: dict[str, str], message: str
) -> None:
    (tmp_path / "not-keys.json").write_text('{"keys": "nope"}')
    _write_jwks_without_rsa(tmp_path / "oct.json")
    resolved = {
        k: (str(tmp_path / v) if k in ("api_keys_file", "jwt_jwks") and "://" not in v else v)
        for k, v in overrides.items()
    }
    settings = Settings(**resolved)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_settings(settings)
    with pytest.raises(InvalidInputError):
        create_app(settings, services=memory_services())


@pytest.mark.parametrize(
    ("jwks", "message"),
    [
        (
            "https://user:s3cretpw@127.0.0.1/jwks.json?token=t0ken",
            "REDSTRING_JWT_JWKS must be a URL without a user or password (a JWKS is public "
            "keys, fetched without credentials): https://127.0.0.1/jwks.json",
        ),
        (
            "ftp://user:s3cretpw@127.0.0.1/jwks.json?token=t0ken",
            "REDSTRING_JWT_JWKS must be a file or an http(s) URL: ftp://127.0.0.1/jwks.json",
        ),
    ],
)
def test_a_jwks_url_is_refused_without_quoting_its_password_or_query(
    jwks: str, message: str
) -> None:
    """The JWKS is fetched without credentials (a user in the URL made it unreachable), and
    the message refusing a URL quotes it without what may be secret in it."""
    settings = Settings(auth=AuthMode.JWT, jwt_jwks=jwks)
    with pytest.raises(InvalidInputError) as refused:
        check_settings(settings)
    assert str(refused.value) == message


def test_a_jwks_file_that_is_not_a_regular_file_is_refused_without_waiting(
    tmp_path: Path,
) -> None:
    """A FIFO at the JWKS file's path: reading it would wait for a writer, at start and in
    the request after each change of its `stat`."""
    fifo = tmp_path / "jwks.json"
    os.mkfifo(fifo)
    settings = Settings(auth=AuthMode.JWT, jwt_jwks=str(fifo), jwt_audience=AUDIENCE)
    with pytest.raises(InvalidInputError) as refused:
        without_waiting_on(fifo, lambda: check_settings(settings))
    assert str(refused.value) == f"{fifo} is not a JWKS: not a regular file"


# --- RS256 through a JWKS URL (a loopback server) ---------------------------------------------


class _JwksServer:
    """Serves one JWKS document on a loopback port and counts the fetches."""

    def __init__(self, document: bytes) -> None:
        fetches = self.fetches = [0]

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fetches[0] += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(document)))
                self.end_headers()
                self.wfile.write(document)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks.json"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        if not self.thread.is_alive():
            return
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


async def test_an_rs256_token_checked_against_a_jwks_url_fetches_the_keys_once(
    seeded: Seeded, rsa_keys: RsaKeys
) -> None:
    jwks = _JwksServer(rsa_keys.jwks.read_bytes())
    settings = Settings(auth=AuthMode.JWT, jwt_jwks=jwks.url, jwt_audience=AUDIENCE)
    token = jwt.encode(_claims(), rsa_keys.private_pem, "RS256", headers={"kid": "k1"})
    unknown = jwt.encode(_claims(), rsa_keys.private_pem, "RS256", headers={"kid": "k9"})
    try:
        async with _http(seeded.services, settings) as http:
            for _ in range(3):
                response = await _post(http, RETRIEVE, token, t=A, q=A_NAME)
                assert response.status_code == 200
                assert A_NAME in response.text
            # An unknown kid is refused without a fetch per request (PyJWKClient's cooldown).
            for _ in range(3):
                _assert_unauthenticated(await _post(http, RETRIEVE, unknown, t=A, q=A_NAME))
            assert jwks.fetches == [1]
            jwks.stop()
            # The cached keys keep working while the JWKS server is down ...
            assert (await _post(http, RETRIEVE, token, t=A, q=A_NAME)).status_code == 200
        # ... and a server that has none answers 503, not 401: not the caller's fault.
        async with _http(seeded.services, settings) as http:
            response = await _post(http, RETRIEVE, token, t=A, q=A_NAME)
            assert response.status_code == 503
            assert response.headers["retry-after"] == "5"
            [error] = response.json()["errors"]
            assert error["extensions"] == {"code": "SERVICE_UNAVAILABLE"}
            assert "127.0.0.1" not in error["message"]
    finally:
        jwks.stop()
