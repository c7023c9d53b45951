"""The normalisation of names that blocking and similarity share, and the id form.

`normalize_name` is how names are compared: case, accents and punctuation aside,
and the Latin letters that are not a base letter with marks (`ł`, `ø`, `æ`, `ß`,
`ı`, `þ`) written as ASCII, so `Lodz` finds `Łódź` and `Naestved` finds `Næstved`.
`other_forms` are how a name is also read: letters joined by `&` as one word
(`ATT` for `AT&T`), and the letters of some scripts in Latin ones (`Gazprom` for
`Газпром`).
`id_form` is how an entity's id reads its name and type (`ids.entity_id_for`):
case, accents and punctuation aside only. Stored data is keyed by those ids, so the
id form never changes, whatever `normalize_name` learns.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from anyascii import anyascii

# Between words: what is neither letter nor digit (`re`'s `\w`, but `_`). `id_form` reads
# words so, and must go on doing so: ids derived from it are stored.
_ID_NON_WORD = re.compile(r"[\W_]+")
# ASCII text's words, as `normalize_name` reads them: the same.
_NON_WORD = _ID_NON_WORD
_WORD = re.compile(r"[^\W_]+")  # what `_NON_WORD` separates
# Words of one or two letters joined by `&`, spaced or not: `AT&T`, `S&P`, `H & M`.
# One- or two-letter words joined by `&` (spaced or not), or else by a spaced `and`:
# `AT&T and M&S` is two groups.
_LETTERS = r"[^\W\d_]{1,2}"
_AMPERSAND_GROUP = re.compile(
    rf"(?<!\w)(?:{_LETTERS}(?:\s*&\s*{_LETTERS})+|{_LETTERS}(?:\s+[Aa][Nn][Dd]\s+{_LETTERS})+)(?!\w)"
)
_AMPERSAND_JOIN = re.compile(r"\s*&\s*|\s+[Aa][Nn][Dd]\s+")
_NON_ASCII_LETTER = re.compile(r"[^a-z]+")


# The planes that hold combining marks: the Basic and the Supplementary Multilingual
# Planes, and the Supplementary Special-purpose Plane's variation selectors (the other
# planes hold ideographs, private use or nothing). `test_normalization` checks this
# against every code point of the running Python's Unicode.
_PLANES_WITH_MARKS = (range(0x20000), range(0xE0000, 0xF0000))


@lru_cache(maxsize=1)
def _words_of_any_script() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Patterns of what separates words (`non_word`) and of a word (`word`) in text of
    any script: as `_NON_WORD` and `_WORD`, and a combining mark (Unicode category M)
    is part of its word. `re`'s `\\w` takes none: Devanagari, Tamil or Thai letters
    written with a vowel sign (`दुनिया`, `தமிழ்நாடு`) would be cut into single
    consonants at each. Built on first use (about 20 ms: a scan of the planes with marks)."""
    marks = [
        code
        for plane in _PLANES_WITH_MARKS
        for code in plane
        if unicodedata.category(chr(code)).startswith("M")
    ]
    ranges: list[tuple[int, int]] = []
    for code in marks:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    spelled = "".join(
        f"\\U{first:08x}" if first == last else f"\\U{first:08x}-\\U{last:08x}"
        for first, last in ranges
    )
    non_word = re.compile(rf"(?:[^\w{spelled}]|_)+")
    word = re.compile(rf"(?:[^\W_]|[{spelled}])+")
    return non_word, word


def prepare_any_script() -> None:
    """Build what `normalize_name` reads text beyond Latin letters with, which it
    otherwise builds on first meeting such text (tens of ms, once a process): a
    server's `warm_up` calls it, so that no request pays for it."""
    _words_of_any_script()


def is_word_character(ch: str) -> bool:
    """Whether `ch` is part of a word as `normalize_name` reads words: a letter, a digit
    or a combining mark (`ि` of `दुनिया`)."""
    return ch.isalnum() or unicodedata.category(ch).startswith("M")


def _non_word(text: str) -> re.Pattern[str]:
    return _NON_WORD if text.isascii() else _words_of_any_script()[0]


def _word(text: str) -> re.Pattern[str]:
    return _WORD if text.isascii() else _words_of_any_script()[1]


