"""Blocking keys: the cheap keys under which lexical candidates are looked up.

An entity carries `p:` (first 5 characters of its normalised name), `s:`
(soundex of its ASCII letters), `w:` (one per identifying word), `d:` (each
identifying word of `MIN_TYPO_LENGTH` letters or more with one letter
deleted), `i:` (the initials of its identifying words, `name_initials`: `abf`
for `Alder & Birchwood Foods Ltd`, when it has 2 to 6 of them), `x:` (the endings of
each identifying word of Han or kana characters, from its second character:
`x:控股有限公司` of `腾讯控股有限公司`, `name_endings`), the same keys
of each of its first `MAX_KEYED_ALIASES` aliases (the `aliases` property: `IBM`
finds International Business Machines when that is one), the same of the
`other_forms` of each (`AT&T Inc.` as `ATT Inc.`, with `w:att`; `Газпром` as
`Gazprom`), and `t:` (its type).
A query asks for `p:`, `s:`, `w:` and `d:` keys, and `i:` when it is one short
word (`query_initials`), never `t:`: every entity of a type carries that key,
so it would turn candidate generation into a scan. A query word one edit away
from a name's word (a letter deleted, inserted, replaced, or two swapped)
shares a key with it: `query_blocking_keys` asks for each query word and its
deletions under both `w:` and `d:`. The last query word may be unfinished:
`query_prefix` is the key prefix a store seeks for it, and `query_infixes` those
it seeks for Han or kana words inside others (`控股` among `x:` keys). Why each key
exists and how blocks are bounded: docs/adr/0003.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import lru_cache

import jellyfish

from redstring.domain.arguments import optional_count_of
from redstring.domain.name_forms import canonical_tokens, identifying_tokens
from redstring.domain.normalization import (
    ampersand_joined,
    ampersand_words,
    ascii_letters,
    is_word_character,
    name_tokens,
    normalize_name,
    other_forms,
)

PREFIX_LENGTH = 5
# Words this long or longer get deletion (`d:`) keys; a query word one letter shorter
# is asked for as a deletion of a name's word.
MIN_TYPO_LENGTH = 5
# Words longer than this get no deletion keys (a word of n letters has n of them, each
# n - 1 long), and words longer than `MAX_KEYED_WORD_LENGTH` no key at all: such a word
# names nothing anyone types, and a key must fit an index entry (Neo4j's range index
# takes about 8 KB an entry).
MAX_TYPO_LENGTH = 40
MAX_KEYED_WORD_LENGTH = 100
# The shortest unfinished last word sought by prefix (shorter ones read too widely),
# and scored as a beginning of a word.
MIN_PREFIX_LENGTH = 3
# A query of one word alone, a search box's first keystrokes (`a`, `ac`), is sought by
# prefix from its first letter (`lone_beginning`): its seek reads no more rows than any
# (`MAX_PREFIX_SIZE`, in key order), and a word it begins scores below every other
# kind of match (`domain/lexical.py` `LONE_BEGINNING`).
MIN_LONE_PREFIX_LENGTH = 1
# The same for a word of Han or kana characters: such names are written without spaces
# (one word), and two of their characters narrow as much as a short Latin word. (Hangul
# needs no rule of its own: normalised, a syllable is two or three letters, its jamo.)
MIN_CJK_PREFIX_LENGTH = 2
_CJK_NAMES = ("CJK UNIFIED IDEOGRAPH", "HIRAGANA", "KATAKANA")
# Han and kana words are written without spaces, so what a reader takes for a word may
# stand inside one (`控股` in `腾讯控股有限公司`, `ソニー` in `株式会社ソニー`): each
# such word is also keyed by its endings from its second character (`x:` keys), the
# first `MAX_KEYED_ENDINGS` of `MIN_CJK_PREFIX_LENGTH` characters or more, and each
# Han or kana word of a query is sought as the beginning of one (`query_infixes`, the
# first `MAX_INFIX_SEEKS` words), as `query_prefix` seeks a beginning among `w:` keys.
ENDING_KEY_PREFIX = "x:"
MAX_KEYED_ENDINGS = 16
MAX_INFIX_SEEKS = 4
# The prefix of the one key a query never asks for (its block is a whole type).
TYPE_KEY_PREFIX = "t:"
# Per-key cap on candidates read by one lexical lookup (docs/adr/0003).
MAX_BLOCK_SIZE = 300
# Cap on the rows read by one prefix seek (`query_prefix`), lower than a key's: a
# whole last word seeks its own block first, and a common one filled the cap with
# names that share nothing else with the query (docs/adr/0003).
MAX_PREFIX_SIZE = 100


def block_caps_of(limit_per_key: object, limit_per_prefix: object) -> tuple[int | None, int | None]:
    """A lexical lookup's caps (`find_lexical_candidates`) by `redstring.domain.arguments`'
    rule: each None (no cap) or an integer from 0 to 2**63 - 1 (`count_of`). Every graph
    store and candidate reader reads them through this, so that a slip is the same
    `InvalidInputError` on each, whether or not anything is read with them."""
    return (
        optional_count_of(limit_per_key, "limit_per_key"),
        optional_count_of(limit_per_prefix, "limit_per_prefix"),
    )


_MIN_TOKEN_LENGTH = 2
# An initials (`i:`) key is the first letters of 2 to 6 identifying words; a query of
# one word of as many letters asks for it (`query_initials`).
MIN_INITIALS = 2
MAX_INITIALS = 6
# Aliases past this many add no keys (an entity's keys stay bounded); their entity
# is still scored against every one of them.
MAX_KEYED_ALIASES = 10
# An entity's lookup keys past this many are dropped (its name's come first): a name has
# about 16, one of 90 characters with ten aliases as long 140; a name of 500 characters
# of long words, or ten such aliases, would have thousands, each a write on Neo4j.
MAX_LOOKUP_KEYS = 256


def deletions(word: str) -> list[str]:
    """`word` with one letter deleted, each way, without repeats, in position order."""
    return list(dict.fromkeys(word[:i] + word[i + 1 :] for i in range(len(word))))


def _spelling_keys(name: str) -> list[str]:
    keys: list[str] = []
    normalized = normalize_name(name)
    if normalized:
        keys.append("p:" + normalized[:PREFIX_LENGTH].rstrip())
    sound = soundex_of(ascii_letters(name))
    if sound:
        keys.append("s:" + sound)
    return keys


def soundex_of(letters: str) -> str | None:
    """The soundex code of a name's ASCII letters (`ascii_letters`), its `s:` key; None
    when it has none."""
    return jellyfish.soundex(letters) if letters else None


def _words(name: str) -> list[str]:
    """The name's identifying words that are keyed: `_MIN_TOKEN_LENGTH` to
    `MAX_KEYED_WORD_LENGTH` letters."""
    return [t for t in identifying_tokens(name_tokens(name)) if _keyed(t)]


def _keyed(word: str) -> bool:
    return _MIN_TOKEN_LENGTH <= len(word) <= MAX_KEYED_WORD_LENGTH


def _typo_keyed(word: str) -> bool:
    return MIN_TYPO_LENGTH <= len(word) <= MAX_TYPO_LENGTH


# Names recur (an entity's keys, then its candidacy on every query that is initials).
@lru_cache(maxsize=1 << 16)
def name_initials(name: str) -> str | None:
    """The first letters of the name's identifying words (`Alder & Birchwood Foods Ltd`:
    `abf`), when it has `MIN_INITIALS` to `MAX_INITIALS` of them, each beginning with a
    letter; else None (a query is never initials of one word or of seven)."""
    words = identifying_tokens(name_tokens(name))
    initials = "".join(w[0] for w in words)
    if MIN_INITIALS <= len(words) <= MAX_INITIALS and initials.isalpha():
        return initials
    return None


def query_initials(query: str) -> str | None:
    """What the query is when it may be a name's initials, else None: one word of
    `MIN_INITIALS` to `MAX_INITIALS` letters (`ABF`), or as many single letters
    (`A.B.F.`, `a b f`), lower case."""
    tokens = name_tokens(query)
    word = tokens[0] if len(tokens) == 1 else "".join(tokens)
    if len(tokens) > 1 and len(word) != len(tokens):
        return None
    if MIN_INITIALS <= len(word) <= MAX_INITIALS and word.isalpha():
        return word
    return None


def _entity_name_keys(name: str) -> list[str]:
    words = _words(name)
    keys = _spelling_keys(name) + ["w:" + w for w in words]
    for word in words:
        if _typo_keyed(word):
            keys += ["d:" + d for d in deletions(word)]
    initials = name_initials(name)
    if initials is not None:
        keys.append("i:" + initials)
    keys += [ENDING_KEY_PREFIX + ending for word in words for ending in name_endings(word)]
    return keys


def name_endings(word: str) -> list[str]:
    """The endings of a Han or kana `word` that its `x:` keys hold: from its second
    character on, each of `MIN_CJK_PREFIX_LENGTH` characters or more, the first
    `MAX_KEYED_ENDINGS` (`控股有限公司` ... `公司` of `腾讯控股有限公司`); none for a
    word of other letters, whose words are spaced."""
    if not is_unspaced_word(word):
        return []
    last = min(len(word) - MIN_CJK_PREFIX_LENGTH, MAX_KEYED_ENDINGS)
    return [word[start:] for start in range(1, last + 1)]


def _keys_of_every_form(name: str) -> list[str]:
    """`_entity_name_keys` of the name and of each of its `other_forms`, and a `w:` key of
    each word joined by `&` (`AT&T Inc.`: `w:att`), stopword, title or not."""
    keys = _entity_name_keys(name)
    for form in other_forms(name):
        keys += _entity_name_keys(form)
    keys += ["w:" + w for w in ampersand_words(name) if _keyed(w)]
    return keys


def _unique(keys: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(keys))


def blocking_keys_for(name: str, entity_type: str, aliases: Sequence[str] = ()) -> tuple[str, ...]:
    """Every key an entity of `name`, `entity_type` and `aliases` (its other names) is
    indexed under, in a stable order without repeats: the first `MAX_LOOKUP_KEYS` lookup
    keys, then the type key."""
    keys = _keys_of_every_form(name)
    for alias in aliases[:MAX_KEYED_ALIASES]:
        keys += _keys_of_every_form(alias)
    return (*_unique(keys)[:MAX_LOOKUP_KEYS], TYPE_KEY_PREFIX + normalize_name(entity_type))


def lookup_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    """Those of an entity's `keys` that a query can ask for: all but its type key.

    A store may index only these (the Neo4j graph store does: a type key's
    block would hold every entity of the type and no query reads it)."""
    return tuple(k for k in keys if not k.startswith(TYPE_KEY_PREFIX))


def query_blocking_keys(query: str) -> tuple[str, ...]:
    """The keys a query looks up: those of names one edit away from the query's words.

    Every lookup key of the query's own text but its initials is among them
    (`i:` is asked only for a query that may itself be initials,
    `query_initials`), and for each word
    of `MIN_TYPO_LENGTH - 1` letters or more: `d:` of the word (a name's word
    with a letter more), `w:` and `d:` of its deletions (a letter too many, or
    one replaced or two swapped). The word `query_prefix` seeks is left out:
    the seek reads its block first. The keys of the query's `other_forms` are
    asked for too (`ATT` for `AT&T`, `Gazprom` for `Газпром`)."""
    prefix = query_prefix(query)
    keys = _query_keys(query, prefix)
    for form in other_forms(query):
        keys += _query_keys(form, prefix)
    keys += [k for w in ampersand_words(query) if _keyed(w) and (k := "w:" + w) != prefix]
    return _unique(keys)


def _query_keys(query: str, prefix: str | None) -> list[str]:
    """The keys of one form of a query, but `prefix`, the word the query's seek reads."""
    keys = _spelling_keys(query)
    for word in _words(query):
        if prefix != "w:" + word:
            keys.append("w:" + word)
        if MIN_TYPO_LENGTH - 1 <= len(word) < MAX_TYPO_LENGTH:
            keys.append("d:" + word)
            if _typo_keyed(word):
                shorter = deletions(word)
                keys += ["w:" + d for d in shorter if len(d) >= _MIN_TOKEN_LENGTH]
                keys += ["d:" + d for d in shorter]
    initials = query_initials(query)
    if initials is not None:
        keys.append("i:" + initials)
    return keys


