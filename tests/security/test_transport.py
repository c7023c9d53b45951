"""The transport keeps the error contract: every failure of a request, before, around or
after GraphQL execution, is a GraphQL JSON body with `extensions.code`, and what a client
sends is bounded (body size, JSON nesting, run time) before it can cost the server.

Most tests go through `httpx.ASGITransport` over `create_app`; the body and JSON limits
are also tried against a real uvicorn, which reads bodies from a socket as they come.
"""

from __future__ import annotations

import asyncio
import datetime
import gzip
import json
import logging
import select
import socket
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import Response

from redstring import Entity, EntityId, GraphStore, RelationshipPlace, TenantId, VectorStore
from redstring.api import create_app
from redstring.api.demo import DEMO_TENANT_ID, load_demo
from redstring.api.errors import ErrorCode, RequestRefusedError
from redstring.api.settings import Settings
from redstring.composition.client import Redstring
from redstring.domain.relationship import Direction, Relationship
from redstring.domain.vectors import VectorMatch
from redstring.testing import CountingGraphStore
from tests.api.support import memory_services
from tests.api.test_retrieve import ACME_ID
from tests.processes import free_loopback_port, redstring_server

DEMO = str(DEMO_TENANT_ID)
RETRIEVE = """query ($t: ID!) {
  retrieve(query: "Acme Corp", tenantId: $t, k: 3) { matches { entity { name } } }
}"""
WALK = """query ($t: ID!) {
  retrieve(query: "Acme Corp", tenantId: $t, k: 3, mode: LEXICAL) {
    matches { entity { name relationships { id } } }
  }
}"""
DELETE = f'mutation {{ deleteEntities(tenantId: "{DEMO}", ids: []) {{ count }} }}'
MIB = 1 << 20
TWENTY_MB = 20_000_000
CHUNK = 1 << 16
JSON = {"content-type": "application/json"}
HANG_GUARD = 10.0  # seconds: only fails a test that would otherwise hang


def deep_json(levels: int) -> str:
    return "[" * levels + "]" * levels


def deep_variable_body(levels: int) -> bytes:
    return f'{{"query": "{{ __typename }}", "variables": {{"v": {deep_json(levels)}}}}}'.encode()


@pytest.fixture(scope="module")
def demo_services() -> Redstring:
    services = memory_services()
    asyncio.run(load_demo(services))
    return services


@pytest.fixture
async def http(demo_services: Redstring) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(demo_services) as client:
        yield client


def client_for(services: Redstring | None, **settings: Any) -> httpx.AsyncClient:
    """A client of the app over `services`, GraphiQL off (its start-up warning is no
    request's), with `settings` as given."""
    app = create_app(Settings(graphiql=False, **settings), services=services)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


def the_error(response: httpx.Response) -> dict[str, Any]:
    """The one coded error of a refused response, checked for the contract's shape."""
    assert response.headers["content-type"].startswith("application/json"), response.text
    assert "Traceback" not in response.text
    body = response.json()
    assert set(body) == {"errors"}, body
    [error] = body["errors"]
    assert isinstance(error["message"], str)
    assert error["message"]
    assert set(error["extensions"]) == {"code"}
    return dict(error)


def expected_logging_only(caplog: pytest.LogCaptureFixture) -> None:
    """A refused request logs one INFO line at most, and nothing at WARNING or with a stack."""
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert [r for r in caplog.records if r.exc_info] == []
    assert len([r for r in caplog.records if r.name == "redstring.api"]) <= 1


# --- JSON nesting ---------------------------------------------------------------------


