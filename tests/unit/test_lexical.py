"""lexical_score: the name and the aliases decide, and another string property value
counts `PROPERTY_WEIGHT` times unless it equals the query once normalised; a query
that is the initials of a name or an alias scores `INITIALS_MATCH`."""

from __future__ import annotations

import uuid

import pytest

from redstring import Entity
from redstring.domain import lexical
from redstring.domain.lexical import (
    EXACT_PROPERTY,
    INITIALS_MATCH,
    LONE_BEGINNING,
    LONE_FIRST_WORD,
    LONE_SPAN,
    MAX_SCORED_TEXTS,
    PROPERTY_WEIGHT,
    SOUNDS_ALIKE,
    SOUNDS_SPAN,
    MatchedText,
    lexical_matches,
    lexical_score,
    lexical_scores,
    lexical_votes,
)
from redstring.domain.ranking import LEXICAL_VOTE_MARGIN
from redstring.domain.similarity import MAX_SCORED_WORDS, NameComparison, string_similarity
from redstring.domain.text import MAX_NAME_LENGTH
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


def test_a_search_boxs_first_letters_score_the_names_they_begin_below_initials() -> None:
    """`a`, `ac` alone: a name's word they begin scores `LONE_BEGINNING` and a little
    more (its first word, more of the word typed), below an initials match by more than
    the vote margin, and below a word equal to the query."""
    acme, corvid, named, general = (
        make_entity(TENANT, name)
        for name in ("Acme Corp", "Corvid Acoustics", "AC Milan", "Archer Corbin")
    )
    begun = lexical_scores("ac", [acme, corvid, named, general])
    assert begun[2] > INITIALS_MATCH  # `AC`, the word typed
    assert begun[3] == INITIALS_MATCH  # `ac` is Archer Corbin's initials
    assert LONE_BEGINNING < begun[1] < begun[0] < INITIALS_MATCH - LEXICAL_VOTE_MARGIN
    one_letter = lexical_scores("A", [acme, corvid, named, general])
    assert LONE_BEGINNING < one_letter[0] < begun[0]  # less of `acme` typed
    assert one_letter[1] > LONE_BEGINNING  # `acoustics`
    assert lexical_scores("a", [make_entity(TENANT, "Corp Ltd")]) == [0.0]
    # An alias counts as the name does; another string value `PROPERTY_WEIGHT` times.
    aliased = make_entity(TENANT, "Zephyr", properties={"aliases": ("Acme",)})
    valued = make_entity(TENANT, "Zephyr", properties={"city": "Acton"})
    aliased_score, valued_score = lexical_scores("ac", [aliased, valued])
    assert aliased_score == begun[0]
    assert valued_score == pytest.approx(
        PROPERTY_WEIGHT * lexical_score("ac", make_entity(TENANT, "Acton"))
    )


def test_a_name_that_sounds_as_the_query_does_scores_below_any_word_match() -> None:
    """The same soundex (`Brashi Krik`, `Brushy Creek`: B622) where no word matches: a
    little above nothing, ordered by how alike the letters are."""
    creek, other, worded = (
        make_entity(TENANT, name) for name in ("Brushy Creek", "Bruzek", "Brashi Falls")
    )
    sounds, sounds_less, matched = lexical_scores("Brashi Krik", [creek, other, worded])
    assert SOUNDS_ALIKE < sounds_less < sounds <= SOUNDS_ALIKE + SOUNDS_SPAN
    assert matched > SOUNDS_ALIKE + SOUNDS_SPAN  # `Brashi`, a word
    # Over twice as long, or another first letter: soundex says nothing of it.
    assert lexical_scores("Acme" * 200, [make_entity(TENANT, "Acme Corp")]) == [0.0]
    assert lexical_scores("Krashi Brik", [creek]) == [0.0]
    # The romanised form of the query sounds too: `Бруски` as `Bruski`, soundex B620.
    assert lexical_scores("Бруски", [make_entity(TENANT, "Brusque")])[0] > SOUNDS_ALIKE


def test_one_or_two_letters_are_no_typo_of_a_longer_word() -> None:
    """`ge` against `Gee` or `GEO Group` was a one-letter typo, 0.63-0.74 by the word
    score, above an initials match: now a word it begins, or nothing."""
    general, geo, gee, bac = (
        make_entity(TENANT, name) for name in ("General Electric", "GEO Group", "Gee", "Bac")
    )
    general_score, geo_score, gee_score = lexical_scores("GE", [general, geo, gee])
    assert general_score == INITIALS_MATCH
    assert LONE_BEGINNING < geo_score < INITIALS_MATCH - LEXICAL_VOTE_MARGIN
    assert LONE_BEGINNING < gee_score < INITIALS_MATCH - LEXICAL_VOTE_MARGIN
    assert lexical_scores("ac", [bac]) == [0.0]


