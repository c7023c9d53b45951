"""`OpenAICompatibleEmbeddings`: any server that speaks `POST {base_url}/embeddings`."""

from __future__ import annotations

import asyncio
import math
import os
import random
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Self, TypeVar
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, ValidationError

from redstring.domain.arguments import positive_count_of, seconds_of
from redstring.domain.errors import (
    EmbeddingRefusedError,
    EmbeddingUnavailableError,
    InvalidInputError,
    TextsRefusedError,
    describe_problems,
)
from redstring.domain.record import problems_of
from redstring.domain.url_secrets import USERINFO_REFUSED, holds_userinfo, shown_url
from redstring.domain.vectors import check_dimension

_T = TypeVar("_T")

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_BATCH_SIZE = 128
# OpenAI refuses a request whose inputs sum to over 300,000 tokens. A token of its
# byte-level BPE tokenizers is one or more UTF-8 bytes of the text, so inputs of at
# most 300,000 bytes in all are at most 300,000 tokens, counted without a tokenizer.
DEFAULT_MAX_BATCH_BYTES = 300_000
DEFAULT_MAX_CONCURRENCY = 4
DEFAULT_TIMEOUT = 30.0

# A request timed out at the server (408) or came too often (429): another may pass. A
# 5xx is retried too; any other status is a refusal.
_RETRYABLE_STATUS = frozenset({408, 429})
_BODY_EXCERPT = 300
# The options to check when the provider answers with a status, by status; any other
# 4xx is about the model or the URL, a 2xx other than 200 or a 3xx about the URL.
_SUSPECTS_OF_STATUS: dict[int, tuple[str, ...]] = {
    401: ("api_key_env",),
    403: ("api_key_env", "model"),  # a key without access to the model
    413: ("batch_size",),
    429: ("api_key_env",),  # a quota used up: the account behind the key
}
# A refusal with one of these statuses may be of some inputs of a batch, not of the
# request or the settings: 400 and 422 for an input the model will not take, 413 from
# text-embeddings-inference for an input past its token limit (as for a batch past its
# size). Which it is, `_embed_parts` finds out.
_INPUT_STATUSES = frozenset({400, 413, 422})
# What a call sends, once, when the provider has refused its inputs and taken none: any
# model takes it, unless the settings are wrong (`_takes_some`).
PROBE_TEXT = "probe"


def check_base_url(base_url: str, *, key_holder: str = "api_key_env") -> str:
    """`base_url` when it is an http(s) URL that `/embeddings` can be appended to, else
    `InvalidInputError` saying why, without repeating it (it may hold a password).
    `key_holder` is the option naming the variable the API key is read from, which the
    message refusing a user or password in the URL points to."""
    why = _base_url_fault(base_url)
    if why == USERINFO_REFUSED:
        why += (
            f": put the API key in the environment variable {key_holder} names "
            f"({DEFAULT_API_KEY_ENV} by default); it is sent as Authorization: Bearer"
        )
    if why is not None:
        raise InvalidInputError(f"not a base URL such as http://127.0.0.1:11434/v1: {why}")
    return base_url