async def test_a_variable_nested_100000_deep_is_a_coded_400(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Was a bare `500 Internal Server Error` text: RecursionError in the JSON parser."""
    with caplog.at_level(logging.DEBUG):
        response = await http.post(
            "/graphql",
            content=deep_variable_body(100_000),
            headers=JSON,
        )
    assert response.status_code == 400
    error = the_error(response)
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert "deeper than 64" in error["message"]
    expected_logging_only(caplog)


async def test_the_nesting_cap_holds_for_get_variables(http: httpx.AsyncClient) -> None:
    response = await http.get(
        "/graphql", params={"query": "{ __typename }", "variables": f'{{"v": {deep_json(5000)}}}'}
    )
    assert response.status_code == 400
    assert the_error(response)["extensions"]["code"] == "BAD_REQUEST"


@pytest.mark.parametrize("name", ["variables", "extensions"])
async def test_a_get_parameter_that_is_not_json_is_named(
    http: httpx.AsyncClient, name: str
) -> None:
    response = await http.get("/graphql", params={"query": "{ __typename }", name: "nope"})
    assert response.status_code == 400
    error = the_error(response)
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert error["message"].startswith(f"The {name} parameter is not JSON: ")


@pytest.mark.parametrize(
    ("body", "key"),
    [
        (b'{"query": "{ __typename }", "query": "{ x }"}', "query"),
        (b'{"query": "{ __typename }", "operationName": null, "operationName": "A"}',
         "operationName"),
        (b'{"query": "query ($t: ID!) { __typename }", "variables": {"t": "a", "t": "b"}}', "t"),
        (b'{"query": "{ __typename }", "extensions": {"e": {"x": 1, "x": 2}}}', "x"),
    ],
)  # fmt: skip
async def test_a_key_given_twice_in_the_body_is_400(
    http: httpx.AsyncClient, body: bytes, key: str
) -> None:
    """A proxy or a log in front may read the first value, where `json` keeps the last:
    refused, as `redstring load` refuses such a line, by the same rule."""
    response = await http.post("/graphql", content=body, headers=JSON)
    assert response.status_code == 400
    error = the_error(response)
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert error["message"] == (
        f'The request is ambiguous: the key "{key}" is given twice in one object'
    )


async def test_a_key_given_twice_in_get_variables_is_400(http: httpx.AsyncClient) -> None:
    variables = '{"t": "a", "t": "b"}'
    response = await http.get(
        "/graphql", params={"query": "query ($t: ID) { __typename }", "variables": variables}
    )
    assert response.status_code == 400
    assert the_error(response)["message"] == (
        'The variables parameter is ambiguous: the key "t" is given twice in one object'
    )


@pytest.mark.parametrize("name", ["query", "variables", "operationName", "extensions"])
async def test_a_graphql_parameter_given_twice_over_get_is_400(
    http: httpx.AsyncClient, name: str
) -> None:
    """`?query=A&query=B`: which one runs is up to each reader of the URL."""
    given = {"query": "{ __typename }", "variables": "{}", "operationName": "", "extensions": "{}"}
    params = [("query", "{ __typename }"), (name, given[name]), (name, given[name])]
    if name == "query":
        params = params[1:]
    response = await http.get("/graphql", params=params)
    assert response.status_code == 400
    error = the_error(response)
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert error["message"] == f"The {name} parameter is given twice"


async def test_other_parameters_given_twice_over_get_are_ignored(http: httpx.AsyncClient) -> None:
    params = [("query", "{ __typename }"), ("utm", "a"), ("utm", "b")]
    response = await http.get("/graphql", params=params)
    assert response.json() == {"data": {"__typename": "Query"}}


async def test_the_nesting_cap_is_exact(demo_services: Redstring) -> None:
    """The body and `variables` are two levels: a variable of depth `cap - 2` passes the
    transport (and is then GraphQL's to judge: a list is no Boolean), one more does not."""
    query = "query ($v: Boolean!) { __typename @include(if: $v) }"
    async with client_for(demo_services, max_json_depth=8) as http:
        fits = await http.post("/graphql", json={"query": query, "variables": {"v": [[[[[[]]]]]]}})
        over = await http.post(
            "/graphql", json={"query": query, "variables": {"v": [[[[[[[]]]]]]]}}
        )
    assert fits.status_code == 200, fits.text
    assert fits.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert over.status_code == 400
    assert the_error(over)["extensions"]["code"] == "BAD_REQUEST"


async def test_brackets_inside_strings_are_not_nesting(http: httpx.AsyncClient) -> None:
    text = '\\"[ ' * 100 + "{" * 100
    response = await http.post(
        "/graphql",
        json={
            "query": """query ($q: String!, $t: ID!) {  # [[[[
                retrieve(query: $q, tenantId: $t, k: 1) { query }
            }""",
            "variables": {"q": text, "t": DEMO},
        },
    )
    assert response.status_code == 200, response.text
    assert response.json()["data"]["retrieve"]["query"] == text


async def test_a_deep_body_in_utf16_is_refused_too(http: httpx.AsyncClient) -> None:
    """The scan reads text, not bytes. In UTF-16-LE "\u4122" is the bytes `"A`: to a scan
    of bytes that quote flips which quotes open strings, and the deep list after it
    would sit inside a string that is not there, up to the quote of `"x"`."""
    deep = deep_json(10_000)
    variables = f'{{"v": "\u4122", "w": {deep}, "x": 1}}'
    text = f'{{"query": "{{ __typename }}", "variables": {variables}}}'
    response = await http.post("/graphql", content=text.encode("utf-16"), headers=JSON)
    assert response.status_code == 400
    assert "deeper than" in the_error(response)["message"]


# --- malformed requests -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(b'{"query": "{ __typename }"', "not JSON", id="malformed-json"),
        pytest.param(b"{}", "no `query`", id="no-query"),
        pytest.param(b'{"query": null}', "no `query`", id="null-query"),
        pytest.param(b'{"query": 42}', "no `query`", id="query-not-a-string"),
        pytest.param(b'"{ __typename }"', "JSON object", id="body-a-string"),
        pytest.param(b"42", "JSON object", id="body-a-number"),
        pytest.param(b"null", "JSON object", id="body-null"),
        pytest.param(b'[{"query": "{ __typename }"}]', "Batched", id="body-a-list"),
        pytest.param(
            b'{"query": "{ __typename }", "variables": [1]}', "`variables`", id="variables-a-list"
        ),
        pytest.param(
            b'{"query": "{ __typename }", "variables": "{}"}',
            "`variables`",
            id="variables-a-string",
        ),
        pytest.param(
            b'{"query": "{ __typename }", "operationName": 5}',
            "`operationName`",
            id="operation-name-a-number",
        ),
        pytest.param(b"\xff\xfe\xfd{}", "not JSON", id="not-unicode"),
    ],
)
async def test_a_malformed_request_is_a_coded_400(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture, content: bytes, message: str
) -> None:
    """Were plain-text 400s ("Unable to parse request body as JSON", ...) or a 500."""
    with caplog.at_level(logging.DEBUG):
        response = await http.post("/graphql", content=content, headers=JSON)
    assert response.status_code == 400
    error = the_error(response)
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert message in error["message"]
    expected_logging_only(caplog)


