"""The order relationships are read in, a place in it, the `after` arguments of a page, and
the bound the Neo4j adapter hands the server for a place or a type."""

from __future__ import annotations

import re
import uuid

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring import InvalidInputError, Relationship, RelationshipPlace
from redstring.adapters.neo4j.string_order import server_bound
from redstring.domain.entity_types import type_after_of
from redstring.domain.relationship_order import relationship_order_key, relationship_place_of
from redstring.testing import make_entity, make_relationship, new_tenant


def _relationship(kind: str, id_int: int) -> Relationship:
    tenant = new_tenant()
    a, b = make_entity(tenant, "A"), make_entity(tenant, "B")
    return make_relationship(a, b, kind, relationship_id=uuid.UUID(int=id_int))


def test_a_place_is_before_what_follows_it_by_type_then_id() -> None:
    place = RelationshipPlace("KNOWS", uuid.UUID(int=5))
    kinds_and_ids = [("KNOWS", 4), ("KNOWS", 5), ("KNOWS", 6), ("A", 9), ("OWNS", 0)]
    after = [kind_id for kind_id in kinds_and_ids if place.is_before(_relationship(*kind_id))]
    assert after == [("KNOWS", 6), ("OWNS", 0)]


def test_the_place_of_a_relationship_is_its_type_and_id() -> None:
    relationship = _relationship("KNOWS", 7)
    place = RelationshipPlace.of(relationship)
    assert place == RelationshipPlace("KNOWS", uuid.UUID(int=7))
    assert place.order_key() == relationship_order_key(relationship)
    assert relationship_place_of(relationship) == place
    assert relationship_place_of(place) is place
    assert relationship_place_of(None) is None
    # A UUID's string is that UUID; a place is a value (hashable, equal by fields).
    spelled = RelationshipPlace("KNOWS", str(uuid.UUID(int=7)))  # type: ignore[arg-type]
    assert spelled == place
    assert hash(spelled) == hash(place)


@pytest.mark.parametrize(
    ("kind", "place_id", "message"),
    [
        (5, uuid.UUID(int=1), "relationship_type must be a string, got 5"),
        ("KNOWS", "seven", "id must be a UUID, got 'seven'"),
        ("KNOWS", None, "id must be a UUID, got None"),
        ("KN\ud800", uuid.UUID(int=1), "relationship_type contains a lone surrogate at position 2"),
        ("K\x00", uuid.UUID(int=1), "relationship_type contains a NUL character"),
    ],
)
def test_a_place_that_no_store_can_compare_is_invalid_input(
    kind: object, place_id: object, message: str
) -> None:
    with pytest.raises(InvalidInputError, match=f"^{re.escape(message)}"):
        RelationshipPlace(kind, place_id)  # type: ignore[arg-type]


def test_an_after_that_is_no_place_is_invalid_input_naming_it() -> None:
    for wrong in ("KNOWS", ("KNOWS", uuid.UUID(int=1)), 5):
        with pytest.raises(InvalidInputError, match=r"^cursor must be a RelationshipPlace or"):
            relationship_place_of(wrong, "cursor")


def test_a_type_after_is_any_string_a_store_can_hold_as_it_is() -> None:
    assert type_after_of(None) is None
    assert type_after_of("  company ") == "  company "  # compared as it is
    assert type_after_of("") == ""
    for wrong, message in [
        (5, "after must be a string, got 5"),
        (["a"], "after must be a string, got ['a']"),
        ("a\udfff", "after contains a lone surrogate at position 1"),
    ]:
        with pytest.raises(InvalidInputError, match=f"^{re.escape(message)}"):
            type_after_of(wrong)


def _utf16(text: str) -> bytes:
    """How a server comparing by UTF-16 code units orders strings."""
    return text.encode("utf-16-be")


# Text a store holds (no lone surrogate), drawn from the characters where the orders part.
_CHARACTERS = st.sampled_from(
    ["a", "x", "\ud7fe", "\ud7ff", "\ue000", "\uff5a", "\uffff", "😀", "\U0001d49c"]
)
_TEXT = st.text(_CHARACTERS, max_size=4)


@given(_TEXT, _TEXT)
@example("x\ue000", "x😀")
@example("x😀", "x\ue000")
@example("\uffff", "\ud7ff")
def test_the_server_bound_stands_for_python_s_comparison(after: str, text: str) -> None:
    """Exact: a server comparing by UTF-16 code units (or by code points) finds `text`
    after the bound exactly when Python does. Not exact: the server still compares the
    bound as Python does, and every text after `after` in Python's order is after the
    bound in both orders (a superset the caller cuts)."""
    bound, exact = server_bound(after)
    assert (_utf16(text) > _utf16(bound)) == (text > bound)
    if exact:
        assert bound == after
        assert (_utf16(text) > _utf16(bound)) == (text > after)
    else:
        assert bound < after
        assert all(c < "\ue000" for c in bound)
        if text > after:
            assert _utf16(text) > _utf16(bound)
            assert text > bound


def test_the_server_bound_steps_below_the_first_character_from_u_e000() -> None:
    assert server_bound("WORKS_AT") == ("WORKS_AT", True)
    assert server_bound("東京\ud7a3") == ("東京\ud7a3", True)
    assert server_bound("ab\ue000cd") == ("ab\ud7ff", False)
    assert server_bound("ab😀") == ("ab\ud7ff", False)
    assert server_bound("\uff5a") == ("\ud7ff", False)
    assert server_bound("\uffff") == ("\ud7ff", False)
    # Every type whose first character is below U+D7FF, all ASCII ones, is left out.
    assert all(t < "\ud7ff" for t in ("ZZZ", "\x7f", "東京", "\ud7fe\U0010ffff"))
