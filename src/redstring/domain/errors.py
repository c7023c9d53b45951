"""The errors redstring raises on purpose; each says what is wrong in the caller's terms.

The whole hierarchy is here, every class a `RedstringError`; the GraphQL API
answers each with the `extensions.code` of `redstring.api.errors.CODE_OF_ERROR`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any
from uuid import UUID

# Where a problem lies inside a record: field names, and indexes into its lists.
FieldPath = tuple[str | int, ...]


class RedstringError(Exception):
    """Base of every error redstring raises deliberately."""


class InvalidInputError(RedstringError, ValueError):
    """The caller asked for something that cannot be done (blank query, negative k, ...)."""


def describe_problems(
    problems: Sequence[tuple[FieldPath, str]],
    where: str = "",
    names: Mapping[str, str] | None = None,
) -> str:
    """Each problem as `where.field: what is wrong`, joined by `; `; `names` renames fields
    (a domain spelling to a schema's or a file's), in the location and where the message
    begins with the field's name (`entityType must not be blank`)."""
    renamed = names or {}
    parts: list[str] = []
    for path, message in problems:
        location = ".".join(p for p in (where, *(str(renamed.get(str(p), p)) for p in path)) if p)
        field = str(path[-1]) if path else ""
        if field in renamed and message.startswith(field + " "):
            message = renamed[field] + message[len(field) :]
        parts.append(f"{location}: {message}" if location else message)
    return "; ".join(parts)


class InvalidFieldsError(InvalidInputError):
    """A record (`Entity`, `Relationship`, `VectorRecord`) given wrong-typed or malformed
    fields: `Entity.name: Input should be a valid string`.

    `record` names the record's class and `problems` holds each problem as its field
    path and what is wrong (an empty path for the record as a whole), so that a caller
    can name them in its own terms (`describe`); `__cause__` is pydantic's error.
    """

    def __init__(self, record: str, problems: Sequence[tuple[FieldPath, str]]) -> None:
        self.record = record
        self.problems = tuple(problems)
        super().__init__(self.describe(record))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the arguments that build it (`args` holds only the message)."""
        return (type(self), (self.record, self.problems), self.__dict__)

    def describe(self, where: str = "", names: Mapping[str, str] | None = None) -> str:
        """The problems as `describe_problems` spells them, under `where`."""
        return describe_problems(self.problems, where, names)


class FrozenRecordError(RedstringError, AttributeError):
    """An assignment to, or deletion of, a field of a record or result, which are
    immutable (`Entity`, `Relationship`, `VectorRecord`, `ScoredEntity`, ...):
    `Entity is immutable: cannot set 'name'; build a new Entity instead`.

    An `AttributeError`, as a frozen dataclass's refusal is; `record` names the
    record's class and `name` the attribute (`obj` is the record).
    """

    def __init__(self, record: object, name: str, *, deleting: bool = False) -> None:
        kind = type(record).__name__
        self.record = kind
        self.deleting = deleting
        verb = "delete" if deleting else "set"
        super().__init__(
            f"{kind} is immutable: cannot {verb} {name!r}; build a new {kind} instead",
            name=name,
            obj=record,
        )

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the arguments that build it (`args` holds only the message)."""
        build = partial(FrozenRecordError, deleting=self.deleting)
        return (build, (self.obj, self.name), self.__dict__)