def test_a_lone_beginning_reads_identifying_words_and_favours_the_first() -> None:
    """A legal form or stopword the query begins is passed over (`co` of `Acme Corporation`), as
    the seek does; the first identifying word begun scores more than a later one."""
    first, later, legal = (
        make_entity(TENANT, name) for name in ("Corvid Labs", "Labs Corvid", "Acme Corporation")
    )
    first_score, later_score, legal_score = lexical_scores("co", [first, later, legal])
    assert first_score == pytest.approx(later_score + LONE_FIRST_WORD)
    assert legal_score < LONE_BEGINNING
    # The romanised form of the query begins words too: `ж` as `zh`.
    assert lexical_scores("ж", [make_entity(TENANT, "Zhukov Partners")])[0] > LONE_BEGINNING


def test_a_lone_beginning_reads_each_text_for_the_letters_asked() -> None:
    """A text's words are read once and kept (`_lone_reading`): the same text asked with
    other letters, and texts alike but for case, accents or a later word, each score as
    their own words and the letters asked say."""
    first, later = LONE_BEGINNING + LONE_FIRST_WORD, LONE_BEGINNING
    acme = make_entity(TENANT, "Acme Labs")
    assert lexical_scores("ac", [acme]) == [first + LONE_SPAN * 2 / 4]
    assert lexical_scores("a", [acme]) == [first + LONE_SPAN * 1 / 4]
    assert lexical_scores("la", [acme]) == [later + LONE_SPAN * 2 / 4]
    assert lexical_scores("z", [acme]) == [0.0]
    names = ("ÁCME LABS", "acme-läbs", "Acme Lab", "Acme Zebra", "Acme La")
    alike = [make_entity(TENANT, name) for name in names]
    assert lexical_matches("la", alike).scores[:4] == [
        later + LONE_SPAN * 2 / 4,
        later + LONE_SPAN * 2 / 4,
        later + LONE_SPAN * 2 / 3,
        0.0,
    ]
    # A word the letters are, scored as the word is, not as a beginning.
    assert lexical_scores("la", alike[4:]) == [string_similarity("la", "Acme La")]
    assert lexical_scores("ze", alike) == [0.0, 0.0, 0.0, later + LONE_SPAN * 2 / 5, 0.0]
    assert lexical_scores("a", alike[:2]) == [first + LONE_SPAN * 1 / 4] * 2


def test_only_texts_holding_the_letters_as_a_word_are_scored_word_by_word() -> None:
    """Among texts the letters begin a word of, the few holding them as a word score as
    the word score says, each its own, and the others as the words they begin."""
    names = ("Acme", "AC", "Zed", "AC Milan", "Corvid Acoustics", "Milan AC Group")
    scores = lexical_scores("ac", [make_entity(TENANT, name) for name in names])
    assert scores == [
        LONE_BEGINNING + LONE_FIRST_WORD + LONE_SPAN * 2 / 4,
        1.0,
        0.0,
        string_similarity("ac", "AC Milan"),
        LONE_BEGINNING + LONE_SPAN * 2 / 9,
        string_similarity("ac", "Milan AC Group"),
    ]
    assert len(set(scores)) == len(scores)


def test_a_lone_beginning_is_at_most_two_letters() -> None:
    with pytest.raises(ValueError, match="at most 2"):
        lexical._lone_beginnings(("abc",), ["abcd"])


def test_only_a_query_of_one_short_word_scores_the_names_it_begins() -> None:
    acme = make_entity(TENANT, "Acme Corp")
    for query in ("ac ", "Zed Ac", "ac."):
        assert lexical_score(query, acme) < LONE_BEGINNING, query


def test_an_equal_name_or_alias_ranks_above_initials() -> None:
    named = make_entity(TENANT, "ABF")
    aliased = make_entity(TENANT, "Zephyr", properties={"aliases": ("ABF",)})
    assert lexical_scores("ABF", [named, aliased, ALDER]) == [1.0, EXACT_PROPERTY, INITIALS_MATCH]