def query_prefix(query: str) -> str | None:
    """The key prefix of the query's last word when it may be unfinished, else None.

    That is `w:` and the word, when the query ends in it (not in a space or
    punctuation), it has `MIN_PREFIX_LENGTH` letters or more (`MIN_CJK_PREFIX_LENGTH`
    Han or kana characters: `腾讯` begins `腾讯控股有限公司`; any number when the
    query is that word alone, `lone_beginning`), and it is scored: an
    identifying word, or any word of a query with none (`King` begins `Kingsreach`,
    `The` begins `Thermo`, though a title and a stopword are no identifying words;
    in `Acme Inc` only `Acme` is scored). A store reads the keys that begin with it in
    key order (so the word's own block first), the first `MAX_PREFIX_SIZE` rows
    (docs/adr/0003). A last word joined by `&` (`AT&T`) is read joined (`w:att`)."""
    if not query or not is_word_character(query[-1]):
        return None
    tokens = query_words(query)
    if not tokens:
        return None
    last = tokens[-1]
    if not may_begin_a_word(last) and not (len(tokens) == 1 and _lone_keyed(last)):
        return None
    if not identifying_tokens([last]) and identifying_tokens(canonical_tokens(tokens)):
        return None
    return "w:" + last


def query_infixes(query: str) -> tuple[str, ...]:
    """The key prefixes a store seeks for the query's Han or kana words standing inside
    a longer word of a name: `x:` and each identifying such word of
    `MIN_CJK_PREFIX_LENGTH` characters or more, the first `MAX_INFIX_SEEKS`, without
    repeats (`x:控股` finds `腾讯控股有限公司` through its `x:控股有限公司` key). A seek
    reads as `query_prefix`'s does, the first `MAX_PREFIX_SIZE` rows in key order."""
    words = [w for w in _words(query) if is_unspaced_word(w)]
    return _unique([ENDING_KEY_PREFIX + word for word in words])[:MAX_INFIX_SEEKS]


