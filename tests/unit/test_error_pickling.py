"""Every error redstring raises crosses a process boundary whole (a worker pool's
result, a multiprocessing queue): pickled and read back, it is the same class with
the same message and fields."""

from __future__ import annotations

import pickle
from uuid import UUID

import pytest

import redstring.api.api_keys
import redstring.api.jsonl
from redstring.api.jsonl import InvalidLineError
from redstring.domain import errors
from redstring.domain.errors import (
    DimensionMismatchError,
    EmbeddingRefusedError,
    EmbeddingUnavailableError,
    EntityTextRefusedError,
    FrozenRecordError,
    InvalidFieldsError,
    MissingEndpointError,
    RedstringError,
    StoreRefusedError,
    TextsRefusedError,
)
from redstring.testing import make_entity, new_tenant

assert redstring.api.api_keys  # imported for its error classes, found by subclassing

ACME = make_entity(new_tenant(), "Acme Corp", "org")

SAMPLES: list[RedstringError] = [
    RedstringError("broken"),
    errors.InvalidInputError("k must be positive"),
    InvalidFieldsError("Entity", [(("name",), "must not be blank"), ((), "whole record")]),
    FrozenRecordError(ACME, "name"),
    DimensionMismatchError(384, 3, "query vector"),
    DimensionMismatchError(8, 9, "the vector store", remedy="drop the index"),
    errors.VectorIndexMismatchError("index redstring_vectors has other options"),
    MissingEndpointError([UUID(int=2), UUID(int=1)]),
    errors.TenantAccessDeniedError("not this tenant"),
    errors.StoreUnavailableError("Neo4j did not answer"),
    errors.StoreUnavailableError("the vector service is throttling", retry_after=2.5),
    errors.StoreUnavailableError("Neo4j ended a transaction", options=("transaction_timeout",)),
    errors.ClientClosedError("this client is closed"),
    errors.ClientStartFailedError("this client failed to start"),
    errors.WrongEventLoopError("this client belongs to another event loop"),
    EmbeddingUnavailableError("rate-limited", attempts=3, status_code=429),
    EmbeddingUnavailableError("rate-limited", attempts=1, status_code=429, retry_after=17.0),
    EmbeddingUnavailableError("no reply", attempts=1),
    EmbeddingRefusedError("HTTP 401: bad key", status_code=401, options=["api_key_env"]),
    EmbeddingRefusedError("not embeddings", status_code=200),
    StoreRefusedError("Neo4j refuses the user name or password", options=["auth"]),
    StoreRefusedError("refused"),
    TextsRefusedError({2: "HTTP 413: too long", 0: "HTTP 400: no"}, {1: [0.5, -1.0]}),
    EntityTextRefusedError(
        [(UUID(int=1), UUID(int=2), "HTTP 413: too long")], {"Acme Corp. org.": [0.5, 1.0]}
    ),
    InvalidLineError(7, "name: must not be blank"),
    redstring.api.api_keys.UnknownKeyError("no key k_1"),
    redstring.api.api_keys.KeyFileError(
        "cannot read the API key file keys.json: Permission denied"
    ),
    redstring.api.api_keys.KeyFileBusyError("gave up after 30 s waiting for the lock of keys.json"),
]


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    return found.union(*(_subclasses(sub) for sub in found)) if found else found


def test_every_error_class_has_a_sample() -> None:
    redstring_classes = {
        cls for cls in _subclasses(RedstringError) if cls.__module__.startswith("redstring.")
    }
    assert redstring_classes | {RedstringError} <= {type(sample) for sample in SAMPLES}


@pytest.mark.parametrize("error", SAMPLES, ids=lambda e: type(e).__name__)
def test_an_error_pickles_whole(error: RedstringError) -> None:
    error.add_note("while loading people.jsonl")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.args == error.args
    fields = {k: v for k, v in vars(error).items() if k != "obj"}
    assert {k: v for k, v in vars(copy).items() if k != "obj"} == fields
    assert copy.__notes__ == ["while loading people.jsonl"]