# Python reads no integer of more digits than this (4300 unless the process says otherwise).
MAX_DIGITS = sys.get_int_max_str_digits()


def _integer_variable(digits: int) -> str:
    return f'{{"x": {"9" * digits}}}'


async def _send_variables(http: httpx.AsyncClient, method: str, variables: str) -> httpx.Response:
    if method == "GET":
        return await http.get(
            "/graphql", params={"query": "{ __typename }", "variables": variables}
        )
    body = f'{{"query": "{{ __typename }}", "variables": {variables}}}'
    return await http.post("/graphql", content=body.encode(), headers=JSON)


@pytest.mark.parametrize(
    ("method", "named"), [("POST", "The request"), ("GET", "The variables parameter")]
)
async def test_an_integer_of_too_many_digits_is_a_coded_400(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture, method: str, named: str
) -> None:
    """Was a 500 with a traceback at ERROR: past the limit, `json.loads` raises a plain
    `ValueError`, not a `JSONDecodeError`."""
    with caplog.at_level(logging.DEBUG):
        response = await _send_variables(http, method, _integer_variable(MAX_DIGITS + 1))
    assert response.status_code == 400
    error = the_error(response)
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert error["message"] == f"{named} holds an integer of more than {MAX_DIGITS} digits"
    expected_logging_only(caplog)
    at_the_limit = await _send_variables(http, method, _integer_variable(MAX_DIGITS))
    assert at_the_limit.json() == {"data": {"__typename": "Query"}}


# JSON lets a lone surrogate through, as an escape or as bytes read with `surrogatepass`.
LONE_SURROGATE = "\ud800"
NAMED_BY_A_LONE_SURROGATE = {"query": "{ __typename }", "operationName": LONE_SURROGATE}


def _surrogate_body(encoding: str) -> bytes:
    return json.dumps(NAMED_BY_A_LONE_SURROGATE, ensure_ascii=False).encode(
        encoding, "surrogatepass"
    )


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(json.dumps(NAMED_BY_A_LONE_SURROGATE).encode(), id="json-escape"),
        pytest.param(_surrogate_body("utf-8"), id="utf-8-bytes"),
        pytest.param(_surrogate_body("utf-16-le"), id="utf-16-bytes"),
    ],
)
async def test_a_refusal_echoing_a_lone_surrogate_is_a_coded_400(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture, content: bytes
) -> None:
    """Was a 500 with a traceback at ERROR: the refusal's body, which names the operation,
    could not be encoded in UTF-8."""
    with caplog.at_level(logging.DEBUG):
        response = await http.post("/graphql", content=content, headers=JSON)
    assert response.status_code == 400
    error = the_error(response)
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert error["message"] == f'Unknown operation named "{LONE_SURROGATE}".'
    expected_logging_only(caplog)


