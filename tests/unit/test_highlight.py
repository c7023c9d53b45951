"""`highlight_ranges`: where a query matched a text, word by word, mapped back through the
normalisation to the text's own characters; and the traced forms it reads."""

from __future__ import annotations

import itertools
import unicodedata
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from rapidfuzz import fuzz

from redstring import TextRange, highlight_ranges
from redstring.domain import highlight
from redstring.domain.blocking import name_initials, query_initials
from redstring.domain.errors import InvalidInputError
from redstring.domain.highlight import MAX_COMPARED_PAIRS, _spelled, _Words
from redstring.domain.name_forms import ABBREVIATIONS
from redstring.domain.normalization import (
    FoldedWord,
    ampersand_joined,
    folded_words,
    name_tokens,
    normalize_name,
    traced_forms,
)
from redstring.domain.text import MAX_NAME_LENGTH


def marked(query: str, text: str) -> str:
    """`text` with each range `highlight_ranges` gives in brackets."""
    shown, last = "", 0
    for start, end in highlight_ranges(query, text):
        shown += f"{text[last:start]}[{text[start:end]}]"
        last = end
    return shown + text[last:]


@pytest.mark.parametrize(
    ("query", "text", "expected"),
    [
        # A query word that begins a text word marks that beginning, mapped back through
        # folding: case, accents, Latin letters written in ASCII.
        ("acme", "Acme Corporation", "[Acme] Corporation"),
        ("fjall", "Fjällräven", "[Fjäll]räven"),
        ("Lodz", "Łódź", "[Łódź]"),
        ("nae", "Næstved", "[Næ]stved"),
        ("Ada Lov", "Ada Lovelace", "[Ada] [Lov]elace"),
        ("Acme", "acme ACME AcMe", "[acme] [ACME] [AcMe]"),
        # Folding changes lengths: `ß` is `ss`, `ﬁ` is `fi`, a combining accent is
        # nothing. A character is marked whole when any letter it folds to matched, and
        # the marks that follow a marked character go with it.
        ("stras", "Straße", "[Straß]e"),
        ("strass", "Straße", "[Straß]e"),
        ("strasse", "Straße", "[Straße]"),
        ("f", "ﬁsh", "[ﬁ]sh"),
        ("fish", "ﬁsh market", "[ﬁsh] market"),
        ("caf", "Cafe\u0301", "[Caf]e\u0301"),
        ("cafe", "Cafe\u0301s", "[Cafe\u0301]s"),
        # A text word read as the query word: an abbreviation written out or not, a word
        # that begins the query word, a one-edit typo (not a word the query word begins).
        ("ACME Corporation", "Acme Corp", "[Acme] [Corp]"),
        ("St Petersburg", "Saint Petersburg", "[Saint] [Petersburg]"),
        ("Saint Petersburg", "St. Petersburg", "[St]. [Petersburg]"),
        ("international", "Intl Paper", "[Intl] Paper"),
        ("acmeson", "Acme", "[Acme]"),
        ("thermo", "The Thermo Company", "The [Thermo] Company"),
        ("Holdngs", "Acme Holdings", "Acme [Holdings]"),
        ("acme", "Acmes", "[Acme]s"),
        # The unfinished last word one edit from a beginning.
        ("glasw", "Glasswing Software", "[Glassw]ing Software"),
        ("glasw ", "Glasswing Software", "Glasswing Software"),
        ("acme bank", "Acme Bandwidth", "[Acme] Bandwidth"),  # `bank`: too short for it
        # Words spelled together: a query word over several text words, several query
        # words over one text word.
        ("cocacola", "Coca-Cola", "[Coca-Cola]"),
        ("cocac", "Coca-Cola Company", "[Coca-C]ola Company"),
        ("obrien", "O'Brien", "[O'Brien]"),
        ("o'brien", "O'Brien", "[O]'[Brien]"),
        ("mac donald", "MacDonald", "[MacDonald]"),
        ("mac don", "MacDonald's", "[MacDon]ald's"),
        # `&` groups read joined, either side.
        ("att", "AT&T Inc.", "[AT&T] Inc."),
        ("AT&T", "AT and T", "[AT and T]"),
        ("AT&T", "AT&T Telecom", "[AT&T] Telecom"),
        # Other scripts romanised, either side.
        ("Gazprom", "Газпром", "[Газпром]"),
        ("gazp", "Газпром нефть", "[Газп]ром нефть"),
        ("газп", "Gazprom Neft", "[Gazp]rom Neft"),
        ("東", "東京", "[東]京"),
        # Initials: the first letter of each identifying word.
        ("ABF", "Alder & Birchwood Foods Ltd", "[A]lder & [B]irchwood [F]oods Ltd"),
        # Nothing to point at.
        ("xyz", "Acme Corp", "Acme Corp"),
        ("Acme Corp", "Acme Co", "[Acme] Co"),
        ("Athina", "Athens", "Athens"),
        # Words of six letters or more as alike as the score counts a match (an Indel
        # ratio of 0.7) are marked whole, two or three edits apart; shorter ones not.
        ("Minitonka", "Minnetonka", "[Minnetonka]"),
        ("Baniyachong", "Baniachang Bazar", "[Baniachang] Bazar"),
        ("bread", "Beard", "Beard"),
        # A query that is the text's initials marks them alone, not the beginning it also
        # is of the first word; a text it is not the initials of, as a beginning.
        ("GE", "General Electric", "[G]eneral [E]lectric"),
        ("ac", "Ac Cement", "[Ac] [C]ement"),  # a word it is whole stays marked
        ("abf", "Alder & Birchwood Foods Ltd", "[A]lder & [B]irchwood [F]oods Ltd"),
        ("ge", "Gerald Ford", "[Ge]rald Ford"),
        # Han and kana names are unspaced: a query word inside a word marks its part,
        # each time it stands there; a word inside the query word is marked whole. One
        # character alone is no word inside another.
        ("控股", "腾讯控股有限公司", "腾讯[控股]有限公司"),
        ("ソニー", "株式会社ソニー", "株式会社[ソニー]"),
        ("有限", "有限有限公司", "[有限有限]公司"),
        ("中国平安保险", "平安 (集团)", "[平安] (集团)"),
        ("控", "腾讯控股", "腾讯控股"),
        ("cme", "Acme", "Acme"),
    ],
)
def test_marks(query: str, text: str, expected: str) -> None:
    assert marked(query, text) == expected


