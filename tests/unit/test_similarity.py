"""string_similarity: the contract's examples and its properties."""

from __future__ import annotations

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from rapidfuzz import fuzz

from redstring.domain.blocking import MIN_PREFIX_LENGTH
from redstring.domain.name_forms import NON_IDENTIFYING, WORD_ABBREVIATIONS
from redstring.domain.normalization import normalize_name
from redstring.domain.similarity import (
    CANONICAL_MATCH,
    TOKEN_FLOOR,
    compare_names,
    string_similarities,
    string_similarity,
)


def test_exact_after_normalisation() -> None:
    assert string_similarity("ACME Corp.", "acme corp") == 1.0
    assert string_similarity("Café", "cafe") == 1.0


def test_title_qualified_and_legal_forms_score_high() -> None:
    assert string_similarity("Lord Voldemort", "Voldemort") >= 0.9
    assert string_similarity("ACME Corporation", "Acme Corp") >= 0.9
    assert string_similarity("Globex Incorporated", "Globex Inc") >= 0.9


def test_acme_corp_beats_the_lookalikes() -> None:
    query = "ACME Corporation"
    target = string_similarity(query, "Acme Corp")
    assert target > string_similarity(query, "Apex Corporation")
    assert target > string_similarity(query, "Acme Widgets")


def test_unrelated_names_score_low() -> None:
    assert string_similarity("Acme Corp", "Umbrella Pharmaceuticals") < 0.4


def test_batch_equals_pairwise() -> None:
    names = ["Acme Corp", "Apex", "", "Lord Voldemort", "acme"]
    batch = string_similarities("ACME", names)
    assert list(batch) == [string_similarity("ACME", n) for n in names]


names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\x00"),
    max_size=30,
)


@given(names, names)
def test_symmetric_and_bounded(a: str, b: str) -> None:
    ab, ba = string_similarity(a, b), string_similarity(b, a)
    assert ab == ba
    assert 0.0 <= ab <= 1.0


@given(names, names)
@example("Acme Corp", "Corp Acme")
@example("Acme Corporation", "Acme Corp")
def test_one_exactly_when_normalised_names_are_equal(a: str, b: str) -> None:
    assert (string_similarity(a, b) == 1.0) == (normalize_name(a) == normalize_name(b))


@given(names)
def test_reflexive(a: str) -> None:
    assert string_similarity(a, a) == 1.0


word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=8)


@given(st.lists(word, min_size=1, max_size=4))
def test_reordered_words_score_near_exact(words: list[str]) -> None:
    a, b = " ".join(words), " ".join(reversed(words))
    assert string_similarity(a, b) >= 0.99
    assert (string_similarity(a, b) == 1.0) == (a == b)


# --- the word-by-word score: the distinctive part of a name decides ---------------


def test_a_differing_word_outweighs_the_words_in_common() -> None:
    query = "Acme Holdings International"
    assert string_similarity(query, "Acme") > string_similarity(
        query, "Apex Holdings International"
    )
    assert string_similarity("John Smith", "Jon Smith") > string_similarity(
        "John Smith", "Jane Smith"
    )


def test_a_name_contained_in_the_other_scores_high() -> None:
    assert string_similarity("Acme Holdings International", "Acme") >= 0.75
    assert string_similarity("Saint Petersburg Harbor", "Petersburg") >= 0.75


def test_legal_forms_titles_and_joiners_are_no_identity() -> None:
    assert string_similarity("Acme Corp", "Apex Corp") < 0.3
    assert string_similarity("Dr Jane Doe", "Dr John Roe") < 0.3
    assert string_similarity("Bank of Acme", "Bank of Apex") < string_similarity(
        "Bank of Acme", "Acme Bank"
    )
    # The same identifying words, only the legal form differs: high, below canonical.
    assert 0.9 <= string_similarity("Acme Corp", "Acme Inc") < CANONICAL_MATCH


def test_other_spacing_is_the_same_name() -> None:
    assert string_similarity("MacDonald", "Mac Donald") >= 0.85
    assert string_similarity("Newyork Times", "New York Times") >= 0.85


def test_a_beginning_typed_without_its_spaces_is_as_alike_as_spaced() -> None:
    """A search box gets `walmart` and `kettlecreek`: the first words of a name joined
    are compared with the other side's words joined, either way round."""
    for joined, spaced, name in [
        ("kettlecreek", "kettle creek", "Kettle Creek Outfitters"),
        ("walmart", "wal mart", "Wal-Mart Stores"),
        ("cocacola", "coca cola", "Coca Cola Bottling"),
    ]:
        assert string_similarity(joined, name) == pytest.approx(string_similarity(spaced, name))
        assert string_similarity(name, joined) == string_similarity(joined, name)
    # A beginning one letter off still counts; two names that only begin alike do not.
    assert string_similarity("kettlecrek", "Kettle Creek Outfitters") > 0.8
    assert string_similarity("kettlestore", "Kettle Creek Outfitters") < 0.6
    shares = compare_names("kettlecreek", ["Kettle Creek Outfitters"])
    assert shares.query_share[0] == 1.0
    assert shares.candidate_share[0] == pytest.approx(
        len("kettlecreek") / len("kettlecreekoutfitters")
    )


