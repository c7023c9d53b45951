"""Blocking keys: the spec's two query keys, per-word keys, and what is never a key."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from redstring.domain.blocking import blocking_keys_for, lookup_keys, query_blocking_keys
from redstring.domain.name_forms import NON_IDENTIFYING
from redstring.domain.normalization import ascii_letters, fold_diacritics, normalize_name


def test_entity_keys() -> None:
    assert blocking_keys_for("Acme Corp", "Organization") == (
        "p:acme",
        "s:A252",
        "w:acme",
        "t:organization",
    )


def test_query_keys_never_carry_the_type_key() -> None:
    assert query_blocking_keys("ACME Corporation") == ("p:acme", "s:A252", "w:acme")
    assert not any(k.startswith("t:") for k in query_blocking_keys("organization"))


def test_no_letters_no_soundex() -> None:
    assert query_blocking_keys("1234 5678") == ("p:1234", "w:1234", "w:5678")
    assert query_blocking_keys("東京") == ("p:東京", "w:東京")


def test_legal_forms_titles_and_stopwords_are_no_word_keys() -> None:
    keys = query_blocking_keys("The Lord of Corporation Inc")
    assert [k for k in keys if k.startswith("w:")] == []


def test_one_word_query_meets_every_name_holding_it() -> None:
    assert "w:lovelace" in blocking_keys_for("Ada Lovelace", "person")
    assert "w:lovelace" in query_blocking_keys("Lovelace")
    assert "w:acme" in query_blocking_keys("acme")


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzé", min_size=2, max_size=8).filter(
    lambda w: normalize_name(w) not in NON_IDENTIFYING
)


@given(st.lists(words, min_size=1, max_size=5), st.integers(min_value=0, max_value=4))
def test_any_identifying_word_of_a_name_is_a_shared_key(name_words: list[str], pick: int) -> None:
    name = " ".join(name_words)
    word = name_words[pick % len(name_words)]
    entity_keys = set(blocking_keys_for(name, "thing"))
    assert set(query_blocking_keys(word)) & entity_keys


@given(st.text(max_size=40))
def test_query_keys_are_entity_keys_minus_type(text: str) -> None:
    entity_keys = blocking_keys_for(text, "thing") if text.strip() else ()
    query_keys = query_blocking_keys(text)
    if text.strip():
        assert set(query_keys) == set(entity_keys) - {"t:thing"}
    assert len(set(query_keys)) == len(query_keys)


@given(st.text(alphabet=st.characters(max_codepoint=127)) | st.text())
def test_ascii_letters_fast_path_keeps_the_folding_rule(text: str) -> None:
    """ASCII names skip diacritic folding; the result is the general rule's all the same."""
    folded = "".join(ch for ch in fold_diacritics(text).lower() if "a" <= ch <= "z")
    assert ascii_letters(text) == folded


def test_normalize_name_remembered_gives_the_same_answer() -> None:
    first = normalize_name("  Café  MÜLLER, Inc. ")
    assert normalize_name("  Café  MÜLLER, Inc. ") == first == "cafe muller inc"


def test_lookup_keys_drop_only_the_type_key() -> None:
    keys = blocking_keys_for("Acme Thing", "thing")
    assert lookup_keys(keys) == tuple(k for k in keys if k != "t:thing")
    assert set(lookup_keys(keys)) == set(query_blocking_keys("Acme Thing"))