def test_an_empty_query_or_text_marks_nothing() -> None:
    assert highlight_ranges("", "Acme") == []
    assert highlight_ranges("...", "Acme") == []
    assert highlight_ranges("acme", "") == []


def test_a_match_without_matched_text_marks_nothing() -> None:
    """README's `highlight_ranges(result.query, match.matched_text)` over every match: a
    match only the semantic channel ranked has no `matched_text`."""
    assert highlight_ranges("acme", None) == []


@pytest.mark.parametrize(
    ("query", "text", "said"),
    [
        (5, "Acme", "query must be a string, got int"),
        (None, "Acme", "query must be a string, got NoneType"),
        ("acme", b"Acme", "text must be a string or None, got bytes"),
    ],
)
def test_a_query_or_text_of_another_type_is_invalid_input(query: Any, text: Any, said: str) -> None:
    with pytest.raises(InvalidInputError, match=f"^{said}$"):
        highlight_ranges(query, text)


def test_only_what_the_score_reads_is_marked() -> None:
    text = "x " * (MAX_NAME_LENGTH // 2) + "Acme"
    assert highlight_ranges("acme", text) == []
    assert highlight_ranges("x", text)[-1].end <= MAX_NAME_LENGTH


def test_utf16_offsets_count_a_character_outside_the_bmp_twice() -> None:
    text = "😀 Acme \U0001d538cme"  # MATHEMATICAL DOUBLE-STRUCK CAPITAL A: it folds to A
    [acme, other] = highlight_ranges("acme", text)
    assert (acme, other) == (TextRange(2, 6), TextRange(7, 11))
    assert acme.in_utf16(text) == TextRange(3, 7)
    assert other.in_utf16(text) == TextRange(8, 13)


# Any text, whatever it holds: every script, marks, ligatures, emoji.
texts = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40)


