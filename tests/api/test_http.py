"""The HTTP surface: `/graphql` (POST, GraphiQL on GET), `/healthz`, `/readyz`, the lifespan."""

from __future__ import annotations

import gc

import httpx
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from redstring import StoreUnavailableError
from redstring.api import create_app
from redstring.api.app import SERVING_GC_THRESHOLD
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from tests.api.doubles import FailingGraphStore
from tests.api.support import DEMO, README_QUERY, memory_services, services_with_graph, started


def _http(services: Redstring, settings: Settings | None = None) -> httpx.AsyncClient:
    app = create_app(settings or Settings(), services=services)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


async def test_graphql_is_exactly_slash_graphql(demo_services: Redstring) -> None:
    async with _http(demo_services) as http:
        response = await http.post(
            "/graphql", json={"query": README_QUERY, "variables": {"tenant": DEMO}}
        )
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/json")
        assert response.json()["data"]["retrieve"]["matches"]
        trailing = await http.post("/graphql/", json={"query": "{ __typename }"})
        # Never served twice under two paths, nor redirected: a redirect names an
        # absolute URL of the scheme the server sees (`http` behind a proxy ending TLS).
        assert trailing.status_code == 404
        assert "location" not in trailing.headers
        (error,) = trailing.json()["errors"]
        assert error["extensions"]["code"] == "NOT_FOUND"
        assert error["message"] == "Not Found: the path is /graphql"
        put = await http.put("/graphql", json={"query": "{ __typename }"})
        assert put.status_code == 405


