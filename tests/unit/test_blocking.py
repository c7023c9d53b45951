"""Blocking keys: the spec's two query keys, per-word keys, and what is never a key."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.blocking import (
    MAX_KEYED_ALIASES,
    MAX_KEYED_WORD_LENGTH,
    MAX_LOOKUP_KEYS,
    MAX_TYPO_LENGTH,
    blocking_keys_for,
    deletions,
    lone_beginning,
    lookup_keys,
    name_endings,
    name_initials,
    query_blocking_keys,
    query_ends_unfinished,
    query_infixes,
    query_initials,
    query_prefix,
)
from redstring.domain.name_forms import NON_IDENTIFYING
from redstring.domain.normalization import (
    ampersand_joined,
    ampersand_words,
    ascii_letters,
    fold_diacritics,
    fold_latin,
    normalize_name,
    other_forms,
    romanised,
)


def test_entity_keys() -> None:
    assert blocking_keys_for("Acme Corp", "Organization") == (
        "p:acme",
        "s:A252",
        "w:acme",
        "t:organization",
    )
    assert blocking_keys_for("Acme Widgt Corp", "org") == (
        "p:acme",
        "s:A253",
        "w:acme",
        "w:widgt",
        "d:idgt",
        "d:wdgt",
        "d:wigt",
        "d:widt",
        "d:widg",
        "i:aw",
        "t:org",
    )


def test_short_words_get_no_deletion_keys() -> None:
    assert not any(k.startswith("d:") for k in blocking_keys_for("Ada Bo Lima", "person"))
    assert deletions("ada") == ["da", "aa", "ad"]
    assert deletions("sell") == ["ell", "sll", "sel"]


def test_query_keys_never_carry_the_type_key() -> None:
    keys = query_blocking_keys("ACME Widgets Corporation")
    assert {"p:acme", "s:A253", "w:acme", "d:acme", "w:widgets", "w:idgets", "d:idgets"} <= set(
        keys
    )
    assert not any(k.startswith("t:") for k in keys)
    assert not any(k.startswith("t:") for k in query_blocking_keys("organization"))


def test_no_letters_no_soundex() -> None:
    assert query_blocking_keys("1234 56789 ") == ("p:1234", "w:1234", "d:1234", "w:56789",
        "d:56789", "w:6789", "w:5789", "w:5689", "w:5679", "w:5678", "d:6789", "d:5789",
        "d:5689", "d:5679", "d:5678")  # fmt: skip
    assert query_blocking_keys("東京 ") == ("p:東京", "w:東京", "i:東京")  # letters of any script
    assert "w:東京" not in query_blocking_keys("東京")  # its prefix seek reads that block


def test_legal_forms_titles_and_stopwords_are_no_word_keys() -> None:
    keys = query_blocking_keys("The Lord of Corporation Inc")
    assert [k for k in keys if k.startswith("w:")] == []


def test_one_word_query_meets_every_name_holding_it() -> None:
    assert "w:lovelace" in blocking_keys_for("Ada Lovelace", "person")
    assert "w:lovelace" in query_blocking_keys("Lovelace ")
    assert query_prefix("Lovelace") == "w:lovelace"  # sought, block first
    assert "w:acme" in query_blocking_keys("acme ")


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzé", min_size=2, max_size=8).filter(
    lambda w: normalize_name(w) not in NON_IDENTIFYING
)


@given(st.lists(words, min_size=1, max_size=5), st.integers(min_value=0, max_value=4))
def test_any_identifying_word_of_a_name_is_a_shared_key(name_words: list[str], pick: int) -> None:
    name = " ".join(name_words)
    word = name_words[pick % len(name_words)]
    entity_keys = set(blocking_keys_for(name, "thing"))
    assert set(query_blocking_keys(word + " ")) & entity_keys


@given(st.text(max_size=40))
@example("アハート")  # a kana word of three characters or more: `x:` endings of its own
@example("腾讯控股有限公司")
def test_query_keys_hold_the_entity_keys_of_the_same_text(text: str) -> None:
    """A query asks for every lookup key of its own text (the word sought by prefix
    through the seek, whose range starts with that word's key), but the initials key
    (a query is read as initials only when it is one word) and the endings of its Han
    or kana words (`x:`), which are there for a query of the ending alone: each is
    sought by that query's infix seek, whose range starts with it."""
    query_keys = query_blocking_keys(text)
    assert len(set(query_keys)) == len(query_keys)
    assert not any(k.startswith("t:") for k in query_keys)
    if text.strip():
        prefix = query_prefix(text)
        asked = {*query_keys, *([] if prefix is None else [prefix])}
        own = set(lookup_keys(blocking_keys_for(text, "thing")))
        assert {k for k in own if k[:2] not in ("i:", "x:")} <= asked
        for ending in (k for k in own if k.startswith("x:")):
            assert any(ending.startswith(seek) for seek in query_infixes(ending[2:]))


def test_a_name_of_two_to_six_words_is_keyed_under_its_initials() -> None:
    keys = blocking_keys_for("Alder & Birchwood Foods Ltd", "org")
    assert [k for k in keys if k.startswith("i:")] == ["i:abf"]  # `&` and the legal form out
    assert name_initials("The Bank of Northern Lights") == "bnl"  # stopwords out
    assert name_initials("Ada Lovelace") == "al"
    assert name_initials("Lovelace Corp") is None  # one identifying word
    assert name_initials("Bo Cy Di Ed Fa Gu Hi") is None  # seven
    assert name_initials("Route 66 Diner") is None  # a word begins with a digit
    assert name_initials("Ödön Ügyes") == "ou"
    keys = blocking_keys_for("Zephyr", "org", ["Big Blue", "IBM"])
    assert [k for k in keys if k.startswith("i:")] == ["i:bb"]  # an alias's too


def test_a_query_of_one_short_word_or_single_letters_asks_for_initials() -> None:
    assert query_initials("ABF") == "abf"
    assert query_initials("a.b.f.") == query_initials("A B F") == "abf"
    assert query_initials("ab") == "ab"  # a legal form is read as initials too
    assert query_initials("abcdef") == "abcdef"
    for text in ("a", "abcdefg", "Alder Birchwood", "A Bf", "A1", "3M", "", "..."):
        assert query_initials(text) is None, text
    assert "i:abf" in query_blocking_keys("ABF")
    assert not any(k.startswith("i:") for k in query_blocking_keys("Alder Birchwood"))


initials_words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzé", min_size=2, max_size=8).filter(
    lambda w: normalize_name(w) not in NON_IDENTIFYING and w.isalpha()
)