def _base_url_fault(base_url: str) -> str | None:
    parts = urlsplit(base_url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        return "its scheme is not http or https"
    if holds_userinfo(base_url):
        return USERINFO_REFUSED
    if not parts.hostname:
        return "it names no host"
    try:
        parts.port  # noqa: B018 (raises for a port that is no number)
    except ValueError:
        return "its port is no number from 1 to 65535"
    if parts.query or parts.fragment or base_url.rstrip().endswith(("?", "#")):
        return "it takes no query or fragment (/embeddings is appended to its path)"
    return None


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before asking again.

    `max_attempts` counts every request for a batch, the first included.
    The wait before attempt n+1 is drawn uniformly from
    `[0, min(max_delay, base_delay * 2**n)]` ("full jitter": clients that
    failed together do not retry together), unless the server sent
    `Retry-After` in seconds, which is honoured up to `max_retry_after`.

    `max_elapsed` bounds a whole call (`embed_documents`, `embed_query`), from its
    start: its batches' waits for a concurrency slot, their attempts and the waits
    between them. An attempt still running then is cancelled, and a wait that would
    end after it is not begun: the call gives up at once. None (the default): only
    `max_attempts` and each request's timeout bound it. A server gives its provider
    a share of the request's deadline so; a batch job keeps waiting out an outage.
    """

    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_retry_after: float = 60.0
    max_elapsed: float | None = None

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise InvalidInputError("max_attempts must be at least 1")
        if min(self.base_delay, self.max_delay, self.max_retry_after) < 0:
            raise InvalidInputError("retry delays must not be negative")
        if self.max_elapsed is not None and not self.max_elapsed > 0:  # NaN too
            raise InvalidInputError("max_elapsed must be positive, or None")

    def delay(self, failed_attempts: int, retry_after: float | None) -> float:
        """Seconds to wait after `failed_attempts` (>= 1) failures."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        ceiling = min(self.max_delay, self.base_delay * 2 ** (failed_attempts - 1))
        return random.uniform(0.0, ceiling)


def retry_after_seconds(value: str | None) -> float | None:
    """The delay of a `Retry-After` header given in seconds; None if absent or not a number.

    The HTTP-date form is not read: servers of this API send seconds, and
    an unreadable value falls back to the jittered backoff.
    """
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


class _Embedding(BaseModel):
    embedding: list[float]
    index: int | None = None


class _EmbeddingsResponse(BaseModel):
    data: list[_Embedding]


class _InputsRefusedError(Exception):
    """A batch refused with a status that may be about its inputs (`_INPUT_STATUSES`):
    `error` is the refusal to raise when it is not, `answer` what the provider said."""

    def __init__(self, error: EmbeddingRefusedError, answer: str) -> None:
        super().__init__(answer)
        self.error = error
        self.answer = answer
        self.of_inputs = False  # whether the provider takes some text of the call


@dataclass
class _Tried:
    """The attempts made for one batch so far, and the last that failed, if any."""

    attempts: int = 0
    failure: _RetryableError | None = None


@dataclass
class _Call:
    """What one call (`embed_documents`, `embed_query`) has learnt of the provider:
    whether it took an input of the call, and whether it took `PROBE_TEXT` (None: not
    asked yet; asked once a call, under `lock`)."""

    took_some: bool = False
    took_probe: bool | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


# What `_embed_parts` gives for each input: its vector, or what the provider answered
# of it alone when it refused it.
_Part = list[float] | str


class _RetryableError(Exception):
    """One failed attempt that another attempt may fix."""

    def __init__(self, reason: str, status_code: int | None, retry_after: float | None) -> None:
        super().__init__(reason)
        self.status_code = status_code
        self.retry_after = retry_after


class OpenAICompatibleEmbeddings:
    """Embeddings from an OpenAI-style HTTP API (OpenAI, Azure-style gateways, Ollama,
    vLLM, LM Studio, text-embeddings-inference).

    Texts are sent as `{"model": model, "input": [...]}` in batches of at
    most `batch_size` texts and `max_batch_bytes` bytes of UTF-8 in all (so
    at most as many tokens: OpenAI refuses a request of over 300,000; a text
    of more bytes goes alone), at most `max_concurrency` requests at a time;
    the vectors come back in input order whatever order `data` lists them in
    (it is sorted by `index`). Every vector is checked against the declared
    `dimension`, and a mismatch raises `DimensionMismatchError`, so a wrong
    model never reaches the vector store.

    429, 408, 5xx, timeouts and connection errors are retried per
    `RetryPolicy`; a batch keeps its concurrency slot while it waits, so a
    rate-limited server sees fewer requests, not more. The last failed attempt,
    or the call's `max_elapsed` spent, raises `EmbeddingUnavailableError`. Any
    other status (401, 404, 400, ...), a 429 saying the quota is used up
    (`insufficient_quota`), and a reply that is not the embeddings API raise
    `EmbeddingRefusedError` at once: no wait cures a wrong key, model or URL.
    Either way the other batches of the call are then cancelled.

    A batch refused with 400, 413 or 422 may hold an input the model will not
    take (one past its token limit) rather than wrong settings: once the
    provider has taken some text of the call (an input, else one `PROBE_TEXT`),
    it is halved and both halves asked for, each refused half halved again,
    down to single inputs (`_embed_parts`).
    When it refuses some inputs alone, the call raises `TextsRefusedError`
    (an `InvalidInputError`) with what it answered of each and the vectors of
    the others; when it takes no text, or every part of the batch (the batch as
    a whole was too large), the batch's own refusal is raised as before. A
    refusal costs at most one probe a call and `2n - 2` more requests for a
    batch of `n`, all within the call's `max_elapsed`.

    The API key is read once, at construction, from the environment
    variable `api_key_env` and sent as `Authorization: Bearer`; when the
    variable is unset or empty no header is sent (local servers need none).
    Pass `client` to share an `httpx.AsyncClient` (it is not closed here);
    otherwise one is created and `aclose()` (or `async with`) closes it.
    `timeout` applies to each request either way.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        dimension: int,
        api_key_env: str | None = DEFAULT_API_KEY_ENV,
        batch_size: int = DEFAULT_BATCH_SIZE,
        max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if not base_url.strip():
            raise InvalidInputError("base_url must not be blank")
        check_base_url(base_url)
        if not model.strip():
            raise InvalidInputError("model must not be blank")
        dimension = positive_count_of(dimension, "dimension")
        if batch_size < 1:
            raise InvalidInputError("batch_size must be at least 1")
        if max_batch_bytes < 1:
            raise InvalidInputError("max_batch_bytes must be at least 1")
        if max_concurrency < 1:
            raise InvalidInputError("max_concurrency must be at least 1")
        timeout = seconds_of(timeout, "timeout", zero=False)
        self._url = base_url.rstrip("/") + "/embeddings"
        self._shown_url = shown_url(self._url)  # the URL its messages quote
        self._model = model
        self._dimension = dimension
        self._batch_size = batch_size
        self._max_batch_bytes = max_batch_bytes
        self._timeout = httpx.Timeout(timeout)
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._slots = asyncio.Semaphore(max_concurrency)
        api_key = os.environ.get(api_key_env, "") if api_key_env else ""
        self._api_key = api_key
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        if api_key:
            self._key_said = f"sent with the key in {api_key_env}"
        elif api_key_env:
            self._key_said = f"sent without a key ({api_key_env} is unset or empty)"
        else:
            self._key_said = "sent without a key"
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient(
            limits=httpx.Limits(
                max_connections=max_concurrency, max_keepalive_connections=max_concurrency
            )
        )

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def identity(self) -> str:
        """What makes its vectors: the model and dimension, whichever endpoint serves
        them (`composition.entity_vectors.provider_identity`)."""
        return f"openai/{self._model}/{self._dimension}"

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._embed(texts)

    async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._embed(texts)

    async def aclose(self) -> None:
        """Close the HTTP client if this provider created it."""
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        batches = _batches(texts, self._batch_size, self._max_batch_bytes)
        limit = self._retry.max_elapsed
        ends = None if limit is None else asyncio.get_running_loop().time() + limit
        call = _Call()
        parts = await _all([self._embed_parts(batch, ends, call) for batch in batches])
        vectors: dict[int, list[float]] = {}
        refused: dict[int, str] = {}
        for position, part in enumerate(part for result in parts for part in result):
            if isinstance(part, str):
                refused[position] = part
            else:
                vectors[position] = part
        if refused:
            raise TextsRefusedError(refused, vectors)
        return list(vectors.values())

    async def _embed_parts(self, batch: list[str], ends: float | None, call: _Call) -> list[_Part]:
        """The vectors of `batch` (`_embed_batch`), but for the inputs the provider refuses
        alone, for which what it answered.

        A refusal of the batch that may be about its inputs (`_INPUT_STATUSES`) is so
        only when the provider takes some text of the call (`_takes_some`): the batch
        is then halved and both halves asked for, concurrently, down to single inputs.
        When it takes no text, or takes every part (the batch as a whole was past a
        limit), the batch's own refusal is raised."""
        try:
            return list(await self._embed_batch(batch, ends, call))
        except _InputsRefusedError as refused:
            if not refused.of_inputs:
                raise refused.error from None
            if len(batch) == 1:
                return [refused.answer]
            middle = len(batch) // 2
            halves = await _all(
                [
                    self._embed_parts(batch[:middle], ends, call),
                    self._embed_parts(batch[middle:], ends, call),
                ]
            )
            parts = [part for half in halves for part in half]
            if not any(isinstance(part, str) for part in parts):
                raise refused.error from None
            return parts

    async def _takes_some(self, call: _Call, ends: float | None) -> bool:
        """Whether the provider takes some text of `call`: one of its inputs, else
        `PROBE_TEXT`, asked once a call, with the retry policy (a refusal meanwhile waits
        for its answer). An outage while asking is raised."""
        if call.took_some:
            return True
        async with call.lock:
            if call.took_probe is None and not call.took_some:
                try:
                    await self._attempts([PROBE_TEXT], ends, _Tried())
                except (_InputsRefusedError, EmbeddingRefusedError):
                    call.took_probe = False
                else:
                    call.took_probe = True
        return call.took_some or bool(call.took_probe)

    async def _embed_batch(
        self, batch: list[str], ends: float | None, call: _Call
    ) -> list[list[float]]:
        """The vectors of `batch`, asked in a concurrency slot, again as the retry policy
        says, all by `ends` (the event loop's time at which the call's `max_elapsed` is
        spent; None: no bound). A refusal that may be about its inputs is told apart in
        the same slot (`_takes_some`: a probe waits behind no other batch of the call)."""
        tried = _Tried()
        within = asyncio.timeout_at(ends)
        try:
            async with within, self._slots:
                try:
                    vectors = await self._attempts(batch, ends, tried)
                except _InputsRefusedError as refused:
                    refused.of_inputs = await self._takes_some(call, ends)
                    raise
        except TimeoutError:
            if not within.expired():
                raise
            raise self._unavailable(
                self._gave_up(tried.attempts), tried.attempts, tried.failure
            ) from tried.failure
        call.took_some = True
        return vectors

    async def _attempts(
        self, batch: list[str], ends: float | None, tried: _Tried
    ) -> list[list[float]]:
        """The vectors of `batch`, asked again as the retry policy says; `tried` counts the
        attempts and holds the last failure, for the caller whose `ends` comes first."""
        while True:
            tried.attempts += 1
            try:
                return await self._request(batch)
            except _RetryableError as failed:
                tried.failure = failure = failed
            attempts = tried.attempts
            named = failure.retry_after  # the wait the provider's answer named
            if attempts >= self._retry.max_attempts:
                said = f"failed after {attempts} attempt(s)"
                raise self._unavailable(said, attempts, failure, named) from failure
            delay = self._retry.delay(attempts, named)
            if ends is not None and asyncio.get_running_loop().time() + delay >= ends:
                said = self._gave_up(attempts, delay)
                raise self._unavailable(said, attempts, failure, named) from failure
            await self._sleep(delay)

    def _gave_up(self, attempts: int, delay: float | None = None) -> str:
        """Why a batch gave up after `attempts`: the call's `max_elapsed` spent, or, with
        `delay`, a wait before the next attempt that would end after it."""
        bound = f"the call's {self._retry.max_elapsed:g} s (max_elapsed)"
        if delay is None:
            return f"gave up after {attempts} attempt(s), {bound} spent"
        return f"gave up after {attempts} attempt(s), a wait of {delay:g} s ending past {bound}"

    def _unavailable(
        self,
        what: str,
        attempts: int,
        failure: _RetryableError | None,
        retry_after: float | None = None,
    ) -> EmbeddingUnavailableError:
        """The outage a batch ends in: `what` happened after `attempts` requests, the last
        to fail `failure` (None when none failed: the time was spent waiting for a
        concurrency slot, or for the first answer). `retry_after` is the wait the
        provider named in its answer to the last attempt; none when that attempt got no
        answer, as a wait named earlier is then spent."""
        return EmbeddingUnavailableError(
            f"embedding request to {self._shown_url} for model {self._model!r} {what}: "
            f"{'no answer' if failure is None else failure}",
            attempts=attempts,
            status_code=None if failure is None else failure.status_code,
            retry_after=retry_after,
        )

    async def _request(self, batch: list[str]) -> list[list[float]]:
        try:
            response = await self._client.post(
                self._url,
                json={"model": self._model, "input": batch},
                headers=self._headers,
                timeout=self._timeout,
            )
        except httpx.TransportError as exc:
            raise _RetryableError(f"{type(exc).__name__}: {exc}", None, None) from exc
        status = response.status_code
        if (status in _RETRYABLE_STATUS or status >= 500) and not _quota_used_up(response):
            raise _RetryableError(
                f"HTTP {status}: {self._excerpt(response)}",
                status,
                retry_after_seconds(response.headers.get("Retry-After")),
            )
        if status == 200:
            return self._vectors(response, len(batch))
        refusal = self._refused(response)
        if status in _INPUT_STATUSES:
            raise _InputsRefusedError(refusal, f"HTTP {status}: {self._excerpt(response)}")
        raise refusal

    def _excerpt(self, response: httpx.Response) -> str:
        """The start of `response`'s body, for a message: the key is blanked out, should
        the server echo it."""
        text = response.text
        if self._api_key:
            text = text.replace(self._api_key, "[key]")
        return text[:_BODY_EXCERPT]

    def _refused(self, response: httpx.Response) -> EmbeddingRefusedError:
        status = response.status_code
        said = self._excerpt(response)
        if 300 <= status < 400 and "Location" in response.headers:
            said = f"redirected to {shown_url(response.headers['Location'])}"
        if 400 <= status < 500:
            suspects = _SUSPECTS_OF_STATUS.get(status, ("model", "base_url"))
        else:
            suspects = ("base_url",)
        key = f", {self._key_said}" if "api_key_env" in suspects else ""
        return EmbeddingRefusedError(
            f"the embedding provider at {self._shown_url} refused a request for model "
            f"{self._model!r} with HTTP {status}{key}: {said}",
            status_code=status,
            options=suspects,
        )

    def _vectors(self, response: httpx.Response, expected: int) -> list[list[float]]:
        try:
            data = _EmbeddingsResponse.model_validate_json(response.content).data
        except ValidationError as exc:
            problems = problems_of(exc)
            more = f" and {len(problems) - 3} more" if len(problems) > 3 else ""
            raise self._malformed(
                f"not an embeddings response ({describe_problems(problems[:3])}{more}): "
                f"{self._excerpt(response)}"
            ) from exc
        order = [item.index if item.index is not None else i for i, item in enumerate(data)]
        if sorted(order) != list(range(expected)):
            raise self._malformed(
                f"{len(data)} embeddings with indexes {sorted(order)[:10]} for {expected} inputs"
            )
        vectors: list[list[float]] = [[] for _ in range(expected)]
        what = f"the embedding of model {self._model!r} from {self._shown_url}"
        for position, item in zip(order, data, strict=True):
            check_dimension(self._dimension, len(item.embedding), what)
            vectors[position] = item.embedding
        return vectors

    def _malformed(self, reason: str) -> EmbeddingRefusedError:
        """A 200 that is not the embeddings API's answer: most often a base URL that is
        some other server's (a web page, another API), which no wait cures."""
        return EmbeddingRefusedError(
            f"the embedding provider at {self._shown_url} answered a request for model "
            f"{self._model!r} with no usable embeddings: {reason}",
            status_code=200,
            options=("base_url",),
        )


async def _all(calls: Sequence[Coroutine[object, object, _T]]) -> list[_T]:
    """What each of `calls` returns, in order, run concurrently; when one raises, the
    others are cancelled (and waited for) and its error raised."""
    if len(calls) == 1:
        return [await calls[0]]
    tasks = [asyncio.ensure_future(each) for each in calls]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _batches(texts: Sequence[str], size: int, max_bytes: int) -> list[list[str]]:
    """`texts` in order, cut into runs of at most `size` texts whose UTF-8 bytes sum to at
    most `max_bytes`; a text of more bytes than that is a run of its own. A lone surrogate,
    which UTF-8 cannot encode (the provider's own caller may pass one; redstring refuses
    them before), counts 3 bytes, as `surrogatepass` writes it: counting raises nothing."""
    batches: list[list[str]] = []
    batch: list[str] = []
    total = 0
    for text in texts:
        length = len(text.encode("utf-8", "surrogatepass"))
        if batch and (len(batch) == size or total + length > max_bytes):
            batches.append(batch)
            batch, total = [], 0
        batch.append(text)
        total += length
    if batch:
        batches.append(batch)
    return batches


def _quota_used_up(response: httpx.Response) -> bool:
    """Whether a 429 says that the account's quota is used up (OpenAI's error code or type
    `insufficient_quota`), which no wait within a call restores, unlike a rate limit."""
    if response.status_code != 429:
        return False
    try:
        body = response.json()
    except (ValueError, RecursionError):  # not JSON, or nested deeper than it parses
        return False
    error = body.get("error") if isinstance(body, dict) else None
    return isinstance(error, dict) and "insufficient_quota" in (
        error.get("code"),
        error.get("type"),
    )
