"""The forms of a text the lexical channel reads, traced back to the text's characters."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from redstring import Redstring
from redstring.adapters.embeddings import StaticEmbeddingProvider
from redstring.adapters.embeddings.hashing import HashingEmbeddingProvider
from redstring.domain.normalization import (
    _PLANES_WITH_MARKS,
    TracedText,
    _words_of_any_script,
    ampersand_joined,
    folded_words,
    id_form,
    is_word_character,
    normalize_for_vectors,
    normalize_name,
    other_forms,
    romanised,
    traced_forms,
)

# Any text, whatever it holds: every script, marks, ligatures, emoji.
texts = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40)


def test_a_joined_form_is_traced_to_the_letters_it_keeps() -> None:
    assert ampersand_joined("Shop at H & M and AT&T") == "Shop at HM and ATT"
    [_, joined] = traced_forms("Shop at H & M and AT&T")
    assert joined == TracedText("Shop at HM and ATT", (*range(9), *range(12, 20), 21))
    [_, romanised] = traced_forms("Щука")
    assert romanised == TracedText("Shchuka", (0, 0, 0, 0, 1, 2, 3))


def test_a_folded_word_is_traced_to_the_characters_it_folds_from() -> None:
    [form] = traced_forms("Straße Cafe\u0301")
    assert [(w.text, w.origins) for w in folded_words(form)] == [
        ("strasse", (0, 1, 2, 3, 4, 4, 5)),
        ("cafe", (7, 8, 9, 10)),
    ]


@given(texts)
@example("AT&T and M&S")
@example("Shop at H & M and AT&T")
@example("Щука & Straße ﬁsh Cafe\u0301 ½ A㈱B İstanbul")
def test_traced_forms_are_the_forms_the_score_reads(text: str) -> None:
    """Folded a character at a time and traced back, each form's words are the words
    `normalize_name` reads in it, and come from the text's characters in order."""
    forms = traced_forms(text)
    assert [form.text for form in forms] == [text, *other_forms(text)]
    for form in forms:
        words = folded_words(form)
        assert " ".join(word.text for word in words) == normalize_name(form.text)
        origins = [origin for word in words for origin in word.origins]
        assert origins == sorted(origins)
        assert all(0 <= origin < len(text) for origin in origins)
        for word in words:
            assert len(word.origins) == len(word.text)
            for letter, origin in zip(word.text, word.origins, strict=True):
                # Each letter is one of those its character folds to, romanised or not.
                source = text[origin]
                assert letter in normalize_name(romanised(source) or source) + normalize_name(
                    source
                )


@pytest.mark.parametrize(
    ("name", "normalised"),
    [
        ("दुनिया बैंक", "दुनिया बैंक"),  # Devanagari vowel signs (spacing and not)
        ("Банк दुनिया", "банк दुनिया"),
        ("சென்னை", "செனனை"),  # Tamil: the virama (class 9) folds away, as an accent does
        ("สวัสดี", "สวัสดี"),  # Thai vowels above the letter, of combining class 0
        ("ক্ষমতা", "কষমতা"),  # the virama (class 9) folds away, as an accent does
    ],
)
def test_a_word_written_with_vowel_signs_is_one_word(name: str, normalised: str) -> None:
    """A combining mark belongs to its word: `re`'s `\\w` takes none, which cut
    `दुनिया` into `द न य`, single consonants that blocking keys and the score read."""
    assert normalize_name(name) == normalised
    assert " " not in normalize_name(name.split()[-1])
    [form, *_] = traced_forms(name)
    assert [word.text for word in folded_words(form)] == normalize_name(name).split()


def test_the_id_form_reads_words_as_it_always_has() -> None:
    """Ids derived from `id_form` are stored: it still cuts at marks, as when they were
    derived."""
    assert id_form("दुनिया बैंक") == "द न य ब क"
    assert id_form("Café  Ñandú") == "cafe nandu"


def test_every_combining_mark_is_in_a_plane_the_word_pattern_holds() -> None:
    planes = set()
    for code in range(sys.maxunicode + 1):
        if unicodedata.category(chr(code)).startswith("M"):
            planes.add(code >> 16)
            assert is_word_character(chr(code))
    held = {code >> 16 for plane in _PLANES_WITH_MARKS for code in (plane[0], plane[-1])}
    assert planes <= held, planes - held


@given(texts)
def test_a_normalised_word_holds_only_word_characters(text: str) -> None:
    for word in normalize_name(text).split():
        assert all(is_word_character(ch) for ch in word), word


async def test_the_vectors_of_a_text_with_marks_are_what_they_were() -> None:
    """The `static` and `hashing` providers read words as before marks were kept in them
    (`normalize_for_vectors`): their stored vectors stay the ones queries meet."""
    hashing = HashingEmbeddingProvider(64)
    static = StaticEmbeddingProvider()
    for provider in (hashing, static):
        [kept, cut] = await provider.embed_documents(["दुनिया बैंक", "द न य ब क"])
        assert kept == cut
    assert normalize_for_vectors("दुनिया बैंक") == id_form("दुनिया बैंक") == "द न य ब क"


async def test_a_warmed_up_client_has_built_what_text_of_any_script_needs() -> None:
    """`Redstring.warm_up` (a server's, once started) builds the pattern that the first
    name or query beyond Latin letters would otherwise build on a request's time."""
    _words_of_any_script.cache_clear()
    async with Redstring.in_memory(embeddings=HashingEmbeddingProvider(16)) as client:
        await client.warm_up()
    assert _words_of_any_script.cache_info().currsize == 1