@given(st.lists(initials_words, min_size=2, max_size=6))
def test_the_initials_of_a_name_share_its_initials_key(name_words: list[str]) -> None:
    name = " ".join(name_words)
    typed = "".join(normalize_name(w)[0] for w in name_words).upper()
    assert "i:" + typed.lower() in set(query_blocking_keys(typed)) & set(
        blocking_keys_for(name, "thing")
    )


EDITS = ("delete", "insert", "replace", "swap")


def one_edit(word: str, edit: str, at: int, letter: str) -> str:
    at %= len(word)
    if edit == "delete":
        return word[:at] + word[at + 1 :]
    if edit == "insert":
        return word[:at] + letter + word[at:]
    if edit == "replace":
        return word[:at] + letter + word[at + 1 :]
    at = min(at, len(word) - 2)
    return word[:at] + word[at + 1] + word[at] + word[at + 2 :]


typo_words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=5, max_size=10).filter(
    lambda w: w not in NON_IDENTIFYING
)


@given(
    st.lists(typo_words, min_size=1, max_size=3),
    st.integers(0, 2),
    st.sampled_from(EDITS),
    st.integers(0, 20),
    st.sampled_from("abcdefghijklmnopqrstuvwxyz"),
)
def test_a_word_one_edit_away_shares_a_word_key(
    name_words: list[str], pick: int, edit: str, at: int, letter: str
) -> None:
    """One letter deleted, inserted, replaced or two swapped in any word of a name:
    the query still shares a `w:` or `d:` key with the name."""
    word = name_words[pick % len(name_words)]
    typo = one_edit(word, edit, at, letter)
    if typo in NON_IDENTIFYING:
        return
    entity_keys = {k for k in blocking_keys_for(" ".join(name_words), "thing") if k[:2] in "w:d:"}
    assert entity_keys & set(query_blocking_keys(typo + " "))