async def test_an_execution_error_echoing_a_lone_surrogate_is_coded(
    http: httpx.AsyncClient,
) -> None:
    """A result is written as a refusal is (`json_body`), whatever its messages echo."""
    query = "query ($t: ID!, $id: ID!) { entity(tenantId: $t, id: $id) { name } }"
    content = json.dumps({"query": query, "variables": {"t": DEMO, "id": LONE_SURROGATE}})
    response = await http.post("/graphql", content=content.encode(), headers=JSON)
    assert response.status_code == 200
    [error] = response.json()["errors"]
    assert error["extensions"] == {"code": "BAD_USER_INPUT"}
    assert error["message"] == f"id must be a UUID, got {LONE_SURROGATE!r}"


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None]
)
async def test_a_body_that_is_not_json_is_415(
    http: httpx.AsyncClient, content_type: str | None
) -> None:
    headers = {"content-type": content_type} if content_type else {}
    response = await http.post("/graphql", content=b'{"query": "{ __typename }"}', headers=headers)
    assert response.status_code == 415
    assert the_error(response)["extensions"]["code"] == "UNSUPPORTED_MEDIA_TYPE"


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json; charset=utf-8",
        "APPLICATION/JSON",
        "Application/Json; Charset=UTF-8",
        "application/JSON ; charset=UTF-8",
    ],
)
async def test_json_in_any_case_with_a_charset_is_json(
    http: httpx.AsyncClient, content_type: str
) -> None:
    """A media type is case-insensitive (RFC 9110): upper case was refused with 415."""
    response = await http.post(
        "/graphql",
        content=b'{"query": "{ __typename }"}',
        headers={"content-type": content_type},
    )
    assert response.json() == {"data": {"__typename": "Query"}}


@pytest.mark.parametrize(
    ("codings", "named"),
    [
        (["gzip"], "gzip"),
        (["br"], "br"),
        (["GZIP"], "GZIP"),
        (["gzip, identity"], "gzip"),
        (["identity", "deflate"], "deflate"),  # a second header line
        (["x-anything"], "x-anything"),
    ],
)
async def test_a_body_in_a_content_coding_is_415_naming_it(
    http: httpx.AsyncClient, codings: list[str], named: str
) -> None:
    """Not decoded (a small gzip body can inflate without bound), nor read as if it were
    not encoded: a gzip body was a 400 `not JSON`, a plain one said to be `br` ran."""
    body = b'{"query": "{ __typename }"}'
    for content in (gzip.compress(body), body):
        headers = [("content-type", "application/json")]
        headers += [("content-encoding", coding) for coding in codings]
        response = await http.post("/graphql", content=content, headers=headers)
        assert response.status_code == 415
        assert response.headers["accept-encoding"] == "identity"
        error = the_error(response)
        assert error["extensions"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
        assert error["message"] == (
            f"The request body must not be encoded (Content-Encoding: identity), got {named}"
        )


@pytest.mark.parametrize("codings", [["identity"], ["IDENTITY"], [""], ["identity", " identity"]])
async def test_a_body_said_to_be_in_the_identity_coding_runs(
    http: httpx.AsyncClient, codings: list[str]
) -> None:
    headers = [("content-type", "application/json")]
    headers += [("content-encoding", coding) for coding in codings]
    response = await http.post("/graphql", content=b'{"query": "{ __typename }"}', headers=headers)
    assert response.json() == {"data": {"__typename": "Query"}}


@pytest.mark.parametrize(
    ("codings", "named"),
    [(["gzip, chunked"], "gzip"), (["br", "chunked"], "br"), (["GZIP, Chunked"], "GZIP")],
)
async def test_a_body_in_a_transfer_coding_but_chunked_is_415_naming_it(
    http: httpx.AsyncClient, codings: list[str], named: str
) -> None:
    headers = [("content-type", "application/json")]
    headers += [("transfer-encoding", coding) for coding in codings]
    response = await http.post("/graphql", content=b'{"query": "{ __typename }"}', headers=headers)
    assert response.status_code == 415
    error = the_error(response)
    assert error["extensions"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
    assert error["message"].endswith(f"(Transfer-Encoding: chunked), got {named}")


async def test_a_request_with_two_content_types_is_400(http: httpx.AsyncClient) -> None:
    """Which one a proxy in front judged the body by is unknown (this server read the
    first: `application/json` then `text/plain` ran, the other way round was a 415)."""
    for types in (["application/json", "text/plain"], ["application/json"] * 2):
        headers = [("content-type", media_type) for media_type in types]
        response = await http.post(
            "/graphql", content=b'{"query": "{ __typename }"}', headers=headers
        )
        assert response.status_code == 400
        error = the_error(response)
        assert error["extensions"]["code"] == "BAD_REQUEST"
        assert error["message"] == "The request has 2 Content-Type headers; send one"


async def test_a_mutation_over_get_is_405_with_allow(http: httpx.AsyncClient) -> None:
    response = await http.get("/graphql", params={"query": DELETE})
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert the_error(response)["extensions"]["code"] == "METHOD_NOT_ALLOWED"
    query = await http.get("/graphql", params={"query": "{ __typename }"})
    assert query.json() == {"data": {"__typename": "Query"}}


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "OPTIONS"])
async def test_an_unknown_method_on_graphql_is_405_json(
    http: httpx.AsyncClient, method: str
) -> None:
    response = await http.request(method, "/graphql", json={"query": "{ __typename }"})
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD, POST"
    assert the_error(response)["extensions"]["code"] == "METHOD_NOT_ALLOWED"


