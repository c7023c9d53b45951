"""`CachedQueryEmbeddings`: an LRU of query vectors, each shared only within the tenant that
searched it, invisible except in speed."""

from __future__ import annotations

import asyncio

import pytest

from redstring import (
    EmbeddingProvider,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    RetrievalMode,
    Retriever,
)
from redstring.composition.entity_vectors import provider_identity
from redstring.composition.query_cache import CachedQueryEmbeddings
from redstring.testing import new_tenant

from .doubles import GatedEmbeddings

SECRET = "falcon merger with Globex"


async def test_a_repeated_query_is_embedded_once() -> None:
    inner = GatedEmbeddings()
    cache = CachedQueryEmbeddings(inner)
    queries = cache.for_tenant(new_tenant())
    assert isinstance(queries, EmbeddingProvider)
    assert cache.dimension == queries.dimension == 2
    assert cache.hit_rate == 0.0

    first = await queries.embed_query(["acme"])
    second = await queries.embed_query(["acme"])
    third = await queries.embed_query(["acme"])

    assert first == second == third == [[4.0, 1.0]]
    assert inner.query_calls == [["acme"]]
    assert (cache.hits, cache.misses) == (2, 1)
    assert cache.hit_rate == pytest.approx(2 / 3)


def test_the_cache_is_no_provider_so_it_cannot_be_used_without_a_tenant() -> None:
    cache = CachedQueryEmbeddings(GatedEmbeddings())
    assert not isinstance(cache, EmbeddingProvider)
    assert not hasattr(cache, "embed_query")


async def test_cached_vectors_equal_the_providers_and_cannot_be_corrupted() -> None:
    provider = HashingEmbeddingProvider(64)
    queries = CachedQueryEmbeddings(provider).for_tenant(new_tenant())
    expected = await provider.embed_query(["Globex Corporation"])

    handed_out = await queries.embed_query(["Globex Corporation"])
    assert handed_out == expected
    handed_out[0][0] = 42.0  # a caller scribbles on its result
    assert await queries.embed_query(["Globex Corporation"]) == expected
    assert provider_identity(queries) == provider.identity


async def test_the_least_recently_used_text_is_evicted() -> None:
    inner = GatedEmbeddings()
    cache = CachedQueryEmbeddings(inner, max_size=2)
    queries = cache.for_tenant(new_tenant())
    for text in ("a", "b", "a", "c"):  # "a" was used after "b", so "b" goes, not "a"
        await queries.embed_query([text])
    assert len(cache) == 2
    assert inner.query_calls == [["a"], ["b"], ["c"]]

    await queries.embed_query(["a"])
    assert inner.query_calls[-1] == ["c"]  # still cached
    await queries.embed_query(["b"])
    assert inner.query_calls[-1] == ["b"]  # evicted, asked again


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_the_tenant_holding_most_entries_gives_up_its_least_recent() -> None:
    """Of the tenants holding the most, the one whose entry was used longest ago."""
    inner = GatedEmbeddings()
    clock = _Clock()
    cache = CachedQueryEmbeddings(inner, max_size=4, clock=clock)
    first, second, third = (cache.for_tenant(new_tenant()) for _ in range(3))
    for queries, text in ((second, "b1"), (second, "b2"), (first, "a1"), (first, "a2")):
        clock.now += 1
        await queries.embed_query([text])
    clock.now += 1
    await second.embed_query(["b1", "b2"])  # used again: the first's "a1" is now the oldest
    clock.now += 1
    await third.embed_query(["c1"])  # the first and the second hold most: "a1" goes
    assert len(cache) == 4
    assert len(inner.query_calls) == 5

    for queries, text in ((second, "b1"), (second, "b2"), (first, "a2"), (third, "c1")):
        await queries.embed_query([text])
    assert len(inner.query_calls) == 5  # all hits
    await first.embed_query(["a1"])
    assert inner.query_calls[-1] == ["a1"]


async def test_an_entry_idle_long_enough_goes_first_whoever_holds_it() -> None:
    inner = GatedEmbeddings()
    clock = _Clock()
    cache = CachedQueryEmbeddings(inner, max_size=2, idle_after=300, clock=clock)
    idle, busy = cache.for_tenant(new_tenant()), cache.for_tenant(new_tenant())
    await idle.embed_query(["i1"])
    clock.now = 1
    await busy.embed_query(["x1"])
    clock.now = 299
    # "i1" is not idle yet: the busy tenant, holding most, gives up "x1", then "x2".
    await busy.embed_query(["x2"])
    await busy.embed_query(["x1"])
    assert inner.query_calls[-1] == ["x1"]
    clock.now = 700  # "i1" has been idle 700 s: it goes, whoever holds most
    await busy.embed_query(["x3"])
    await busy.embed_query(["x1", "x3"])
    assert inner.query_calls[-1] == ["x3"]  # both were cached
    await idle.embed_query(["i1"])
    assert inner.query_calls[-1] == ["i1"]


async def test_a_burst_of_one_tenant_evicts_its_own_entries_not_others() -> None:
    """One tenant's many distinct queries cost another tenant's repeats nothing, and
    alone a tenant has the whole cache."""
    inner = GatedEmbeddings()
    cache = CachedQueryEmbeddings(inner, max_size=4)
    quiet, busy = cache.for_tenant(new_tenant()), cache.for_tenant(new_tenant())
    await quiet.embed_query(["kept"])
    for number in range(20):
        await busy.embed_query([f"burst {number}"])
    assert len(cache) == 4
    await quiet.embed_query(["kept"])
    assert ["kept"] not in inner.query_calls[1:]  # a hit
    await busy.embed_query(["burst 19", "burst 18", "burst 17"])
    assert inner.query_calls[-1] == ["burst 19"]  # those three were still cached

    lone = GatedEmbeddings()
    alone = CachedQueryEmbeddings(lone, max_size=4).for_tenant(new_tenant())
    for number in range(6):
        await alone.embed_query([str(number)])
    await alone.embed_query(["2", "3", "4", "5"])
    assert len(lone.query_calls) == 6  # the four most recent were all cached