def test_a_query_may_end_unfinished_in_one_or_two_letters_after_other_words() -> None:
    # As `query_prefix` reads it, and for its score a word too short to be sought.
    assert query_ends_unfinished("Ada Lov")
    assert query_ends_unfinished("Acme Torque W")
    assert query_ends_unfinished("Acme Torque Wr")
    assert not query_ends_unfinished("Acme Torque W ")  # a space after it: finished
    assert not query_ends_unfinished("Acme Torque W.")
    assert not query_ends_unfinished("Acme Co")  # a legal form: the last scored word is Acme
    assert query_ends_unfinished("ac")  # alone: `lone_beginning`
    assert not query_ends_unfinished("")


def test_query_prefix_is_the_last_word_when_unfinished() -> None:
    assert query_prefix("Ada Lov") == "w:lov"
    assert query_prefix("Ada Lovelace") == "w:lovelace"
    assert query_prefix("Ada Lov ") is None  # a space after it: finished
    assert query_prefix("Ada Lov.") is None
    assert query_prefix("Ada Lo") is None  # shorter than MIN_PREFIX_LENGTH
    assert query_prefix("Acme Corp") is None  # not an identifying word
    # A query of no identifying word is scored by its words as they are: its last one
    # may be unfinished, though a title, a stopword or a legal form when finished.
    assert query_prefix("King") == "w:king"  # Kingsreach
    assert query_prefix("The") == "w:the"  # Thermo Fisher
    assert query_prefix("The Spa") == "w:spa"  # The Sparrow
    assert query_prefix("Dunmore Spa") is None  # Dunmore is scored, not Spa
    assert query_prefix("Café") == "w:cafe"
    # Names of Han or kana are unspaced: two characters are a prefix.
    assert query_prefix("腾讯") == "w:腾讯"
    assert query_prefix("トヨ") == "w:トヨ"
    assert query_prefix("腾 Ab") is None  # a word too short, after another
    assert query_prefix("삼") == "w:" + normalize_name("삼")  # a syllable is 3 jamo
    # A query of one word alone, a search box's first letters, is sought from one.
    assert query_prefix("ab") == "w:ab"
    assert query_prefix("A") == "w:a"
    assert query_prefix("腾") == "w:腾"
    assert query_prefix("ab ") is None
    assert query_prefix("A.") is None
    # A word typed up to a vowel sign (a combining mark) is unfinished too.
    assert query_prefix("दुनि") == "w:दुनि"
    assert query_prefix("") is None
    assert "w:lov" not in query_blocking_keys("Ada Lov")  # the seek reads that block
    assert "w:lov" in query_blocking_keys("Ada Lov ")


@given(st.text(alphabet=st.characters(max_codepoint=127)) | st.text())
def test_ascii_letters_fast_path_keeps_the_folding_rule(text: str) -> None:
    """ASCII names skip folding; the result is the general rule's all the same."""
    folded = "".join(ch for ch in fold_latin(text).lower() if "a" <= ch <= "z")
    assert ascii_letters(text) == folded