def query_words(query: str) -> list[str]:
    """The query's words as its prefix seek reads them: normalised, each `&` group joined
    into one (`AT&T` is `att`)."""
    return name_tokens(ampersand_joined(query) or query)


def query_ends_unfinished(query: str) -> bool:
    """Whether the query's last word may be unfinished, for its score: when it is sought
    as a beginning (`query_prefix`), or is a word of one or two letters after others
    (`Acme Torque W`), too short to be sought but scored as the beginning of a word
    (`string_similarities(open_end=True)`) as a search box's letters are typed."""
    if query_prefix(query) is not None:
        return True
    if not query or not is_word_character(query[-1]):
        return False
    tokens = query_words(query)
    return (
        len(tokens) > 1
        and len(tokens[-1]) < MIN_PREFIX_LENGTH
        and bool(identifying_tokens([tokens[-1]]))
    )


def lone_beginning(query: str) -> str | None:
    """The query's one word when the query is that word alone, unfinished
    (`query_prefix`), and too short to begin a word otherwise (`may_begin_a_word`):
    `a` or `ac` of a search box, sought by prefix and scored as the beginning of a word
    below any other match (`lexical_matches`). Else None."""
    prefix = query_prefix(query)
    if prefix is None:
        return None
    word = prefix.removeprefix("w:")
    return None if may_begin_a_word(word) else word


