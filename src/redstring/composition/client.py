"""`Redstring`: an embedding provider, a vector store, a graph store and the retriever over them.

The one place where the parts are put together: the CLI, the GraphQL API,
the examples and the bench all start from a `Redstring`, the way every httpx
call starts from a `Client`.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import logging
import uuid
from collections.abc import Awaitable, Callable, Hashable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from pydantic import SecretStr

from redstring.adapters.memory import InMemoryGraphStore, InMemoryVectorStore
from redstring.composition.build_graph import DEFAULT_BATCH_SIZE, build_graph
from redstring.composition.candidates import SeparateReads
from redstring.composition.embedding_check import EmbeddingCheck, check_embeddings
from redstring.composition.embedding_choice import (
    default_embedding_provider,
    make_embedding_provider,
)
from redstring.composition.extras import check_neo4j_extra
from redstring.composition.neo4j_options import neo4j_options_of
from redstring.composition.neo4j_uri import check_neo4j_uri
from redstring.composition.observed import (
    ObservedCandidateReader,
    ObservedEmbeddings,
    observed_graph_store,
    observed_vector_store,
)
from redstring.composition.observer import Observer
from redstring.composition.query_cache import CachedQueryEmbeddings
from redstring.composition.rekey import RekeyReport, rekey
from redstring.composition.retrieval import Retriever
from redstring.composition.vector_provenance import (
    DEFAULT_SAMPLE_SIZE,
    VectorProvenance,
    check_provenance,
)
from redstring.domain.arguments import count_of
from redstring.domain.entity import Entity
from redstring.domain.entity_types import type_after_of
from redstring.domain.errors import (
    ClientClosedError,
    ClientStartFailedError,
    StoreUnavailableError,
    WrongEventLoopError,
)
from redstring.domain.ids import EntityId, TenantId, entity_ids_of, tenant_id_of
from redstring.domain.normalization import prepare_any_script
from redstring.domain.relationship import Direction, Relationship
from redstring.domain.relationship_order import RelationshipPlace
from redstring.domain.retrieval import RetrievalMode, RetrievalResult
from redstring.ports.embedding_provider import EmbeddingProvider
from redstring.ports.graph_store import EndReads, GraphStore
from redstring.ports.restarts import ServerStart, StartReads
from redstring.ports.vector_store import VectorStore

_log = logging.getLogger(__name__)

Closer = Callable[[], Awaitable[None]]


class _Lifetime:
    """Whether a client is closed, the event loop of its first call and its one start,
    shared by the client and its `observed` copies (which run the same closers over the
    same stores: a copy's call waits for the start under way, and `aclose` cancels it
    whichever of them began it)."""

    closed = False
    loop: asyncio.AbstractEventLoop | None = None
    # What `start` runs (`Redstring.neo4j` sets it; None once it succeeded or the client
    # closed), and the task running it once a call began it.
    starter: Callable[[], Awaitable[None]] | None = None
    starting: asyncio.Future[None] | None = None
    # Whether `aclose` cancelled a start under way (its waiters are told the client closed).
    start_cut = False


# What a call on a loop-bound client (`Redstring.neo4j`) from another event loop says.
_OTHER_LOOP = (
    "this client's Neo4j connections belong to the event loop of its first call, and "
    "this call runs on another: open one client per event loop (inside the coroutine "
    "asyncio.run runs, as `async with Redstring.neo4j(...)`), or make every call on one "
    "loop (one asyncio.Runner)"
)


@runtime_checkable
class _Closable(Protocol):
    async def aclose(self) -> None: ...


def _closers_of(embeddings: EmbeddingProvider) -> tuple[Closer, ...]:
    """The provider's `aclose` when it has one (an HTTP client to release), else nothing."""
    return (embeddings.aclose,) if isinstance(embeddings, _Closable) else ()


