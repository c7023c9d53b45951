"""string_similarity: the contract's examples and its properties."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from redstring.domain.normalization import normalize_name
from redstring.domain.similarity import string_similarities, string_similarity


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