letters = "abcdefghijklmnopqrstuvwxyz"
long_word = st.text(alphabet=letters, min_size=5, max_size=10).filter(
    lambda w: w not in NON_IDENTIFYING and w not in WORD_ABBREVIATIONS
)


def _unlike(a: str, b: str) -> bool:
    return fuzz.ratio(a, b) / 100 < TOKEN_FLOOR


@given(long_word, long_word, long_word, long_word)
def test_containment_beats_a_conflict(a: str, b: str, c: str, x: str) -> None:
    """`a` alone is closer to `a b c` than `x b c` is, whatever `b c` are, when `x`
    is unlike `a`: a word on both sides that the other lacks is a conflict."""
    assume(len({a, b, c, x}) == 4 and _unlike(x, a) and _unlike(a, b) and _unlike(a, c))
    assume(_unlike(x, b) and _unlike(x, c))
    name = f"{a} {b} {c}"
    assert string_similarity(name, a) > string_similarity(name, f"{x} {b} {c}")


@given(st.lists(long_word, min_size=1, max_size=3), st.integers(0, 2), st.integers(0, 9))
def test_one_edit_stays_closer_than_another_word(words: list[str], pick: int, at: int) -> None:
    """A name with one letter of one word replaced is closer to it than the name with
    that word replaced by an unlike one."""
    i = pick % len(words)
    word = words[i]
    at %= len(word)
    typo = word[:at] + ("z" if word[at] != "z" else "y") + word[at + 1 :]
    other = "qxjvkw"
    assume(_unlike(other, word) and all(_unlike(other, w) for w in words))
    name = " ".join(words)
    typoed = " ".join([*words[:i], typo, *words[i + 1 :]])
    replaced = " ".join([*words[:i], other, *words[i + 1 :]])
    assert string_similarity(name, typoed) > string_similarity(name, replaced)
    assert string_similarity(name, typoed) >= 0.6


# --- an unfinished last word (open_end) ---------------------------------------------


def test_an_unfinished_word_meets_the_words_it_begins() -> None:
    scores = string_similarities(
        "Ada Lov", ["Ada Lovelace", "Ada Smith", "Lovelace Ada", "Ada Lov"], open_end=True
    )
    assert scores[3] == 1.0
    assert scores[0] > scores[1]
    assert scores[0] > string_similarity("Ada Lov", "Ada Lovelace")  # credit only when open
    # Only the last word is read as unfinished.
    first_open = string_similarities("Lov Ada", ["Lovelace Ada"], open_end=True)[0]
    assert first_open == string_similarity("Lov Ada", "Lovelace Ada")


@pytest.mark.parametrize(
    ("query", "intended", "other"),
    [
        ("Acme Torque W", "Acme Torque Wrench Pro", "Acme Corp"),
        ("Acme Torque Wr", "Acme Torque Wrench Pro", "Acme Corp"),
        ("Brandt Q", "Quinn Brandt", "Bram Brandt"),
    ],
)
def test_one_or_two_letters_after_other_words_begin_a_word_when_open_ended(
    query: str, intended: str, other: str
) -> None:
    opened = string_similarities(query, [intended, other], open_end=True)
    assert opened[0] > opened[1]
    if len(query.split()[-1]) == 2:  # one letter is an initial either way
        assert string_similarity(query, intended) < opened[0]  # only when open-ended


@pytest.mark.parametrize("query", ["Q. Brandt", "Q Brandt", "Brandt, Q."])
def test_an_initial_matches_the_word_it_begins_below_the_whole_word(query: str) -> None:
    quinn, bram = string_similarities(query, ["Quinn Brandt", "Bram Brandt"])
    assert quinn > bram
    assert quinn < string_similarity("Quinn Brandt", "Brandt Quinn")
    assert string_similarity(query, "Quinn Brandt") == string_similarity("Quinn Brandt", query)
    # Initials alone are no name written out (the lexical channel's `query_initials`).
    assert string_similarity("q b", "Quinn Brandt") == 0.0
    assert string_similarity("Quinn Brandt", "q b") == 0.0
    # Nor does an initial alone match a name: `L'` is no initial of `Lukavac`.
    assert string_similarity("L'govskiy", "Lukavac") == 0.0


