"""A wrong count, name list or choice at a public entry point is an `InvalidInputError`
naming the argument (`redstring.domain.arguments`), never a `TypeError` or a silently
wrong answer. Ids have their own rule (test_id_arguments.py); the stores' share of this
one is in the graph store compliance suite (`redstring.testing`)."""

from __future__ import annotations

import asyncio
import math
import uuid
from fractions import Fraction
from typing import Any, get_type_hints

import numpy as np
import pytest

from redstring import Entity, InvalidInputError, Redstring, Relationship, RetrievalMode, TenantId
from redstring.composition.retrieval import Retriever
from redstring.domain.arguments import choice_of, count_of, items_of, names_of, seconds_of
from redstring.domain.relationship import Direction

TENANT = TenantId(uuid.UUID("0b7a4a52-3f4e-4a8e-9d0c-6f1b2c3d4e5f"))


def test_count_of_takes_integers_of_zero_or_more() -> None:
    assert count_of(0, "k") == 0
    assert count_of(7, "k") == 7
    for wrong in ("3", 2.0, None, True, [1]):
        with pytest.raises(InvalidInputError, match=r"^k must be an integer, got "):
            count_of(wrong, "k")
    with pytest.raises(InvalidInputError, match=r"^k must not be negative, got -1$"):
        count_of(-1, "k")
    assert count_of(2**63 - 1, "k") == 2**63 - 1  # Neo4j's largest integer
    message = r"^k must be at most 2\*\*63 - 1, got 9223372036854775808$"
    with pytest.raises(InvalidInputError, match=message):
        count_of(2**63, "k")
    with pytest.raises(InvalidInputError, match=r"^k must be at most 2\*\*63 - 1, got an int$"):
        count_of(10**100, "k")


def test_seconds_of_takes_any_real_number_numpy_s_among_them_as_a_float() -> None:
    """A number of seconds read from an array (`np.int64`, `np.float32`) is taken as
    `count_of` takes a count: `Redstring.neo4j(outage_retry=np.int64(30))` was refused."""
    for number, seconds in (
        (3, 3.0),
        (2.5, 2.5),
        (np.int64(30), 30.0),
        (np.uint8(3), 3.0),
        (np.float32(2.5), 2.5),
        (np.float64(0.25), 0.25),
        (Fraction(1, 4), 0.25),
    ):
        taken = seconds_of(number, "outage_retry")
        assert (taken, type(taken)) == (seconds, float)
    assert seconds_of(np.int64(10**9), "outage_retry") == 1e9


def test_seconds_of_refuses_what_is_no_finite_number_of_seconds_in_range() -> None:
    for wrong in ("5", None, True, np.bool_(True), np.array(5.0), np.array([5])):
        with pytest.raises(InvalidInputError, match=r"^timeout must be a number of seconds, got "):
            seconds_of(wrong, "timeout")
    for infinite in (np.float32(math.inf), np.float64(math.nan), -math.inf):
        with pytest.raises(InvalidInputError, match=r"^timeout must be finite, got "):
            seconds_of(infinite, "timeout")
    # Compared as they are, never made floats first (10**400 and its Fraction overflow one).
    for huge in (10**400, Fraction(10**400), np.int64(2**62), np.float32(1e20), 10**9 + 1):
        with pytest.raises(InvalidInputError, match=r"^timeout must be at most 1e\+09 seconds"):
            seconds_of(huge, "timeout")
    with pytest.raises(InvalidInputError, match=r"^timeout must not be negative, got -1$"):
        seconds_of(np.int64(-1), "timeout")
    with pytest.raises(InvalidInputError, match=r"^timeout must be more than 0 seconds, got 0"):
        seconds_of(np.float32(0), "timeout", zero=False)


def test_count_of_takes_numpy_integers_as_ints_but_not_numpy_floats_or_bools() -> None:
    """What `operator.index` takes is an integer (numpy's, a count read from an array),
    answered as a plain `int`; a numpy bool or float is refused as Python's are."""
    for integer in (np.int64(3), np.uint8(3), np.intp(3)):
        assert count_of(integer, "k") == 3
        assert type(count_of(integer, "k")) is int
    for wrong in (np.float64(3.0), np.bool_(True), np.array([5]), np.array(5.0)):
        with pytest.raises(InvalidInputError, match=r"^k must be an integer, got "):
            count_of(wrong, "k")
    with pytest.raises(InvalidInputError, match=r"^k must not be negative, got -2$"):
        count_of(np.int32(-2), "k")
    found = asyncio.run(_client().retrieve("acme", TENANT, k=np.int64(1)))  # type: ignore[arg-type]
    assert [m.entity.name for m in found.matches] == ["Acme Corp"]


def test_names_of_takes_any_iterable_of_strings_but_not_a_string() -> None:
    assert names_of(None, "types") is None
    assert names_of([], "types") == []
    assert names_of(("a", "b"), "types") == ["a", "b"]
    assert names_of((t for t in ["a"]), "types") == ["a"]
    for wrong in ("company", b"company", 5):
        with pytest.raises(InvalidInputError, match=r"^types must be a list of strings, got "):
            names_of(wrong, "types")
    with pytest.raises(InvalidInputError, match=r"^types\[1\] must be a string, got None$"):
        names_of(["a", None], "types")


def test_names_of_strips_each_name_as_stored_names_are_and_refuses_a_blank_one() -> None:
    assert names_of([" company ", "person\n"], "types") == ["company", "person"]
    with pytest.raises(InvalidInputError, match=r"^types\[1\] must not be blank$"):
        names_of(["a", "  "], "types")