async def test_get_graphql_serves_graphiql(demo_services: Redstring) -> None:
    async with _http(demo_services) as http:
        response = await http.get("/graphql", headers={"accept": "text/html"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "graphiql" in response.text.lower()


async def test_graphiql_can_be_switched_off(demo_services: Redstring) -> None:
    async with _http(demo_services, Settings(graphiql=False)) as http:
        response = await http.get("/graphql", headers={"accept": "text/html"})
    assert response.status_code == 404


async def test_get_runs_queries_but_never_mutations(demo_services: Redstring) -> None:
    async with _http(demo_services) as http:
        query = await http.get("/graphql", params={"query": "{ __typename }"})
        assert query.json() == {"data": {"__typename": "Query"}}
        mutation = await http.get(
            "/graphql",
            params={
                "query": f'mutation {{ deleteEntities(tenantId: "{DEMO}", ids: []) {{ count }} }}'
            },
        )
        assert mutation.status_code == 405  # GraphQL over HTTP: a mutation needs POST


async def test_health_and_readiness(demo_services: Redstring) -> None:
    async with _http(demo_services) as http:
        assert (await http.get("/healthz")).json() == {"status": "ok", "auth": "none"}
        ready = await http.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready"}


async def test_readiness_fails_when_a_store_is_down(demo_services: Redstring) -> None:
    down = FailingGraphStore(lambda: StoreUnavailableError("bolt://secret-host refused"))
    async with _http(services_with_graph(demo_services, down)) as http:
        health = await http.get("/healthz")
        ready = await http.get("/readyz")
    assert health.status_code == 200
    assert ready.status_code == 503
    assert ready.json() == {"status": "unavailable", "reason": "store_unavailable"}


async def test_lifespan_opens_the_configured_services_with_the_demo() -> None:
    app = create_app(Settings(demo=True, embeddings="hashing", embedding_dimension=32))
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http,
    ):
        assert (await http.get("/readyz")).status_code == 200
        response = await http.post(
            "/graphql", json={"query": README_QUERY, "variables": {"tenant": DEMO}}
        )
        assert response.json()["data"]["retrieve"]["matches"][0]["entity"]["name"] == "Acme Corp"
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        # after shutdown the services are closed and released: not ready, and no stale data
        assert (await http.get("/readyz")).status_code == 503


async def test_without_demo_the_stores_start_empty() -> None:
    async with started(create_app(Settings(demo=False))) as http:
        response = await http.post(
            "/graphql", json={"query": README_QUERY, "variables": {"tenant": DEMO}}
        )
    assert response.json()["data"]["retrieve"]["matches"] == []


@pytest.mark.parametrize("threads", [1, 2])
async def test_the_lifespan_caps_blas_threads(threads: int) -> None:
    app = create_app(Settings(blas_threads=threads), services=memory_services())
    with threadpool_limits(limits=3, user_api="blas"):
        async with app.router.lifespan_context(app):
            blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
            assert blas
            assert {pool["num_threads"] for pool in blas} == {threads}


@pytest.mark.parametrize("freeze", [True, False])
async def test_the_lifespan_freezes_the_startup_heap_when_asked(freeze: bool) -> None:
    app = create_app(Settings(gc_freeze=freeze), services=memory_services())
    gc.unfreeze()
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        async with app.router.lifespan_context(app):
            frozen = gc.get_freeze_count()
            threshold = gc.get_threshold()
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    assert (frozen > 0) is freeze
    assert (threshold == SERVING_GC_THRESHOLD) is freeze


PREFLIGHT = {
    "access-control-request-method": "POST",
    "access-control-request-headers": "content-type, authorization, redstring-bookmark",
}


async def test_a_page_of_a_listed_origin_may_call_the_api_and_read_its_headers(
    demo_services: Redstring,
) -> None:
    settings = Settings(cors_origins="https://app.example")  # type: ignore[arg-type]
    async with _http(demo_services, settings) as http:
        asked = {"origin": "https://app.example", **PREFLIGHT}
        preflight = await http.options("/graphql", headers=asked)
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://app.example"
        assert "POST" in preflight.headers["access-control-allow-methods"]
        response = await http.post(
            "/graphql",
            json={"query": README_QUERY, "variables": {"tenant": DEMO}},
            headers={"origin": "https://app.example"},
        )
        assert response.status_code == 200
        assert response.headers["access-control-allow-origin"] == "https://app.example"
        exposed = response.headers["access-control-expose-headers"].lower()
        assert {"redstring-bookmark", "x-request-id"} <= set(exposed.replace(" ", "").split(","))
        other = await http.options("/graphql", headers={**asked, "origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers
        # Refused as the API refuses anything: coded, not Starlette's plain text.
        assert other.status_code == 400
        assert other.headers["content-type"].startswith("application/json")
        (error,) = other.json()["errors"]
        assert error["extensions"]["code"] == "BAD_REQUEST"
        assert error["message"] == "Disallowed CORS origin"


async def test_a_preflight_asking_for_private_network_access_is_refused(
    demo_services: Redstring,
) -> None:
    """Chrome's Private Network Access: a public page asking to reach this server on a
    private address. Not granted to any origin, listed or not (docs/security.md)."""
    settings = Settings(cors_origins="https://app.example")  # type: ignore[arg-type]
    async with _http(demo_services, settings) as http:
        asked = {
            "origin": "https://app.example",
            "access-control-request-private-network": "true",
            **PREFLIGHT,
        }
        preflight = await http.options("/graphql", headers=asked)
        assert preflight.status_code == 400
        assert "access-control-allow-private-network" not in preflight.headers
        (error,) = preflight.json()["errors"]
        assert error["extensions"]["code"] == "BAD_REQUEST"
        assert error["message"] == "Disallowed CORS private-network"


async def test_without_listed_origins_no_page_of_another_origin_may_call(
    demo_services: Redstring,
) -> None:
    async with _http(demo_services) as http:
        asked = {"origin": "https://app.example", **PREFLIGHT}
        preflight = await http.options("/graphql", headers=asked)
        assert preflight.status_code == 405
        assert "access-control-allow-origin" not in preflight.headers


@pytest.mark.parametrize("origin", ["app.example", "https://app.example/", "https://a.example/app"])
def test_an_origin_setting_is_origins(origin: str) -> None:
    with pytest.raises(ValueError, match="is no origin"):
        Settings(cors_origins=f"https://ok.example, {origin}")  # type: ignore[arg-type]


def test_an_origin_is_kept_as_a_browser_sends_it() -> None:
    settings = Settings(cors_origins="HTTPS://App.Example:8443")  # type: ignore[arg-type]
    assert settings.cors_origins == ("https://app.example:8443",)
