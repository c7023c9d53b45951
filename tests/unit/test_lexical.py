"""lexical_score: the name and the aliases decide, and another string property value
counts `PROPERTY_WEIGHT` times unless it equals the query once normalised; a query
that is the initials of a name or an alias scores `INITIALS_MATCH`."""

from __future__ import annotations

import pytest

from redstring.domain.lexical import (
    EXACT_PROPERTY,
    INITIALS_MATCH,
    PROPERTY_WEIGHT,
    lexical_score,
    lexical_scores,
)
from redstring.domain.ranking import LEXICAL_VOTE_MARGIN
from redstring.domain.similarity import string_similarity
from redstring.testing import make_entity, new_tenant

TENANT = new_tenant()
SEMICONDUCTORS = make_entity(TENANT, "Corvid Semiconductors", properties={"aliases": ("Corvid",)})
MCU = make_entity(TENANT, "Corvid Lowpower MCU")


# The query as typed, with the last word open (`Corvid`) and closed (`CORVID.`, `corvid `).
@pytest.mark.parametrize("query", ["Corvid", "CORVID.", "corvid "])
def test_an_alias_equal_to_the_query_scores_just_below_an_equal_name(query: str) -> None:
    semiconductors, mcu = lexical_scores(query, [SEMICONDUCTORS, MCU])
    assert semiconductors == EXACT_PROPERTY
    assert mcu < semiconductors
    # Without the alias, the name that merely begins with the query ranked first.
    assert string_similarity(query, MCU.name) > string_similarity(query, SEMICONDUCTORS.name)


PARTIAL = [
    "Corvid Labs",  # the query is part of the value
    "Corvid Inc",  # the same identifying word under a legal form: alike, not equal
    "Corvidae",  # the query begins the value's word
]


@pytest.mark.parametrize("alias", PARTIAL)
def test_an_alias_that_matches_in_part_counts_as_a_name(alias: str) -> None:
    """An alias is another name: the entity scores as one named so would."""
    holder = make_entity(TENANT, "Zephyr Holdings", properties={"aliases": (alias,)})
    named = make_entity(TENANT, alias)
    score = lexical_score("CORVID.", holder)
    assert score == pytest.approx(string_similarity("CORVID.", alias))
    assert score == lexical_score("CORVID.", named)


@pytest.mark.parametrize("value", PARTIAL)
def test_another_property_that_matches_in_part_counts_property_weight_times(value: str) -> None:
    holder = make_entity(TENANT, "Zephyr Holdings", properties={"former_name": value})
    score = lexical_score("CORVID.", holder)
    assert score == pytest.approx(PROPERTY_WEIGHT * string_similarity("CORVID.", value))
    assert 0 < score < lexical_score("CORVID.", MCU)


def test_a_typo_in_an_alias_ranks_its_entity_above_a_name_sharing_its_words() -> None:
    """`Bélanger Østurgård` is one edit from the alias `Bélanger Østergård`; the other
    name holds both words, reordered, beside another."""
    aliased = make_entity(
        TENANT,
        "Bélanger Østergård Semiconductors Co",
        properties={"aliases": ("Bélanger Østergård",)},
    )
    other = make_entity(TENANT, "Østergård Bélanger Dairy LLC")
    aliased_score, other_score = lexical_scores("Bélanger Østurgård", [aliased, other])
    assert aliased_score > other_score


def test_an_exact_value_scores_the_same_whatever_the_property_or_its_place() -> None:
    ticker = make_entity(
        TENANT, "Zephyr Holdings", properties={"aliases": ("ZH", "Zephyr"), "ticker": "CRVD"}
    )
    assert lexical_score("crvd", ticker) == EXACT_PROPERTY
    assert lexical_score("Zephyr", ticker) == EXACT_PROPERTY
    assert lexical_score("zh", ticker) == EXACT_PROPERTY


def test_an_equal_name_ranks_above_an_equal_property_value() -> None:
    """A string property is not always another name: the city named `Berlin` comes
    before a company whose `city` is `Berlin`."""
    city = make_entity(TENANT, "Berlin", "city")
    company = make_entity(TENANT, "Berlin Partners", "company", properties={"city": "Berlin"})
    city_score, company_score = lexical_scores("Berlin", [city, company])
    assert city_score == 1.0
    assert string_similarity("Berlin", company.name) < company_score < city_score


ALDER = make_entity(TENANT, "Alder & Birchwood Foods Ltd")


@pytest.mark.parametrize("query", ["ABF", "abf", "A.B.F.", "a b f"])
def test_the_initials_of_a_name_score_initials_match(query: str) -> None:
    assert string_similarity(query, ALDER.name) == 0.0
    assert lexical_score(query, ALDER) == INITIALS_MATCH
    for other in ("ABFL", "AB", "BAF", "ABF Foods", "A B"):
        assert lexical_score(other, ALDER) < INITIALS_MATCH, other


def test_the_initials_of_an_alias_count_as_the_names() -> None:
    holder = make_entity(TENANT, "Zephyr", properties={"aliases": ("Big Blue Holdings",)})
    ticker = make_entity(TENANT, "Zephyr", properties={"ticker": "Big Blue Holdings"})
    assert lexical_scores("BBH", [holder, ticker]) == [INITIALS_MATCH, 0.0]


def test_initials_rank_below_a_word_the_query_begins_by_more_than_the_vote_margin() -> None:
    """`Gla` typed: a name with a word it begins is read first, and an initials match is
    no candidate the lexical channel votes for beside it (docs/adr/0003)."""
    begun = make_entity(TENANT, "Kestrel Orchard Wrenfield Umberfield Glassworks Northgate")
    initials = make_entity(TENANT, "Granite Larkspur Amberly")
    begun_score, initials_score = lexical_scores("Gla", [begun, initials])
    assert initials_score == INITIALS_MATCH
    assert begun_score - LEXICAL_VOTE_MARGIN > initials_score


def test_an_equal_name_or_alias_ranks_above_initials() -> None:
    named = make_entity(TENANT, "ABF")
    aliased = make_entity(TENANT, "Zephyr", properties={"aliases": ("ABF",)})
    assert lexical_scores("ABF", [named, aliased, ALDER]) == [1.0, EXACT_PROPERTY, INITIALS_MATCH]