async def test_a_batch_asks_only_for_what_is_missing_and_keeps_order() -> None:
    inner = GatedEmbeddings()
    cache = CachedQueryEmbeddings(inner)
    queries = cache.for_tenant(new_tenant())
    await queries.embed_query(["ab"])

    vectors = await queries.embed_query(["abc", "ab", "abc", "a"])

    assert inner.query_calls == [["ab"], ["abc", "a"]]
    assert vectors == [[3.0, 2.0], [2.0, 1.0], [3.0, 2.0], [1.0, 2.0]]
    assert (cache.hits, cache.misses) == (2, 3)


async def test_concurrent_misses_of_one_text_make_one_request() -> None:
    inner = GatedEmbeddings()
    inner.gate.clear()
    cache = CachedQueryEmbeddings(inner)
    queries = cache.for_tenant(new_tenant())

    calls = [asyncio.create_task(queries.embed_query(["acme"])) for _ in range(3)]
    await asyncio.sleep(0)
    inner.gate.set()
    results = await asyncio.gather(*calls)

    assert results == [[[4.0, 1.0]]] * 3
    assert inner.query_calls == [["acme"]]
    assert (cache.hits, cache.misses) == (2, 1)


async def test_a_cancelled_caller_does_not_cancel_the_request_others_await() -> None:
    inner = GatedEmbeddings()
    inner.gate.clear()
    cache = CachedQueryEmbeddings(inner)
    queries = cache.for_tenant(new_tenant())
    impatient = asyncio.create_task(queries.embed_query(["acme"]))
    patient = asyncio.create_task(queries.embed_query(["acme"]))
    await asyncio.sleep(0)

    impatient.cancel()
    inner.gate.set()

    assert await patient == [[4.0, 1.0]]
    assert impatient.cancelled()
    assert len(cache) == 1


async def test_a_failure_reaches_every_waiter_and_is_not_cached() -> None:
    inner = GatedEmbeddings()
    inner.gate.clear()
    inner.fail = RuntimeError("model down")
    cache = CachedQueryEmbeddings(inner)
    queries = cache.for_tenant(new_tenant())

    calls = [asyncio.create_task(queries.embed_query(["acme"])) for _ in range(2)]
    await asyncio.sleep(0)
    inner.gate.set()
    outcomes = await asyncio.gather(*calls, return_exceptions=True)

    assert [str(o) for o in outcomes] == ["model down", "model down"]
    assert len(cache) == 0
    assert await queries.embed_query(["acme"]) == [[4.0, 2.0]]  # asked again, now answered
    assert len(inner.query_calls) == 2


async def test_documents_pass_through_uncached() -> None:
    inner = GatedEmbeddings()
    cache = CachedQueryEmbeddings(inner)
    queries = cache.for_tenant(new_tenant())
    await queries.embed_documents(["acme"])
    await queries.embed_documents(["acme"])

    assert inner.document_calls == [["acme"], ["acme"]]
    assert inner.query_calls == []
    assert len(cache) == 0
    assert (cache.hits, cache.misses) == (0, 0)


async def test_no_texts_no_request() -> None:
    inner = GatedEmbeddings()
    queries = CachedQueryEmbeddings(inner).for_tenant(new_tenant())
    assert await queries.embed_query([]) == []
    assert inner.query_calls == []


def test_a_cache_of_nothing_is_refused() -> None:
    with pytest.raises(ValueError):  # noqa: PT011 (InvalidInputError is a ValueError)
        CachedQueryEmbeddings(HashingEmbeddingProvider(8), max_size=0)


def _retriever(cache: CachedQueryEmbeddings) -> Retriever:
    return Retriever(embeddings=cache, vectors=InMemoryVectorStore(2), graph=InMemoryGraphStore())


async def test_a_tenant_misses_on_a_text_only_another_tenant_searched() -> None:
    inner = GatedEmbeddings()
    cache = CachedQueryEmbeddings(inner)
    retriever = _retriever(cache)
    first, second = new_tenant(), new_tenant()

    await retriever.retrieve(SECRET, first, mode=RetrievalMode.SEMANTIC)
    await retriever.retrieve(SECRET, second, mode=RetrievalMode.SEMANTIC)

    assert inner.query_calls == [[SECRET], [SECRET]]  # the second tenant's own request
    assert (cache.hits, cache.misses) == (0, 2)

    await retriever.retrieve(SECRET, first, mode=RetrievalMode.SEMANTIC)
    await retriever.retrieve(SECRET, second, mode=RetrievalMode.SEMANTIC)

    assert len(inner.query_calls) == 2  # each tenant's repeat is its own hit
    assert (cache.hits, cache.misses) == (2, 2)


async def test_a_tenant_does_not_share_another_tenants_request_in_flight() -> None:
    inner = GatedEmbeddings()
    inner.gate.clear()
    cache = CachedQueryEmbeddings(inner)
    retriever = _retriever(cache)

    calls = [
        asyncio.create_task(retriever.retrieve(SECRET, tenant, mode=RetrievalMode.SEMANTIC))
        for tenant in (new_tenant(), new_tenant())
    ]
    for _ in range(5):
        await asyncio.sleep(0)
    inner.gate.set()
    await asyncio.gather(*calls)

    assert inner.query_calls == [[SECRET], [SECRET]]
    assert (cache.hits, cache.misses) == (0, 2)
