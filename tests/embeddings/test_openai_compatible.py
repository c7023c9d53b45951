"""`OpenAICompatibleEmbeddings` against a real HTTP server on a loopback port."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from redstring import DimensionMismatchError, EmbeddingProvider
from redstring.adapters.embeddings import OpenAICompatibleEmbeddings, RetryPolicy
from redstring.adapters.embeddings.openai_compatible import PROBE_TEXT, _quota_used_up
from redstring.domain.errors import (
    EmbeddingRefusedError,
    EmbeddingUnavailableError,
    InvalidInputError,
    StoreUnavailableError,
)
from redstring.domain.url_secrets import USERINFO_REFUSED

from .fake_server import EmbeddingAPI, Failure, vector_for

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01, max_retry_after=0.05)
TEXTS = [f"entity number {i}" for i in range(10)]
# OpenAI refuses a request whose inputs sum to more tokens than this.
OPENAI_REQUEST_TOKENS = 300_000
NO_QUERY = "it takes no query or fragment (/embeddings is appended to its path)"
PROSE = "the harbour authority keeps ferries running between the islands all year "


class SleepRecorder:
    """Stands in for `asyncio.sleep`: records each wait and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def test_batches_keep_input_order_even_when_data_comes_back_reversed(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    api.reverse_data = True
    provider = make(batch_size=3)
    assert isinstance(provider, EmbeddingProvider)

    vectors = await provider.embed_documents(TEXTS)

    assert vectors == [vector_for(t, 8) for t in TEXTS]
    assert api.requests == 4
    assert sorted(len(b["input"]) for b in api.bodies) == [1, 3, 3, 3]
    assert sorted(t for b in api.bodies for t in b["input"]) == sorted(TEXTS)
    assert {b["model"] for b in api.bodies} == {"test-model"}


def runs_sent(api: EmbeddingAPI, texts: list[str]) -> list[list[str]]:
    """The inputs of each request, the requests ordered by where their first input is in
    `texts` (they may arrive in any order)."""
    return sorted((body["input"] for body in api.bodies), key=lambda run: texts.index(run[0]))


@pytest.mark.parametrize("count", [64, 128])
async def test_a_batch_of_more_bytes_than_a_request_takes_goes_as_several_in_order(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings], count: int
) -> None:
    """Texts of 2,048 emoji (8,180 bytes each, so up to as many tokens) summing past
    300,000: the batch goes as runs of 36 texts (294,480 bytes) and the rest, each within
    what the server takes, the vectors in input order."""
    api.max_request_tokens = OPENAI_REQUEST_TOKENS
    api.reverse_data = True
    texts = [f"{i:03d} " + "🚢" * 2044 for i in range(count)]
    provider = make(batch_size=count)

    vectors = await provider.embed_documents(texts)

    assert vectors == [vector_for(text, 8) for text in texts]
    runs = runs_sent(api, texts)
    assert [text for run in runs for text in run] == texts
    assert [len(run) for run in runs] == [36] * (count // 36) + [count % 36]
    assert all(sum(len(t.encode()) for t in run) <= OPENAI_REQUEST_TOKENS for run in runs)


@pytest.mark.parametrize("count", [64, 128])
async def test_english_texts_of_a_whole_batch_go_as_one_request(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings], count: int
) -> None:
    """2,048 characters of English are 2,048 bytes: 128 of them (262,144) fit in one."""
    api.max_request_tokens = OPENAI_REQUEST_TOKENS
    texts = [(f"{i:03d} " + PROSE * 30)[:2048] for i in range(count)]
    provider = make(batch_size=count)

    vectors = await provider.embed_documents(texts)

    assert vectors == [vector_for(text, 8) for text in texts]
    assert [body["input"] for body in api.bodies] == [texts]


