"""The forms of a text the lexical channel reads, traced back to the text's characters."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.normalization import (
    TracedText,
    ampersand_joined,
    folded_words,
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
