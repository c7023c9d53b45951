"""The installed GraphiQL files: served by the app, typed, and byte for byte the pinned ones."""

from __future__ import annotations

import base64
import hashlib
import json
from urllib.parse import urljoin

import httpx

from redstring.api import create_app
from redstring.api.graphiql import ASSETS, AssetSource
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from tests.api.page_assets import page_assets
from tests.api.support import memory_services
from tests.processes import E2E_DIR


def _integrity(content: bytes) -> str:
    return "sha384-" + base64.b64encode(hashlib.sha384(content).digest()).decode()


async def test_every_file_the_page_loads_is_served_and_pinned(graphiql_files: None) -> None:
    services: Redstring = memory_services()
    app = create_app(Settings(graphiql_assets=AssetSource.LOCAL), services=services)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        page = await http.get("/graphql", headers={"accept": "text/html"})
        assert page.status_code == 200
        loaded = page_assets(page.text)
        assert len(loaded) == len(ASSETS)
        for asset in loaded:
            url = urljoin(str(page.url), asset.url)
            assert url.startswith("http://127.0.0.1/graphiql/"), url
            response = await http.get(url)
            assert response.status_code == 200, url
            kind = "text/css" if url.endswith(".css") else "text/javascript"
            assert response.headers["content-type"] == f"{kind}; charset=utf-8"
            assert _integrity(response.content) == asset.integrity, url


def test_the_e2e_lock_file_names_no_registry() -> None:
    lock = json.loads((E2E_DIR / "package-lock.json").read_text(encoding="utf-8"))
    packages = lock["packages"]
    assert all("resolved" not in entry for entry in packages.values())
    assert all(entry.get("integrity") for name, entry in packages.items() if name)