def test_latin_letters_without_a_decomposition_are_folded_to_ascii() -> None:
    """NFKD leaves `ł`, `ø`, `æ`, `ı`, `þ`, `đ` whole; names are compared without them,
    as a keyboard without them types the name."""
    assert normalize_name("Łódź") == "lodz"
    assert normalize_name("Sønderborg Æblegård") == "sonderborg aeblegard"
    assert normalize_name("Naxçıvan") == "naxcivan"
    assert normalize_name("Þórshöfn") == "thorshofn"
    assert normalize_name("Đà Nẵng") == "da nang"
    assert normalize_name("Straße") == "strasse"
    # Other scripts keep their letters; only Latin ones are written in ASCII.
    assert normalize_name("Газпром 東京") == "газпром 東京"
    assert fold_diacritics("Łódź") == "Łodz"  # what the id form keeps


def test_a_name_typed_without_its_special_letters_shares_its_keys() -> None:
    for name, typed in [("Łódź Kaliska", "Lodz"), ("Næstved", "Naestved"), ("Køge", "Koge")]:
        keys = blocking_keys_for(name, "city")
        assert set(query_blocking_keys(typed + " ")) & set(keys)
        prefix = query_prefix(typed)
        assert prefix is not None
        assert any(key.startswith(prefix) for key in keys)


def test_normalize_name_remembered_gives_the_same_answer() -> None:
    first = normalize_name("  Café  MÜLLER, Inc. ")
    assert normalize_name("  Café  MÜLLER, Inc. ") == first == "cafe muller inc"


def test_lookup_keys_drop_only_the_type_key() -> None:
    keys = blocking_keys_for("Acme Thing", "thing")
    assert lookup_keys(keys) == tuple(k for k in keys if k != "t:thing")
    assert "i:at" in lookup_keys(keys)  # asked by `AT`, not by the name
    assert set(lookup_keys(keys)) - {"i:at"} <= set(query_blocking_keys("Acme Thing "))


def test_an_entity_is_keyed_under_each_alias_as_under_its_name() -> None:
    keys = blocking_keys_for("International Business Machines", "org", ["IBM", "Big Blue"])
    named = blocking_keys_for("International Business Machines", "org")
    assert set(named) < set(keys)
    for alias in ("IBM", "Big Blue"):
        assert set(blocking_keys_for(alias, "org")) <= set(keys)
    assert keys[-1] == "t:org"  # the type key once, last
    assert len(keys) == len(set(keys))


def test_aliases_past_the_keyed_count_add_no_keys() -> None:
    aliases = [f"Alias{chr(ord('a') + i)}q" for i in range(MAX_KEYED_ALIASES + 1)]
    keys = blocking_keys_for("Zephyr", "org", aliases)
    assert f"w:{aliases[MAX_KEYED_ALIASES - 1].lower()}" in keys
    assert f"w:{aliases[MAX_KEYED_ALIASES].lower()}" not in keys


def test_an_entity_has_at_most_its_share_of_lookup_keys_its_name_s_first() -> None:
    """Ten aliases of long words would make thousands of keys, each a write on Neo4j."""
    words = ["".join(chr(ord("a") + (i * 7 + j) % 26) for j in range(30)) for i in range(15)]
    name = "Zephyr Holdings"
    aliases = [" ".join(words[i:] + words[:i]) for i in range(MAX_KEYED_ALIASES)]
    keys = blocking_keys_for(name, "org", aliases)
    assert len(lookup_keys(keys)) == MAX_LOOKUP_KEYS
    assert keys[-1] == "t:org"
    assert set(blocking_keys_for(name, "org")) <= set(keys)
    assert keys[:MAX_LOOKUP_KEYS] == blocking_keys_for(name, "org", aliases[:1])[:MAX_LOOKUP_KEYS]


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ("AT&T Inc.", "ATT Inc."),
        ("S&P Global", "SP Global"),
        ("H&M", "HM"),
        ("A&B&C Ltd", "ABC Ltd"),
        ("at&t's stores", "att's stores"),
        ("Łó&Ø", "ŁóØ"),
        ("AT & T Inc.", "ATT Inc."),
        ("S &P", "SP"),
        ("R &  D\tand Q", "RD\tand Q"),  # joined by `&` or by `and`, not both
        ("AT and T", "ATT"),
        ("B AND Q Stores", "BQ Stores"),
        ("Procter and Gamble", None),
        ("Land and Sea", None),
        ("Procter & Gamble", None),  # two names
        ("A & Procter", None),
        ("Johnson&Johnson", None),  # words, not letters
        ("AT&T2", None),
        ("B2&B", None),
        ("&T", None),
        ("AT&", None),
        ("Acme", None),
    ],
)
def test_letters_joined_by_an_ampersand_or_and_are_one_word(text: str, joined: str | None) -> None:
    assert ampersand_joined(text) == joined