@pytest.mark.parametrize(
    ("query", "unrelated", "named"),
    [
        ("AT&T Wireless", "Wireless Telecom Group", "AT&T Wireless Services"),
        ("A&P Foods", "Pete Foods", "A&P Foods Inc"),
        ("B & Q Stores", "Quality Stores", "B&Q Stores Ltd"),
    ],
)
def test_a_letter_of_an_ampersand_group_is_no_initial(
    query: str, unrelated: str, named: str
) -> None:
    """`T` of `AT&T` is part of one word read in letters, not the initial of `Telecom`
    (which ranked `Wireless Telecom Group` level with `AT&T Wireless Services`); either
    way round."""
    other, same = string_similarities(query, [unrelated, named])
    assert other < 0.7 < same
    assert string_similarity(unrelated, query) == string_similarity(query, unrelated)
    assert string_similarity("J. R. R. Tolkien", "John Ronald Tolkien") < 0.8  # a row of them


def test_two_han_or_kana_characters_meet_the_unspaced_name_they_begin() -> None:
    # As many as the lexical channel seeks them from (`query_prefix`): a name it reads
    # for them scores above nothing.
    han = string_similarities("腾讯", ["腾讯控股有限公司", "腾飞科技"], open_end=True)
    kana = string_similarities("トヨ", ["トヨタ自動車"], open_end=True)
    assert han[0] > 0.7 > han[1]
    assert kana[0] > 0.7
    assert string_similarities("腾", ["腾讯控股有限公司"], open_end=True) == [0.0]
    assert string_similarities("Ac", ["Acme Corp"], open_end=True) == [0.0]


def test_a_han_or_kana_word_inside_an_unspaced_name_meets_it() -> None:
    """Such names are written without spaces: a word of two characters or more inside
    another matches it (either way round, so the measure stays symmetric), below a
    beginning typed as far; one character, or Latin letters inside a word, do not."""
    inside, none = string_similarities("控股", ["腾讯控股有限公司", "腾飞科技"])
    assert inside > 0.65
    assert none == 0.0
    assert string_similarity("腾讯控股有限公司", "控股") == string_similarity(
        "控股", "腾讯控股有限公司"
    )
    assert string_similarity("ソニー", "株式会社ソニー") > 0.65
    begun = string_similarities("腾讯", ["腾讯控股有限公司"], open_end=True)[0]
    assert begun > string_similarities("控股", ["腾讯控股有限公司"], open_end=True)[0] > 0.65
    assert string_similarity("控", "腾讯控股有限公司") == 0.0
    assert string_similarity("son", "Acmeson") == 0.0  # Latin words are spaced


def test_a_finished_word_wins_over_a_longer_one() -> None:
    acme, acmeson, acme_widgets = string_similarities(
        "Acme", ["Acme", "Acmeson", "Acme Widgets"], open_end=True
    )
    assert acme > acmeson
    assert acme_widgets > acmeson


@given(long_word, long_word, long_word, st.integers(3, 8))
def test_prefix_credit_is_below_the_whole_word(x: str, w: str, z: str, cut: int) -> None:
    """`x p` (p begins w) scores `x w z` below `x p z`, where p is a whole word."""
    p = w[: min(cut, len(w) - 1)]
    # An abbreviation of w (`univ` of `university`) reads as w itself, not its beginning.
    assume(len(p) >= MIN_PREFIX_LENGTH and len({x, w, z}) == 3 and p not in WORD_ABBREVIATIONS)
    assume(_unlike(x, p) and _unlike(z, p) and not x.startswith(p) and not z.startswith(p))
    prefixed, whole = string_similarities(
        f"{x} {p}", [f"{x} {w} {z}", f"{x} {p} {z}"], open_end=True
    )
    assert prefixed < whole


def test_canonical_forms_rank_above_another_legal_form() -> None:
    assert string_similarity("ACME Corporation", "Acme Corp") == CANONICAL_MATCH
    assert string_similarity("Lord Voldemort", "Voldemort") == CANONICAL_MATCH
    assert string_similarity("ACME Corporation", "Acme Corp") > string_similarity(
        "ACME Corporation", "Acme Ltd"
    )


def test_a_name_the_query_mentions_is_wholly_matched_but_explains_little_of_it() -> None:
    query = "software company in Port Aldmere"
    found = compare_names(query, ["Port Aldmere", "Acme Software Ltd", "Kestrel Bay"])
    assert found.candidate_share[0] == 1.0
    # `company` is a legal form and `in` a stopword: the query says `software port aldmere`.
    assert found.query_share[0] == pytest.approx(len("portaldmere") / len("softwareportaldmere"))
    assert found.query_share[1] == pytest.approx(len("software") / len("softwareportaldmere"))
    assert found.candidate_share[1] == pytest.approx(len("software") / len("acmesoftware"))
    assert (found.query_share[2], found.candidate_share[2]) == (0.0, 0.0)


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("ACME Corp.", "acme corp"),  # equal once normalised
        ("ACME Corporation", "Acme Corp"),  # canonical: the legal form read alike
        ("Lovelace Ada", "Ada Lovelace"),  # reordered
    ],
)
def test_names_alike_as_wholes_explain_each_other_wholly(query: str, name: str) -> None:
    found = compare_names(query, [name])
    assert (found.query_share[0], found.candidate_share[0]) == (1.0, 1.0)


