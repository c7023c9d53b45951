"""`neo4j_options_of`: the options of `Redstring.neo4j` read before anything is built.

The driver takes a wrong one without a word and fails on it at the first call, as
its own error (a `TypeError`, an `OverflowError`, a `ClientError`) or as an outage,
after the client has started failing for good. Read here, a wrong option is an
`InvalidInputError` naming it, as `query_cache_size` is, and nothing is left open.
"""

from __future__ import annotations

from dataclasses import dataclass

from redstring.domain.arguments import seconds_of, shown_value
from redstring.domain.errors import InvalidInputError

_AUTH_SHAPE = "auth must be a (user, password) pair of strings"


@dataclass(frozen=True)
class Neo4jOptions:
    auth: tuple[str, str]
    database: str | None
    outage_retry: float
    transaction_timeout: float | None


def neo4j_options_of(
    auth: object, database: object, outage_retry: object, transaction_timeout: object
) -> Neo4jOptions:
    """The options as `Redstring.neo4j` documents them: `auth` a (user, password) pair of
    strings (a tuple or a list; never shown, it holds a password: a refusal names the
    part that is wrong and its type), `database` None or a string, `outage_retry` a
    finite number of seconds from 0, `transaction_timeout` None or a finite number of
    seconds above 0 (the server takes 0 for no timeout at all)."""
    if not isinstance(auth, tuple | list):
        raise InvalidInputError(f"{_AUTH_SHAPE}, got a value of type {type(auth).__name__}")
    if len(auth) != 2:
        raise InvalidInputError(f"{_AUTH_SHAPE}, got a {type(auth).__name__} of {len(auth)}")
    wrong = [
        f"the {name} is None"
        if part is None
        else f"the {name} is not a string (of type {type(part).__name__})"
        for name, part in zip(("user", "password"), auth, strict=True)
        if not isinstance(part, str)
    ]
    if wrong:
        raise InvalidInputError(f"{_AUTH_SHAPE}: {', '.join(wrong)}")
    if database is not None and not isinstance(database, str):
        raise InvalidInputError(f"database must be a string, got {shown_value(database)}")
    return Neo4jOptions(
        auth=(auth[0], auth[1]),
        database=database,
        outage_retry=seconds_of(outage_retry, "outage_retry"),
        transaction_timeout=None
        if transaction_timeout is None
        else seconds_of(transaction_timeout, "transaction_timeout", zero=False),
    )