class DimensionMismatchError(RedstringError, ValueError):
    """Two vector dimensions that must agree do not.

    A configuration fault (provider, store and index disagree), not bad input
    from a caller: the API reports it as an internal error. `remedy`, when given,
    ends the message with what a user can do about it (the adapter that knows).
    """

    def __init__(self, expected: int, actual: int, what: str, *, remedy: str = "") -> None:
        message = f"{what} has dimension {actual}, expected {expected}"
        super().__init__(f"{message}: {remedy}" if remedy else message)
        self.expected = expected
        self.actual = actual
        self.what = what
        self.remedy = remedy

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the arguments that build it (`args` holds only the message)."""
        build = partial(type(self), remedy=self.remedy)
        return (build, (self.expected, self.actual, self.what), self.__dict__)


class VectorIndexMismatchError(RedstringError, ValueError):
    """A vector index of the store's name exists with options or properties other than
    those the store creates (similarity, quantization, filter properties), so that
    searching it would give other scores, recall or filters, or with an HNSW setting
    the server cannot write with. A configuration fault, reported by the API as an
    internal error.
    """


class MissingEndpointError(InvalidInputError):
    """A relationship names an entity that does not exist in its tenant."""

    def __init__(self, missing: Iterable[UUID]) -> None:
        self.missing = sorted({str(m) for m in missing})
        super().__init__(
            "relationship endpoint(s) not found in this tenant: " + ", ".join(self.missing)
        )

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the arguments that build it (`args` holds only the message)."""
        return (type(self), ([UUID(m) for m in self.missing],), self.__dict__)


class TenantAccessDeniedError(RedstringError):
    """The caller may not use this tenant, or not in this way."""


class StoreUnavailableError(RedstringError):
    """A backing store did not answer (down, unreachable or timed out).

    `retry_after` is how many seconds the store asked callers to wait before asking
    again (an HTTP `Retry-After` in its last answer), None when it named no wait.
    `options` names the options of `Redstring.neo4j` that, set otherwise, may let the
    call through (`transaction_timeout`, for a transaction Neo4j ended past it).
    """

    def __init__(
        self, *args: object, retry_after: float | None = None, options: Sequence[str] = ()
    ) -> None:
        super().__init__(*args)
        self.retry_after = retry_after
        self.options = tuple(options)


