"""Once started, the app embeds one short query through the configured provider in the
background: a refusal is one ERROR naming the settings to check, an outage one WARNING,
an answer one DEBUG line; the server is ready either way, and a check still running at
shutdown is cancelled. Against a real HTTP server on a loopback port standing in for an
OpenAI-compatible API, through the app's lifespan."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager

import httpx
import pytest

from redstring import EmbeddingCheck, HashingEmbeddingProvider, Redstring
from redstring.api import create_app
from redstring.api.settings import Settings
from tests.api.support import started
from tests.embeddings.fake_server import EmbeddingAPI, Failure, serving
from tests.processes import START_TIMEOUT, free_loopback_port, redstring_server

KEY_VARIABLE = "REDSTRING_TEST_CHECKED_KEY"
KEY = "sk-test-checked-at-start-4417"
MODEL = "text-embedding-unknown"
PREFIX = "embedding provider: "
GAUGE = "redstring_embedding_start_check"


@pytest.fixture
def api() -> EmbeddingAPI:
    return EmbeddingAPI(dimension=8)


@pytest.fixture
async def base_url(api: EmbeddingAPI, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    async with serving(api) as url:
        yield url


def _openai(base_url: str, *, dimension: int = 8) -> Settings:
    return Settings(
        embeddings="openai",
        embedding_base_url=base_url,
        embedding_model=MODEL,
        embedding_dimension=dimension,
        embedding_api_key_env=KEY_VARIABLE,
        graphiql=False,
    )


def _serving(settings: Settings) -> AbstractAsyncContextManager[httpx.AsyncClient]:
    return started(create_app(settings))


def _check_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage().startswith(PREFIX)]


async def _checked(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The check's lines, once it has logged one."""
    for _ in range(1000):
        lines = _check_lines(caplog)
        if lines:
            await asyncio.sleep(0.02)  # a second line would come now
            return _check_lines(caplog)
        await asyncio.sleep(0.005)
    raise AssertionError("the check logged nothing")