def test_names_of_refuses_a_name_no_store_can_hold() -> None:
    """A lone surrogate or a NUL: Neo4j's driver cannot even send the first."""
    with pytest.raises(InvalidInputError, match=r"^types\[1\] contains a lone surrogate"):
        names_of(["a", " \udc00 "], "types")
    with pytest.raises(InvalidInputError, match=r"^types\[0\] contains a NUL character"):
        names_of(["a\x00"], "types")


def test_choice_of_takes_members_and_their_names_or_values_in_any_case() -> None:
    assert choice_of(RetrievalMode.LEXICAL, RetrievalMode, "mode") is RetrievalMode.LEXICAL
    for spelled in ("lexical", "LEXICAL", "Lexical"):
        assert choice_of(spelled, RetrievalMode, "mode") is RetrievalMode.LEXICAL
    assert choice_of("both", Direction, "direction") is Direction.BOTH
    with pytest.raises(
        InvalidInputError, match=r"^mode must be one of SEMANTIC, LEXICAL, HYBRID, got 'fuzzy'$"
    ):
        choice_of("fuzzy", RetrievalMode, "mode")
    with pytest.raises(InvalidInputError, match=r"^direction must be one of .*, got None$"):
        choice_of(None, Direction, "direction")


def test_items_of_takes_a_sequence_of_the_kind_only() -> None:
    acme = Entity.create(TENANT, "Acme Corp", "company")
    assert items_of([acme], Entity, "entities") == [acme]
    assert items_of((), Entity, "entities") == ()
    with pytest.raises(
        InvalidInputError, match=r"^entities must be a sequence of Entity, got an Entity$"
    ):
        items_of(acme, Entity, "entities")
    with pytest.raises(InvalidInputError, match=r"^entities must be a sequence of Entity"):
        items_of({acme}, Entity, "entities")
    with pytest.raises(InvalidInputError, match=r"^entities\[1\] must be an Entity, got \{"):
        items_of([acme, {"name": "x"}], Entity, "entities")


def _client() -> Redstring:
    client = Redstring.in_memory()
    asyncio.run(client.upsert([Entity.create(TENANT, "Acme Corp", "company")]))
    return client


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"k": "3"}, "k must be an integer, got '3'"),
        ({"k": 2.5}, "k must be an integer, got 2.5"),
        ({"k": None}, "k must be an integer, got None"),
        ({"k": True}, "k must be an integer, got True"),
        ({"k": -2}, "k must not be negative, got -2"),
        ({"entity_types": "company"}, "entity_types must be a list of strings, got 'company'"),
        ({"entity_types": [3]}, r"entity_types\[0\] must be a string, got 3"),
        (
            {"entity_types": ["company", "\udc00"]},
            r"entity_types\[1\] contains a lone surrogate at position 0, which cannot be stored",
        ),
        (
            {"entity_types": ["com\x00pany"]},
            r"entity_types\[0\] contains a NUL character, which cannot be stored",
        ),
        ({"mode": "fuzzy"}, "mode must be one of SEMANTIC, LEXICAL, HYBRID, got 'fuzzy'"),
    ],
)
def test_retrieve_refuses_a_wrong_argument_by_name(arguments: dict[str, Any], message: str) -> None:
    client = _client()
    with pytest.raises(InvalidInputError, match=f"^{message}$"):
        asyncio.run(client.retrieve("acme", TENANT, **arguments))


def test_retrieve_takes_a_mode_by_name_and_types_as_any_iterable() -> None:
    client = _client()
    for mode in ("LEXICAL", "lexical", RetrievalMode.LEXICAL):
        found = asyncio.run(client.retrieve("acme", TENANT, mode=mode))  # type: ignore[arg-type]
        assert [m.entity.name for m in found.matches] == ["Acme Corp"]
        assert found.matches[0].semantic is None  # the lexical channel alone ranked it
    found = asyncio.run(client.retrieve("acme", TENANT, entity_types={"company"}))  # type: ignore[arg-type]
    assert [m.entity.name for m in found.matches] == ["Acme Corp"]


def test_upsert_refuses_what_is_not_a_sequence_of_entities_before_writing_any() -> None:
    client = Redstring.in_memory()
    acme = Entity.create(TENANT, "Acme Corp", "company")
    beta = Entity.create(TENANT, "Beta", "company")
    link = Relationship.create(TENANT, acme.id, "KNOWS", beta.id)
    wrong: list[tuple[dict[str, Any], str]] = [
        ({"entities": acme}, "entities must be a sequence of Entity, got an Entity"),
        ({"entities": [acme, {"name": "x"}]}, r"entities\[1\] must be an Entity"),
        ({"entities": [acme, beta], "relationships": link}, "relationships must be a sequence"),
        ({"entities": [acme, beta], "relationships": [link, acme]}, r"relationships\[1\] must"),
    ]
    for arguments, message in wrong:
        with pytest.raises(InvalidInputError, match=f"^{message}"):
            asyncio.run(client.upsert(**arguments))
        assert asyncio.run(client.graph.get_entities([acme.id], TENANT)) == []


def test_a_mode_by_its_name_is_in_the_signature_as_in_the_docs() -> None:
    """README: a mode is also taken by its name (`"lexical"`); a type checker reading
    the signature must let a user write it so."""
    for retrieve in (Redstring.retrieve, Retriever.retrieve):
        assert get_type_hints(retrieve)["mode"] == RetrievalMode | str
