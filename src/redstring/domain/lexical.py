"""The lexical channel's score: name similarity, not BM25 (docs/adr/0003).

`lexical_score(query, entity)` is the best of `string_similarity` against the
name, against the normalised name, against each alias (the `aliases` property,
other names: each counts as the name does) and against each other string property
value (tickers, former names, a city), whose similarity counts
`PROPERTY_WEIGHT` times unless it is exact: a value equal to the query once
normalised scores `EXACT_PROPERTY`, just below an equal name, so `Corvid` ranks
the entity whose alias is `Corvid` above `Corvid Lowpower MCU`, and `Berlin`
still ranks the city named `Berlin` above a company whose `city` is `Berlin`
(a string property is not always another name). When the query
may end in an unfinished word (`query_ends_unfinished`), a name word it begins counts
as a match worth less than the whole word (`string_similarities(open_end=True)`),
so `Ada Lov` finds `Ada Lovelace` while `Acme` still ranks `Acme` over `Acmeson`
(and `Acme Torque W` finds `Acme Torque Wrench Pro` above `Acme Corp`).
A query that may be initials (`query_initials`: `ABF`) and is those of the name or
of an alias (`name_initials`) scores at least `INITIALS_MATCH`, below any name
whose word such a query begins. A query of one word too short for that (`a`, `ac`:
`lone_beginning`) scores a text a word of which it begins `LONE_BEGINNING` and a
little more, below initials by more than the lexical vote margin, so that `GE` still
finds General Electric first, while a search box's first letters find names they
begin. A query may also merely mention an entity
(`lexical_matches`: `software company in Port Aldmere` and the city `Port
Aldmere`): its score stands, but it gets no lexical vote in HYBRID (`lexical_votes`).
"""

from __future__ import annotations

import bisect
import itertools
import sys
from collections.abc import Container, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray
from rapidfuzz import fuzz

from redstring.domain.blocking import (
    MIN_CJK_PREFIX_LENGTH,
    MIN_PREFIX_LENGTH,
    lone_beginning,
    name_initials,
    query_ends_unfinished,
    query_initials,
    soundex_of,
)
from redstring.domain.entity import Entity
from redstring.domain.ids import EntityId, TenantId
from redstring.domain.name_forms import identifying_tokens
from redstring.domain.normalization import ascii_letters, name_tokens, normalize_name, other_forms
from redstring.domain.properties import ALIASES, PropertyValue, alias_names
from redstring.domain.ranking import LEXICAL_VOTE_MARGIN, within_margin
from redstring.domain.similarity import (
    BELOW_EXACT,
    MAX_SCORED_WORDS,
    NameComparison,
    compare_names,
)
from redstring.domain.text import MAX_NAME_LENGTH

PROPERTY_WEIGHT = 0.6
# A property value equal to the query: the tier of a name with the same words in
# another order, below an equal name (1.0).
EXACT_PROPERTY = BELOW_EXACT
# A query that is the initials of the name or of an alias (`query_initials`): below
# every name a three-letter query begins a word of (0.56 at the least) by more than
# the lexical vote margin, so an unfinished word is read as a beginning first.
INITIALS_MATCH = 0.5
# A query of one or two letters alone (`lone_beginning`) against a text an identifying
# word of which it begins: this, plus `LONE_FIRST_WORD` when it is the text's first
# identifying word and up to `LONE_SPAN` for the share of that word typed; at most 0.44,
# below `INITIALS_MATCH` by more than `LEXICAL_VOTE_MARGIN` (docs/adr/0003). Such a
# query is no typo of a longer word (`ge` of `Gee`): a text not holding it as a word
# scores this way alone.
LONE_BEGINNING = 0.4
LONE_FIRST_WORD = 0.02
LONE_SPAN = 0.02
# A text that sounds as the query does (the same soundex of their ASCII letters, the
# `s:` key that read it; `Brashi Krik`, `Brushy Creek`) where no word matches: this,
# plus up to `SOUNDS_SPAN` by how alike their letters are (an Indel ratio), so little
# that a text any word of which matches ranks above; none where one is over twice the
# other's length (one word of 800 letters sounds, to soundex, as its first four
# consonants do).
SOUNDS_ALIKE = 0.01
SOUNDS_SPAN = 0.01
SOUNDS_LENGTH_RATIO = 0.5
# A candidate explaining less than this share of the query may be merely mentioned
# (`lexical_matches`): a query naming an entity, even mistyped or unfinished, is
# mostly its name; a description mentions names among other words.
MENTION_SHARE = 0.7
# A text of an entity counts as standing in the query from this share of it matched.
MENTION_COVER = 0.9
# The texts of one entity a query is compared with, at most: its name and normalised
# name, their other forms, about ten aliases and a few other values fit.
MAX_SCORED_TEXTS = 16


