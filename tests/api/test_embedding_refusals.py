"""An embedding provider that refuses the server's requests (a wrong key, model or base URL)
is a misconfiguration, not an outage: GraphQL answers `INTERNAL_SERVER_ERROR` with HTTP 200
and no `Retry-After`, and the operator reads the cause in one ERROR line; a provider that
does not answer stays `SERVICE_UNAVAILABLE`, a 503. Against a real HTTP server on a
loopback port."""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from redstring import EmbeddingRefusedError, Redstring
from redstring.adapters.embeddings import OpenAICompatibleEmbeddings, RetryPolicy
from redstring.api import create_app
from redstring.api.errors import described
from redstring.api.repeated_lines import RepeatedLines
from redstring.api.schema import build
from redstring.api.settings import Settings
from redstring.composition import client
from redstring.composition.client import embeddings_from_settings
from redstring.composition.embedding_choice import make_embedding_provider
from redstring.testing import new_tenant
from tests.api.support import app_over_provider, started
from tests.embeddings.fake_server import EmbeddingAPI, Failure, serving

KEY_VARIABLE = "REDSTRING_TEST_REFUSED_KEY"
KEY = "sk-test-not-this-one-7731"
RETRIEVE = """query ($t: ID!, $mode: RetrievalMode!) {
  retrieve(query: "Acme", tenantId: $t, k: 3, mode: $mode) { matches { entity { name } } }
}"""
UPSERT = """mutation ($t: ID!) {
  upsertEntities(tenantId: $t, entities: [{name: "Acme Corp", entityType: "company"}]) { count }
}"""
REFUSED_BODY = {
    "message": "Internal server error",
    "locations": [{"line": 2, "column": 3}],
    "extensions": {"code": "INTERNAL_SERVER_ERROR"},
}


@pytest.fixture
def api() -> EmbeddingAPI:
    return EmbeddingAPI(dimension=8)