def test_a_search_box_credits_an_initial_and_a_last_word_of_one_or_two_letters() -> None:
    wrench = make_entity(TENANT, "Acme Torque Wrench Pro", "product")
    acme = make_entity(TENANT, "Acme Corp")
    for query in ("Acme Torque W", "Acme Torque Wr"):
        product, firm = lexical_scores(query, [wrench, acme])
        assert product > firm, query
    people = [make_entity(TENANT, "Quinn Brandt"), make_entity(TENANT, "Bram Brandt")]
    for query in ("Q. Brandt", "Q Brandt"):
        quinn, bram = lexical_scores(query, people)
        assert quinn > bram, query


PORT_ALDMERE = make_entity(TENANT, "Port Aldmere", "city")
ACME = make_entity(
    TENANT, "Acme Corp", "company", properties={"aliases": ("ACME",), "city": "Port Aldmere"}
)


def mentioned(query: str, entities: list[Entity]) -> list[bool]:
    return lexical_matches(query, entities).mentioned


def test_a_description_merely_mentions_the_names_it_holds() -> None:
    query = "industrial equipment company in Port Aldmere"
    assert mentioned(query, [PORT_ALDMERE, ACME]) == [True, True]
    # The score does not change, the vote does: the city still ranks first by name.
    matches = lexical_matches(query, [PORT_ALDMERE, ACME])
    assert matches.scores == lexical_scores(query, [PORT_ALDMERE, ACME])
    assert matches.scores[0] == string_similarity(query, "Port Aldmere") > 0.75


@pytest.mark.parametrize(
    "query",
    [
        "Port Aldmere",
        "port aldmer",  # a typo, the last word unfinished
        "Port Aldmere city",  # a word more, but the name explains most of the query
        "Aldmere",  # part of the name: the query is wholly explained
    ],
)
def test_a_query_that_names_the_entity_does_not_merely_mention_it(query: str) -> None:
    assert mentioned(query, [PORT_ALDMERE]) == [False]


def test_initials_and_aliases_name_the_entity() -> None:
    lowen = make_entity(TENANT, "Lowen", "city")
    assert mentioned("AC", [ACME, lowen]) == [False, False]  # the initials of `Acme Corp`
    assert mentioned("acme", [ACME, lowen]) == [False, False]  # the alias
    assert mentioned("acme software maker in Lowen", [ACME, lowen]) == [True, True]


def test_a_name_the_query_shares_nothing_with_is_not_mentioned() -> None:
    # Only a mention loses the vote, not a candidate the query does not hold at all.
    stranger = make_entity(TENANT, "Kestrel Bay", "city")
    software = make_entity(TENANT, "Software", "industry")
    query = "software company in Port Aldmere"
    assert mentioned(query, [stranger, PORT_ALDMERE, software]) == [False, True, True]
    assert lexical_matches(query, [])[:2] == ([], [])


def test_one_name_in_a_longer_query_may_be_a_longer_form_of_it() -> None:
    """A description mentions several things; a query holding one name and other words
    (`Greater Port Aldmere metropolitan area`) may still name it."""
    software = make_entity(TENANT, "Software", "industry")
    longer = "Greater Port Aldmere metropolitan area"
    assert mentioned(longer, [PORT_ALDMERE]) == [False]
    assert mentioned("software company in Port Aldmere", [PORT_ALDMERE]) == [False]
    assert mentioned("software company in Port Aldmere", [PORT_ALDMERE, software]) == [True, True]
    # Names with a word in common are one thing mentioned, not two.
    aldmere = make_entity(TENANT, "Aldmere", "village")
    assert mentioned("Port Aldmere harbour works", [PORT_ALDMERE, aldmere]) == [False, False]


def test_the_lexical_vote_drops_a_mention_and_keeps_the_margin() -> None:
    city, agency, far = (uuid.uuid4() for _ in range(3))
    ranked = [(city, 0.96), (agency, 0.95), (far, 0.5)]
    assert lexical_votes(ranked, {city}) == [(agency, 0.95)]
    assert lexical_votes(ranked, set()) == ranked[:2]
    assert lexical_votes([], {city}) == []


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("ATT", "AT&T Inc."),
        ("att", "AT&T Inc."),
        ("S&P", "S&P Global"),
        ("MS", "M&S"),
        ("AT&T", "ATT Logistics Ltd"),
        ("AT & T", "ATT Logistics Ltd"),
        ("ATT", "AT & T Inc."),
        ("H&M", "HM Revenue"),
        ("AT and T", "AT&T Inc."),
        ("AT&T", "AT and T Corp"),
        ("AT and T Mobility", "ATT Mobility"),
        ("ATT Mobility", "AT and T Mobility"),
    ],
)
def test_letters_joined_by_an_ampersand_are_compared_as_one_word(query: str, name: str) -> None:
    """`AT&T` normalises to `at t` (a stopword and a letter), which `ATT` shares nothing
    with; its joined form `ATT` is compared too, on either side."""
    tenant = new_tenant()
    entity = make_entity(tenant, name, "org")
    assert lexical_score(query, entity) >= 0.75
    other = make_entity(tenant, "Attica Spiel Holdings", "org")
    mine, theirs = lexical_scores(query, [entity, other])
    assert mine > theirs