class StoreRefusedError(RedstringError):
    """A backing store refuses the connection: Neo4j refusing the user name or password
    (or, after too many such tries, any), or having no database of the name asked for.

    No `StoreUnavailableError`: waiting does not cure it, the store's settings must
    change, so it is raised at once and not retried. `reason` says what the store
    answered (never the password); `options` names the options of `Redstring.neo4j` to
    check (`auth`, `database`), and the message ends with them.
    """

    def __init__(self, reason: str, *, options: Sequence[str] = ()) -> None:
        self.reason = reason
        self.options = tuple(options)
        checked = " or ".join(self.options)
        super().__init__(f"{reason}; check {checked}" if checked else reason)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the arguments that build it (`args` holds only the message)."""
        return (partial(type(self), options=self.options), (self.reason,), self.__dict__)


class ClientClosedError(RedstringError):
    """A call on a `Redstring` client after its `aclose` (or the end of its `async with`):
    what it owned (a driver, an HTTP client) is released. Open a new client."""


class ClientStartFailedError(ClientClosedError):
    """A call on a `Redstring` client whose start failed (the first call's, or `async
    with`'s): what it owned is closed, so every later call raises this, its cause the
    start's own error. Open a new client."""


class WrongEventLoopError(RedstringError, RuntimeError):
    """A call on a `Redstring` client whose connections belong to another asyncio event
    loop: a Neo4j-backed client is bound to the loop of its first call (its driver's
    connections and locks are that loop's). Open one client per event loop (inside the
    coroutine `asyncio.run` runs), or make every call on one loop (one
    `asyncio.Runner`). A `RuntimeError`, as asyncio's own is."""


class EmbeddingUnavailableError(StoreUnavailableError):
    """The embedding provider gave no answer in time: down, unreachable, overloaded or
    rate-limited (a 429, 408 or 5xx, a timeout, a connection error).

    Raised after the last attempt, once retrying within the call cannot help any more;
    the same call may succeed later. `status_code` is the last HTTP status seen (None
    when no response came); `attempts` is how many requests were made for the failing
    batch; `retry_after` is the `Retry-After` seconds of the provider's answer to the
    last attempt (None when it named none, or the last attempt had no answer). A
    provider that refuses the requests raises `EmbeddingRefusedError`.
    """

    def __init__(
        self,
        message: str,
        *,
        attempts: int,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, retry_after=retry_after)
        self.attempts = attempts
        self.status_code = status_code

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the arguments that build it (`attempts` is keyword-only)."""
        build = partial(
            type(self),
            attempts=self.attempts,
            status_code=self.status_code,
            retry_after=self.retry_after,
        )
        return (build, self.args, self.__dict__)


class EmbeddingRefusedError(RedstringError):
    """The embedding provider refuses the requests, or answers them with something other
    than embeddings: a wrong or missing API key, a model it does not serve, a request it
    will not take, a base URL that is not the embeddings API, a quota used up.

    No `StoreUnavailableError`: waiting does not cure it, the provider's settings (or
    the account behind its key) must change, so it is raised at once and not retried.
    `reason` says what the provider answered (never the key); `status_code` is its HTTP
    status (200 for a reply that is not embeddings); `options` names the provider
    options most likely at fault, as `make_embedding_provider` names them
    (`api_key_env`, `model`, `base_url`, `batch_size`), and the message ends with them.
    """

    def __init__(self, reason: str, *, status_code: int, options: Sequence[str] = ()) -> None:
        self.reason = reason
        self.status_code = status_code
        self.options = tuple(options)
        checked = " or ".join(self.options)
        super().__init__(f"{reason}; check {checked}" if checked else reason)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the arguments that build it (`args` holds only the message)."""
        build = partial(type(self), status_code=self.status_code, options=self.options)
        return (build, (self.reason,), self.__dict__)


class TextsRefusedError(InvalidInputError):
    """The embedding provider refuses some texts of a call, each sent alone, while it takes
    others of the call (or, when the call has no other, a probe text): those texts are at
    fault, not its settings, and asking again gets the same answer. A text past what the
    model reads (its token limit, behind a server that refuses rather than cuts) is the
    usual one.

    `refused` maps the position of each refused text among the call's texts to what the
    provider answered of it alone (`HTTP 413: ...`, never the key); `vectors` maps the
    position of each text it took to its vector, so that a caller who goes on without
    the refused texts need not ask for the others again.
    """

    def __init__(
        self,
        refused: Mapping[int, str],
        vectors: Mapping[int, Sequence[float]] | None = None,
    ) -> None:
        self.refused = dict(sorted(refused.items()))
        self.vectors = {position: list(v) for position, v in (vectors or {}).items()}
        said = "; ".join(f"text {position}: {answer}" for position, answer in self.refused.items())
        super().__init__(f"the embedding provider refuses {_texts(len(self.refused))} ({said})")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the arguments that build it (`args` holds only the message)."""
        return (type(self), (self.refused, self.vectors), self.__dict__)


def _texts(count: int) -> str:
    return "a text of the call" if count == 1 else f"{count} texts of the call"


class EntityTextRefusedError(InvalidInputError):
    """The embedding provider refuses the text (`Entity.embedding_text`) of some entities
    (`TextsRefusedError`): their text, not the provider's settings, must change (a shorter
    description) before they can be written, and a writer that raises this has written
    none of their batch.

    `refused` holds, in input order, the `(tenant_id, entity_id)` of each such entity and
    what the provider answered of its text; `vectors` maps each text the provider took in
    the same call to its vector, so that a writer that goes on without the refused
    entities asks for none of them again.
    """

    def __init__(
        self,
        refused: Sequence[tuple[UUID, UUID, str]],
        vectors: Mapping[str, Sequence[float]] | None = None,
    ) -> None:
        self.refused = tuple(refused)
        self.vectors = {text: list(v) for text, v in (vectors or {}).items()}
        said = "; ".join(f"entity {entity_id}: {answer}" for _, entity_id, answer in self.refused)
        super().__init__(f"the embedding provider refuses the text of {said}")

    @staticmethod
    def of_one(answer: str) -> str:
        """What is wrong with one refused entity, for a message that names it already
        (`entities[3]: ...`, a file's line): `answer` is the provider's."""
        return f"the embedding provider refuses the text of this entity ({answer})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the arguments that build it (`args` holds only the message)."""
        return (type(self), (self.refused, self.vectors), self.__dict__)
