"""`GET /` leads to `/graphql`, `GET /favicon.ico` is redstring's icon; neither needs
credentials, and any other unknown path stays a coded 404."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from xml.etree import ElementTree

import httpx
import pytest

from redstring.api import create_app
from redstring.api.api_keys import add_key
from redstring.api.authorization import Role
from redstring.api.graphiql import AssetSource
from redstring.api.settings import AuthMode, Settings
from redstring.composition.client import Redstring
from redstring.domain.ids import TenantId

HTML = {"accept": "text/html"}


@pytest.fixture(params=[AuthMode.NONE, AuthMode.APIKEY], ids=["open", "apikey"])
def auth(request: pytest.FixtureRequest) -> AuthMode:
    mode: AuthMode = request.param
    return mode


@pytest.fixture
async def http(
    auth: AuthMode, demo_services: Redstring, tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    """A client over the app, without credentials, with and without authentication on."""
    key_file = tmp_path / "keys.json"
    add_key(key_file, [TenantId(uuid.uuid4())], Role.READ, "someone else")
    settings = Settings(
        auth=auth,
        api_keys_file=key_file,
        graphiql_assets=AssetSource.CDN,
    )
    app = create_app(settings, services=demo_services)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        yield client


async def test_the_root_redirects_to_graphql(http: httpx.AsyncClient) -> None:
    response = await http.get("/", headers=HTML)
    assert response.status_code == 307
    assert response.headers["location"] == "/graphql"


async def test_the_favicon_is_an_svg_icon(http: httpx.AsyncClient) -> None:
    response = await http.get("/favicon.ico")
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/svg+xml"
    root = ElementTree.fromstring(response.content)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert len(response.content) < 4096  # a small icon


async def test_graphiql_links_the_favicon(http: httpx.AsyncClient) -> None:
    page = await http.get("/graphql", headers=HTML)
    assert page.status_code == 200
    assert '<link rel="icon" href="/favicon.ico"' in page.text


async def test_graphql_operations_still_need_credentials_when_auth_is_on(
    http: httpx.AsyncClient,
    auth: AuthMode,
) -> None:
    """The routes above answer without credentials while `/graphql` asks for them."""
    response = await http.post("/graphql", json={"query": "{ __typename }"})
    assert response.status_code == (401 if auth is AuthMode.APIKEY else 200)


async def test_other_unknown_paths_stay_a_coded_404(http: httpx.AsyncClient) -> None:
    for path in ("/index.html", "/favicon.png", "/graphql/x"):
        response = await http.get(path)
        assert response.status_code == 404, path
        assert json.loads(response.text)["errors"][0]["extensions"]["code"] == "NOT_FOUND"
