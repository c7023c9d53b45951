"""The organisations and descriptions sets of `bench.quality`: how their queries are made.

The set is written in `bench/quality_sets.py` (no package data), so it is built
here at a small size. What is pinned: the set is the same on every build, one
organisation in `ALIAS_SHARE` or so carries aliases, an alias names its
organisation alone, an `acronym` query's answer carries none (that kind
measures initials no alias names), and an `alias` query is one of its
answer's aliases as a user types it.
"""

from __future__ import annotations

import hashlib
import random
import re
import uuid

import pytest
from bench.quality_sets import (
    ALIAS_SHARE,
    QualitySet,
    acronym_of,
    alias_query,
    descriptions,
    edit_distance,
    fold,
    organisations,
    short_name,
)

from redstring import Entity, TenantId

TENANT = TenantId(uuid.UUID(int=1))


@pytest.fixture(scope="module")
def orgs() -> QualitySet:
    return organisations(TENANT, 600, 140, 1)


def aliases(e: Entity) -> list[str]:
    return list(e.properties.get("aliases", ()))


def names_and_aliases(data: QualitySet) -> dict[str, set[str]]:
    """Each folded name (with and without its legal form) and alias: whose it is."""
    owners: dict[str, set[str]] = {}
    for e in data.entities:
        legal_form_dropped = e.name.rsplit(" ", 1)[0]
        for text in {e.name, legal_form_dropped, *aliases(e)}:
            owners.setdefault(fold(text), set()).add(str(e.id))
    return owners


def test_the_set_is_the_same_on_every_build(orgs: QualitySet) -> None:
    again = organisations(TENANT, 600, 140, 1)
    assert again.entities == orgs.entities
    assert [e.properties for e in again.entities] == [e.properties for e in orgs.entities]
    assert again.queries == orgs.queries


def test_the_other_kinds_are_those_of_the_set_without_aliases(orgs: QualitySet) -> None:
    # The names and the queries of every kind but `alias` are drawn before any alias,
    # from their own generator, so adding aliases left them as they were. A change
    # here changes the figures of docs/quality.md: re-run the bench.
    kept = [(e.name, str(e.id)) for e in orgs.entities] + [
        (q.text, str(q.answer), q.kind) for q in orgs.queries if q.kind != "alias"
    ]
    digest = hashlib.sha256(repr(kept).encode()).hexdigest()[:16]
    assert digest == "fd42533e7dea1e4e"  # as built before organisations had aliases


def test_a_share_of_the_organisations_carries_aliases(orgs: QualitySet) -> None:
    aliased = [e for e in orgs.entities if aliases(e)]
    share = len(aliased) / len(orgs.entities)
    assert 0.5 / ALIAS_SHARE < share < 1.2 / ALIAS_SHARE
    # Short names and initials both, as an entity's `aliases` property.
    assert any(" " in a for e in aliased for a in aliases(e))
    assert any(a.isupper() and " " not in a for e in aliased for a in aliases(e))
    assert all(len(aliases(e)) <= 2 for e in aliased)


def test_an_alias_names_its_organisation_alone(orgs: QualitySet) -> None:
    owners = names_and_aliases(orgs)
    for e in orgs.entities:
        for alias in aliases(e):
            assert owners[fold(alias)] == {str(e.id)}, alias


def test_an_acronym_query_answer_has_no_alias(orgs: QualitySet) -> None:
    by_id = {e.id: e for e in orgs.entities}
    acronyms = [q for q in orgs.queries if q.kind == "acronym"]
    assert acronyms
    every_alias = {fold(a) for e in orgs.entities for a in aliases(e)}
    for query in acronyms:
        assert aliases(by_id[query.answer]) == []
        assert fold(query.text) not in every_alias


def test_an_alias_query_is_an_alias_of_its_answer_as_typed(orgs: QualitySet) -> None:
    by_id = {e.id: e for e in orgs.entities}
    owners = names_and_aliases(orgs)
    queries = [q for q in orgs.queries if q.kind == "alias"]
    assert len(queries) == len([q for q in orgs.queries if q.kind == "typo"])
    forms = set()
    for query in queries:
        own = aliases(by_id[query.answer])
        if query.text in own:
            forms.add("written")
        elif query.text in [a.lower() for a in own]:
            forms.add("lower")
        else:
            assert min(edit_distance(fold(query.text), fold(a)) for a in own) == 1
            forms.add("typo")
        assert owners.get(fold(query.text), {str(query.answer)}) == {str(query.answer)}
    assert forms == {"written", "lower", "typo"}


@pytest.mark.parametrize(
    ("words", "short", "initials"),
    [
        (["Alder", "&", "Birchwood", "Foods"], "Alder & Birchwood", "ABF"),
        (["Global", "Alder", "Foods"], "Global Alder", "GAF"),
        (["Alder", "Foods"], "Alder Foods", "AF"),  # too few words to drop one
    ],
)
def test_short_name_and_initials(words: list[str], short: str, initials: str) -> None:
    assert short_name(words) == short
    assert acronym_of(words) == initials


def test_alias_query_types_one_of_the_aliases() -> None:
    rng = random.Random(3)
    made = {alias_query(["Alder & Birchwood", "ABF"], rng) for _ in range(200)}
    assert {"Alder & Birchwood", "alder & birchwood", "ABF", "abf"} <= made
    typos = made - {"Alder & Birchwood", "alder & birchwood", "ABF", "abf"}
    assert typos
    assert all(edit_distance(fold(t), "alder birchwood") == 1 for t in typos)
    assert alias_query([], rng) is None


@pytest.fixture(scope="module")
def described() -> QualitySet:
    return descriptions(TENANT, 600, 120, 1)


def facts_of(company: Entity) -> tuple[str, str, str]:
    """Industry, city and year, read back from the description."""
    match = re.fullmatch(
        r".+ is an? (.+) company headquartered in (.+), founded in (\d{4})\.",
        company.description or "",
    )
    assert match, company.description
    industry, city, year = match.groups()
    return industry, city, year


def test_the_descriptions_set_is_the_same_on_every_build(described: QualitySet) -> None:
    again = descriptions(TENANT, 600, 120, 1)
    assert again.entities == described.entities
    assert again.queries == described.queries
    assert len(described.entities) == 600
    assert set(described.kinds()) == {"place", "based", "founded", "year"}


def test_a_description_query_gives_facts_of_its_answer_alone(described: QualitySet) -> None:
    companies = [e for e in described.entities if e.entity_type == "company"]
    by_id = {e.id: e for e in companies}
    facts = {e.id: facts_of(e) for e in companies}
    for query in described.queries:
        industry, city, year = facts[query.answer]
        given = (
            [industry]
            + ([city] if query.kind != "year" else [])
            + ([year] if query.kind in ("founded", "year") else [])
        )
        assert all(fact in query.text for fact in given), query
        if query.kind == "year":
            assert city not in query.text
        sharing = [i for i, f in facts.items() if all(fact in f for fact in given)]
        assert sharing == [query.answer], query
        # Described, never named: no word of the answer's name is in the query.
        name_words = set(fold(by_id[query.answer].name).split())
        assert not name_words & set(fold(query.text).split()), query


def test_what_a_description_mentions_is_an_entity_of_the_set(described: QualitySet) -> None:
    names = {fold(e.name): e.entity_type for e in described.entities}
    for query in described.queries:
        industry, city, _ = facts_of(next(e for e in described.entities if e.id == query.answer))
        assert names[fold(industry)] == "industry"
        assert names[fold(city)] == "city"