def fold_diacritics(text: str) -> str:
    """`text` decomposed (NFKD) without its combining marks: `Café` becomes `Cafe`."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@lru_cache(maxsize=4096)
def _latin_letter_as_ascii(ch: str) -> str:
    """A Latin letter NFKD leaves whole (`ł`, `ø`, `æ`) in ASCII (`l`, `o`, `ae`), by
    anyascii; any other character as it is (other scripts keep their letters)."""
    if ch.isalpha() and unicodedata.name(ch, "").startswith("LATIN "):
        return anyascii(ch) or ch
    return ch


# Scripts whose letters anyascii writes as their readers romanise them, letter by letter
# (`Газпром`: `Gazprom`, `Αθήνα`: `Athina`, `서울`: `SeoUl`). Not Han (a character's
# reading depends on the language), kana, nor scripts that leave vowels unwritten.
_ROMANISED_SCRIPTS = ("CYRILLIC ", "GREEK ", "ARMENIAN ", "GEORGIAN ", "HANGUL ")
# The Unicode blocks of those scripts: a text with none of their characters has nothing
# to romanise (one search, where the names of its characters would be read one by one).
_ROMANISED_BLOCKS = re.compile(
    "[\u0370-\u058f\u10a0-\u11ff\u1c80-\u1cbf\u1d00-\u1d7f\u1f00-\u1fff\u2d00-\u2d2f"
    "\u2de0-\u2dff\u3130-\u318f\ua640-\ua69f\ua960-\ua97f\uab65\uac00-\ud7ff"
    "\ufb13-\ufb17]"
)


@lru_cache(maxsize=4096)
def _romanised_letter(ch: str) -> str:
    if ch.isalpha() and unicodedata.name(ch, "").startswith(_ROMANISED_SCRIPTS):
        return anyascii(ch) or ch
    return ch


def fold_latin(text: str) -> str:
    """`fold_diacritics`, then the Latin letters left outside ASCII written in it:
    `Łódź` becomes `Lodz`, `Sønderborg Æblegård` `Sonderborg AEblegard`."""
    folded = fold_diacritics(text)
    if folded.isascii():
        return folded
    return "".join(map(_latin_letter_as_ascii, folded))


# Names recur: an entity's name is normalised several times as it is loaded (its id,
# derived fields, blocking keys) and candidate names on every query; normalising is
# pure, so a bounded cache of recent names saves the regex work.
@lru_cache(maxsize=1 << 16)
def normalize_name(name: str) -> str:
    """Case-folded, Latin letters folded to ASCII (`fold_latin`), punctuation turned
    into single spaces, trimmed.

    `  ACME Corp.` and `acme corp` both become `acme corp`, `Łódź` `lodz`; letters of
    other scripts survive, so `東京` stays `東京`.
    """
    folded = _folded(name)
    return " ".join(_non_word(folded).sub(" ", folded).split())


@lru_cache(maxsize=1 << 16)
def normalize_for_vectors(text: str) -> str:
    """`normalize_name` as it read words before it kept combining marks in them: the
    text the `static` and `hashing` providers embed. Their stored vectors are of it,
    and a vector's source (`vectors.vector_source`) names the provider and the text, not
    this reading: were it to change, stored vectors of texts with marks (`दुनिया`)
    would differ from the ones queries meet, and nothing would say so. So it keeps
    cutting words at marks, as `id_form` does; a provider that read words otherwise
    would be another provider (another `identity`), whose vectors are made again."""
    folded = _folded(text)
    return " ".join(_ID_NON_WORD.sub(" ", folded).split())


def _folded(text: str) -> str:
    """`text` case-folded with its Latin letters folded to ASCII: `normalize_name` before
    punctuation is read. Each character folds alone (no rule reads its neighbours), so
    `folded_words` can fold a text character by character."""
    return text.lower() if text.isascii() else fold_latin(text).casefold()


class TracedText(NamedTuple):
    """A form of a text (the text itself or one of its `other_forms`) with, for each of
    its characters, the index in the text of the character it is written from."""

    text: str
    origins: tuple[int, ...]


class FoldedWord(NamedTuple):
    """A word of `normalize_name(form.text)` with, for each of its characters, the index
    in the original text of the character it folds from (`TracedText.origins`)."""

    text: str
    origins: tuple[int, ...]


def traced_forms(text: str) -> list[TracedText]:
    """`text` and its `other_forms`, in that order, each traced back to `text`: `ATT` of
    `AT&T` comes from indexes 0, 1 and 3, `Shchuka` of `Щука` from 0, 0, 0, 0, 1, 2, 3."""
    forms = [TracedText(text, tuple(range(len(text))))]
    if text.isascii() and not _may_join(text):  # as `other_forms`: neither form
        return forms
    joins = _ampersand_join_spans(text)
    if joins:
        removed = {i for start, end in joins for i in range(start, end)}
        kept = [i for i in range(len(text)) if i not in removed]
        forms.append(TracedText("".join(text[i] for i in kept), tuple(kept)))
    written = romanised(text)
    if written is not None:
        origins = tuple(i for i, ch in enumerate(text) for _ in _romanised_letter(ch))
        forms.append(TracedText(written, origins))
    return forms


def folded_words(form: TracedText) -> list[FoldedWord]:
    """The words of `normalize_name(form.text)`, in order, each traced back to the
    original text: `Straße` is `strasse` from indexes 0, 1, 2, 3, 4, 4, 5 (`ß` folds to
    `ss`), `Café` written with a combining accent `cafe` from 0, 1, 2, 3 (the accent
    folds to nothing). The same folding as `normalize_name`, a character at a time."""
    letters: list[str] = []
    origins: list[int] = []
    for ch, origin in zip(form.text, form.origins, strict=True):
        folded = _folded(ch)
        letters.append(folded)
        origins.extend(itertools.repeat(origin, len(folded)))
    joined = "".join(letters)
    return [
        FoldedWord(word[0], tuple(origins[word.start() : word.end()]))
        for word in _word(joined).finditer(joined)
    ]


def id_form(name: str) -> str:
    """The name or type as an id reads it (`ids.entity_id_for`): case-folded,
    diacritics folded (`fold_diacritics`, not `fold_latin`: `Łódź` is `łodz`),
    punctuation turned into single spaces, trimmed. Fixed: ids derived from it are
    stored."""
    folded = name.lower() if name.isascii() else fold_diacritics(name).casefold()
    return " ".join(_ID_NON_WORD.sub(" ", folded).split())


def name_tokens(name: str) -> list[str]:
    """The words of the normalised name, in order."""
    return normalize_name(name).split()


def ascii_letters(name: str) -> str:
    """Only the ASCII letters of the Latin-folded (`fold_latin`), lower-cased name."""
    if name.isascii():  # nothing to fold
        return _NON_ASCII_LETTER.sub("", name.lower())
    return "".join(ch for ch in fold_latin(name).lower() if "a" <= ch <= "z")


def _may_join(text: str) -> bool:
    """Whether `text` may hold a group `ampersand_joined` joins (a cheap test first)."""
    return "&" in text or "and" in text.lower()


def ampersand_joined(text: str) -> str | None:
    """`text` with each group of one- or two-letter words joined by `&`, spaced or not,
    or by a spaced `and`, written as one word (`AT&T Inc.`: `ATT Inc.`; `S & P Global`:
    `SP Global`; `AT and T`: `ATT`), or None when it has no such group. People read and
    search such a group as one word (`ATT`), where `normalize_name` splits it into
    letters and stopwords (`at t`): blocking and the lexical score treat the joined text
    as another form of the name."""
    if not _may_join(text):
        return None
    joins = _ampersand_join_spans(text)
    if not joins:
        return None
    return _without(text, joins)


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` without the characters of `spans` (in order, not overlapping)."""
    kept: list[str] = []
    start = 0
    for end, resume in spans:
        kept.append(text[start:end])
        start = resume
    kept.append(text[start:])
    return "".join(kept)


