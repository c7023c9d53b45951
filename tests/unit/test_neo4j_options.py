"""`Redstring.neo4j` refuses a setting it cannot use when it is built, as an
`InvalidInputError` naming the argument, and leaves nothing open when it does: no
setting fails only at the first call, as another error, leaving the client failed."""

from __future__ import annotations

import gc
import math
import re
import warnings
from typing import Any

import pytest

from redstring import HashingEmbeddingProvider, InvalidInputError, Redstring

URI = "bolt://127.0.0.1:9"  # never reached: nothing here does I/O
AUTH = ("neo4j", "secret-password")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"transaction_timeout": -1}, "transaction_timeout must be more than 0 seconds, got -1"),
        ({"transaction_timeout": 0}, "transaction_timeout must be more than 0 seconds, got 0"),
        ({"transaction_timeout": "5"}, "transaction_timeout must be a number of seconds, got '5'"),
        (
            {"transaction_timeout": True},
            "transaction_timeout must be a number of seconds, got True",
        ),
        ({"transaction_timeout": math.inf}, "transaction_timeout must be finite, got inf"),
        ({"transaction_timeout": math.nan}, "transaction_timeout must be finite, got nan"),
        (
            {"transaction_timeout": 1e20},
            "transaction_timeout must be at most 1e+09 seconds (about 31 years), got 1e+20",
        ),
        ({"outage_retry": -1}, "outage_retry must not be negative, got -1"),
        (
            {"outage_retry": 10**10},
            "outage_retry must be at most 1e+09 seconds (about 31 years), got 10000000000",
        ),
        ({"outage_retry": "5"}, "outage_retry must be a number of seconds, got '5'"),
        ({"outage_retry": math.nan}, "outage_retry must be finite, got nan"),
        ({"database": 5}, "database must be a string, got 5"),
        ({"auth": "neo4j:secret-password"}, "auth must be a (user, password) pair of strings"),
        ({"auth": ("neo4j",)}, "auth must be a (user, password) pair of strings"),
        ({"auth": ("neo4j", 5)}, "auth must be a (user, password) pair of strings"),
        ({"query_cache_size": -1}, "query_cache_size must not be negative, got -1"),
    ],
    ids=lambda value: str(value),
)
def test_a_setting_it_cannot_use_is_refused_when_built_and_leaves_no_driver_open(
    options: dict[str, Any], message: str
) -> None:
    """Refused before the driver is made: no `unclosed AsyncBoltDriver` warning later."""
    arguments: dict[str, Any] = {"auth": AUTH, **options}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(InvalidInputError, match=f"^{re.escape(message)}") as refused:
            Redstring.neo4j(URI, embeddings=HashingEmbeddingProvider(8), **arguments)
        del refused
        gc.collect()
    assert "secret-password" not in message
    assert [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)] == []


def test_a_password_is_never_shown_in_the_refusal() -> None:
    with pytest.raises(InvalidInputError) as refused:
        Redstring.neo4j(URI, "neo4j:secret-password")  # type: ignore[arg-type]
    assert "secret-password" not in str(refused.value)


def test_the_settings_it_can_use_are_taken() -> None:
    for options in (
        {"transaction_timeout": 0.5, "outage_retry": 0},
        {"transaction_timeout": 30, "outage_retry": 120.0, "database": "neo4j"},
        {"transaction_timeout": 10**9, "outage_retry": 1e9},
        {"auth": ["neo4j", "x"]},
    ):
        arguments: dict[str, Any] = {"auth": AUTH, **options}
        Redstring.neo4j(URI, embeddings=HashingEmbeddingProvider(8), **arguments)


@pytest.mark.parametrize(
    ("auth", "wrong"),
    [
        (("neo4j", None), "the password is None"),
        ((None, "secret-password"), "the user is None"),
        (("neo4j", b"secret-password"), "the password is not a string (of type bytes)"),
        ([5, "secret-password"], "the user is not a string (of type int)"),
        (
            (None, b"secret-password"),
            "the user is None, the password is not a string (of type bytes)",
        ),
    ],
    ids=["password None", "user None", "password bytes", "user int", "both"],
)
def test_a_wrong_part_of_auth_is_named_and_never_shown(auth: object, wrong: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        Redstring.neo4j(URI, auth, embeddings=HashingEmbeddingProvider(8))  # type: ignore[arg-type]
    assert str(refused.value) == f"auth must be a (user, password) pair of strings: {wrong}"
    assert "secret" not in str(refused.value)
