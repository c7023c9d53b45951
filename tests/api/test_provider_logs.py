"""What `redstring serve` logs of its calls to an OpenAI-compatible provider: nothing of
the HTTP client's own (httpx logs a line per request at INFO, with the provider's URL), so
a request is its one access line. A real server process, its provider a real HTTP server
on a loopback port."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from redstring.testing import new_tenant
from tests.api.support import ACME_RETRIEVE as RETRIEVE
from tests.api.support import ACME_UPSERT as UPSERT
from tests.embeddings.fake_server import EmbeddingAPI, serving
from tests.processes import free_loopback_port, redstring_server


@pytest.mark.parametrize(("log_format", "log_level"), [("text", "info"), ("json", "debug")])
async def test_calls_to_the_provider_leave_no_line_of_the_http_client(
    log_format: str, log_level: str
) -> None:
    api = EmbeddingAPI(dimension=8)
    port = free_loopback_port()
    async with serving(api) as base_url:
        process = redstring_server(
            port,
            graphiql="false",
            log_format=log_format,
            log_level=log_level,
            embeddings="openai",
            embedding_base_url=base_url,
            embedding_model="m",
            embedding_dimension="8",
            embedding_api_key_env="REDSTRING_TEST_NO_KEY",
        )
        try:
            await asyncio.to_thread(process.wait_until_answering, f"http://127.0.0.1:{port}/readyz")
            tenant = str(new_tenant())
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                for query in (UPSERT, RETRIEVE):
                    answer = await http.post(
                        "/graphql", json={"query": query, "variables": {"t": tenant}}
                    )
                    assert answer.status_code == 200, answer.text
                    assert "errors" not in answer.json(), answer.text
        finally:
            process.stop()
    assert api.requests >= 3  # the start-up check, the upsert's document, the query
    lines = process.output.splitlines()
    assert not [line for line in lines if "httpx" in line or "httpcore" in line], process.output
    assert not [line for line in lines if "/v1/embeddings" in line], process.output
    graphql = [line for line in lines if "/graphql" in line]
    assert len(graphql) == 2, process.output
    if log_format == "json":
        assert {json.loads(line)["logger"] for line in graphql} == {"redstring.api.access"}
    else:
        assert all(line.startswith("INFO redstring.api.access: ") for line in graphql)