def _at_least(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    """The records at `level` or above, of any logger."""
    return [r for r in caplog.records if r.levelno >= level]


def _gauge(metrics: str) -> dict[str, float]:
    """The start check's gauge by outcome, from `/metrics`' text."""
    found = {}
    for line in metrics.splitlines():
        if line.startswith(GAUGE + "{"):
            labels, value = line.rsplit(" ", 1)
            found[labels.split('outcome="')[1].split('"')[0]] = float(value)
    return found


def _only(outcome: str | None) -> dict[str, float]:
    """The gauge when the check ended with `outcome` (None: not yet)."""
    outcomes = ("ok", "refused", "wrong_dimension", "unavailable", "failed")
    return {name: float(name == outcome) for name in outcomes}


async def test_a_refused_key_is_one_error_naming_the_settings_and_the_server_is_ready(
    api: EmbeddingAPI, base_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    message = f"Incorrect API key provided: {KEY}"
    api.failures.extend(Failure(401, body={"error": {"message": message}}) for _ in range(5))

    with caplog.at_level(logging.DEBUG, logger="redstring.api"):
        async with _serving(_openai(base_url)) as http:
            assert (await http.get("/readyz")).status_code == 200
            [line] = await _checked(caplog)
            assert (await http.get("/readyz")).status_code == 200
            metrics = (await http.get("/metrics")).text

    assert line.levelno == logging.ERROR
    said = line.getMessage()
    assert said.startswith(
        f"{PREFIX}it refuses the server's requests (checked at start): the embedding "
        f"provider at {base_url}/embeddings refused a request for model '{MODEL}' with "
        f"HTTP 401, sent with the key in {KEY_VARIABLE}: "
    )
    assert "; check REDSTRING_EMBEDDING_API_KEY_ENV and the key in the variable it names. " in (
        said
    )
    assert "LEXICAL retrieves" in said
    assert line.exc_info is None  # a configuration fault: its traceback at DEBUG only
    assert _at_least(caplog, logging.ERROR) == [line]
    assert KEY not in caplog.text
    assert api.requests == 1  # refused once, not retried
    assert _gauge(metrics) == _only("refused")


async def test_a_provider_that_does_not_answer_is_one_warning(
    api: EmbeddingAPI, base_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Retried at once (`Retry-After: 0`), whatever the number of attempts.
    api.failures.extend(Failure(503, headers={"Retry-After": "0"}) for _ in range(20))

    with caplog.at_level(logging.DEBUG, logger="redstring.api"):
        async with _serving(_openai(base_url)) as http:
            [line] = await _checked(caplog)
            assert (await http.get("/readyz")).status_code == 200
            metrics = (await http.get("/metrics")).text

    assert line.levelno == logging.WARNING
    said = line.getMessage()
    assert said.startswith(
        f"{PREFIX}it does not answer (checked at start): embedding request to "
        f"{base_url}/embeddings for model '{MODEL}' failed after "
    )
    assert "SERVICE_UNAVAILABLE" in said
    assert line.exc_info is None
    assert _at_least(caplog, logging.ERROR) == []
    assert _gauge(metrics) == _only("unavailable")


async def test_a_provider_that_answers_is_one_debug_line_with_its_time(
    api: EmbeddingAPI, base_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="redstring.api"):
        async with _serving(_openai(base_url)) as http:
            [line] = await _checked(caplog)
            metrics = (await http.get("/metrics")).text

    assert line.levelno == logging.DEBUG
    said = line.getMessage()
    assert said.startswith(f"{PREFIX}answered the check at start in ")
    assert said.endswith(f" ms (openai/{MODEL}/8, a vector of dimension 8)")
    assert _at_least(caplog, logging.ERROR) == []
    assert [r for r in _at_least(caplog, logging.WARNING) if "embedding" in r.getMessage()] == []
    # One query, sent past the query cache: counted as a provider call, not a cache miss.
    assert api.requests == 1
    [text] = api.bodies[0]["input"]
    assert 0 < len(text) <= 40
    assert 'redstring_embedding_duration_seconds_count{kind="query"} 1.0' in metrics
    assert "redstring_query_cache_misses_total 0.0" in metrics
    assert _gauge(metrics) == _only("ok")


async def test_vectors_of_another_dimension_are_one_error_naming_the_dimension(
    api: EmbeddingAPI, base_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The server embeds to 8 floats; the settings say 4 (and the stores were built
    for 4, so nothing at start compares them with what the provider gives)."""
    with caplog.at_level(logging.DEBUG, logger="redstring.api"):
        async with _serving(_openai(base_url, dimension=4)) as http:
            [line] = await _checked(caplog)
            assert (await http.get("/readyz")).status_code == 200
            metrics = (await http.get("/metrics")).text

    assert line.levelno == logging.ERROR
    said = line.getMessage()
    assert said.startswith(
        f"{PREFIX}its vectors are not of the configured dimension (checked at start): "
        f"the embedding of model '{MODEL}' from {base_url}/embeddings has dimension 8, "
        "expected 4; check REDSTRING_EMBEDDING_DIMENSION, or REDSTRING_EMBEDDING_MODEL. "
    )
    assert _at_least(caplog, logging.ERROR) == [line]
    assert _gauge(metrics) == _only("wrong_dimension")


async def test_the_default_provider_answers_at_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="redstring.api"):
        async with _serving(Settings(graphiql=False)) as http:
            [line] = await _checked(caplog)
            metrics = (await http.get("/metrics")).text
    assert line.levelno == logging.DEBUG
    assert line.getMessage().startswith(f"{PREFIX}answered the check at start in ")
    assert "(static/" in line.getMessage()
    assert _gauge(metrics) == _only("ok")


async def test_an_unexpected_failure_is_an_error_with_its_traceback(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(services: Redstring) -> EmbeddingCheck:
        raise RuntimeError("a provider's\nbug")

    monkeypatch.setattr(Redstring, "check_embeddings", broken)
    with caplog.at_level(logging.DEBUG, logger="redstring.api"):
        async with _serving(Settings(embeddings="hashing", graphiql=False)) as http:
            [line] = await _checked(caplog)
            assert (await http.get("/readyz")).status_code == 200
            metrics = (await http.get("/metrics")).text
    assert line.levelno == logging.ERROR
    assert line.getMessage() == f"{PREFIX}the check at start failed: RuntimeError: a provider's bug"
    assert line.exc_info is not None
    assert _gauge(metrics) == _only("failed")


async def test_a_check_still_running_at_shutdown_is_cancelled(
    api: EmbeddingAPI, base_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A provider that takes its time (here 30 s) delays neither readiness nor the stop."""
    api.failures.append(Failure(200, stall=30.0))

    with caplog.at_level(logging.DEBUG, logger="redstring.api"):
        async with asyncio.timeout(10):
            async with _serving(_openai(base_url)) as http:
                for _ in range(1000):
                    if api.in_flight:
                        break
                    await asyncio.sleep(0.005)
                assert api.in_flight == 1
                assert (await http.get("/readyz")).status_code == 200
                assert _gauge((await http.get("/metrics")).text) == _only(None)
                stopping = time.perf_counter()
            stopped = time.perf_counter() - stopping
    assert stopped < 5
    await asyncio.sleep(0.05)
    assert _check_lines(caplog) == []


class Counted(HashingEmbeddingProvider):
    queries = 0

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        Counted.queries += 1
        return await super().embed_query(texts)


async def test_injected_services_are_left_to_their_embedder() -> None:
    """An app given its services does no I/O of its own at start: the embedder checks
    with `Redstring.check_embeddings` when it wants."""
    services = Redstring.in_memory(Counted(8))
    app = create_app(Settings(graphiql=False), services=services)
    async with app.router.lifespan_context(app):
        await asyncio.sleep(0.05)
    assert Counted.queries == 0


async def test_each_worker_checks_once_and_metrics_count_the_workers(
    api: EmbeddingAPI, base_url: str
) -> None:
    """`redstring serve --workers 2`: one request and one ERROR line a worker, and the
    gauge of any worker's `/metrics` sums them."""
    api.failures.extend(Failure(401) for _ in range(5))
    port = free_loopback_port()
    process = redstring_server(
        port,
        demo=False,
        graphiql="false",
        workers="2",
        embeddings="openai",
        embedding_base_url=base_url,
        embedding_model=MODEL,
        embedding_dimension="8",
        embedding_api_key_env=KEY_VARIABLE,
    )
    try:
        await asyncio.to_thread(process.wait_until_answering, f"http://127.0.0.1:{port}/readyz")
        async with asyncio.timeout(START_TIMEOUT), httpx.AsyncClient() as http:
            while True:
                metrics = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
                if _gauge(metrics).get("refused") == 2:
                    break
                await asyncio.sleep(0.05)
    finally:
        process.stop()
    assert api.requests == 2
    refusals = [line for line in process.output.splitlines() if PREFIX + "it refuses" in line]
    assert len(refusals) == 2, process.output
    assert all("ERROR" in line for line in refusals)
    assert _gauge(metrics) == {**_only("refused"), "refused": 2.0}