def test_an_alias_with_letters_joined_by_an_ampersand_is_compared_joined() -> None:
    entity = make_entity(
        new_tenant(), "American Telephone and Telegraph", "org", properties={"aliases": ("AT&T",)}
    )
    assert lexical_score("ATT", entity) >= 0.9


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("Gazprom", "Газпром"),
        ("Газпром", "Gazprom PJSC"),
        ("Moskva", "Москва"),
        ("Yekaterinburg", "Екатеринбург"),  # one letter from anyascii's `Ekaterinburg`
        ("Thessaloniki", "Θεσσαλονίκη"),
        ("Seoul", "서울"),
    ],
)
def test_a_name_is_compared_in_latin_letters_too(query: str, name: str) -> None:
    tenant = new_tenant()
    entity = make_entity(tenant, name, "org")
    assert lexical_score(query, entity) >= 0.8
    mine, theirs = lexical_scores(query, [entity, make_entity(tenant, "Acme Holdings", "org")])
    assert mine > theirs


def test_romanising_reads_letters_and_does_not_translate() -> None:
    """`Athens` is no spelling of `Αθήνα` (`Athina`), nor `Kyiv` of `Київ` (`Kiiv`): the
    semantic channel, not the lexical one, knows a name's other names."""
    tenant = new_tenant()
    assert lexical_score("Athens", make_entity(tenant, "Αθήνα", "city")) < 0.5
    assert lexical_score("Kiiv", make_entity(tenant, "Київ", "city")) >= 0.9


