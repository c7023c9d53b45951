"""The normalisation of names that blocking and similarity share, and the id form.

`normalize_name` is how names are compared: case, accents and punctuation aside,
and the Latin letters that are not a base letter with marks (`ł`, `ø`, `æ`, `ß`,
`ı`, `þ`) written as ASCII, so `Lodz` finds `Łódź` and `Naestved` finds `Næstved`.
`id_form` is how an entity's id reads its name and type (`ids.entity_id_for`):
case, accents and punctuation aside only. Stored data is keyed by those ids, so the
id form never changes, whatever `normalize_name` learns.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from anyascii import anyascii

_NON_WORD = re.compile(r"[\W_]+")
# Words of one or two letters joined by `&` with no space: `AT&T`, `S&P`, `H&M`.
_AMPERSAND_GROUP = re.compile(r"(?<!\w)[^\W\d_]{1,2}(?:&[^\W\d_]{1,2})+(?!\w)")
_NON_ASCII_LETTER = re.compile(r"[^a-z]+")


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
    folded = name.lower() if name.isascii() else fold_latin(name).casefold()
    return " ".join(_NON_WORD.sub(" ", folded).split())


def id_form(name: str) -> str:
    """The name or type as an id reads it (`ids.entity_id_for`): case-folded,
    diacritics folded (`fold_diacritics`, not `fold_latin`: `Łódź` is `łodz`),
    punctuation turned into single spaces, trimmed. Fixed: ids derived from it are
    stored."""
    folded = name.lower() if name.isascii() else fold_diacritics(name).casefold()
    return " ".join(_NON_WORD.sub(" ", folded).split())


def name_tokens(name: str) -> list[str]:
    """The words of the normalised name, in order."""
    return normalize_name(name).split()


def ascii_letters(name: str) -> str:
    """Only the ASCII letters of the Latin-folded (`fold_latin`), lower-cased name."""
    if name.isascii():  # nothing to fold
        return _NON_ASCII_LETTER.sub("", name.lower())
    return "".join(ch for ch in fold_latin(name).lower() if "a" <= ch <= "z")


def ampersand_joined(text: str) -> str | None:
    """`text` with each group of one- or two-letter words joined by `&` and no space
    written as one word (`AT&T Inc.`: `ATT Inc.`; `S&P Global`: `SP Global`), or None
    when it has no such group. People read and search such a group as one word
    (`ATT`), where `normalize_name` splits it into letters and stopwords (`at t`):
    blocking and the lexical score treat the joined text as another form of the name."""
    if "&" not in text:
        return None
    joined = _AMPERSAND_GROUP.sub(lambda group: group[0].replace("&", ""), text)
    return None if joined == text else joined


def ampersand_words(text: str) -> list[str]:
    """The normalised words the groups of `ampersand_joined` make (`att` of `AT&T Inc.`),
    whatever they spell: `M&S` makes `ms`, which as a word of a name would be a title."""
    if "&" not in text:
        return []
    return [normalize_name(group[0].replace("&", "")) for group in _AMPERSAND_GROUP.finditer(text)]