def _check_shape(text: str, ranges: list[TextRange]) -> None:
    read = min(len(text), MAX_NAME_LENGTH)
    for first, second in itertools.pairwise(ranges):
        assert first.end < second.start  # sorted, apart: neither overlapping nor touching
    for start, end in ranges:
        assert 0 <= start < end <= read


@given(texts, texts)
@example("acme", "Acme Corp")
@example("stras", "Straße")
@example("a", "A\u0301\u0301 a")
def test_ranges_lie_within_the_text_sorted_and_apart(query: str, text: str) -> None:
    ranges = highlight_ranges(query, text)
    _check_shape(text, ranges)
    for part in ranges:
        start, end = part.in_utf16(text)
        units = text.encode("utf-16-le", "surrogatepass")
        assert (
            units[2 * start : 2 * end].decode("utf-16-le", "surrogatepass")
            == text[part.start : part.end]
        )


# ASCII names: words of a few letters (a small alphabet, so that words meet), apart
# by spaces and punctuation.
ascii_words = st.text("abcdeor", min_size=1, max_size=7)
separators = st.sampled_from([" ", " ", "-", ". ", "'", " & ", ", "])


@st.composite
def ascii_names(draw: st.DrawFn) -> str:
    words = draw(st.lists(ascii_words, min_size=1, max_size=6))
    cased = [w.upper() if draw(st.booleans()) else w.capitalize() for w in words]
    return "".join(w + draw(separators) for w in cased[:-1]) + cased[-1]


def _query_words(query: str) -> list[list[str]]:
    joined = ampersand_joined(query)
    return [name_tokens(query), *([name_tokens(joined)] if joined else [])]