def _lone_keyed(word: str) -> bool:
    return MIN_LONE_PREFIX_LENGTH <= len(word) <= MAX_KEYED_WORD_LENGTH


def may_begin_a_word(word: str) -> bool:
    """Whether an unfinished `word` is long enough to be sought, and scored, as the
    beginning of another: `MIN_PREFIX_LENGTH` letters, or `MIN_CJK_PREFIX_LENGTH` Han or
    kana characters, and no longer than a keyed word (`MAX_KEYED_WORD_LENGTH`)."""
    shortest = MIN_CJK_PREFIX_LENGTH if is_cjk_word(word) else MIN_PREFIX_LENGTH
    return shortest <= len(word) <= MAX_KEYED_WORD_LENGTH


def is_unspaced_word(word: str) -> bool:
    """Whether `word` is of `MIN_CJK_PREFIX_LENGTH` Han or kana characters or more: a
    word such unspaced names may hold inside a longer one (`控股` of `腾讯控股有限公司`),
    keyed (`name_endings`), sought (`query_infixes`), scored and marked so."""
    return len(word) >= MIN_CJK_PREFIX_LENGTH and is_cjk_word(word)


@lru_cache(maxsize=1 << 16)
def is_cjk_word(word: str) -> bool:
    """Whether the word is Han or kana characters only."""
    return all(unicodedata.name(ch, "").startswith(_CJK_NAMES) for ch in word)
