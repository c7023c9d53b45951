"""The one normalisation of names, used by ids, blocking and similarity alike."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_NON_WORD = re.compile(r"[\W_]+")
_NON_ASCII_LETTER = re.compile(r"[^a-z]+")


def fold_diacritics(text: str) -> str:
    """`text` decomposed (NFKD) without its combining marks: `Café` becomes `Cafe`."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


# Names recur: an entity's name is normalised several times as it is loaded (its id,
# derived fields, blocking keys) and candidate names on every query; normalising is
# pure, so a bounded cache of recent names saves the regex work.
@lru_cache(maxsize=1 << 16)
def normalize_name(name: str) -> str:
    """Case-folded, diacritics folded, punctuation turned into single spaces, trimmed.

    `  ACME Corp.` and `acme corp` both become `acme corp`; letters of any
    script survive, so `東京` stays `東京`.
    """
    folded = name.lower() if name.isascii() else fold_diacritics(name).casefold()
    return " ".join(_NON_WORD.sub(" ", folded).split())


def name_tokens(name: str) -> list[str]:
    """The words of the normalised name, in order."""
    return normalize_name(name).split()


def ascii_letters(name: str) -> str:
    """Only the ASCII letters of the diacritics-folded, lower-cased name."""
    if name.isascii():  # nothing to fold
        return _NON_ASCII_LETTER.sub("", name.lower())
    return "".join(ch for ch in fold_diacritics(name).lower() if "a" <= ch <= "z")