def _one_edit(a: str, b: str) -> bool:
    """Whether `b` is `a` with one letter deleted, inserted, replaced, or two swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    if len(a) < len(b):
        return any(b[:i] + b[i + 1 :] == a for i in range(len(b)))
    differ = [i for i in range(len(a)) if a[i] != b[i]]
    return len(differ) == 1 or (
        len(differ) == 2 and differ[1] == differ[0] + 1 and a[differ[0]] == b[differ[1]]
    )


def _explained(piece: str, whole: str, first: bool, query: str) -> bool:
    """Whether a marked `piece` of the word `whole` (folded) is what the query matched:
    letters the query typed, its words written together; or the whole word, which a
    query word reads as (an abbreviation, a typo, a word it begins) or which begins with
    a mistyped last query word; or the first letter of the word, the query being
    initials."""
    forms = _query_words(query)
    if any(piece in "".join(words) for words in forms):
        return True
    query_words = [w for words in forms for w in words]
    if piece == whole and any(
        ABBREVIATIONS.get(w, w) == ABBREVIATIONS.get(whole, whole)
        or _one_edit(w, whole)
        or (min(len(w), len(whole)) >= 6 and fuzz.ratio(w, whole) >= 70)
        or w.startswith(whole)
        for w in query_words
    ):
        return True
    if query_words and _one_edit(query_words[-1], piece):
        return True
    initials = query_initials(query)
    return first and len(piece) == 1 and initials is not None and piece in initials


@given(ascii_names(), st.one_of(ascii_names(), ascii_words))
@example("Acme Corp", "ACME Corporation")
@example("Coca-Cola Co", "cocac")
@example("AT & T Tel", "att")
@example("Abc Dec Eb", "ade")
def test_an_ascii_text_is_marked_where_the_query_matched(text: str, query: str) -> None:
    """Each word a range touches is marked from its beginning, and what is marked of it
    folds to what the query matched."""
    ranges = highlight_ranges(query, text)
    _check_shape(text, ranges)
    [form] = traced_forms(text)[:1]
    for word in folded_words(form):
        start, end = word.origins[0], word.origins[-1] + 1
        covering = [r for r in ranges if r.start < end and start < r.end]
        if not covering:
            continue
        [part] = covering
        assert part.start <= start  # from the word's beginning
        piece = normalize_name(text[start : min(end, part.end)])
        assert _explained(piece, word.text, part.start == start, query), (piece, word.text)


@given(ascii_names(), st.data())
def test_a_query_word_that_begins_a_text_word_marks_at_least_its_length(
    text: str, data: st.DataObject
) -> None:
    """Unless it is the text's initials too, and no word whole: then those are marked
    (`test_marks`, `GE`)."""
    words = normalize_name(text).split()
    word = data.draw(st.sampled_from(words))
    typed = word[: data.draw(st.integers(1, len(word)))]
    ranges = highlight_ranges(typed, text)
    [form] = traced_forms(text)[:1]
    initials = query_initials(typed) is not None and query_initials(typed) == name_initials(text)
    for folded in folded_words(form):
        if folded.text.startswith(typed) and not (initials and folded.text != typed):
            start = folded.origins[0]
            assert any(r.start <= start and start + len(typed) <= r.end for r in ranges)


accented = st.text("aeosßæøłﬁ\u0301\u0308ÄÉØ", min_size=1, max_size=8).filter(
    lambda word: normalize_name(word) != "" and " " not in normalize_name(word)
)


def _mark(ch: str) -> bool:
    return unicodedata.category(ch).startswith("M")


@given(accented, st.integers(1, 20))
@example("Straße", 5)
@example("ﬁsh", 1)
@example("Cafe\u0301s", 4)
def test_a_folded_beginning_marks_the_characters_it_folds_from(word: str, length: int) -> None:
    """Typed as it folds (`stras` for `Straße`), a beginning of a word marks the fewest
    of its characters that fold to it, with the marks that follow them."""
    typed = normalize_name(word)[:length]
    [part] = highlight_ranges(typed, word)
    assert normalize_name(word[: part.start]) == ""
    assert normalize_name(word[: part.end]).startswith(typed)
    assert part.end == len(word) or not _mark(word[part.end])
    last = part.end - 1  # the last marked character that is no mark
    while _mark(word[last]):
        last -= 1
    assert not normalize_name(word[:last]).startswith(typed)


def _spelled_by_walking(query_word: str, words: list[FoldedWord], start: int) -> TextRange | None:
    """`_spelled`'s rule as it reads: the query word takes whole words from `start` on
    while it holds them, and ends at the beginning of a word (or the whole of it)."""
    rest = query_word
    for index in range(start, len(words)):
        word = words[index].text
        if word.startswith(rest):
            return TextRange(words[start].origins[0], words[index].origins[len(rest) - 1] + 1)
        if not rest.startswith(word):
            return None
        rest = rest[len(word) :]
    return None


@given(
    st.lists(st.text("abc", min_size=1, max_size=3), min_size=1, max_size=8),
    st.text("abc", min_size=1, max_size=10),
)
@example(["coca", "cola"], "cocacola")
@example(["a", "a", "a"], "aaaa")
def test_a_query_word_spells_words_read_joined_as_taking_them_one_by_one(
    texts: list[str], query_word: str
) -> None:
    origin = itertools.count()
    words = [FoldedWord(text, tuple(next(origin) for _ in text)) for text in texts]
    form = _Words(words)
    for start in range(len(words)):
        assert _spelled(query_word, form, start) == _spelled_by_walking(query_word, words, start)


def test_a_crafted_text_and_query_compare_a_bounded_number_of_word_pairs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hundreds of one-letter words against dozens of query words beginning alike: each
    pair is compared once at most, and no more than `MAX_COMPARED_PAIRS` in all (they
    took about 150 ms a match, unbounded; a retrieve's hundred matches, seconds)."""
    calls = 0
    spelled = highlight._spelled

    def counted(*args: Any) -> TextRange | None:
        nonlocal calls
        calls += 1
        return spelled(*args)

    monkeypatch.setattr(highlight, "_spelled", counted)
    for letter in ("a", "щ"):  # ASCII, and a script read in a second, romanised form
        calls = 0
        query = "zqxv " + " ".join(letter * k for k in range(40, 0, -1))
        text = "zqxv " + " ".join([letter] * 247)
        ranges = highlight_ranges(query, text)
        assert ranges[0] == TextRange(0, 4)  # marked before the budget ran out
        assert 0 < calls <= MAX_COMPARED_PAIRS