class StoreSettings(Protocol):
    """What `Redstring.from_settings` reads: the backend and embedding fields of
    `redstring.api.settings.Settings` (which satisfies this protocol)."""

    @property
    def backend(self) -> str: ...
    @property
    def neo4j_uri(self) -> str: ...
    @property
    def neo4j_user(self) -> str: ...
    @property
    def neo4j_password(self) -> SecretStr: ...
    @property
    def neo4j_database(self) -> str | None: ...
    @property
    def neo4j_outage_retry(self) -> float: ...
    @property
    def neo4j_transaction_timeout(self) -> float: ...
    @property
    def embeddings(self) -> str: ...
    @property
    def embedding_dimension(self) -> int | None: ...
    @property
    def embedding_model(self) -> str | None: ...
    @property
    def embedding_base_url(self) -> str | None: ...
    @property
    def embedding_api_key_env(self) -> str: ...
    @property
    def embedding_batch_size(self) -> int: ...
    @property
    def embedding_concurrency(self) -> int: ...
    @property
    def embedding_timeout(self) -> float: ...
    @property
    def embedding_query_prompt(self) -> str | None: ...
    @property
    def embedding_document_prompt(self) -> str | None: ...
    @property
    def query_cache_size(self) -> int: ...


# The setting (a field of `StoreSettings`) that carries each option of
# `make_embedding_provider` but `kind` and `time_limit`: what `embeddings_from_settings`
# passes, and what the commands and the server name for the options an
# `EmbeddingRefusedError` says to check.
EMBEDDING_OPTION_SETTINGS: Mapping[str, str] = {
    "dimension": "embedding_dimension",
    "model": "embedding_model",
    "base_url": "embedding_base_url",
    "api_key_env": "embedding_api_key_env",
    "batch_size": "embedding_batch_size",
    "max_concurrency": "embedding_concurrency",
    "timeout": "embedding_timeout",
    "query_prompt": "embedding_query_prompt",
    "document_prompt": "embedding_document_prompt",
}


def embeddings_from_settings(
    settings: StoreSettings, *, time_limit: float | None = None
) -> EmbeddingProvider:
    """The embedding provider `settings.embeddings` names, built from the `embedding_*` fields,
    each of its calls bounded by `time_limit` seconds (`make_embedding_provider`).

    Raises `InvalidInputError` for an incomplete choice (`openai` without a
    model or base URL, a prompt for a kind that cannot apply it, ...).
    """
    options = {
        option: getattr(settings, name) for option, name in EMBEDDING_OPTION_SETTINGS.items()
    }
    return make_embedding_provider(str(settings.embeddings), **options, time_limit=time_limit)