def test_shares_count_each_word_at_its_likeness_and_joined_spellings_as_one_word() -> None:
    typo = compare_names("Acme Holdngs", ["Acme Holdings"])
    likeness = fuzz.ratio("holdngs", "holdings") / 100
    assert typo.query_share[0] == pytest.approx((4 + 7 * likeness) / 11)
    assert typo.candidate_share[0] == pytest.approx((4 + 8 * likeness) / 12)
    joined = compare_names("MacDonald", ["Mac Donald"])
    assert (joined.query_share[0], joined.candidate_share[0]) == (1.0, 1.0)


def test_an_unfinished_last_word_counts_at_its_credit_only_when_open_ended() -> None:
    closed = compare_names("Ada Lov", ["Ada Lovelace"])
    opened = compare_names("Ada Lov", ["Ada Lovelace"], open_end=True)
    assert closed.query_share[0] < opened.query_share[0] < 1.0
    assert opened.query_share[0] > 0.9


@pytest.mark.parametrize(
    ("query", "open_end"),
    [("software company in Port Aldmere", False), ("software company in Port Ald", True)],
)
def test_a_comparison_of_many_is_each_candidates_alone(query: str, open_end: bool) -> None:
    # Repeated and blank candidates included; the similarity is `string_similarities`'.
    names = ["Port Aldmere", "", "Acme Software Ltd", "Port Aldmere", "Aldgate Port"]
    together = compare_names(query, names, open_end=open_end)
    assert (
        together.similarity.tolist()
        == string_similarities(query, names, open_end=open_end).tolist()
    )
    for i, name in enumerate(names):
        alone = compare_names(query, [name], open_end=open_end)
        assert [part[i] for part in together] == [part[0] for part in alone]
    blank = compare_names("", ["", "x"])
    assert [part.tolist() for part in blank] == [[1.0, 0.0]] * 3


@given(names, names)
@example("software company in Port Aldmere", "Port Aldmere")
@example("MacDonald", "Mac Donald")
@example("Acme Corporation", "Acme Corp")
def test_the_coverages_mirror_each_other_and_are_bounded(a: str, b: str) -> None:
    """How much of `a` the name `b` explains is how much of `a`, as a name, the query `b`
    covers: one comparison read from either side."""
    forward, backward = compare_names(a, [b]), compare_names(b, [a])
    assert forward.query_share[0] == pytest.approx(backward.candidate_share[0])
    assert forward.candidate_share[0] == pytest.approx(backward.query_share[0])
    for share in (forward.query_share[0], forward.candidate_share[0]):
        assert 0.0 <= share <= 1.0 + 1e-12


@pytest.mark.parametrize(
    ("query", "name", "other"),
    [
        ("Saint Petersburg", "St. Petersburg", "Petersburg"),
        ("St Louis", "Saint Louis", "Louisville"),
        ("Mt Vernon", "Mount Vernon", "Vernon Hills"),
        ("Fort Worth", "Ft. Worth", "Worthington"),
        ("Ste Foy", "Sainte-Foy", "Foy"),
        ("Robert Downey Junior", "Robert Downey Jr.", "Robert Downey"),
        ("Acme Intl Holdings", "Acme International Holdings", "Acme Holdings"),
        ("Warner Bros", "Warner Brothers", "Warner Music"),
        ("Acme Mfg Co", "Acme Manufacturing Co", "Acme Mining"),
        ("Dept of Justice", "Department of Justice", "Justice League"),
        ("Natl Assn of Realtors", "National Association of Realtors", "National Realty"),
    ],
)
def test_an_abbreviated_word_is_read_written_out(query: str, name: str, other: str) -> None:
    """`St`, `Mt`, `Intl`, `Mfg` and the other `WORD_ABBREVIATIONS` are read as the word
    written out, on either side; `Saint` is part of a name, not a title dropped from it."""
    assert string_similarity(query, name) > string_similarity(query, other)
    assert string_similarity(query, name) >= 0.85


def test_a_typo_of_the_long_word_meets_its_abbreviation_as_it_meets_it() -> None:
    assert string_similarity("Sainr Louis", "St. Louis") == string_similarity(
        "Sainr Louis", "Saint Louis"
    )
    assert string_similarity("Mont Vernon", "Mt Vernon") > string_similarity(
        "Mont Vernon", "Vernon"
    )