def _compared_texts(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Records the texts each `compare_names` call of `lexical_matches` is given."""
    calls: list[list[str]] = []
    compare = lexical.compare_names

    def recording(query: str, texts: list[str], *, open_end: bool = False) -> NameComparison:
        calls.append(list(texts))
        return compare(query, texts, open_end=open_end)

    monkeypatch.setattr(lexical, "compare_names", recording)
    return calls


def test_what_one_entity_holds_bounds_what_a_query_compares(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An entity is a few hundred candidates' one: however many string values it holds,
    and however long (stored before names were bounded, or a value of another
    property), a query compares `MAX_SCORED_TEXTS` of its texts, each cut to a name's
    length: it once took 2 s a query to compare a 900 KB name."""
    huge = Entity.model_construct(  # as a store reads back an entity stored earlier
        **make_entity(TENANT, "Gryphon Freight").model_dump()
        | {"name": "Gryphon Freight " + "lorem ipsum " * 75_000}
    )
    values = {f"note{i}": f"Value {i} " + "dolor sit " * 10_000 for i in range(200)}
    many = Entity.model_construct(  # properties past today's bound, stored before it
        **make_entity(TENANT, "Heron Logistics", properties={"aliases": "Heron"}).model_dump()
        | {"properties": {"aliases": "Heron", **values}}
    )
    calls = _compared_texts(monkeypatch)
    scores = lexical_scores("Gryphon Freight", [huge, many])
    assert scores[0] > 0.9
    texts = calls[0]
    assert len(texts) <= 2 * MAX_SCORED_TEXTS
    assert max(map(len, texts)) == MAX_NAME_LENGTH
    # The name and alias come first: those are kept.
    assert lexical_scores("Heron", [many]) == [EXACT_PROPERTY]


def test_values_past_an_entity_s_share_of_texts_are_not_compared() -> None:
    values = {f"note{i:02d}": f"Kestrel {i:02d}" for i in range(2 * MAX_SCORED_TEXTS)}
    entity = make_entity(TENANT, "Heron Logistics", properties=values)
    assert lexical_score("Kestrel 01", entity) == EXACT_PROPERTY
    assert lexical_score(f"Kestrel {2 * MAX_SCORED_TEXTS - 1:02d}", entity) < EXACT_PROPERTY


def test_words_of_a_name_past_its_share_are_not_compared() -> None:
    words = [
        *("amber", "bishop", "copper", "dune", "ember", "falcon", "garnet", "harbor"),
        *("indigo", "juniper", "kettle", "lantern", "meadow", "nectar", "orchid"),
        *("pepper", "quartz", "raven", "saffron", "thistle"),
    ]
    assert len(words) > MAX_SCORED_WORDS
    name = " ".join(words)
    assert string_similarity(words[0], name) > 0
    assert string_similarity(words[-1], name) == 0.0


def test_many_other_values_do_not_crowd_an_alias_out_of_the_compared_texts() -> None:
    tags = {"tags": tuple(f"tag {i}" for i in range(2 * MAX_SCORED_TEXTS))}
    entity = make_entity(TENANT, "IBM", properties={**tags, "aliases": ("Big Blue",)})
    assert lexical_score("Big Blue", entity) == EXACT_PROPERTY


def matched(query: str, entities: list[Entity]) -> list[MatchedText | None]:
    found = lexical_matches(query, entities)
    return [found.matched.of(index) for index in range(len(entities))]


def test_the_matched_text_is_the_one_behind_the_score() -> None:
    renamed = make_entity(
        TENANT, "Zephyr Holdings", properties={"aliases": ["Kite Labs", "Corvid Labs"]}
    )
    listed = make_entity(TENANT, "Nimbus Group", properties={"ticker": "CORVD", "city": "Corvid"})
    assert matched("Corvid Labs", [SEMICONDUCTORS, renamed, listed, MCU]) == [
        MatchedText("Corvid", "aliases"),  # scores above its name `Corvid Semiconductors`
        MatchedText("Corvid Labs", "aliases"),
        MatchedText("Corvid", "city"),
        MatchedText("Corvid Lowpower MCU", None),
    ]


def test_a_name_and_an_alias_scoring_alike_give_the_name() -> None:
    # `CORVID` normalises as the name does, so scores alike against any query.
    twin = make_entity(TENANT, "Corvid", properties={"aliases": ["CORVID", "Corvid Labs"]})
    assert matched("corvd", [twin]) == [MatchedText("Corvid", None)]


def test_another_form_of_an_alias_gives_the_alias_as_held() -> None:
    telecom = make_entity(TENANT, "Bell Holdings", properties={"aliases": ["AT&T Inc."]})
    assert lexical_score("ATT Inc", telecom) > 0.9
    assert matched("ATT Inc", [telecom]) == [MatchedText("AT&T Inc.", "aliases")]


def test_a_value_in_a_list_gives_its_key() -> None:
    held = make_entity(TENANT, "Nimbus Group", properties={"brands": [3, "Kite", "Corvid Air"]})
    assert matched("Corvid Air", [held]) == [MatchedText("Corvid Air", "brands")]


def test_initials_give_the_text_they_are_of() -> None:
    by_name = make_entity(TENANT, "Atlantic Blue Freight")
    by_alias = make_entity(
        TENANT, "Zephyr Holdings", properties={"aliases": ["Kite", "Atlantic Blue Ferries"]}
    )
    assert lexical_scores("ABF", [by_name, by_alias]) == [INITIALS_MATCH, INITIALS_MATCH]
    assert matched("ABF", [by_name, by_alias]) == [
        MatchedText("Atlantic Blue Freight", None),
        MatchedText("Atlantic Blue Ferries", "aliases"),
    ]


def test_a_property_named_name_is_told_from_the_name() -> None:
    other = make_entity(TENANT, "Acme Widgets", properties={"name": "Acme Industrial Partners"})
    assert matched("Acme Industrial Partners", [other]) == [
        MatchedText("Acme Industrial Partners", "name")
    ]
    assert matched("Acme Widgets", [other]) == [MatchedText("Acme Widgets", None)]


def test_a_value_under_two_keys_gives_the_first_key_whatever_the_order_given() -> None:
    """The stores read properties in one order (Neo4j's JSON has sorted keys), so both
    give the same key."""
    for given in (
        {"b_key": "Twin Value", "a_key": "Twin Value"},
        {"a_key": "Twin Value", "b_key": "Twin Value"},
    ):
        twin = make_entity(TENANT, "Twin Keys", properties=given)
        assert list(twin.properties) == ["a_key", "b_key"]
        assert matched("Twin Value", [twin]) == [MatchedText("Twin Value", "a_key")]


def test_an_entity_the_query_finds_nothing_in_matched_no_text() -> None:
    assert matched("Corvid", [make_entity(TENANT, "Zephyr Holdings")]) == [None]