def test_ampersand_words_are_normalised_whatever_they_spell() -> None:
    assert ampersand_words("AT&T and M&S") == ["att", "ms"]
    assert ampersand_words("Procter & Gamble") == []
    assert ampersand_words("at & t") == ["att"]


def test_a_name_with_letters_joined_by_an_ampersand_is_keyed_joined_too() -> None:
    keys = blocking_keys_for("AT&T Inc.", "org")
    assert {"w:att", "p:att i", "p:at t"} <= set(keys)
    assert "w:ms" in blocking_keys_for("M&S", "org")  # `ms` alone is a title
    assert "w:sp" in blocking_keys_for("Acme", "org", ["S&P"])  # aliases too
    spaced = blocking_keys_for("Procter & Gamble", "org")
    assert spaced == blocking_keys_for("Procter Gamble", "org")


def test_a_lone_beginning_is_a_query_of_one_word_too_short_to_begin_a_word_otherwise() -> None:
    assert lone_beginning("a") == "a"
    assert lone_beginning("Ac") == "ac"
    assert lone_beginning("É") == "e"
    assert lone_beginning("腾") == "腾"
    assert lone_beginning("S&P") == "sp"
    for query in ("acm", "腾讯", "ac ", "ac.", "Ada Lo", "Lo Ada", "", "?"):
        assert lone_beginning(query) is None, query


def test_a_query_with_letters_joined_by_an_ampersand_asks_for_the_joined_keys() -> None:
    assert query_prefix("AT&T") == "w:att"  # sought as the unfinished word
    assert "p:att" in query_blocking_keys("AT&T")
    assert "p:sp" in query_blocking_keys("S&P")
    assert query_prefix("S&P") == "w:sp"  # two letters alone: sought, its block first
    assert "w:sp" in query_blocking_keys("S&P ")
    assert query_blocking_keys("Procter & Gamble") == query_blocking_keys("Procter Gamble")
    assert query_prefix("AT & T") == "w:att"
    for query in ("ATT", "AT&T", "at&t", "AT & T"):
        assert set(lookup_keys(blocking_keys_for("AT&T Inc.", "org"))) & {
            *query_blocking_keys(query),
            query_prefix(query),
        }


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("Газпром", "Gazprom"),
        ("Αθήνα", "Athina"),
        ("Երևան", "Erevan"),
        ("თბილისი", "tbilisi"),
        ("서울", "SeoUl"),
        ("ПАО Газпром 2", "PAO Gazprom 2"),
        ("Łódź Москва", "Łódź Moskva"),  # Latin stays for normalize_name to fold
        ("東京 Москва", "東京 Moskva"),  # Han is not romanised: readings differ by language
        ("القاهرة", None),  # nor a script without its vowels
        ("Acme", None),
        ("Łódź", None),
    ],
)
def test_some_scripts_are_also_read_in_latin_letters(text: str, written: str | None) -> None:
    assert romanised(text) == written


def test_other_forms_are_each_form_that_differs() -> None:
    assert other_forms("Acme") == ()
    assert other_forms("AT&T") == ("ATT",)
    assert other_forms("Б&Г Газ") == ("БГ Газ", "B&G Gaz")