async def test_head_on_graphql_is_answered_as_get(http: httpx.AsyncClient) -> None:
    """RFC 9110: HEAD is GET without its body (which the server leaves out); a mutation
    is refused as over GET."""
    query = await http.head("/graphql", params={"query": "{ __typename }"})
    assert query.status_code == 200
    assert query.headers["content-type"] == "application/json"
    mutation = await http.head("/graphql", params={"query": DELETE})
    assert mutation.status_code == 405
    assert mutation.headers["allow"] == "POST"


METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]


@pytest.mark.parametrize(
    "path", ["/graphql", "/healthz", "/readyz", "/metrics", "/", "/favicon.ico"]
)
async def test_a_405_s_allow_lists_exactly_the_methods_its_path_serves(
    http: httpx.AsyncClient, path: str
) -> None:
    """docs/api.md, "Errors": every method `Allow` names is served (answered otherwise
    than 405), every other one is refused with the same `Allow`, in one order."""
    allow = (await http.put(path)).headers["allow"]
    allowed = allow.split(", ")
    assert allowed == sorted(allowed)
    for method in METHODS:
        response = await http.request(method, path)
        if method in allowed:
            assert response.status_code != 405, (method, path)
        else:
            assert response.status_code == 405, (method, path)
            assert response.headers["allow"] == allow, (method, path)


async def test_the_rest_of_the_app_answers_with_codes(http: httpx.AsyncClient) -> None:
    missing = await http.get("/nowhere")
    assert missing.status_code == 404
    assert the_error(missing)["extensions"]["code"] == "NOT_FOUND"
    wrong = await http.post("/healthz")
    assert wrong.status_code == 405
    assert "GET" in wrong.headers["allow"]
    assert the_error(wrong)["extensions"]["code"] == "METHOD_NOT_ALLOWED"


# --- body size --------------------------------------------------------------------------


class CountedBody:
    """A request body of `total` bytes in chunks, counting how many bytes were pulled."""

    def __init__(self, total: int = TWENTY_MB) -> None:
        self.total = total
        self.pulled = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while self.pulled < self.total:
            chunk = b" " * min(CHUNK, self.total - self.pulled)
            self.pulled += len(chunk)
            yield chunk