class LexicalCandidate(Protocol):
    """What the lexical channel reads of an entity: its identity, type and names.

    An `Entity` is one. A remote store may hand out lighter objects instead, so
    that a query does not build a few hundred whole entities to keep ten.
    """

    @property
    def id(self) -> EntityId: ...

    @property
    def tenant_id(self) -> TenantId: ...

    @property
    def entity_type(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def normalized_name(self) -> str: ...

    @property
    def properties(self) -> Mapping[str, PropertyValue]: ...

    def property_strings(self) -> list[str]:
        """Every string property value, list items included."""
        ...


class MatchedText(NamedTuple):
    """The text of an entity behind its `lexical_score`, as the entity holds it: its
    name (`property` None; also when the stored normalised name a writer gave is what
    matched), an alias (`property` "aliases") or another string value (`property` its
    key)."""

    text: str
    property: str | None


class LexicalMatches(NamedTuple):
    """`lexical_matches`: each entity's `lexical_score`, whether the query merely
    mentions it, and which of its texts the score is of (`matched`)."""

    scores: list[float]
    mentioned: list[bool]
    matched: MatchedTexts


def lexical_scores(query: str, entities: Sequence[LexicalCandidate]) -> list[float]:
    """`lexical_score(query, e)` for every entity, with one batched similarity call."""
    return lexical_matches(query, entities).scores


def lexical_matches(query: str, entities: Sequence[LexicalCandidate]) -> LexicalMatches:
    """Each entity's `lexical_score`, and whether `query` merely mentions it: one of
    the texts the score compares (name, aliases, other string values) stands in the
    query (`MENTION_COVER` of it matched, `compare_names`), none explains
    `MENTION_SHARE` of the query, the query is not the initials of the name or
    of an alias, and the query holds, the same way, another entity whose name shares
    no word with this one's. `software company in Port Aldmere` mentions the city `Port
    Aldmere` and the industry `Software`, naming neither; `Greater Port Aldmere
    area`, which holds one name, may be a longer form of it. One batched comparison
    for both."""
    if not entities:
        return LexicalMatches([], [], MatchedTexts([], _Texts([]), np.zeros(0), []))
    texts = _Texts(entities)
    compared = _compared(query, texts.texts)
    _add_sounds_alike(query, texts, compared.similarity)
    count = len(entities)
    scores = compared.similarity[:count]
    explained = compared.query_share[:count]
    covered = compared.candidate_share[:count]
    weighted = compared.similarity.copy()
    if texts.owners:
        owners = np.asarray(texts.owners)
        found = compared.similarity[count:]
        # The weight is for inexact matches: 1.0 is an equal normalised value.
        weighted[count:] = np.where(found == 1.0, EXACT_PROPERTY, np.asarray(texts.weights) * found)
        np.maximum.at(scores, owners, weighted[count:])
        np.maximum.at(explained, owners, compared.query_share[count:])
        np.maximum.at(covered, owners, compared.candidate_share[count:])
    mentioned = (covered >= MENTION_COVER) & (explained < MENTION_SHARE)
    initials = _initials_matches(query, entities)
    scores[initials] = np.maximum(scores[initials], INITIALS_MATCH)
    mentioned[initials] = False
    if not _apart(entities, np.flatnonzero(mentioned).tolist()):
        mentioned[:] = False
    matched = MatchedTexts(entities, texts, weighted, initials, query_initials(query))
    return LexicalMatches(scores.tolist(), mentioned.tolist(), matched)


def _compared(query: str, texts: list[str]) -> NameComparison:
    """`compare_names` of the query with the texts, and of each of its `other_forms`
    (`AT&T`: `ATT`; `Газпром`: `Gazprom`), the best for each text."""
    forms = [query, *other_forms(query)]
    beginnings = [w for w in map(lone_beginning, forms) if w is not None]
    if not beginnings:
        return _best_compared(forms, texts)
    # One or two letters are no typo of a longer word (`ge` of `Gee`, `ac` of `Bac`): a
    # text holding the word itself is scored word by word, any other by the words it
    # begins alone, so only the first are compared (each text's comparison is its own).
    begun, holds = _lone_beginnings(tuple(dict.fromkeys(beginnings)), texts)
    compared = NameComparison(begun, (begun > 0).astype(np.float64), np.zeros(len(texts)))
    held = np.flatnonzero(holds)
    if len(held):
        found = _best_compared(forms, [texts[i] for i in held])
        for column, value in zip(compared, found, strict=True):
            column[held] = value
    return compared


def _best_compared(forms: list[str], texts: list[str]) -> NameComparison:
    """`compare_names` of each of `forms` (a query and its `other_forms`) with the texts,
    the best for each text."""
    open_end = query_ends_unfinished(forms[0])
    compared = compare_names(forms[0], texts, open_end=open_end)
    for form in forms[1:]:
        other = compare_names(form, texts, open_end=open_end)
        compared = NameComparison(*(np.maximum(a, b) for a, b in zip(compared, other, strict=True)))
    return compared


def _add_sounds_alike(query: str, texts: _Texts, similarity: NDArray[np.float64]) -> None:
    """Raise to their `SOUNDS_ALIKE` score, in `similarity` (the texts' own, in `texts`'
    order), the names and aliases (the texts an `s:` key is of) of the entities no text
    of which scores that much otherwise: for the others, sounding alike changes nothing."""
    count = len(similarity) - len(texts.owners)
    best = similarity[:count].copy()
    if texts.owners:
        np.maximum.at(best, np.asarray(texts.owners, dtype=np.intp), similarity[count:])
    ceiling = SOUNDS_ALIKE + SOUNDS_SPAN
    unmatched = np.flatnonzero(best < ceiling).tolist()
    if not unmatched:
        return
    alone = set(unmatched)
    unmatched += [
        count + i
        for i, (owner, weight) in enumerate(zip(texts.owners, texts.weights, strict=True))
        if owner in alone and weight == 1.0
    ]
    sounds = _sounds_alike_scores([query, *other_forms(query)], [texts.texts[i] for i in unmatched])
    similarity[unmatched] = np.maximum(similarity[unmatched], sounds)


@lru_cache(maxsize=1 << 16)
def _sound_of(text: str) -> tuple[str, str | None]:
    """A text's ASCII letters and their soundex (`soundex_of`): a candidate's texts come
    back on query after query."""
    letters = ascii_letters(text)
    return letters, soundex_of(letters)


def _sounds_alike_scores(queries: Sequence[str], texts: Sequence[str]) -> NDArray[np.float64]:
    """Each text's score as sounding like one of the `queries` (`SOUNDS_ALIKE`), 0.0
    where none does."""
    scores = np.zeros(len(texts), dtype=np.float64)
    wanted: dict[str | None, list[str]] = {}
    for letters, sound in map(_sound_of, queries):
        if sound is not None:
            wanted.setdefault(sound, []).append(letters)
    if not wanted:
        return scores
    sounded = [
        (index, heard)
        for index, text in enumerate(texts)
        if (heard := _sound_of(text))[1] in wanted
    ]
    for index, (candidate, sound) in sounded:
        for query_letters in wanted[sound]:
            shorter, longer = sorted((len(candidate), len(query_letters)))
            if shorter < SOUNDS_LENGTH_RATIO * longer:
                continue
            alike = fuzz.ratio(candidate, query_letters) / 100.0
            scores[index] = max(scores[index], SOUNDS_ALIKE + SOUNDS_SPAN * alike)
    return scores


def _lone_beginnings(
    words: tuple[str, ...], texts: Sequence[str]
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Each text's score as begun by one of `words` (`LONE_BEGINNING`), 0.0 where none
    begins a word of it, and whether it holds one of them as a word. `words` are lone
    beginnings (`lone_beginning`), each at most `_LONE_LONGEST` characters; each text is
    looked up as `_lone_reading` reads it."""
    if any(len(word) > _LONE_LONGEST for word in words):
        raise ValueError(f"a lone beginning has at most {_LONE_LONGEST} characters: {words}")
    scores = np.zeros(len(texts), dtype=np.float64)
    holds = np.zeros(len(texts), dtype=bool)
    for index, text in enumerate(texts):
        begun, held = _lone_reading(text)
        for word in words:
            if word in held:
                holds[index] = True
            if word in begun:
                scores[index] = max(scores[index], begun[word])
    return scores, holds


# The longest word `lone_beginning` gives: one shorter than a word sought by prefix.
_LONE_LONGEST = max(MIN_PREFIX_LENGTH, MIN_CJK_PREFIX_LENGTH) - 1


class _LoneReading(NamedTuple):
    """A text as a lone beginning reads it: each beginning of at most `_LONE_LONGEST`
    characters of its words (`_begun_words`) with the score of the best word it begins
    and is not (`begun`), and its words of at most that length (`held`)."""

    begun: Mapping[str, float]
    held: tuple[str, ...]


@lru_cache(maxsize=1 << 16)
def _lone_reading(text: str) -> _LoneReading:
    """`text` as a lone beginning reads it (`_LoneReading`), kept by text: a lone
    beginning reads every text of every candidate, and a candidate's texts come back
    query after query."""
    begun: dict[str, float] = {}
    held: dict[str, None] = {}
    for position, text_word in enumerate(_begun_words(text)):
        if len(text_word) <= _LONE_LONGEST:
            held[text_word] = None
        for length in range(1, min(len(text_word) - 1, _LONE_LONGEST) + 1):
            # A reading is kept as long as its text: each beginning and each score is
            # one object, shared by every reading that holds it.
            beginning = sys.intern(text_word[:length])
            score = _lone_score(position == 0, length, len(text_word))
            if score > begun.get(beginning, 0.0):
                begun[beginning] = score
    return _LoneReading(begun, tuple(held))


@lru_cache(maxsize=1 << 12)  # 2 x `_LONE_LONGEST` x `MAX_NAME_LENGTH` scores at most
def _lone_score(first: bool, length: int, word_length: int) -> float:
    """The score of a word of `word_length` characters begun by `length` of them, the
    text's first identifying word or not (`first`)."""
    return LONE_BEGINNING + LONE_FIRST_WORD * first + LONE_SPAN * length / word_length


def _begun_words(text: str) -> list[str]:
    """The words of `text` a lone beginning is compared with: its identifying words,
    those a seek finds it by (`w:` keys), or all of its words when it has none (`The
    Company`); the first `MAX_SCORED_WORDS`, as many as the word-by-word score reads."""
    tokens = name_tokens(text)
    return (identifying_tokens(tokens) or tokens)[:MAX_SCORED_WORDS]


def _apart(entities: Sequence[LexicalCandidate], indexes: Sequence[int]) -> bool:
    """Whether two of the entities at `indexes` have names with no word in common."""
    words = [set(entities[i].normalized_name.split()) for i in indexes]
    return any(a.isdisjoint(b) for a, b in itertools.combinations(words, 2))


def lexical_votes(
    ranked: list[tuple[EntityId, float]], mentioned: Container[EntityId]
) -> list[tuple[EntityId, float]]:
    """What the lexical channel votes for against a semantic channel (docs/adr/0003):
    of its ranking `ranked` (best first), the candidates within `LEXICAL_VOTE_MARGIN`
    of its best that the query does not merely mention (`lexical_matches`)."""
    return [
        vote
        for vote in within_margin(ranked, margin=LEXICAL_VOTE_MARGIN)
        if vote[0] not in mentioned
    ]


class _Texts:
    """The texts `lexical_score` compares the query with: each entity's name first (in
    entity order), then, owned by an entity (`owners`, so in entity order too) and
    weighted (`weights`), its stored normalised name where it is not the name's, the
    `other_forms` of its name, its aliases and their `other_forms` (`ATT Inc.` of
    `AT&T Inc.`, `Gazprom` of `Газпром`), then its other string values:
    `MAX_SCORED_TEXTS` at most an entity, each cut to `MAX_NAME_LENGTH` characters, so
    that what one entity holds bounds what a query reading it costs."""

    def __init__(self, entities: Sequence[LexicalCandidate]) -> None:
        self.texts = [_cut(e.name) for e in entities]
        self.owners: list[int] = []
        self.weights: list[float] = []
        for index, entity in enumerate(entities):
            for text, weight, _ in _other_texts(entity, self.texts[index]):
                self.texts.append(_cut(text))
                self.owners.append(index)
                self.weights.append(weight)


def _cut(text: str) -> str:
    return text[:MAX_NAME_LENGTH]


def _other_texts(entity: LexicalCandidate, name: str) -> Iterator[tuple[str, float, str | None]]:
    """An entity's texts but its name (`name`, as scored), each with its weight and the
    value it is read from (None: the name), in the order `_Texts` keeps them, as many as
    it keeps."""
    return itertools.islice(_all_other_texts(entity, name), MAX_SCORED_TEXTS - 1)


def _all_other_texts(
    entity: LexicalCandidate, name: str
) -> Iterator[tuple[str, float, str | None]]:
    # The stored normalised name is scored where it is not the name's (a caller may
    # give one): names normalise alike, so the name alone is scored otherwise.
    if entity.normalized_name != normalize_name(name):
        yield entity.normalized_name, 1.0, None
    for form in other_forms(name):
        yield form, 1.0, None
    strings = entity.property_strings()
    if strings:
        # An alias is another name: it counts as the name does, other values less, and
        # comes before them, so that many other values cannot crowd it out of the cap.
        aliases = dict.fromkeys(alias_names(entity.properties))
        for alias in aliases:
            yield alias, 1.0, alias
        for alias in aliases:
            for form in other_forms(_cut(alias)):
                yield form, 1.0, alias
        for text in strings:
            if text not in aliases:
                yield text, PROPERTY_WEIGHT, text


class MatchedTexts:
    """Which text of each entity its `lexical_score` is of (`of`), worked out only for
    the entities asked about: a query scores a few hundred and keeps a few."""

    def __init__(
        self,
        entities: Sequence[LexicalCandidate],
        texts: _Texts,
        weighted: np.ndarray,
        initials: Sequence[int],
        query_initials: str | None = None,
    ) -> None:
        self._entities = entities
        self._texts = texts
        self._weighted = weighted
        self._initials = frozenset(initials)
        self._query_initials = query_initials

    def of(self, index: int) -> MatchedText | None:
        """The text of `entities[index]` that scores best, the name before an alias
        and an alias before another value when they tie (a form of a text, as
        `AT&T`'s `ATT`, counts as the text); the name or alias of which the query is
        the initials when that scores more; None when nothing scores above 0.0."""
        entity = self._entities[index]
        count = len(self._entities)
        owners = self._texts.owners
        start, end = bisect.bisect_left(owners, index), bisect.bisect_left(owners, index + 1)
        owned = self._weighted[count + start : count + end]
        best = float(self._weighted[index])
        source: str | None = None
        if len(owned) and float(owned.max()) > best:
            offset = int(owned.argmax())
            best = float(owned[offset])
            _, _, source = next(
                itertools.islice(_other_texts(entity, self._texts.texts[index]), offset, None)
            )
        if index in self._initials and best < INITIALS_MATCH:
            best, source = INITIALS_MATCH, _initials_source(entity, self._query_initials)
        if best <= 0.0:
            return None
        if source is None:
            return MatchedText(entity.name, None)
        return MatchedText(source, _property_of(entity.properties, source))


def _initials_source(entity: LexicalCandidate, initials: str | None) -> str | None:
    """The first alias whose initials are `initials` when the name's are not (None: the
    name), as `_initials_matches` compares them."""
    if initials is None or name_initials(_cut(entity.name)) == initials:
        return None
    aliases = alias_names(entity.properties)[: MAX_SCORED_TEXTS - 1]
    return next((a for a in aliases if name_initials(_cut(a)) == initials), None)


def _property_of(properties: Mapping[str, PropertyValue], value: str) -> str:
    """The key of the first property holding `value` (as a value or a list item),
    aliases first, then in key order (`freeze_properties`)."""
    if value in alias_names(properties):
        return ALIASES
    for key, held in properties.items():
        if held == value or (isinstance(held, tuple) and value in held):
            return key
    return "properties"  # a candidate whose `property_strings` its properties lack


def _initials_matches(query: str, entities: Sequence[LexicalCandidate]) -> list[int]:
    """The indexes of the entities whose name or an alias has the query as initials."""
    initials = query_initials(query)
    if initials is None:
        return []
    return [
        index
        for index, entity in enumerate(entities)
        if any(
            name_initials(_cut(name)) == initials
            for name in [entity.name, *alias_names(entity.properties)[: MAX_SCORED_TEXTS - 1]]
        )
    ]


def lexical_score(query: str, entity: Entity) -> float:
    """How well `query` names `entity`, on 0..1."""
    return lexical_scores(query, [entity])[0]
