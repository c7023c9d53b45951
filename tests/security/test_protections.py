"""What every response carries (`SecurityHeaders`), and whom a server without
authentication on a loopback address answers (`LoopbackHostsOnly`): DNS rebinding."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import uvicorn

from redstring.api import create_app, server
from redstring.api.api_keys import add_key
from redstring.api.authorization import Role
from redstring.api.protections import is_loopback_name
from redstring.api.settings import AuthMode, Settings
from redstring.composition.client import Redstring
from tests.api.support import memory_services

TYPENAME = {"query": "{ __typename }"}
# A name of the attacker's own, made to resolve to 127.0.0.1 once its page is loaded.
REBOUND = "rebind.attacker.example:8000"


def _http(settings: Settings, services: Redstring | None = None) -> httpx.AsyncClient:
    app = create_app(settings, services=services or memory_services())
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "[::1]:8000", "LOCALHOST"])
async def test_without_authentication_a_loopback_name_is_answered(host: str) -> None:
    async with _http(Settings()) as http:
        response = await http.post("/graphql", json=TYPENAME, headers={"host": host})
    assert response.status_code == 200
    assert response.json() == {"data": {"__typename": "Query"}}


@pytest.mark.parametrize("path", ["/graphql", "/healthz", "/metrics", "/graphiql/"])
async def test_without_authentication_another_host_is_refused_on_every_path(path: str) -> None:
    """A page of the attacker's site, its name resolved to 127.0.0.1, would otherwise
    read and write every tenant of a developer's `make serve` as same-origin calls."""
    async with _http(Settings()) as http:
        response = await http.post(path, json=TYPENAME, headers={"host": REBOUND})
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert "loopback name only, not 'rebind.attacker.example:8000'" in error["message"]


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:80@rebind.attacker.example",
        "localhost:8000/rebind.attacker.example",
        "[::1]rebind.attacker.example",
        "[::1]:8000:80",
        "127.0.0.1:http",
        "localhost rebind.attacker.example",
        "",
    ],
)
async def test_without_authentication_a_host_that_only_begins_with_a_loopback_name_is_refused(
    host: str,
) -> None:
    """A `Host` is a name and a port of digits: what follows a loopback name is not read
    past (a browser that took `127.0.0.1:80@rebind.attacker.example` for a host would
    have resolved it by the name after the `@`)."""
    async with _http(Settings()) as http:
        response = await http.post("/graphql", json=TYPENAME, headers={"host": host})
    assert response.status_code == 400
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_REQUEST"


async def test_without_authentication_two_hosts_are_refused() -> None:
    """A request has one `Host` (RFC 9112): of two, a proxy may read the one the check did not."""
    async with _http(Settings()) as http:
        response = await http.post(
            "/graphql",
            json=TYPENAME,
            headers=[("host", "127.0.0.1:8000"), ("host", REBOUND)],
        )
    assert response.status_code == 400
    assert f"not '127.0.0.1:8000, {REBOUND}'" in response.json()["errors"][0]["message"]


async def test_with_authentication_or_no_authentication_asked_for_any_host_is_answered(
    tmp_path: Path,
) -> None:
    """A key is what a rebinding page lacks; and a server asked outright to serve
    everyone (on an address others reach, or behind a proxy that authenticates and
    passes its own `Host`) is reached by the names it is given."""
    key_file = tmp_path / "keys.json"
    issued = add_key(key_file, ["00000000-0000-4000-8000-000000000001"], Role.READ, "reader")
    keyed = Settings(auth=AuthMode.APIKEY, api_keys_file=key_file)
    async with _http(keyed) as http:
        bearer = {"host": REBOUND, "authorization": f"Bearer {issued.key}"}
        assert (await http.post("/graphql", json=TYPENAME, headers=bearer)).status_code == 200
    for everyone in (Settings(host="0.0.0.0", auth=AuthMode.NONE), Settings(auth=AuthMode.NONE)):
        async with _http(everyone) as http:
            response = await http.post("/graphql", json=TYPENAME, headers={"host": REBOUND})
            assert response.status_code == 200


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.9.9.9", True),
        ("[::1]", True),
        ("::1", True),
        ("localhost.", True),
        ("app.localhost", True),
        ("0.0.0.0", False),
        ("192.0.2.7", False),
        ("localhost.attacker.example", False),
        ("", False),
    ],
)
def test_loopback_names(host: str, loopback: bool) -> None:
    assert is_loopback_name(host) is loopback


async def test_every_response_is_neither_sniffed_framed_nor_kept_by_a_cache() -> None:
    async with _http(Settings()) as http:
        answers = [
            await http.post("/graphql", json=TYPENAME),
            await http.post("/graphql", content=b"{", headers={"content-type": "application/json"}),
            await http.get("/graphql", headers={"accept": "text/html"}),
            await http.get("/nowhere"),
            await http.post("/graphql", json=TYPENAME, headers={"host": REBOUND}),
        ]
        asset = await http.get("/favicon.ico")
    for response in answers:
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["content-security-policy"] == "frame-ancestors 'none'"
        assert response.headers["cache-control"] == "no-store"
    assert asset.headers["cache-control"] != "no-store"  # a route's own is kept
    assert asset.headers["x-content-type-options"] == "nosniff"


def test_several_workers_are_told_where_they_listen(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker rebuilds its settings from the environment: told nothing of `--host`, it
    took itself for 127.0.0.1, and would answer only loopback names on an address others
    reach (and named the wrong address in its warning)."""
    # Restored after the test; what a worker would have read before.
    for name, value in (("HOST", "127.0.0.1"), ("PORT", "8000"), ("DEMO", "true")):
        monkeypatch.setenv(f"REDSTRING_{name}", value)
    seen: dict[str, str | None] = {}
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: seen.update(Settings().model_dump()))
    server.serve(Settings(host="0.0.0.0", port=8123, workers=2, auth=AuthMode.NONE, demo=False))
    assert (seen["host"], seen["port"], seen["demo"]) == ("0.0.0.0", 8123, False)