async def test_a_declared_length_over_the_limit_is_413_before_reading(
    http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    body = CountedBody()
    with caplog.at_level(logging.DEBUG):
        response = await http.post(
            "/graphql", content=body, headers={**JSON, "content-length": str(TWENTY_MB)}
        )
    assert response.status_code == 413
    assert the_error(response)["extensions"]["code"] == "PAYLOAD_TOO_LARGE"
    assert response.headers["connection"] == "close"
    assert body.pulled == 0
    expected_logging_only(caplog)


async def test_a_chunked_body_is_counted_and_cut_at_the_limit(http: httpx.AsyncClient) -> None:
    body = CountedBody()
    response = await http.post("/graphql", content=body, headers=JSON)
    assert response.status_code == 413
    assert the_error(response)["extensions"]["code"] == "PAYLOAD_TOO_LARGE"
    assert body.pulled <= MIB + CHUNK  # read up to the limit, never the 20 MB


async def test_a_body_of_exactly_the_limit_is_served(demo_services: Redstring) -> None:
    request = b'{"query": "{ __typename }"}'
    limit = 4096
    async with client_for(demo_services, max_body_bytes=limit) as http:
        fits = await http.post("/graphql", content=request.ljust(limit), headers=JSON)
        over = await http.post("/graphql", content=request.ljust(limit + 1), headers=JSON)
    assert fits.json() == {"data": {"__typename": "Query"}}
    assert over.status_code == 413


# --- deadline ---------------------------------------------------------------------------


class Stall:
    """Blocks until cancelled, and records that it was."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def __call__(self) -> None:
        self.entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise


class StallingGraphStore(CountingGraphStore):
    """The lexical channel's read and the relationship walk stall (each optionally)."""

    def __init__(self, inner: GraphStore, *, lexical: bool, walk: bool) -> None:
        super().__init__(inner)
        self.lexical = Stall() if lexical else None
        self.walk = Stall() if walk else None

    async def find_lexical_candidates(self, *args: Any, **kwargs: Any) -> Any:
        if self.lexical:
            await self.lexical()
        return await super().find_lexical_candidates(*args, **kwargs)

    async def relationships_of(
        self,
        entity_ids: Sequence[EntityId],
        tenant_id: TenantId,
        *,
        direction: Direction = Direction.BOTH,
        types: Sequence[str] | None = None,
        limit_per_entity: int | None = None,
        after: RelationshipPlace | Relationship | None = None,
    ) -> dict[EntityId, list[Relationship]]:
        if self.walk:
            await self.walk()
        return await super().relationships_of(
            entity_ids,
            tenant_id,
            direction=direction,
            types=types,
            limit_per_entity=limit_per_entity,
            after=after,
        )


class StallingVectorStore:
    """A vector store whose search stalls."""

    def __init__(self, inner: VectorStore) -> None:
        self.inner = inner
        self.search_stall = Stall()

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def upsert(self, records: Any) -> None:
        await self.inner.upsert(records)

    async def search(self, *args: Any, **kwargs: Any) -> list[VectorMatch]:
        await self.search_stall()
        return await self.inner.search(*args, **kwargs)

    async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        await self.inner.delete(entity_ids, tenant_id)


async def _past_deadline(services: Redstring, query: str) -> httpx.Response:
    async with client_for(services, request_timeout=0.2) as http:
        return await asyncio.wait_for(
            http.post("/graphql", json={"query": query, "variables": {"t": DEMO}}), HANG_GUARD
        )


def assert_timed_out(response: httpx.Response) -> None:
    assert response.status_code == 504
    error = the_error(response)
    assert error["extensions"]["code"] == "REQUEST_TIMEOUT"
    assert "0.2 s" in error["message"]


async def test_the_deadline_cancels_both_retrieval_channels(
    demo_services: Redstring, caplog: pytest.LogCaptureFixture
) -> None:
    graph = StallingGraphStore(demo_services.graph, lexical=True, walk=False)
    vectors = StallingVectorStore(demo_services.vectors)
    services = Redstring(embeddings=demo_services.embeddings, vectors=vectors, graph=graph)
    with caplog.at_level(logging.DEBUG):
        response = await _past_deadline(services, RETRIEVE)
    assert_timed_out(response)
    assert graph.lexical is not None
    for stall in (graph.lexical, vectors.search_stall):
        assert stall.entered.is_set()
        assert stall.cancelled.is_set()
    expected_logging_only(caplog)


async def test_the_deadline_cancels_a_batched_walk(demo_services: Redstring) -> None:
    """The relationship walk runs in a DataLoader's own task; it is cancelled too."""
    graph = StallingGraphStore(demo_services.graph, lexical=False, walk=True)
    services = Redstring(
        embeddings=demo_services.embeddings, vectors=demo_services.vectors, graph=graph
    )
    response = await _past_deadline(services, WALK)
    assert_timed_out(response)
    assert graph.walk is not None
    await asyncio.sleep(0)  # the loader's task sees its cancellation on its next step
    assert graph.walk.entered.is_set()
    assert graph.walk.cancelled.is_set()


async def test_a_request_within_its_deadline_is_served(demo_services: Redstring) -> None:
    async with client_for(demo_services, request_timeout=5.0) as http:
        response = await http.post("/graphql", json={"query": WALK, "variables": {"t": DEMO}})
    assert response.status_code == 200
    assert response.json()["data"]["retrieve"]["matches"]


# --- unexpected exceptions --------------------------------------------------------------


class UnencodableGraphStore(CountingGraphStore):
    """Answers entities carrying a property no JSON encoder writes (a store bug: a
    driver's date object), so the request fails while its response is encoded."""

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        found = await super().get_entities(ids, tenant_id)
        secret = datetime.date(1999, 12, 31)
        # Built unchecked, as a store's bug would: an entity's own check refuses a date.
        return [
            Entity.model_construct(**{**dict(e), "properties": {"since": secret}}) for e in found
        ]


def assert_internal_and_logged_once(
    response: httpx.Response, caplog: pytest.LogCaptureFixture, secret: str
) -> None:
    assert response.status_code == 500
    error = the_error(response)
    assert error == {
        "message": "Internal server error",
        "extensions": {"code": "INTERNAL_SERVER_ERROR"},
    }
    assert secret not in response.text
    logged = [r for r in caplog.records if r.exc_info]
    assert len(logged) == 1
    assert logged[0].levelno == logging.ERROR
    assert secret in caplog.text  # the cause is logged, server-side only


async def test_an_exception_in_the_response_path_is_a_coded_500(
    demo_services: Redstring, caplog: pytest.LogCaptureFixture
) -> None:
    graph = UnencodableGraphStore(demo_services.graph)
    services = Redstring(
        embeddings=demo_services.embeddings, vectors=demo_services.vectors, graph=graph
    )
    async with client_for(services) as http:
        with caplog.at_level(logging.DEBUG):
            response = await http.post(
                "/graphql",
                json={
                    "query": "query ($t: ID!, $id: ID!) { entity(tenantId: $t, id: $id) { properties } }",
                    "variables": {"t": DEMO, "id": ACME_ID},
                },
            )
    assert_internal_and_logged_once(response, caplog, "date is not JSON serializable")


async def test_an_exception_in_get_context_is_a_coded_500(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An app whose services never opened (its lifespan not run) fails in `get_context`."""
    async with client_for(None) as http:
        with caplog.at_level(logging.DEBUG):
            response = await http.post("/graphql", json={"query": "{ __typename }"})
    assert_internal_and_logged_once(response, caplog, "services are not open")


async def test_an_exception_outside_graphql_is_a_coded_500(demo_services: Redstring) -> None:
    app = create_app(Settings(graphiql=False), services=demo_services)

    async def broken(request: Request) -> Response:
        raise RuntimeError("secret-detail")

    app.add_route("/broken", broken)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        response = await http.get("/broken")
    assert response.status_code == 500
    assert the_error(response)["extensions"]["code"] == "INTERNAL_SERVER_ERROR"
    assert "secret-detail" not in response.text


async def test_a_refusal_raised_by_another_route_keeps_its_status_and_code(
    demo_services: Redstring,
) -> None:
    app = create_app(Settings(graphiql=False), services=demo_services)

    async def guarded(request: Request) -> Response:
        raise RequestRefusedError(401, ErrorCode.UNAUTHENTICATED, "no credentials")

    app.add_route("/guarded", guarded)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as http:
        response = await http.get("/guarded")
    assert response.status_code == 401
    assert the_error(response) == {
        "message": "no credentials",
        "extensions": {"code": "UNAUTHENTICATED"},
    }


async def test_a_client_leaving_mid_body_is_no_internal_error(
    demo_services: Redstring, caplog: pytest.LogCaptureFixture
) -> None:
    """Straight ASGI: the server tells the app the client left before the body ended."""
    app = create_app(Settings(graphiql=False), services=demo_services)
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": b'{"query": ', "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/graphql",
        "raw_path": b"/graphql",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"test"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }
    with caplog.at_level(logging.DEBUG):
        await app(scope, receive, send)
    assert sent[0]["status"] == 400
    assert json.loads(sent[1]["body"])["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
    expected_logging_only(caplog)


# --- a real server ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    port = free_loopback_port()
    process = redstring_server(port, demo=False, graphiql="false")
    try:
        process.wait_until_answering(f"http://127.0.0.1:{port}/readyz")
        yield "127.0.0.1", port
    finally:
        process.stop()


def _status_and_body(response: bytes) -> tuple[int, dict[str, Any]]:
    head, _, body = response.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


def _read_response(sock: socket.socket) -> bytes:
    received = b""
    while b"\r\n\r\n" not in received or not received.rstrip().endswith(b"}"):
        data = sock.recv(CHUNK)
        if not data:
            break
        received += data
    return received


def test_uvicorn_refuses_a_declared_20_mb_body_without_reading_it(
    server: tuple[str, int],
) -> None:
    with socket.create_connection(server, timeout=HANG_GUARD) as sock:
        sock.sendall(
            b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % TWENTY_MB
        )
        # Not one byte of the body is sent: the answer comes anyway.
        status, body = _status_and_body(_read_response(sock))
    assert status == 413
    assert body["errors"][0]["extensions"]["code"] == "PAYLOAD_TOO_LARGE"


def test_uvicorn_cuts_a_chunked_20_mb_body_short(server: tuple[str, int]) -> None:
    """The client may send chunks until the server answers: it stops reading at the
    limit and closes, so only the limit plus what socket buffers hold is ever taken."""
    chunk = b" " * CHUNK
    frame = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    sent = 0
    received = b""
    with socket.create_connection(server, timeout=HANG_GUARD) as sock:
        sock.sendall(
            b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        sock.setblocking(False)
        give_up = time.monotonic() + HANG_GUARD
        while sent < TWENTY_MB and time.monotonic() < give_up:
            readable, writable, _ = select.select([sock], [sock], [], 1.0)
            if readable:
                try:
                    data = sock.recv(CHUNK)
                except ConnectionError:
                    break
                received += data
                if not data:
                    break
            elif writable:
                try:
                    sent += sock.send(frame)
                except ConnectionError:
                    break
    status, body = _status_and_body(received)
    assert status == 413
    assert body["errors"][0]["extensions"]["code"] == "PAYLOAD_TOO_LARGE"
    assert sent < TWENTY_MB // 2


def _post(sock: socket.socket, content: bytes) -> tuple[int, dict[str, Any]]:
    sock.sendall(
        b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(content), content)
    )
    return _status_and_body(_read_response(sock))


def test_uvicorn_serves_a_chunked_body_and_refuses_one_in_another_transfer_coding(
    server: tuple[str, int],
) -> None:
    """The parser takes `gzip, chunked` as `chunked`, so the plain body ran (a 200)."""
    body = b'{"query": "{ __typename }"}'
    answers = []
    for coding in (b"chunked", b"gzip, chunked"):
        with socket.create_connection(server, timeout=HANG_GUARD) as sock:
            sock.sendall(
                b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nTransfer-Encoding: %s\r\n\r\n"
                b"%x\r\n%s\r\n0\r\n\r\n" % (coding, len(body), body)
            )
            answers.append(_status_and_body(_read_response(sock)))
    assert answers[0] == (200, {"data": {"__typename": "Query"}})
    status, refused = answers[1]
    assert status == 415
    assert refused["errors"][0]["extensions"]["code"] == "UNSUPPORTED_MEDIA_TYPE"


def test_uvicorn_keeps_the_connection_after_echoing_a_lone_surrogate(
    server: tuple[str, int],
) -> None:
    """Was a 500, after which uvicorn closed the connection."""
    with socket.create_connection(server, timeout=HANG_GUARD) as sock:
        status, body = _post(sock, json.dumps(NAMED_BY_A_LONE_SURROGATE).encode())
        assert status == 400
        assert body["errors"][0]["extensions"]["code"] == "BAD_REQUEST"
        status, body = _post(sock, b'{"query": "{ __typename }"}')
    assert (status, body) == (200, {"data": {"__typename": "Query"}})


def test_uvicorn_answers_a_deep_variable_with_a_coded_400(server: tuple[str, int]) -> None:
    host, port = server
    base = f"http://{host}:{port}"
    response = httpx.post(
        f"{base}/graphql", content=deep_variable_body(100_000), headers=JSON, timeout=HANG_GUARD
    )
    assert response.status_code == 400
    assert the_error(response)["extensions"]["code"] == "BAD_REQUEST"
    alive = httpx.post(f"{base}/graphql", json={"query": "{ __typename }"}, timeout=HANG_GUARD)
    assert alive.json() == {"data": {"__typename": "Query"}}