@pytest.fixture
async def http(
    api: EmbeddingAPI, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[httpx.AsyncClient]:
    """The app over in-memory stores and the `openai` provider of `api`, its key in
    `KEY_VARIABLE`."""
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    async with (
        serving(api) as base_url,
        app_over_provider(base_url, "text-embedding-unknown", KEY_VARIABLE) as http,
    ):
        yield http


def _refusals(api: EmbeddingAPI, status: int = 401) -> None:
    message = f"Incorrect API key provided: {KEY}"
    api.failures.extend(Failure(status, body={"error": {"message": message}}) for _ in range(5))


async def _post(http: httpx.AsyncClient, query: str, **variables: Any) -> httpx.Response:
    return await http.post("/graphql", json={"query": query, "variables": variables})


def _error_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The records at ERROR or above, of any logger."""
    return [record for record in caplog.records if record.levelno >= logging.ERROR]


@pytest.mark.parametrize(
    ("query", "field", "variables"),
    [(RETRIEVE, "retrieve", {"mode": "HYBRID"}), (UPSERT, "upsertEntities", {})],
    ids=["retrieve", "upsert"],
)
async def test_a_refused_key_is_an_internal_error_with_200_and_its_cause_logged_once(
    api: EmbeddingAPI,
    http: httpx.AsyncClient,
    caplog: pytest.LogCaptureFixture,
    query: str,
    field: str,
    variables: dict[str, Any],
) -> None:
    _refusals(api)
    caplog.set_level(logging.DEBUG, logger="redstring.api")

    tenant = str(new_tenant())
    response = await _post(http, query, t=tenant, **variables)

    assert response.status_code == 200  # not a 503: a retry would be refused again
    assert "retry-after" not in response.headers
    assert response.json() == {"data": None, "errors": [REFUSED_BODY | {"path": [field]}]}
    assert api.requests == 1  # refused once, not retried
    [line] = _error_lines(caplog)
    said = line.getMessage()
    assert said.startswith(f"the embedding provider refuses the server's requests, at {field}: ")
    refused = "/v1/embeddings refused a request for model 'text-embedding-unknown' with HTTP 401"
    assert f"{refused}, sent with the key in {KEY_VARIABLE}: " in said
    assert said.endswith(
        "; check REDSTRING_EMBEDDING_API_KEY_ENV and the key in the variable it names"
    )
    assert line.exc_info is None  # a configuration fault, no bug: no traceback at ERROR
    assert line.name == "redstring.api"
    assert KEY not in response.text + caplog.text
    found = await _post(http, RETRIEVE, t=tenant, mode="LEXICAL")
    assert found.json() == {"data": {"retrieve": {"matches": []}}}  # nothing written


async def test_a_base_url_that_is_not_the_embeddings_api_is_an_internal_error(
    api: EmbeddingAPI, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    api.failures.append(Failure(200, body={"unexpected": True}))

    response = await _post(http, RETRIEVE, t=str(new_tenant()), mode="SEMANTIC")

    assert response.status_code == 200
    assert [e["extensions"]["code"] for e in response.json()["errors"]] == ["INTERNAL_SERVER_ERROR"]
    [line] = _error_lines(caplog)
    assert "with no usable embeddings: not an embeddings response (data: Field required)" in (
        line.getMessage()
    )
    assert line.getMessage().endswith("; check REDSTRING_EMBEDDING_BASE_URL")


async def test_a_lexical_retrieve_does_not_ask_the_refusing_provider(
    api: EmbeddingAPI, http: httpx.AsyncClient
) -> None:
    _refusals(api)

    response = await _post(http, RETRIEVE, t=str(new_tenant()), mode="LEXICAL")

    assert response.status_code == 200
    assert response.json() == {"data": {"retrieve": {"matches": []}}}
    assert api.requests == 0


async def test_a_provider_that_does_not_answer_stays_a_503_with_retry_after(
    api: EmbeddingAPI, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """The other side of the line: 5xx to the last attempt is an outage."""
    api.failures.extend(Failure(503) for _ in range(2))

    response = await _post(http, UPSERT, t=str(new_tenant()))

    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert [e["extensions"]["code"] for e in response.json()["errors"]] == ["SERVICE_UNAVAILABLE"]
    assert api.requests == 2
    assert _error_lines(caplog) == []


async def test_a_refusal_while_loading_the_demo_fails_the_start_in_one_line(
    api: EmbeddingAPI, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """`serve --demo` embeds the demo at start: a refused key stops the start with the
    settings to fix (`StartFailure.say`), its traceback at DEBUG only."""
    _refusals(api, 403)
    monkeypatch.delenv(KEY_VARIABLE, raising=False)
    async with serving(api) as base_url:
        settings = Settings(
            demo=True,
            embeddings="openai",
            embedding_base_url=base_url,
            embedding_model="text-embedding-unknown",
            embedding_dimension=8,
            embedding_api_key_env=KEY_VARIABLE,
        )
        app = create_app(settings)
        with pytest.raises(EmbeddingRefusedError):
            async with app.router.lifespan_context(app):
                pass

    [line] = _error_lines(caplog)
    said = line.getMessage()
    assert said.startswith(f"cannot start: the embedding provider at {base_url}/embeddings ")
    assert f"with HTTP 403, sent without a key ({KEY_VARIABLE} is unset or empty): " in said
    assert said.endswith(
        "; check REDSTRING_EMBEDDING_API_KEY_ENV and the key in the variable it names, or "
        "REDSTRING_EMBEDDING_MODEL"
    )
    assert line.exc_info is None


# Each option of `make_embedding_provider` that settings carry: the variable that sets it,
# a value of it other than its default, and what a refusal naming it says to check.
CARRIED_OPTIONS = [
    ("dimension", "REDSTRING_EMBEDDING_DIMENSION", 3, "REDSTRING_EMBEDDING_DIMENSION"),
    ("model", "REDSTRING_EMBEDDING_MODEL", "m", "REDSTRING_EMBEDDING_MODEL"),
    ("base_url", "REDSTRING_EMBEDDING_BASE_URL", "http://b", "REDSTRING_EMBEDDING_BASE_URL"),
    (
        "api_key_env",
        "REDSTRING_EMBEDDING_API_KEY_ENV",
        "K",
        "REDSTRING_EMBEDDING_API_KEY_ENV and the key in the variable it names",
    ),
    ("batch_size", "REDSTRING_EMBEDDING_BATCH_SIZE", 5, "REDSTRING_EMBEDDING_BATCH_SIZE"),
    ("max_concurrency", "REDSTRING_EMBEDDING_CONCURRENCY", 2, "REDSTRING_EMBEDDING_CONCURRENCY"),
    ("timeout", "REDSTRING_EMBEDDING_TIMEOUT", 1.5, "REDSTRING_EMBEDDING_TIMEOUT"),
    ("query_prompt", "REDSTRING_EMBEDDING_QUERY_PROMPT", "q", "REDSTRING_EMBEDDING_QUERY_PROMPT"),
    (
        "document_prompt",
        "REDSTRING_EMBEDDING_DOCUMENT_PROMPT",
        "d",
        "REDSTRING_EMBEDDING_DOCUMENT_PROMPT",
    ),
]


def test_every_option_of_the_provider_but_its_kind_and_time_limit_is_carried_by_a_setting() -> None:
    taken = set(inspect.signature(make_embedding_provider).parameters) - {"kind", "time_limit"}
    assert {option for option, *_ in CARRIED_OPTIONS} == taken


@pytest.mark.parametrize(
    ("option", "variable", "value", "check"),
    CARRIED_OPTIONS,
    ids=[option for option, *_ in CARRIED_OPTIONS],
)
def test_the_variable_that_sets_an_option_is_the_one_a_refusal_naming_it_says_to_check(
    option: str,
    variable: str,
    value: object,
    check: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`serve`, `load` and `rekey` build the provider from settings and say which settings
    to check when it refuses: the variable said must be the one that set the option."""
    passed: dict[str, object] = {}

    def spy(kind: str, **options: object) -> None:
        passed.update(options)

    monkeypatch.setattr(client, "make_embedding_provider", spy)
    monkeypatch.setenv(variable, str(value))
    embeddings_from_settings(Settings())
    assert passed[option] == value
    refused = EmbeddingRefusedError("HTTP 400", status_code=400, options=[option])
    assert described(refused) == f"HTTP 400; check {check}"


def test_a_refusal_naming_no_option_of_the_provider_says_the_name_it_gives() -> None:
    unknown = EmbeddingRefusedError("HTTP 400", status_code=400, options=["model", "other"])
    assert described(unknown) == "HTTP 400; check REDSTRING_EMBEDDING_MODEL, or other"
    assert described(EmbeddingRefusedError("no options", status_code=400)) == "no options"


class _Clock:
    now = 500.0

    def __call__(self) -> float:
        return self.now


async def test_a_refusal_repeated_within_the_window_is_counted_then_said_once(
    api: EmbeddingAPI, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A refused key fails every request that embeds: the first refusal is an ERROR, the
    others within `REPEAT_WINDOW_SECONDS` are counted, and the count is one ERROR at the
    window's end (the clock and the window's end moved by hand)."""
    clock = _Clock()
    window_ends: list[Callable[[], None]] = []
    monkeypatch.setattr(
        build,
        "repeated_error_lines",
        lambda: RepeatedLines(
            logging.getLogger("redstring.api"),
            clock=clock,
            schedule=lambda delay, end: window_ends.append(end),
        ),
    )
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    caplog.set_level(logging.DEBUG, logger="redstring.api")
    api.failures.extend(Failure(401, body={"error": {"message": "no such key"}}) for _ in range(3))
    async with serving(api) as base_url, Redstring.in_memory(_provider(base_url)) as services:
        app = create_app(Settings(), services=services)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            tenant = str(new_tenant())
            first = await _post(http, RETRIEVE, t=tenant, mode="SEMANTIC")
            clock.now += 10
            second = await _post(http, UPSERT, t=tenant)
            clock.now += 10
            third = await _post(http, RETRIEVE, t=tenant, mode="HYBRID")

            assert [first.status_code, second.status_code, third.status_code] == [200] * 3
            assert api.requests == 3  # each request asked, and was refused
            [line] = _error_lines(caplog)
            assert line.getMessage().startswith(
                "the embedding provider refuses the server's requests, at retrieve: "
            )
            assert "no such key" in line.getMessage()
            assert [r.msg for r in caplog.records].count("the refusal's traceback") == 1

            clock.now += 40
            [window_end] = window_ends
            window_end()

    [_, count] = _error_lines(caplog)
    said = count.getMessage()
    assert said.startswith("the embedding provider refuses the server's requests, at retrieve: ")
    assert said.endswith(
        "; check REDSTRING_EMBEDDING_API_KEY_ENV and the key in the variable it names"
        " (2 like it left out in the last 60 s; this is the last)"
    )


async def test_a_count_left_at_the_apps_stop_is_logged_then(
    api: EmbeddingAPI, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """With the real clock and schedule: two refusals a moment apart are one ERROR, and the
    count of the second comes when the app stops, its window not ended."""
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    _refusals(api)
    async with (
        serving(api) as base_url,
        Redstring.in_memory(_provider(base_url)) as services,
        started(create_app(Settings(), services=services)) as http,
    ):
        tenant = str(new_tenant())
        for _ in range(2):
            response = await _post(http, RETRIEVE, t=tenant, mode="SEMANTIC")
            assert response.status_code == 200
        assert len(_error_lines(caplog)) == 1

    [_, count] = _error_lines(caplog)
    assert count.getMessage().startswith(
        "the embedding provider refuses the server's requests, at retrieve: "
    )
    assert " (1 like it left out in the last 0 s; this is the last)" in count.getMessage()


def _provider(base_url: str) -> OpenAICompatibleEmbeddings:
    return OpenAICompatibleEmbeddings(
        base_url=base_url,
        model="text-embedding-unknown",
        dimension=8,
        api_key_env=KEY_VARIABLE,
        retry=RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.01),
    )


LAST_OUTCOME = "redstring_embedding_last_outcome"


async def _last_outcomes(http: httpx.AsyncClient) -> dict[str, float]:
    text = (await http.get("/metrics")).text
    return {
        sample.labels["outcome"]: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == LAST_OUTCOME
    }


def _only(outcome: str) -> dict[str, float]:
    return {each: float(each == outcome) for each in ("ok", "refused", "unavailable", "failed")}


async def test_the_last_outcome_gauge_follows_the_provider_from_call_to_call(
    api: EmbeddingAPI, http: httpx.AsyncClient
) -> None:
    """A key refused, then accepted again, then a provider down: the gauge says each, where
    the start check's would still say what it found at start."""
    tenant = str(new_tenant())
    assert await _last_outcomes(http) == {outcome: 0.0 for outcome in _only("ok")}

    _refusals(api)
    await _post(http, RETRIEVE, t=tenant, mode="SEMANTIC")
    assert await _last_outcomes(http) == _only("refused")

    api.failures.clear()  # the key is accepted again
    await _post(http, RETRIEVE, t=tenant, mode="SEMANTIC")
    assert await _last_outcomes(http) == _only("ok")

    api.failures.extend(Failure(503) for _ in range(2))  # down, to the last attempt
    assert (await _post(http, UPSERT, t=tenant)).status_code == 503
    assert await _last_outcomes(http) == _only("unavailable")

    await _post(http, UPSERT, t=tenant)
    assert await _last_outcomes(http) == _only("ok")
    assert api.requests == 5