async def test_a_batch_is_cut_where_the_next_text_would_pass_max_batch_bytes(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    """Bytes, not characters, are counted (ééé is 6 bytes), a sum of exactly the limit
    goes, and a text longer than the limit goes alone."""
    texts = ["ééé", "bbbb", "c", "x" * 25, "dd", "ee"]
    provider = make(max_batch_bytes=10)

    vectors = await provider.embed_documents(texts)

    assert vectors == [vector_for(text, 8) for text in texts]
    assert runs_sent(api, texts) == [["ééé", "bbbb"], ["c"], ["x" * 25], ["dd", "ee"]]


async def test_query_and_documents_use_the_same_api(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    provider = make()
    assert await provider.embed_query(["acme"]) == [vector_for("acme", 8)]
    assert await provider.embed_documents(["acme"]) == [vector_for("acme", 8)]
    assert api.requests == 2


async def test_no_texts_no_request(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    assert await make().embed_documents([]) == []
    assert api.requests == 0


async def test_429_then_success_waits_the_retry_after_seconds(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    api.failures.append(Failure(429, {"Retry-After": "2"}))
    sleep = SleepRecorder()
    provider = make(sleep=sleep, retry=RetryPolicy(base_delay=0.001, max_delay=0.01))

    assert await provider.embed_query(["acme"]) == [vector_for("acme", 8)]
    assert api.requests == 2
    assert sleep.delays == [2.0]


async def test_retry_after_is_capped(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    api.failures.append(Failure(503, {"Retry-After": "3600"}))
    sleep = SleepRecorder()
    provider = make(sleep=sleep, retry=RetryPolicy(max_retry_after=1.5))

    await provider.embed_query(["acme"])
    assert sleep.delays == [1.5]


async def test_without_retry_after_the_wait_is_jittered_exponential_backoff(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    api.failures.extend([Failure(500), Failure(502), Failure(504)])
    sleep = SleepRecorder()
    provider = make(sleep=sleep, retry=RetryPolicy(max_attempts=4, base_delay=1.0, max_delay=3.0))

    await provider.embed_query(["acme"])
    assert api.requests == 4
    assert len(sleep.delays) == 3
    for delay, ceiling in zip(sleep.delays, [1.0, 2.0, 3.0], strict=True):
        assert 0.0 <= delay <= ceiling


async def test_a_500_storm_ends_in_a_clear_error_after_max_attempts(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    api.failures.extend(Failure(500) for _ in range(10))
    provider = make()

    with pytest.raises(EmbeddingUnavailableError, match=r"after 3 attempt\(s\).*HTTP 500") as info:
        await provider.embed_documents(["acme"])
    assert isinstance(info.value, StoreUnavailableError)
    assert info.value.attempts == 3
    assert info.value.status_code == 500
    assert info.value.retry_after is None  # the server named no wait
    assert api.requests == 3


async def test_a_timeout_ends_in_a_clear_error(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    api.failures.extend(Failure(200, stall=10.0) for _ in range(2))
    provider = make(timeout=0.2, retry=RetryPolicy(max_attempts=2, base_delay=0.001))

    started = time.perf_counter()
    with pytest.raises(EmbeddingUnavailableError, match="Timeout") as info:
        await provider.embed_query(["acme"])
    assert time.perf_counter() - started < 3.0
    assert info.value.attempts == 2
    assert info.value.status_code is None
    assert api.requests == 2


async def test_a_call_gives_up_at_once_when_the_next_wait_ends_past_its_time(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    """A `Retry-After` longer than what is left of `max_elapsed` is not waited for."""
    api.failures.extend(Failure(503, {"Retry-After": "30"}) for _ in range(5))
    sleep = SleepRecorder()
    provider = make(sleep=sleep, retry=RetryPolicy(max_elapsed=5.0))

    with pytest.raises(EmbeddingUnavailableError) as info:
        await provider.embed_query(["acme"])

    assert sleep.delays == []
    assert api.requests == 1
    assert (info.value.attempts, info.value.status_code) == (1, 503)
    assert info.value.retry_after == 30.0  # what the server asked for, not capped here
    assert "gave up after 1 attempt(s), a wait of 30 s ending past the call's 5 s " in str(
        info.value
    )


async def test_a_call_waits_within_its_time_then_gives_up(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    api.failures.extend(Failure(429, {"Retry-After": "0.2"}) for _ in range(50))
    provider = make(retry=RetryPolicy(max_attempts=50, max_elapsed=0.5))

    started = time.perf_counter()
    with pytest.raises(EmbeddingUnavailableError, match="gave up after 3 attempt") as info:
        await provider.embed_query(["acme"])

    assert time.perf_counter() - started < 0.5
    assert info.value.status_code == 429
    assert info.value.retry_after == 0.2
    assert api.requests == 3  # at 0, 0.2 and 0.4 s; a third wait would end at 0.6


async def test_an_outage_names_no_wait_when_its_last_attempt_had_no_answer(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    """The `Retry-After` of an earlier answer was waited out before the last attempt: the
    outage does not pass it on as a wait still to come."""
    api.failures.extend([Failure(429, {"Retry-After": "0.05"}), Failure(200, stall=10.0)])
    provider = make(retry=RetryPolicy(max_attempts=5, max_elapsed=0.5))

    with pytest.raises(EmbeddingUnavailableError, match=r"0.5 s \(max_elapsed\) spent") as info:
        await provider.embed_query(["acme"])

    assert (info.value.attempts, info.value.status_code) == (2, 429)
    assert info.value.retry_after is None


@pytest.mark.parametrize("waiting", [False, True], ids=["its attempt", "a slot"])
async def test_a_call_whose_time_runs_out_unanswered_ends_then(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings], waiting: bool
) -> None:
    """Within the request's own timeout (5 s), whether the batch was sent or still waited
    for a concurrency slot that another batch of the call held."""
    api.failures.extend(Failure(200, stall=10.0) for _ in range(2))
    provider = make(max_concurrency=1, batch_size=1, retry=RetryPolicy(max_elapsed=0.3))

    started = time.perf_counter()
    with pytest.raises(EmbeddingUnavailableError, match=r"0.3 s \(max_elapsed\) spent: no answer"):
        await provider.embed_documents(["acme", "globex"] if waiting else ["acme"])

    assert time.perf_counter() - started < 1.0
    assert api.requests == 1


async def test_a_call_within_its_time_is_answered(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    api.latency = 0.05
    api.failures.append(Failure(503, {"Retry-After": "0.05"}))
    provider = make(batch_size=2, max_concurrency=2, retry=RetryPolicy(max_elapsed=2.0))

    assert await provider.embed_documents(TEXTS) == [vector_for(t, 8) for t in TEXTS]
    assert api.requests == len(TEXTS) // 2 + 1


@pytest.mark.parametrize(
    ("status", "options"),
    [
        (400, ("model", "base_url")),
        (401, ("api_key_env",)),
        (403, ("api_key_env", "model")),
        (404, ("model", "base_url")),
        (422, ("model", "base_url")),
        (413, ("batch_size",)),
    ],
)
async def test_a_refusal_is_raised_at_once_as_no_outage(
    api: EmbeddingAPI,
    make: Callable[..., OpenAICompatibleEmbeddings],
    base_url: str,
    status: int,
    options: tuple[str, ...],
) -> None:
    """A wrong key, model or request: waiting cures none, so it is no `StoreUnavailableError`
    and not retried; the message names the URL, the model, the status and the reply. A
    status that may be about the input (400, 413, 422) costs one more request: the probe,
    refused too (the provider takes no text, so its settings are at fault)."""
    api.failures.append(Failure(status, body={"error": {"message": "not for you"}}))
    api.failures.append(Failure(status, body={"error": {"message": "not for you"}}))
    provider = make()
    probed = [["acme"], [PROBE_TEXT]] if status in {400, 413, 422} else [["acme"]]

    with pytest.raises(EmbeddingRefusedError) as info:
        await provider.embed_query(["acme"])
    assert not isinstance(info.value, StoreUnavailableError)
    assert info.value.status_code == status
    assert info.value.options == options
    said = str(info.value)
    assert (
        f"at {base_url}/embeddings refused a request for model 'test-model' with HTTP {status}"
        in said
    )
    assert said.endswith(f'not for you"}}}}; check {" or ".join(options)}')
    assert api.inputs_of() == probed


async def test_a_refused_key_says_which_variable_it_came_from_but_never_the_key(
    api: EmbeddingAPI,
    make: Callable[..., OpenAICompatibleEmbeddings],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server that echoes the key it was sent: the message has it blanked out."""
    monkeypatch.setenv("REDSTRING_TEST_EMBEDDING_KEY", "sk-wrong-4242")
    echoed = {"error": {"message": "Incorrect API key provided: sk-wrong-4242"}}
    api.failures.append(Failure(401, body=echoed))
    api.failures.append(Failure(401))

    with pytest.raises(EmbeddingRefusedError) as info:
        await make(api_key_env="REDSTRING_TEST_EMBEDDING_KEY").embed_query(["acme"])
    assert "sk-wrong-4242" not in str(info.value)
    assert "with HTTP 401, sent with the key in REDSTRING_TEST_EMBEDDING_KEY: " in str(info.value)
    assert "Incorrect API key provided: [key]" in str(info.value)
    assert api.authorizations == ["Bearer sk-wrong-4242"]

    monkeypatch.delenv("REDSTRING_TEST_EMBEDDING_KEY")
    with pytest.raises(EmbeddingRefusedError, match=r"HTTP 401, sent without a key \("):
        await make(api_key_env="REDSTRING_TEST_EMBEDDING_KEY").embed_query(["acme"])


async def test_a_429_saying_the_quota_is_used_up_is_a_refusal(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    """OpenAI's `insufficient_quota`: the account must change, so it is not retried as a
    rate limit is (a plain 429: `test_429_then_success_waits_the_retry_after_seconds`)."""
    quota = {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}
    api.failures.extend(Failure(429, body=quota) for _ in range(3))
    sleep = SleepRecorder()

    with pytest.raises(EmbeddingRefusedError, match=r"HTTP 429.*exceeded your current quota"):
        await make(sleep=sleep).embed_query(["acme"])
    assert (api.requests, sleep.delays) == (1, [])


def test_a_429_body_nested_past_what_json_reads_is_a_rate_limit() -> None:
    """A proxy's or a broken server's body is read for `insufficient_quota` without
    failing the call: nested past the parser's depth it is no quota refusal (the 429 is
    retried as a rate limit), never a `RecursionError` out of the provider."""
    assert not _quota_used_up(httpx.Response(429, content=b"[" * 200_000))
    quota = b'{"error": {"code": "insufficient_quota"}}'
    assert _quota_used_up(httpx.Response(429, content=quota))


async def test_a_rate_limit_to_the_last_attempt_is_an_outage(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    limited = {"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}
    api.failures.append(Failure(429, {"Retry-After": "0.01"}, body=limited))
    api.failures.extend(Failure(429, body=limited) for _ in range(2))

    with pytest.raises(EmbeddingUnavailableError, match=r"after 3 attempt\(s\): HTTP 429") as info:
        await make().embed_query(["acme"])
    assert api.requests == 3
    assert info.value.retry_after is None  # the last 429 named no wait, the first did


async def test_a_redirect_is_a_refusal_naming_where_it_leads(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    api.failures.append(Failure(308, {"Location": "https://127.0.0.1/v1/embeddings"}))

    with pytest.raises(EmbeddingRefusedError) as info:
        await make().embed_query(["acme"])
    assert str(info.value).endswith(
        "with HTTP 308: redirected to https://127.0.0.1/v1/embeddings; check base_url"
    )


async def test_a_redirect_is_named_without_a_user_password_or_query(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    """The provider chooses where it redirects to; what it puts in the URL before the host
    or after the path (a token) is not quoted."""
    leads = "https://user:s3cretpw@127.0.0.1/v1/embeddings?token=t0ken#part"
    api.failures.append(Failure(308, {"Location": leads}))

    with pytest.raises(EmbeddingRefusedError) as info:
        await make().embed_query(["acme"])
    assert "redirected to https://127.0.0.1/v1/embeddings; check base_url" in str(info.value)
    assert not {"user", "s3cretpw", "t0ken", "part"} & set(re.split(r"\W+", str(info.value)))


KEY_HOLDER_SAID = (
    "put the API key in the environment variable api_key_env names (OPENAI_API_KEY by "
    "default); it is sent as Authorization: Bearer"
)


@pytest.mark.parametrize(
    ("base_url", "why"),
    [
        ("http://user:s3cretpw@127.0.0.1:9/v1", f"{USERINFO_REFUSED}: {KEY_HOLDER_SAID}"),
        ("https://s3cretpw@127.0.0.1/v1", f"{USERINFO_REFUSED}: {KEY_HOLDER_SAID}"),
        ("http://:s3cretpw@127.0.0.1/v1", f"{USERINFO_REFUSED}: {KEY_HOLDER_SAID}"),
        ("http://127.0.0.1:9/v1?key=s3cretpw", f"{NO_QUERY}"),
        ("http://127.0.0.1:9/v1#s3cretpw", f"{NO_QUERY}"),
        ("http://127.0.0.1:9/v1?", f"{NO_QUERY}"),
        ("ftp://127.0.0.1/v1", "its scheme is not http or https"),
        ("127.0.0.1:9/v1", "its scheme is not http or https"),
        ("http:///v1", "it names no host"),
        ("http://127.0.0.1:s3cretpw/v1", "its port is no number from 1 to 65535"),
    ],
)
def test_a_base_url_with_a_secret_in_it_or_none_to_post_to_is_refused(
    base_url: str, why: str
) -> None:
    """A user or password in the URL was sent as basic authentication and written to the
    log with every request; a query was sent, and `/embeddings` appended to it. Said
    without the URL."""
    with pytest.raises(InvalidInputError) as info:
        OpenAICompatibleEmbeddings(base_url=base_url, model="m", dimension=8)
    assert str(info.value) == f"not a base URL such as http://127.0.0.1:11434/v1: {why}"


@pytest.mark.parametrize(
    ("timeout", "message"),
    [
        (0, "timeout must be more than 0 seconds, got 0"),
        (float("inf"), "timeout must be finite, got inf"),
        (1e20, "timeout must be at most 1e+09 seconds (about 31 years), got 1e+20"),
        ("30", "timeout must be a number of seconds, got '30'"),
    ],
)
def test_a_timeout_it_cannot_use_is_refused(timeout: Any, message: str) -> None:
    """Only 0 and less were refused: `inf` and `1e20` were taken, as `"30"`, failing at
    the first request if at all."""
    with pytest.raises(InvalidInputError) as info:
        OpenAICompatibleEmbeddings(
            base_url="http://127.0.0.1:9/v1", model="m", dimension=8, timeout=timeout
        )
    assert str(info.value) == message


async def test_the_wrong_dimension_is_a_clear_error(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    provider = make(dimension=16)

    with pytest.raises(DimensionMismatchError, match="dimension 8, expected 16") as info:
        await provider.embed_documents(TEXTS)
    assert (info.value.expected, info.value.actual) == (16, 8)


async def test_an_answer_with_missing_embeddings_is_a_clear_error(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    one = {"object": "embedding", "index": 0, "embedding": vector_for("a", 8)}
    api.failures.append(Failure(200, body={"object": "list", "data": [one]}))

    with pytest.raises(EmbeddingRefusedError, match=r"1 embeddings .* for 2 inputs") as info:
        await make().embed_documents(["a", "b"])
    assert info.value.options == ("base_url",)
    assert api.requests == 1


async def test_an_answer_that_is_not_the_embeddings_api_is_a_clear_error(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    """Most often a base URL of another server: no outage, and the message shows what it
    answered, in one line."""
    api.failures.append(Failure(200, body={"unexpected": True}))

    with pytest.raises(EmbeddingRefusedError) as info:
        await make().embed_documents(["a"])
    assert not isinstance(info.value, StoreUnavailableError)
    assert (info.value.status_code, info.value.options) == (200, ("base_url",))
    assert str(info.value).endswith(
        'not an embeddings response (data: Field required): {"unexpected":true}; check base_url'
    )
    assert api.requests == 1


async def test_the_api_key_is_read_from_the_named_variable(
    api: EmbeddingAPI,
    make: Callable[..., OpenAICompatibleEmbeddings],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REDSTRING_TEST_EMBEDDING_KEY", "sk-test-123")
    await make(api_key_env="REDSTRING_TEST_EMBEDDING_KEY").embed_query(["acme"])
    monkeypatch.delenv("REDSTRING_TEST_EMBEDDING_KEY")
    await make(api_key_env="REDSTRING_TEST_EMBEDDING_KEY").embed_query(["acme"])

    assert api.authorizations == ["Bearer sk-test-123", None]


async def test_concurrency_is_bounded(
    api: EmbeddingAPI, make: Callable[..., OpenAICompatibleEmbeddings]
) -> None:
    api.latency = 0.05
    # A shared client with room for many connections: the bound must come from the provider.
    async with httpx.AsyncClient() as client:
        provider = make(batch_size=1, max_concurrency=3, client=client)
        vectors = await provider.embed_documents(TEXTS)
        await provider.aclose()
        assert not client.is_closed  # an injected client belongs to the caller

    assert vectors == [vector_for(t, 8) for t in TEXTS]
    assert api.requests == len(TEXTS)
    assert api.max_in_flight == 3


async def test_an_owned_client_is_closed_on_exit(base_url: str) -> None:
    async with OpenAICompatibleEmbeddings(
        base_url=base_url, model="m", dimension=8, api_key_env=None
    ) as provider:
        await provider.embed_query(["acme"])
    with pytest.raises(RuntimeError):
        await provider.embed_query(["acme"])


async def test_an_unreachable_server_is_retried_then_a_clear_error() -> None:
    with socket.socket() as probe:  # a port that nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleep = SleepRecorder()
    async with OpenAICompatibleEmbeddings(
        base_url=f"http://127.0.0.1:{port}/v1",
        model="m",
        dimension=8,
        api_key_env=None,
        retry=RetryPolicy(max_attempts=3),
        sleep=sleep,
    ) as provider:
        with pytest.raises(EmbeddingUnavailableError, match="ConnectError") as info:
            await provider.embed_query(["acme"])
    assert info.value.attempts == 3
    assert len(sleep.delays) == 2


@pytest.mark.parametrize(
    "options",
    [
        {"dimension": 0},
        {"batch_size": 0},
        {"max_batch_bytes": 0},
        {"max_concurrency": 0},
        {"timeout": 0.0},
        {"model": " "},
        {"base_url": ""},
    ],
)
def test_nonsense_options_are_refused(options: dict[str, Any]) -> None:
    settings: dict[str, Any] = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "dimension": 8}
    with pytest.raises(ValueError):  # noqa: PT011 (InvalidInputError is a ValueError)
        OpenAICompatibleEmbeddings(**(settings | options))