def test_a_name_in_another_script_is_keyed_in_latin_letters_too() -> None:
    keys = set(blocking_keys_for("Газпром", "org"))
    assert {"w:газпром", "w:gazprom", "p:gazpr", "d:gazpro"} <= keys
    assert {"w:athina", "w:moskva"} <= set(blocking_keys_for("Acme", "org", ["Αθήνα", "Москва"]))
    for query in ("Gazprom", "gazprom", "Gazpron", "Газпром", "Газпрон"):
        assert set(query_blocking_keys(query)) & keys, query
    # Either way: a query in the other script finds a name in Latin letters.
    assert "w:gazprom" in query_blocking_keys("Газпром")


@given(
    st.lists(
        st.text(st.characters(categories=["Lu", "Ll", "Lo"]), min_size=1, max_size=3000),
        min_size=1,
        max_size=3,
    )
)
def test_keys_stay_short_and_few_however_long_the_words(words: list[str]) -> None:
    """A key must fit an index entry (Neo4j's range index: about 8 KB); a word of n
    letters would have n deletion keys of n - 1 letters."""
    name = " ".join(words)
    for keys in (blocking_keys_for(name, "org"), query_blocking_keys(name)):
        assert all(len(key.encode()) <= 2 + 4 * MAX_KEYED_WORD_LENGTH for key in keys)
        # At most MAX_TYPO_LENGTH deletions a word, of at most three words in two forms.
        assert len(keys) <= 3 * 2 * (2 * MAX_TYPO_LENGTH + 2) + 6


def test_a_word_too_long_to_type_gets_no_key_and_a_long_one_no_typo_keys() -> None:
    keys = blocking_keys_for("z" * 9000 + " Acme", "org")
    assert "w:acme" in keys
    assert not any("zzz" in key for key in keys if not key.startswith("p:"))
    long_word = "donaudampfschifffahrtsgesellschaftskapitaen"  # 43 letters
    keys = blocking_keys_for(long_word, "org")
    assert f"w:{long_word}" in keys
    assert not any(key.startswith("d:") for key in keys)
    assert query_prefix("Acme " + "z" * 101) is None


def test_a_word_written_with_vowel_signs_is_keyed_whole() -> None:
    """`दुनिया` (Devanagari vowel signs) is a word of its own, keyed and sought whole,
    not the single consonants `द न य`."""
    keys = set(blocking_keys_for("दुनिया बैंक", "company"))
    assert {"w:दुनिया", "w:बैंक"} <= keys
    assert "w:द" not in keys
    assert keys & set(query_blocking_keys("दुनिया "))


def test_han_and_kana_words_are_keyed_by_their_endings_and_sought_inside() -> None:
    """Such names are unspaced, so a word a reader sees may stand inside one: each of
    its endings from its second character, of two characters or more, is an `x:` key,
    and a query's Han or kana words are sought as their beginnings."""
    keys = blocking_keys_for("腾讯控股有限公司", "org")
    endings = ["讯控股有限公司", "控股有限公司", "股有限公司", "有限公司", "限公司", "公司"]
    assert [k for k in keys if k.startswith("x:")] == ["x:" + e for e in endings]
    assert name_endings("株式会社ソニー")[-2:] == ["ソニー", "ニー"]
    assert name_endings("腾讯控") == ["讯控"]
    assert name_endings("腾讯") == name_endings("Acmeson") == name_endings("삼성전자") == []
    assert len(name_endings("腾" * 40)) == 16  # MAX_KEYED_ENDINGS
    assert not [k for k in blocking_keys_for("Acme Corp", "org") if k.startswith("x:")]
    # An alias's words are keyed alike.
    assert "x:ソニー" in blocking_keys_for("Sony", "org", aliases=["株式会社ソニー"])
    assert query_infixes("控股") == ("x:控股",)
    assert query_infixes("Acme 控股 平安 控股") == ("x:控股", "x:平安")
    assert query_infixes("腾") == query_infixes("acme") == query_infixes("") == ()
    assert query_infixes("一二 三四 五六 七八 九十") == ("x:一二", "x:三四", "x:五六", "x:七八")
