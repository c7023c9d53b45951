"""`serve`'s embedding provider gives up within the request's deadline: a provider that
is down or rate-limiting ends a request in a 503 with `Retry-After` (an outage, worth
trying again), not in the deadline's 504; the wait asked for is the one the provider
named in its last answer, rounded up to whole seconds, 1 to 60, else 5. The app opens
its services from settings, as `serve` does, over a real HTTP server on a loopback
port."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import httpx
import pytest

from redstring.api import create_app
from redstring.api.settings import Settings
from redstring.testing import new_tenant
from tests.api.support import ACME_RETRIEVE as RETRIEVE
from tests.api.support import ACME_UPSERT as UPSERT
from tests.embeddings.fake_server import EmbeddingAPI, Failure, serving

DEADLINE = 2.0  # REDSTRING_REQUEST_TIMEOUT, seconds


@pytest.fixture
def api() -> EmbeddingAPI:
    return EmbeddingAPI(dimension=8)


@pytest.fixture
async def http(api: EmbeddingAPI) -> AsyncIterator[httpx.AsyncClient]:
    """The app `serve` runs, in memory, its `openai` provider `api`, the deadline `DEADLINE`."""
    async with serving(api) as base_url:
        settings = Settings(
            embeddings="openai",
            embedding_base_url=base_url,
            embedding_model="text-embedding-3-small",
            embedding_dimension=8,
            embedding_api_key_env="REDSTRING_TEST_NO_KEY",
            request_timeout=DEADLINE,
        )
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
                yield http


@pytest.mark.parametrize(
    ("failure", "retry_after"),
    [
        (Failure(503, {"Retry-After": "1"}), "1"),
        (Failure(429, {"Retry-After": "1"}), "1"),
        (Failure(429, {"Retry-After": "17"}), "17"),
        (Failure(503, {"Retry-After": "17"}), "17"),
        (Failure(503, {"Retry-After": "30"}), "30"),
        (Failure(429, {"Retry-After": "86400"}), "60"),
        (Failure(503, {"Retry-After": "2.2"}), "3"),
        (Failure(429, {"Retry-After": "0.4"}), "1"),  # waited for twice within the deadline
        (Failure(503, {"Retry-After": "0"}), "1"),  # asked again at once, to the last attempt
        (Failure(503, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}), "5"),
        (Failure(503), "5"),
        (Failure(429), "5"),
        (Failure(200, stall=30.0), "5"),
    ],
    ids=[
        "503, retry after 1 s",
        "429, retry after 1 s",
        "429, retry after 17 s",
        "503, retry after 17 s",
        "503, retry after 30 s",
        "429, retry after a day",
        "503, retry after 2.2 s",
        "429, retry after 0.4 s",
        "503, retry at once",
        "503, retry after a date",
        "503 without Retry-After",
        "429 without Retry-After",
        "no answer",
    ],
)
@pytest.mark.parametrize("query", [RETRIEVE, UPSERT], ids=["retrieve", "upsert"])
async def test_a_provider_failing_for_ever_ends_in_503_within_the_deadline(
    api: EmbeddingAPI, http: httpx.AsyncClient, failure: Failure, retry_after: str, query: str
) -> None:
    """The 503 asks for the wait the provider named (a date is not read), up to 60 s."""
    api.failures.extend(failure for _ in range(100))
    started = time.monotonic()

    response = await http.post(
        "/graphql", json={"query": query, "variables": {"t": str(new_tenant())}}
    )

    took = time.monotonic() - started
    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == retry_after
    codes = [error["extensions"]["code"] for error in response.json()["errors"]]
    assert codes == ["SERVICE_UNAVAILABLE"]
    assert took < DEADLINE
    assert api.requests >= 1


async def test_a_provider_that_answers_after_a_failure_is_waited_for(
    api: EmbeddingAPI, http: httpx.AsyncClient
) -> None:
    """Within the deadline the provider is still retried: one 503 does not fail a request."""
    api.failures.append(Failure(503, {"Retry-After": "0.2"}))

    response = await http.post(
        "/graphql", json={"query": UPSERT, "variables": {"t": str(new_tenant())}}
    )

    assert response.status_code == 200, response.text
    assert response.json() == {"data": {"upsertEntities": {"count": 1}}}
    assert api.requests == 2
