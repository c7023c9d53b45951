"""What every response must be, whatever a client sends, and the values fuzzers send.

The contract (docs/api.md, "Errors"; issue 15): no 5xx, every error a GraphQL
error whose `extensions.code` is one of `ErrorCode` and not an internal error,
no traceback in a body, and an answer within `RESPONSE_BOUND_S`. The bound
only guards against a stall; it is not a speed target.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

import graphql
from hypothesis import strategies as st

from redstring.api.errors import ErrorCode

RESPONSE_BOUND_S = 2.0
CODES = frozenset(code.value for code in ErrorCode)
TRACEBACK_MARKS = ("Traceback", 'File "')


def contract_violations(status: int, text: str, elapsed: float) -> list[str]:
    """Every way a response of HTTP `status` and body `text`, answered after `elapsed`
    seconds, breaks the contract."""
    problems: list[str] = []
    if status >= 500:
        problems.append(f"HTTP {status}")
    if elapsed >= RESPONSE_BOUND_S:
        problems.append(f"answered after {elapsed:.2f} s (bound {RESPONSE_BOUND_S} s)")
    problems += [f"{mark!r} in the body" for mark in TRACEBACK_MARKS if mark in text]
    try:
        body = json.loads(text)
    except ValueError:
        return [*problems, f"not a JSON body: {text[:200]!r}"]
    if not isinstance(body, dict):
        return [*problems, f"not a GraphQL response: {text[:200]!r}"]
    errors = body.get("errors") or []
    if status >= 400 and not errors:
        problems.append(f"HTTP {status} without a GraphQL error")
    if not errors and body.get("data") is None:
        problems.append("neither data nor errors")
    for error in errors:
        code = (error.get("extensions") or {}).get("code") if isinstance(error, dict) else None
        if code not in CODES:
            problems.append(f"error without a documented code: {error!r}")
        elif code == ErrorCode.INTERNAL_SERVER_ERROR:
            problems.append(f"internal error: {error!r}")
    return problems


def uuid_ids(tenant: uuid.UUID, entity_ids: Sequence[uuid.UUID]) -> st.SearchStrategy[str]:
    """Values for the `ID` scalar that reach resolvers: mostly the tenant the data is in and
    ids of its entities, then random UUIDs (another, empty tenant; a missing entity), and
    now and then text that is no UUID at all."""
    return st.integers(min_value=0, max_value=19).flatmap(
        lambda roll: (
            st.just(str(tenant))
            if roll < 10
            else st.sampled_from([str(i) for i in entity_ids])
            if roll < 15
            else st.uuids().map(str)
            if roll < 19
            else st.text(max_size=12)
        )
    )


def small_ints() -> st.SearchStrategy[int]:
    """Values for `Int` (`k`, `first`): mostly inside the limits, so results come back and
    relationships are walked; sometimes anything a 32-bit GraphQL `Int` holds."""
    return st.one_of(
        st.integers(min_value=0, max_value=12),
        st.integers(min_value=-(2**31), max_value=2**31 - 1),
    )


# Texts that embed to a zero vector with the hashing provider (no word characters),
# and names that match the data: both reach past the resolvers into the stores.
ZERO_VECTOR_TEXTS = ("!", "...", "\U0001f642", "\u0301", " ")


def query_texts(words: Sequence[str]) -> st.SearchStrategy[str]:
    """Values for `String`: `words` of the data (names, types) and zero-vector texts (each
    three times in ten), and arbitrary text."""
    return st.integers(min_value=0, max_value=9).flatmap(
        lambda roll: (
            st.sampled_from(list(words))
            if roll < 3
            else st.sampled_from(ZERO_VECTOR_TEXTS)
            if roll < 6
            else st.text(max_size=40)
        )
    )


def json_values() -> st.SearchStrategy[Any]:
    """Values for the `JSON` scalar (`properties`): scalars, lists and nested objects."""
    finite = st.floats(allow_nan=False, allow_infinity=False)
    scalars = st.none() | st.booleans() | st.integers() | finite | st.text()
    keys = st.from_regex(r"[_A-Za-z][_0-9A-Za-z]{0,8}", fullmatch=True)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
        max_leaves=6,
    )


def value_node(value: Any) -> graphql.ValueNode:
    """`value` as a GraphQL literal (the `JSON` scalar takes any literal)."""
    if value is None:
        return graphql.NullValueNode()
    if isinstance(value, bool):
        return graphql.BooleanValueNode(value=value)
    if isinstance(value, int):
        return graphql.IntValueNode(value=str(value))
    if isinstance(value, float):
        return graphql.FloatValueNode(value=repr(value))
    if isinstance(value, str):
        return graphql.StringValueNode(value=value)
    if isinstance(value, list):
        return graphql.ListValueNode(values=tuple(value_node(v) for v in value))
    return graphql.ObjectValueNode(
        fields=tuple(
            graphql.ObjectFieldNode(name=graphql.NameNode(value=key), value=value_node(v))
            for key, v in value.items()
        )
    )