def _ampersand_join_spans(text: str) -> list[tuple[int, int]]:
    """Where in `text` the `&` or spaced `and` of each group `ampersand_joined` joins is,
    with the spaces around it, in order: what joining the group removes."""
    return [
        (group.start() + join.start(), group.start() + join.end())
        for group in _AMPERSAND_GROUP.finditer(text)
        for join in _AMPERSAND_JOIN.finditer(group[0])
    ]


def romanised(text: str) -> str | None:
    """`text` with its Cyrillic, Greek, Armenian, Georgian and Hangul letters written in
    Latin ones (anyascii: `Газпром` as `Gazprom`), or None when it has none. Blocking
    and the lexical score treat it as another form of the name, so a name is found
    whichever of the two scripts it is stored and asked for in."""
    if text.isascii() or not _ROMANISED_BLOCKS.search(text):
        return None
    written = "".join(map(_romanised_letter, text))
    return None if written == text else written


def with_romanised(text: str) -> str:
    """`text`, then its `romanised` form in brackets where it has one (`Москва (Moskva)`):
    how the semantic channel embeds a name and a query, so that a model that reads one
    script relates a name to a query in the other."""
    written = romanised(text)
    return text if written is None else f"{text} ({written})"


# Candidate names recur from query to query, each read for its other forms.
@lru_cache(maxsize=1 << 16)
def other_forms(text: str) -> tuple[str, ...]:
    """The forms a name is read in besides its own: `ampersand_joined` and `romanised`,
    each where it differs."""
    if text.isascii() and not _may_join(text):  # most names: neither form
        return ()
    forms = (ampersand_joined(text), romanised(text))
    return tuple(form for form in forms if form is not None)


def ampersand_words(text: str) -> list[str]:
    """The normalised words the groups of `ampersand_joined` make (`att` of `AT&T Inc.`),
    whatever they spell: `M&S` makes `ms`, which as a word of a name would be a title."""
    if not _may_join(text):
        return []
    return [
        normalize_name(_AMPERSAND_JOIN.sub("", group[0]))
        for group in _AMPERSAND_GROUP.finditer(text)
    ]