class Redstring:
    """Hybrid entity retrieval over one provider, one vector store and one graph store.

    Open one with `in_memory`, `neo4j` or `from_settings`, or pass your own
    adapters; use it as `async with` (or call `aclose`) so that what it owns
    (a driver, an HTTP client) is released. The parts stay reachable as
    `embeddings`, `vectors`, `graph` and `retriever`.

    `query_cache_size > 0` puts a `CachedQueryEmbeddings` of that many queries
    between the retriever and the provider; a cached query serves only the tenant
    that searched it. `closers` are what `aclose`
    runs, in order; a `Redstring` over injected adapters owns nothing.
    Raises `DimensionMismatchError` when the provider and the vector store disagree.
    """

    def __init__(
        self,
        *,
        embeddings: EmbeddingProvider,
        vectors: VectorStore,
        graph: GraphStore,
        query_cache_size: int = 0,
        closers: Sequence[Closer] = (),
    ) -> None:
        query_cache_size = count_of(query_cache_size, "query_cache_size")
        cache = (
            CachedQueryEmbeddings(embeddings, max_size=query_cache_size)
            if query_cache_size
            else None
        )
        # Not `cache or embeddings`: an empty cache has len 0, so it is falsy.
        query_embeddings = embeddings if cache is None else cache
        self.retriever = Retriever(embeddings=query_embeddings, vectors=vectors, graph=graph)
        self.embeddings: EmbeddingProvider = embeddings
        self.vectors: VectorStore = vectors
        self.graph: GraphStore = graph
        self.query_cache = cache
        self.closers = tuple(closers)
        self._lifetime = _Lifetime()
        # Whether what the client holds belongs to the event loop of its first call (a
        # Neo4j driver's connections): calls from another loop are refused.
        self._loop_bound = False
        # The stores that can tell when their server started, and for each server, the
        # start the last warm-up read (or the first readiness check that met it). Shared
        # with `observed` copies, which read the same stores.
        # One store a source: two stores reading through one driver read one start.
        start_reads: dict[Hashable, StartReads] = {}
        for store in (graph, vectors):
            if isinstance(store, StartReads):
                start_reads.setdefault(store.start_source, store)
        self._start_reads = tuple(start_reads.values())
        self._warm_starts: dict[str, str] = {}

    @classmethod
    def in_memory(
        cls, embeddings: EmbeddingProvider | None = None, *, query_cache_size: int = 0
    ) -> Redstring:
        """Empty in-memory stores sized for `embeddings`; they live as long as the process.

        Without `embeddings`, the server's default provider is built (and closed by
        `aclose`); a provider passed in is the caller's to close.
        """
        owned = embeddings is None
        provider = default_embedding_provider() if embeddings is None else embeddings
        return cls(
            embeddings=provider,
            vectors=InMemoryVectorStore(provider.dimension),
            graph=InMemoryGraphStore(),
            query_cache_size=query_cache_size,
            closers=_closers_of(provider) if owned else (),
        )

    @classmethod
    def neo4j(
        cls,
        uri: str,
        auth: tuple[str, str],
        *,
        database: str | None = None,
        outage_retry: float = 0.0,
        transaction_timeout: float | None = None,
        embeddings: EmbeddingProvider | None = None,
        query_cache_size: int = 0,
    ) -> Redstring:
        """Both Neo4j stores over one owned driver (one connection pool), whose reads and
        writes keep trying for `outage_retry` seconds while the server cannot be reached
        (`Neo4jSettings.outage_retry_time`), and whose transactions the server ends
        after `transaction_timeout` seconds (None: `Neo4jSettings`' default, 30).

        No I/O until `start` (which `async with` and the first call run): it
        ensures the schema and runs every read statement once (`warm_up`).
        Without `embeddings`, the default provider is built and owned. The
        adapters are imported here, so redstring runs without the `neo4j`
        extra until this backend is chosen; without it, `InvalidInputError`
        names the extra, as it says what is wrong with a `uri` the driver
        cannot take (`check_neo4j_uri`) or with another option
        (`neo4j_options_of`: `auth` a pair of strings, `database` a string,
        `outage_retry` finite seconds from 0, `transaction_timeout` finite
        seconds above 0, `query_cache_size` a count), before anything is built.
        """
        check_neo4j_extra()
        check_neo4j_uri(uri)
        options = neo4j_options_of(auth, database, outage_retry, transaction_timeout)
        query_cache_size = count_of(query_cache_size, "query_cache_size")
        from redstring.adapters.neo4j import (
            Neo4jGraphStore,
            Neo4jSettings,
            Neo4jVectorStore,
            connect_driver,
        )

        owned = embeddings is None
        provider = default_embedding_provider() if embeddings is None else embeddings
        closers = _closers_of(provider) if owned else ()
        settings = Neo4jSettings(outage_retry_time=options.outage_retry)
        if options.transaction_timeout is not None:
            settings = dataclasses.replace(
                settings, transaction_timeout=options.transaction_timeout
            )
        driver = connect_driver(uri, options.auth, settings)
        database = options.database
        graph = Neo4jGraphStore(driver, database=database, settings=settings)
        vectors = Neo4jVectorStore(driver, provider.dimension, database=database, settings=settings)
        client = cls(
            embeddings=provider,
            vectors=vectors,
            graph=graph,
            query_cache_size=query_cache_size,
            closers=(driver.close, *closers),
        )

        async def start() -> None:
            await graph.ensure_schema()
            await vectors.ensure_schema()
            await client.warm_up()

        client._lifetime.starter = start
        client._loop_bound = True
        return client

    @classmethod
    def from_settings(
        cls, settings: StoreSettings, *, embedding_time_limit: float | None = None
    ) -> Redstring:
        """The backend and provider `settings` name (`redstring.api.settings.Settings`),
        queries embedded through a cache of `settings.query_cache_size`; owns the provider.
        `embedding_time_limit` bounds each call of the provider, retries and waits
        included (a server's share of its request deadline; None waits out an outage).

        Raises `InvalidInputError` for an incomplete embedding choice, or the neo4j
        backend without its extra, with a URI it cannot take or another option
        `Redstring.neo4j` refuses (before the provider is built).
        """
        neo4j = str(settings.backend) == "neo4j"
        if neo4j:
            check_neo4j_extra()
            check_neo4j_uri(settings.neo4j_uri)
            neo4j_options_of(
                (settings.neo4j_user, settings.neo4j_password.get_secret_value()),
                settings.neo4j_database,
                settings.neo4j_outage_retry,
                settings.neo4j_transaction_timeout,
            )
        embeddings = embeddings_from_settings(settings, time_limit=embedding_time_limit)
        if neo4j:
            client = cls.neo4j(
                settings.neo4j_uri,
                (settings.neo4j_user, settings.neo4j_password.get_secret_value()),
                database=settings.neo4j_database,
                outage_retry=settings.neo4j_outage_retry,
                transaction_timeout=settings.neo4j_transaction_timeout,
                embeddings=embeddings,
                query_cache_size=settings.query_cache_size,
            )
        else:
            client = cls.in_memory(embeddings, query_cache_size=settings.query_cache_size)
        client.closers = (*client.closers, *_closers_of(embeddings))
        return client

    async def start(self) -> None:
        """Prepare the stores (a Neo4j schema, its statements planned), once for the client
        and its `observed` copies: calls made while it runs, on either, wait for it. On
        failure, what this client owns is closed and the error raised; every later call
        raises `ClientStartFailedError` from it (`ClientClosedError` when `aclose` cut it).

        A client over Neo4j (`neo4j`, `from_settings`) belongs to the event loop of its
        first call: a call from another raises `WrongEventLoopError`."""
        self._check_loop()
        lifetime = self._lifetime
        if lifetime.starting is None:
            self._check_open()
            if lifetime.starter is None:
                return
            lifetime.starting = asyncio.ensure_future(self._start_once(lifetime.starter))
        starting = lifetime.starting
        if starting.done():
            failure = (
                asyncio.CancelledError("the start was cancelled")
                if starting.cancelled()
                else starting.exception()
            )
            if failure is not None:
                if lifetime.start_cut:  # `aclose` cancelled it: the start did not fail
                    raise ClientClosedError(
                        "this client was closed (aclose) while it started: open a new one"
                    ) from failure
                raise ClientStartFailedError(
                    f"this client failed to start ({type(failure).__name__}: {failure}) and "
                    "is closed: open a new one"
                ) from failure
            self._check_open()
            return
        try:
            await asyncio.shield(starting)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if lifetime.start_cut and not (current is not None and current.cancelling()):
                self._check_open()  # `aclose` cancelled the start, not this call's caller
            raise
        self._check_open()  # closed while it started

    def _check_open(self) -> None:
        if self._lifetime.closed:
            raise ClientClosedError("this client is closed (aclose): open a new one")

    def _check_loop(self) -> None:
        """Bind a loop-bound client to the running loop on its first call; from then on,
        `WrongEventLoopError` on any other (asyncio's own error would come from deep in
        the driver, and leave the client's connections on a loop that may be gone)."""
        if not self._loop_bound or self._lifetime.closed:
            return
        running = asyncio.get_running_loop()
        if self._lifetime.loop is None:
            self._lifetime.loop = running
        elif self._lifetime.loop is not running:
            raise WrongEventLoopError(_OTHER_LOOP)

    @contextlib.contextmanager
    def _closed_under_it(self) -> Iterator[None]:
        """A store's failure in a call that `aclose` overtook (a driver closed under it)
        raised as `ClientClosedError`: the store did not fail, the client's lifetime
        ended."""
        try:
            yield
        except StoreUnavailableError as error:
            if not self._lifetime.closed:
                raise
            raise ClientClosedError(
                "this client was closed (aclose) while the call ran: open a new one"
            ) from error

    async def _start_once(self, starter: Callable[[], Awaitable[None]]) -> None:
        try:
            await starter()
        except BaseException:
            await self.aclose()
            raise
        self._lifetime.starter = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Run every closer, even when an earlier one fails; the first failure is raised.
        Then every call raises `ClientClosedError` (`ClientStartFailedError` after a
        failed start), and a call still running that the close overtakes raises
        `ClientClosedError` too; closing again does nothing. A start under way (`start`)
        is cancelled first (the outage it waits out among it), the calls waiting for it
        raising `ClientClosedError` as well.

        A client bound to an event loop (`start`) closes on that loop only: on another
        it raises `WrongEventLoopError` and stays open, to be closed on its own; once
        that loop is closed, what the client held there cannot be closed any more, and
        it raises `WrongEventLoopError` saying so, the client closed."""
        if self._lifetime.closed:
            return
        bound = self._lifetime.loop
        if self._loop_bound and bound is not None and bound is not asyncio.get_running_loop():
            if not bound.is_closed():
                raise WrongEventLoopError(
                    "this client's Neo4j connections belong to the event loop of its "
                    "first call: close it on the event loop it started on (it stays "
                    "open until then)"
                )
            self._lifetime.closed = True
            self._lifetime.starter = None
            raise WrongEventLoopError(
                "the event loop this client started on is closed, and with it the Neo4j "
                "connections it held there, which cannot be closed any more (Python warns "
                "of them as unclosed); the client is closed. Close a client on its own "
                "loop: `async with Redstring.neo4j(...)` inside the coroutine asyncio.run "
                "runs"
            )
        self._lifetime.closed = True
        self._lifetime.starter = None
        starting = self._lifetime.starting
        if starting is not None and not starting.done() and starting is not asyncio.current_task():
            # A start under way ends with the client (its waits for an outage among it),
            # before what it uses is closed.
            self._lifetime.start_cut = True
            starting.cancel()
            await asyncio.wait([starting])
        failure: BaseException | None = None
        for close in self.closers:
            try:
                await close()
            except Exception as exc:
                failure = failure or exc
        if failure is not None:
            raise failure

    async def upsert(
        self,
        entities: Sequence[Entity],
        relationships: Sequence[Relationship] = (),
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        """Embed and write `entities`, then `relationships` (`build_graph`: graph store
        before vector store, in batches). Idempotent: every write is an upsert by id,
        and an entity whose stored vector is already of its text and this provider is
        not embedded again. One whose vector is of another text loses it before its
        entity is written, so a failure leaves it without a vector, not with its old
        text's.

        A relationship whose end is in neither the store nor `entities` raises
        `MissingEndpointError`, and nothing of its batch of relationships is written.
        Entities whose text the provider refuses alone (one past what its model reads)
        raise `EntityTextRefusedError`, naming them, before any write of their batch
        (of `batch_size` entities).
        """
        await self.start()
        with self._closed_under_it():
            await build_graph(
                entities,
                relationships,
                embeddings=self.embeddings,
                vectors=self.vectors,
                graph=self.graph,
                batch_size=batch_size,
            )

    async def retrieve(
        self,
        query: str,
        tenant_id: uuid.UUID | str,
        *,
        k: int = 10,
        entity_types: Sequence[str] | None = None,
        mode: RetrievalMode | str = RetrievalMode.HYBRID,
    ) -> RetrievalResult:
        """The `k` best entities of `tenant_id` for `query`, best first (`Retriever.retrieve`)."""
        await self.start()
        with self._closed_under_it():
            return await self.retriever.retrieve(
                query, tenant_id, k=k, entity_types=entity_types, mode=mode
            )

    async def relationships(
        self,
        entity_ids: Sequence[uuid.UUID | str],
        tenant_id: uuid.UUID | str,
        *,
        direction: Direction = Direction.BOTH,
        types: Sequence[str] | None = None,
        limit_per_entity: int | None = None,
        after: RelationshipPlace | Relationship | None = None,
    ) -> dict[EntityId, list[Relationship]]:
        """Each asked id mapped to its relationships (`[]` when none), ordered by type
        then id, those after `after` (a `RelationshipPlace`, or the last relationship of
        the previous page), the first `limit_per_entity` of them
        (`GraphStore.relationships_of`). An id is a UUID or its string, and the answer
        is keyed by the UUID."""
        await self.start()
        ids = entity_ids_of(entity_ids, "entity_ids")
        with self._closed_under_it():
            return await self.graph.relationships_of(
                ids,
                tenant_id_of(tenant_id),
                direction=direction,
                types=types,
                limit_per_entity=limit_per_entity,
                after=after,
            )

    async def relationship_counts(
        self,
        entity_ids: Sequence[uuid.UUID | str],
        tenant_id: uuid.UUID | str,
        *,
        direction: Direction = Direction.BOTH,
        types: Sequence[str] | None = None,
    ) -> dict[EntityId, int]:
        """Each asked id mapped to how many relationships `relationships` lists for it
        with the same `direction` and `types` and neither cap nor `after`
        (`GraphStore.relationship_counts`): the total beside a page. Keyed by UUID, as
        `relationships` is."""
        await self.start()
        ids = entity_ids_of(entity_ids, "entity_ids")
        with self._closed_under_it():
            return await self.graph.relationship_counts(
                ids, tenant_id_of(tenant_id), direction=direction, types=types
            )

    async def delete(
        self, entity_ids: Sequence[uuid.UUID | str], tenant_id: uuid.UUID | str
    ) -> int:
        """Delete entities (each id a UUID or its string), their vectors and every
        relationship touching them; how many this call deleted
        (`GraphStore.delete_entities`).

        Vectors go first, so a failure between the two stores leaves entities
        without vectors (still found lexically), never vectors of deleted entities;
        and again after the entities. A writer's vector (`upsert`, `load`, `rekey
        --vectors`) landing between the two deletes, when its read-back came before
        the entities' delete, goes with the second; one landing after the second
        comes after the entities' delete, so its writer's read-back finds the entity
        gone and deletes it (`settle`), where a read sees what committed before it
        began (one server; a Neo4j cluster through the vector write's bookmark, both
        stores being one database). One more vector-store call a delete.

        The second is done as well as it can be: the entities are gone once it runs,
        so its failure (an `Exception`; a cancellation still ends the delete) is
        logged as a WARNING and the count answered. The vector it would have deleted,
        if one landed, is left behind, and retrieval skips it (docs/adr/0004).
        """
        await self.start()
        tenant, ids = tenant_id_of(tenant_id), entity_ids_of(entity_ids, "entity_ids")
        with self._closed_under_it():
            await self.vectors.delete(ids, tenant)
            deleted = await self.graph.delete_entities(ids, tenant)
        try:
            await self.vectors.delete(ids, tenant)
        except Exception as error:
            _log.warning(
                "tenant %s: a delete of %d ids deleted %d entities, then deleting their "
                "vectors again failed (a vector written meanwhile is left, which retrieval "
                "skips): %s: %s",
                tenant,
                len(ids),
                deleted,
                type(error).__name__,
                error,
            )
        return deleted

    async def tenants(self) -> list[TenantId]:
        """Every tenant with an entity in the graph store, in id order."""
        await self.start()
        with self._closed_under_it():
            return await self.graph.tenants()

    async def entity_types(
        self, tenant_id: uuid.UUID | str, *, limit: int | None = None, after: str | None = None
    ) -> dict[str, int]:
        """Each entity type of the tenant mapped to how many of its entities are of it,
        ordered by type (by code point), those after `after` (the last type of the
        previous page; from the first when None), the first `limit` of them (every one
        when None; `GraphStore.entity_types`): what a search box offers as type filters.
        Over Neo4j a scan of the tenant's entities."""
        await self.start()
        tenant, after = tenant_id_of(tenant_id), type_after_of(after)
        with self._closed_under_it():
            return await self.graph.entity_types(tenant, limit=limit, after=after)

    async def rekey(
        self,
        tenant_id: uuid.UUID | str,
        *,
        page_size: int | None = None,
        dry_run: bool = False,
        vectors: bool = False,
        on_page: Callable[[RekeyReport], None] | None = None,
        on_progress: Callable[[RekeyReport], None] | None = None,
    ) -> RekeyReport:
        """Rewrite the blocking keys of the tenant's entities that an earlier version
        derived otherwise, in place, and with `vectors` embed again with this client's
        provider the entities whose stored vector it would not make (another text or
        model, or none) and rewrite those vectors (`composition.rekey.rekey`); with
        `dry_run`, count them only. `on_page` hears the report so far after each page,
        `on_progress` after each step of a page."""
        await self.start()
        with self._closed_under_it():
            return await rekey(
                self.graph,
                tenant_id_of(tenant_id),
                page_size=page_size,
                dry_run=dry_run,
                on_page=on_page,
                on_progress=on_progress,
                embeddings=self.embeddings if vectors else None,
                vectors=self.vectors if vectors else None,
            )

    async def check_vector_provenance(
        self, *, sample_size: int = DEFAULT_SAMPLE_SIZE
    ) -> VectorProvenance:
        """Whether the stored vectors are of this client's provider and this version's
        embedding recipe: up to `sample_size` stored vectors of any tenants
        (`SourceSamples`), their sources compared with those the provider gives their
        entities' text now (`vector_source`). A few reads whose cost does not grow with
        the stores; nothing is embedded or written. `VectorProvenance.warning` says what
        to do when some are not; a vector store that reads no sample is not checked
        (`VectorProvenance.checked`). `redstring serve` runs it once it has started
        (docs/embeddings.md)."""
        await self.start()
        with self._closed_under_it():
            return await check_provenance(
                self.embeddings, self.vectors, self.graph, sample_size=sample_size
            )

    async def check_embeddings(self) -> EmbeddingCheck:
        """Whether the provider answers: one short query embedded by it, past the query
        cache, and its vector's dimension compared with the vector store's
        (`composition.embedding_check.check_embeddings`). Raises what a request that
        embeds would: `EmbeddingRefusedError` for settings the provider refuses,
        `EmbeddingUnavailableError` when it does not answer (after its retries),
        `DimensionMismatchError` for a vector of another dimension. `redstring serve`
        runs it once it has started (docs/embeddings.md)."""
        await self.start()
        with self._closed_under_it():
            return await check_embeddings(self.embeddings, self.vectors)

    def observed(self, observer: Observer) -> Redstring:
        """This client with every store call, provider call, cache use and dangling
        match reported to `observer`: the same stores, provider and closers underneath.

        The query cache is rebuilt (empty, same size) over the observed provider, so
        that embedding times are those of the provider alone, not of cache hits.
        Observe a client once; observing the result again reports each call twice.
        """
        embeddings = ObservedEmbeddings(self.embeddings, observer)
        vectors = observed_vector_store(self.vectors, observer)
        graph = observed_graph_store(self.graph, observer)
        cache = (
            None
            if self.query_cache is None
            else CachedQueryEmbeddings(
                embeddings, max_size=self.query_cache.max_size, observer=observer
            )
        )
        observed = copy.copy(self)
        observed.embeddings = embeddings
        observed.vectors = vectors
        observed.graph = graph
        observed.query_cache = cache
        # Stores read apart are read through their observed wrappers; a joint reader is
        # observed as one store.
        joint = self.retriever.candidates
        observed.retriever = self.retriever.with_parts(
            embeddings=embeddings if cache is None else cache,
            vectors=vectors,
            graph=graph,
            observer=observer,
            candidates=None
            if isinstance(joint, SeparateReads)
            else ObservedCandidateReader(joint, observer),
        )
        return observed

    async def check_ready(self) -> bool:
        """Raise when a store does not answer a cheap read (a random, empty tenant); else
        whether the stores are warm.

        They are not when the server answering a store has started again since the
        last `warm_up` read its start (`StartReads`): what that warm-up filled is gone,
        though no read failed. Stores that never start again (in memory) are always
        warm; a server no warm-up has met is taken as the check finds it. Raises
        `ClientClosedError` once closed, `WrongEventLoopError` as `start` does.
        """
        self._check_open()
        self._check_loop()
        starts = await self._answer_and_starts()
        return all([self._warm_starts.setdefault(s.server, s.started) == s.started for s in starts])

    async def _answer_and_starts(self) -> list[ServerStart]:
        """The readiness check's reads, then the start of the server each `StartReads`
        store reads from (those that tell)."""
        tenant = TenantId(uuid.uuid4())
        await self.graph.get_entities([EntityId(uuid.uuid4())], tenant)
        await self.vectors.search(self._probe_vector(), tenant, k=1)
        starts = [await store.last_started() for store in self._start_reads]
        return [start for start in starts if start is not None]

    async def warm_up(self) -> None:
        """Run the readiness check, each read a retrieve or a traversal makes and the list
        of entity types, once, in a random empty tenant, without embedding anything.

        A database plans a statement the first time it runs it: warmed up, neither the
        first readiness check (whose deadline is short) nor the first request pays for it.
        Once done, `check_ready` measures restarts from the starts read at its beginning.
        Raises `ClientClosedError` once closed, `WrongEventLoopError` as `start` does.
        """
        self._check_open()
        self._check_loop()
        prepare_any_script()  # the first name or query beyond Latin letters pays it else
        tenant = TenantId(uuid.uuid4())
        starts = await self._answer_and_starts()
        probe = self._probe_vector()
        await self.vectors.search(probe, tenant, k=1, entity_types=["warm-up"])
        # A retrieve's one read in each of its shapes: both channels (with and without a
        # type filter), the semantic one alone, the lexical one alone.
        for vector, keys, types in (
            (probe, ("w:warm",), None),
            (probe, ("w:warm",), ["warm-up"]),
            (probe, (), None),
            (None, ("w:warm",), None),
        ):
            await self.retriever.candidates.find_candidates(
                tenant, vector=vector, k=1, keys=keys, entity_types=types
            )
        # A kept lexical match is read whole; a hop reads one statement a direction.
        nowhere = [EntityId(uuid.uuid4())]
        await self.graph.get_entities(nowhere, tenant)
        for direction in Direction:
            await self.graph.relationships_of(
                nowhere, tenant, direction=direction, limit_per_entity=1
            )
            if isinstance(self.graph, EndReads):
                await self.graph.relationships_with_ends(
                    nowhere, tenant, direction=direction, limit_per_entity=1
                )
            # A count, with and without types (a degree, or a read of each edge).
            await self.graph.relationship_counts(nowhere, tenant, direction=direction)
            await self.graph.relationship_counts(
                nowhere, tenant, direction=direction, types=["warm-up"]
            )
        await self.graph.entity_types(tenant, limit=1)  # as `entityTypes` lists them
        self._warm_starts.update(starts)

    def _probe_vector(self) -> list[float]:
        return [1.0] + [0.0] * (self.vectors.dimension - 1)
