"""GraphiQL's page and files: from this server by default, from a CDN when asked; pinned either way."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from starlette.applications import Starlette

from redstring.api import create_app
from redstring.api.graphiql import ASSETS, AssetSource, asset_route, graphiql_page
from redstring.api.graphiql.assets import INSTALL_DIR
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from tests.api.page_assets import page_assets

NPM_DIR = INSTALL_DIR.parent
HTML = {"accept": "text/html"}


@pytest.fixture
def install_dir(tmp_path: Path) -> Path:
    """A stand-in for `node_modules`: every asset present, each file holding its own name."""
    for asset in ASSETS:
        asset.file(tmp_path).parent.mkdir(parents=True, exist_ok=True)
        asset.file(tmp_path).write_text(f"/* {asset.name} */", encoding="utf-8")
    (tmp_path / "react" / "package.json").write_text("{}", encoding="utf-8")
    return tmp_path


def _client(app: Starlette) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


def test_the_local_page_loads_every_file_from_this_server(install_dir: Path) -> None:
    loaded = page_assets(graphiql_page(AssetSource.LOCAL, install_dir))
    assert [a.url for a in loaded] == [a.url(AssetSource.LOCAL) for a in ASSETS]
    for asset in loaded:
        assert "//" not in asset.url  # relative: no scheme, no host
        assert asset.url.startswith("graphiql/")
        assert (asset.integrity or "").startswith("sha384-")


def test_the_cdn_page_loads_the_same_pinned_files_from_one_cdn(install_dir: Path) -> None:
    loaded = page_assets(graphiql_page(AssetSource.CDN, install_dir))
    hosts = {urlsplit(a.url).netloc for a in loaded}
    assert len(hosts) == 1
    assert "." in hosts.pop()
    assert all(urlsplit(a.url).scheme == "https" for a in loaded)
    assert [(urlsplit(a.url).path, a.integrity) for a in loaded] == [
        (f"/{a.name}", a.integrity) for a in ASSETS
    ]


async def test_each_listed_file_is_served_with_its_type(install_dir: Path) -> None:
    async with _client(Starlette(routes=[asset_route(install_dir)])) as http:
        for asset in ASSETS:
            response = await http.get(f"/{asset.url(AssetSource.LOCAL)}")
            assert response.status_code == 200, asset.name
            assert response.text == f"/* {asset.name} */"
            kind = "text/css" if asset.path.endswith(".css") else "text/javascript"
            assert response.headers["content-type"] == f"{kind}; charset=utf-8"
            assert "immutable" in response.headers["cache-control"]


@pytest.mark.parametrize(
    "path",
    [
        "/graphiql/react@18.2.0/package.json",  # present on disk, but not an asset
        "/graphiql/react@18.1.0/umd/react.production.min.js",  # another version
        "/graphiql/react@18.2.0/../react/package.json",
        "/graphiql/%2e%2e/%2e%2e/pyproject.toml",
    ],
)
async def test_nothing_else_is_served(install_dir: Path, path: str) -> None:
    async with _client(Starlette(routes=[asset_route(install_dir)])) as http:
        assert (await http.get(path)).status_code == 404


def test_missing_files_make_a_page_that_says_how_to_install_them(tmp_path: Path) -> None:
    page = graphiql_page(AssetSource.LOCAL, tmp_path)
    assert "make graphiql" in page
    assert "REDSTRING_GRAPHIQL_ASSETS=cdn" in page
    assert all(asset.name in page for asset in ASSETS)
    assert page_assets(page) == []


async def test_the_app_serves_the_cdn_page_and_no_files_when_asked(
    demo_services: Redstring,
) -> None:
    app = create_app(Settings(graphiql_assets=AssetSource.CDN), services=demo_services)
    async with _client(app) as http:
        page = await http.get("/graphql", headers=HTML)
        assert page.status_code == 200
        assert all(urlsplit(a.url).scheme == "https" for a in page_assets(page.text))
        local = ASSETS[0].url(AssetSource.LOCAL)
        assert (await http.get(f"/{local}")).status_code == 404


async def test_the_app_serves_local_files_by_default(demo_services: Redstring) -> None:
    app = create_app(Settings(), services=demo_services)
    async with _client(app) as http:
        page = await http.get("/graphql", headers=HTML)
        assert page.status_code == 200
        assert "https://" not in page.text  # installed or not, nothing points off the server


async def test_a_graphiql_path_that_is_no_asset_is_a_coded_404(demo_services: Redstring) -> None:
    app = create_app(Settings(), services=demo_services)
    async with _client(app) as http:
        response = await http.get("/graphiql/x")
        assert response.status_code == 404
        assert response.json()["errors"][0]["extensions"]["code"] == "NOT_FOUND"


def test_the_default_query_survives_as_a_script_string() -> None:
    page = graphiql_page(AssetSource.CDN)
    literal = page.split("defaultQuery: ", 1)[1].split(",\n", 1)[0]
    assert "</" not in literal
    assert "ACME Corporation" in json.loads(literal)


def test_package_json_pins_exactly_the_asset_versions() -> None:
    manifest = json.loads((NPM_DIR / "package.json").read_text(encoding="utf-8"))
    assert manifest["dependencies"] == {a.package: a.version for a in ASSETS}
    lock = json.loads((NPM_DIR / "package-lock.json").read_text(encoding="utf-8"))
    for asset in ASSETS:
        assert lock["packages"][f"node_modules/{asset.package}"]["version"] == asset.version


def test_the_lock_file_names_no_registry() -> None:
    lock = json.loads((NPM_DIR / "package-lock.json").read_text(encoding="utf-8"))
    packages = lock["packages"]
    assert all("resolved" not in entry for entry in packages.values())
    assert all(entry.get("integrity") for name, entry in packages.items() if name)
