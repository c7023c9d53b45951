"""Words of a name that say what kind of name it is rather than which one, and words
written two ways.

Legal forms (`Corporation`, `Inc`), honorific titles (`Lord`, `Dr`) and
stopwords (`of`, `the`) carry little identity: similarity reads a name
without them, and blocking never uses them as a candidate source on their own.
Some words of names have a usual abbreviation (`St` for `Saint`, `Mt` for
`Mount`, `Intl` for `International`, `Mfg` for `Manufacturing`): similarity
reads the abbreviation written out, so `Saint Petersburg` meets `St.
Petersburg` and not `Petersburg`, `Acme Mfg` meets `Acme Manufacturing`, and a
typo in the long word is still one letter off. `Saint` is such a word, not a title:
it is part of which place or person a name is.
"""

from __future__ import annotations

from collections.abc import Sequence

# Long legal forms mapped onto their usual abbreviation, so `Corporation` meets `Corp`.
LEGAL_FORM_ABBREVIATIONS: dict[str, str] = {
    "corporation": "corp",
    "incorporated": "inc",
    "limited": "ltd",
    "company": "co",
    "gesellschaft": "gmbh",
}
# Usual abbreviations of words of names, each of one word only, mapped onto it.
WORD_ABBREVIATIONS: dict[str, str] = {
    # places
    "st": "saint", "ste": "sainte", "mt": "mount", "ft": "fort",
    # people
    "jr": "junior", "sr": "senior",
    # organisations
    "intl": "international", "natl": "national", "bros": "brothers", "mfg": "manufacturing",
    "dept": "department", "assn": "association", "assoc": "association", "univ": "university",
    "inst": "institute", "grp": "group", "hldgs": "holdings", "mgmt": "management",
    "ctr": "center", "govt": "government", "svcs": "services",
}  # fmt: skip
ABBREVIATIONS: dict[str, str] = LEGAL_FORM_ABBREVIATIONS | WORD_ABBREVIATIONS
LEGAL_FORMS: frozenset[str] = frozenset(LEGAL_FORM_ABBREVIATIONS) | frozenset(
    {
        "corp", "inc", "ltd", "co", "llc", "llp", "lp", "plc", "gmbh", "ag", "sa",
        "sas", "sarl", "srl", "spa", "bv", "nv", "oy", "ab", "as", "kk", "pty", "pte",
    }
)  # fmt: skip
TITLES: frozenset[str] = frozenset(
    {
        "lord", "lady", "sir", "dame", "dr", "doctor", "mr", "mrs", "ms", "miss",
        "prof", "professor", "rev", "king", "queen", "prince", "princess",
    }
)  # fmt: skip
STOPWORDS: frozenset[str] = frozenset(
    {"a", "an", "and", "the", "of", "for", "in", "on", "at", "to", "by", "de", "du", "la", "le"}
)
NON_IDENTIFYING: frozenset[str] = LEGAL_FORMS | TITLES | STOPWORDS


def canonical_tokens(tokens: Sequence[str]) -> list[str]:
    """Tokens with titles and stopwords dropped, legal forms abbreviated, and the
    `WORD_ABBREVIATIONS` written out.

    Falls back to the abbreviated tokens when nothing else would be left
    (a name that is only `The Company` stays comparable).
    """
    abbreviated = [ABBREVIATIONS.get(t, t) for t in tokens]
    kept = [t for t in abbreviated if t not in TITLES and t not in STOPWORDS]
    return kept or abbreviated


def identifying_tokens(tokens: Sequence[str]) -> list[str]:
    """Tokens that can name an entity on their own: no legal form, title or stopword."""
    return [t for t in tokens if t not in NON_IDENTIFYING]
