"""`string_similarity`: the one measure of how alike two names are, on 0..1.

Symmetric; exactly 1.0 when the normalised names are equal and below 1.0
otherwise. Names are compared word by word over their identifying words
(`identifying_tokens`: no legal form, title or stopword), so that the part of
a name that says which one it is decides, not the filler it shares:

- the same words in another order score `BELOW_EXACT`; the same words once
  titles, stopwords and legal forms are read alike (`Lord Voldemort` /
  `Voldemort`, `ACME Corporation` / `Acme Corp`) score `CANONICAL_MATCH`;
- otherwise each identifying word is matched to its most alike word of the
  other name (rapidfuzz's Indel ratio, so `Holdngs` meets `Holdings`; below
  `TOKEN_FLOOR` a word is unmatched). `coverage` is the share of a name's
  letters so matched. A name whose words all stand in the other one
  (`Acme` in `Acme Widgets`) scores high through the larger coverage; an
  unmatched word on *both* sides is a conflict (`Acme Holdings` /
  `Apex Holdings`) and scales the score by `(1 - conflict) ** CONFLICT_POWER`,
  the conflict being the smaller unmatched share, so that words in common do
  not make two different names alike;
- a name written with other spacing (`MacDonald` / `Mac Donald`) is also
  compared as one joined word, and a name of one word with the other's first
  words joined (`walmart` / `Wal-Mart Stores`, `kettlecreek` / `Kettle Creek
  Outfitters`: as alike as those words spaced);
- a word of one letter, an initial (`Q` of `Q. Brandt`), matches a longer word it
  is the first letter of with `INITIAL_CREDIT`, the least a match is, either way
  round, in a name that matches another word of the other side (initials alone,
  `a b f`, are the lexical channel's `query_initials`);
- a word of Han or kana characters standing inside another (`控股` in
  `腾讯控股有限公司`: such names are written without spaces) matches it with
  `INFIX_CREDIT` plus up to `INFIX_SPAN` for the share of it the shorter is, less
  than a beginning typed as far.

No statistics of any corpus are used (docs/adr/0003). `string_similarities`
is the same function over many candidates at once; with `open_end=True` it
also reads the query's last word as possibly unfinished (`lexical_scores`): of
three letters or more, a beginning of a word (`PREFIX_CREDIT`); of one or two after
other words (`Acme Torque W`), a beginning as an initial is (`INITIAL_CREDIT`).
`compare_names` adds, from the same comparison, how much of the query each
candidate explains and how much of each candidate the query does: the two
coverages, which tell a query naming an entity from one mentioning it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from itertools import accumulate, chain
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray
from rapidfuzz import fuzz, process

from redstring.domain.blocking import (
    MIN_PREFIX_LENGTH,
    is_cjk_word,
    is_unspaced_word,
    may_begin_a_word,
)
from redstring.domain.name_forms import canonical_tokens, identifying_tokens
from redstring.domain.normalization import normalize_name

# The same words in another order.
BELOW_EXACT = 0.99
# Names equal once titles, stopwords and legal forms are read alike.
CANONICAL_MATCH = 0.95
# The word-by-word comparison's top (the same identifying words, other legal forms),
# which scales it.
SAME_IDENTITY = 0.93
# Word pairs less alike than this are unmatched (an Indel ratio: one edit in a
# four-letter word is 0.75, in a three-letter one 0.67).
TOKEN_FLOOR = 0.7
# Weight of the larger coverage (one name standing wholly in the other).
COVERAGE_WEIGHT = 0.8
# The score is scaled by (1 - conflict) ** CONFLICT_POWER, where conflict is the
# smaller of the two names' unmatched shares.
CONFLICT_POWER = 2
# The joined-word comparison counts from this ratio up.
JOINED_FLOOR = 0.85
# An unfinished last query word long enough to be sought as a beginning
# (`may_begin_a_word`: three letters, two Han or kana characters) matches a word it begins with `PREFIX_CREDIT` plus
# up to `PREFIX_SPAN` for the share of it typed: always less than the whole word, so a
# finished word wins.
PREFIX_CREDIT = 0.75
PREFIX_SPAN = 0.2
# An unfinished last word's likeness to a word it does not begin counts this much.
OPEN_TYPO_WEIGHT = 0.9
# A word of one letter (an initial, `Q.` of `Q. Brandt`) matches a word it is the first
# letter of this much: the least a match is, below the whole word.
INITIAL_CREDIT = TOKEN_FLOOR
# A Han or kana word of two characters or more inside another (either way round) matches
# it with `INFIX_CREDIT` plus up to `INFIX_SPAN` for the share of it the shorter is: at
# the match floor or above, and below an unfinished word's `PREFIX_CREDIT`.
INFIX_CREDIT = 0.7
INFIX_SPAN = 0.2


class _Identity(NamedTuple):
    tokens: tuple[str, ...]  # identifying words, compared one by one
    joined: str  # the same, without spaces
    beginnings: tuple[str, ...]  # the first 2, 3, ... (not all) of them joined
    words: tuple[str, ...]  # every normalised word, sorted
    canonical: tuple[str, ...]  # canonical words, sorted
    initials: frozenset[str]  # its initials (`_standing_initials`)


# Identifying words past these many are not compared word by word: each candidate
# word is a column, and each query word a row, of the comparison of every query word
# with every word of a few hundred candidates' texts. A name has a few; a query that
# describes its entity can have more.
MAX_SCORED_WORDS = 16
MAX_QUERY_WORDS = 32


@lru_cache(maxsize=1 << 16)
def _identity(normalized: str, max_words: int = MAX_SCORED_WORDS) -> _Identity:
    words = normalized.split()
    canonical = canonical_tokens(words)
    tokens = tuple(identifying_tokens(canonical) or canonical)[:max_words]
    beginnings = tuple(accumulate(tokens))[1:-1]
    return _Identity(
        tokens,
        "".join(tokens),
        beginnings,
        tuple(sorted(words)),
        tuple(sorted(canonical)),
        _standing_initials(words),
    )


def _standing_initials(words: Sequence[str]) -> frozenset[str]:
    """The words of one letter that stand as initials (`q` of `q brandt`): beside no
    other word of one or two letters, which would make them a group of letters read
    as one word (`at t`, `a p` of `AT&T`, `A&P`: `ampersand_joined`) or a row of
    initials (`j r r tolkien`), neither of which names a word by its first letter."""
    short = [len(word) <= 2 for word in words]
    return frozenset(
        word
        for i, word in enumerate(words)
        if _is_initial(word)
        and not (i > 0 and short[i - 1])
        and not (i + 1 < len(words) and short[i + 1])
    )


def _ratios(left: Sequence[str], right: Sequence[str]) -> NDArray[np.float64]:
    scores = process.cdist(left, right, scorer=fuzz.ratio, dtype=np.float64)
    return np.asarray(scores, dtype=np.float64) / 100.0


def _sums(owner: NDArray[np.intp], values: NDArray[np.float64], size: int) -> NDArray[np.float64]:
    """`values` summed per `owner`, in order (so the sums are the same either way round)."""
    return np.bincount(owner, weights=values, minlength=size).astype(np.float64)


def _word_scores(
    query: _Identity, names: list[_Identity], open_end: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The word-by-word score of each of `names` (all non-empty) against `query`, and
    the shares of the query and of the name each explains (`NameComparison`)."""
    q_tokens = query.tokens
    all_tokens = list(chain.from_iterable(name.tokens for name in names))
    unique = list(dict.fromkeys(all_tokens))
    index = {token: i for i, token in enumerate(unique)}
    flat_index = np.fromiter(
        map(index.__getitem__, all_tokens), dtype=np.intp, count=len(all_tokens)
    )
    counts = np.fromiter((len(name.tokens) for name in names), dtype=np.intp, count=len(names))
    sims = _ratios(q_tokens, unique)
    last = q_tokens[-1]
    if open_end and may_begin_a_word(last):
        # A word still being typed is likelier a beginning than a misspelling.
        sims[-1, sims[-1] < 1.0] *= OPEN_TYPO_WEIGHT
        begun = [u for u, t in enumerate(unique) if t.startswith(last) and len(t) > len(last)]
        if begun:
            lengths_begun = np.fromiter((len(unique[u]) for u in begun), dtype=np.float64)
            credit = PREFIX_CREDIT + PREFIX_SPAN * len(last) / lengths_begun
            sims[-1, begun] = np.maximum(sims[-1, begun], credit)
    _credit_infixes(sims, q_tokens, unique)
    sims[sims < TOKEN_FLOOR] = 0.0
    lengths = np.fromiter(map(len, unique), dtype=np.float64, count=len(unique))
    owner = np.repeat(np.arange(len(names)), counts)
    first = np.zeros(len(names), dtype=np.intp)
    np.cumsum(counts[:-1], out=first[1:])
    per_token = sims[:, flat_index]  # query word x name word, for every name
    # One or two letters after other words (`Acme Torque W`) begin the word being typed,
    # as an initial does; alone, they are the lexical channel's `lone_beginning`.
    last_begun = open_end and len(q_tokens) > 1 and len(last) < MIN_PREFIX_LENGTH
    _credit_beginnings(
        per_token, query, names, last_begun, unique, lengths, flat_index, owner, first
    )
    token_lengths = lengths[flat_index]
    # Name side: each word's best match among the query's words, summed in word order.
    best = per_token.max(axis=0)
    name_total = _sums(owner, token_lengths, len(names))
    name_cover = _sums(owner, token_lengths * best, len(names))
    name_miss = _sums(owner, token_lengths * (best == 0), len(names))
    # Query side: each query word's best match among a name's words, in word order.
    query_cover = np.zeros(len(names))
    query_miss = np.zeros(len(names))
    query_total = 0.0
    for row, token in enumerate(q_tokens):
        grouped = np.maximum.reduceat(per_token[row], first)
        query_cover += len(token) * grouped
        query_miss += len(token) * (grouped == 0)
        query_total += len(token)
    name_cover /= name_total
    name_miss /= name_total
    query_cover /= query_total
    query_miss /= query_total
    high = np.maximum(query_cover, name_cover)
    low = np.minimum(query_cover, name_cover)
    conflict = np.minimum(query_miss, name_miss)
    blend = COVERAGE_WEIGHT * high + (1 - COVERAGE_WEIGHT) * low
    score: NDArray[np.float64] = SAME_IDENTITY * blend * (1 - conflict) ** CONFLICT_POWER
    # Other spacing: compared joined, when the number of words differs.
    spaced = np.flatnonzero(counts != len(q_tokens))
    if len(spaced):
        joined = _ratios([query.joined], [names[i].joined for i in spaced])[0]
        joined[joined < JOINED_FLOOR] = 0.0
        score[spaced] = np.maximum(score[spaced], SAME_IDENTITY * joined)
        query_cover[spaced] = np.maximum(query_cover[spaced], joined)
        name_cover[spaced] = np.maximum(name_cover[spaced], joined)
        _credit_joined_beginnings(query, names, spaced, score, query_cover, name_cover)
    return score, query_cover, name_cover


def _credit_joined_beginnings(
    query: _Identity,
    names: list[_Identity],
    spaced: NDArray[np.intp],
    score: NDArray[np.float64],
    query_cover: NDArray[np.float64],
    name_cover: NDArray[np.float64],
) -> None:
    """Raise the `spaced` names' scores and shares to those of the other spacing of a
    beginning, where one side is one word (`walmart`, a search box's): the other side's
    first words joined (`beginnings`), against that word, when as alike as
    `JOINED_FLOOR`. Either side's beginning, so the measure stays symmetric; the side of
    the beginning is explained by its share of letters, as the same words spaced would
    explain it. (A query of several words is seldom several joined, and comparing every
    candidate's beginnings with it cost a tenth of the lexical score.)"""
    owners: list[int] = []
    beginnings: list[str] = []
    if len(query.tokens) == 1:  # the query against each name's beginnings
        for i in spaced.tolist():
            for beginning in names[i].beginnings:
                owners.append(i)
                beginnings.append(beginning)
    if owners:
        ratios = _ratios([query.joined], beginnings)[0]
        lengths = np.fromiter(map(len, beginnings), dtype=np.float64, count=len(beginnings))
        wholes = np.fromiter((len(names[i].joined) for i in owners), dtype=np.float64)
        _raise(
            np.asarray(owners),
            ratios,
            ratios * lengths / wholes,
            True,
            score,
            query_cover,
            name_cover,
        )
    # Each name of one word against the query's beginnings.
    fewer = [i for i in spaced.tolist() if len(names[i].tokens) == 1]
    if fewer and query.beginnings:
        matrix = _ratios(query.beginnings, [names[i].joined for i in fewer])
        best = matrix.argmax(axis=0)
        ratios = matrix[best, np.arange(len(fewer))]
        lengths = np.fromiter(map(len, query.beginnings), dtype=np.float64)[best]
        parts = ratios * lengths / len(query.joined)
        _raise(np.asarray(fewer), ratios, parts, False, score, query_cover, name_cover)


def _raise(
    owners: NDArray[np.intp],
    ratios: NDArray[np.float64],
    parts: NDArray[np.float64],
    query_whole: bool,
    score: NDArray[np.float64],
    query_cover: NDArray[np.float64],
    name_cover: NDArray[np.float64],
) -> None:
    """Raise the `owners`' score and shares to those of a joined beginning matched at
    `ratios` (of `JOINED_FLOOR` or more), the side of the beginning explained by `parts`
    and the other wholly (the query's when `query_whole`)."""
    kept = ratios >= JOINED_FLOOR
    owners, ratios, parts = owners[kept], ratios[kept], parts[kept]
    blend = COVERAGE_WEIGHT * ratios + (1 - COVERAGE_WEIGHT) * parts
    np.maximum.at(score, owners, SAME_IDENTITY * blend)
    np.maximum.at(query_cover, owners, ratios if query_whole else parts)
    np.maximum.at(name_cover, owners, parts if query_whole else ratios)


def _credit_beginnings(
    per_token: NDArray[np.float64],
    identity: _Identity,
    names: list[_Identity],
    last_begun: bool,
    unique: Sequence[str],
    lengths: NDArray[np.float64],
    flat_index: NDArray[np.intp],
    owner: NDArray[np.intp],
    first: NDArray[np.intp],
) -> None:
    """Raise `per_token` (query word x each name's words in turn, `unique[flat_index]`) to
    `INITIAL_CREDIT` where a word of one letter is the first letter of a longer word of
    the other side (`Q` of `Q. Brandt` and `Quinn`), either way round, and, when
    `last_begun`, where the query's last word begins a longer word of the name; in the
    names that match a word of the query otherwise: a beginning alone names nothing (`a
    b f` is for `query_initials`, `L'govskiy` is no `L` and `govskiy`). An initial is a
    word of one letter standing alone (`_standing_initials`: not the `T` of `AT&T`)."""
    query = identity.tokens
    initials = [u for u in np.flatnonzero(lengths == 1).tolist() if _is_initial(unique[u])]
    asked = [(row, word) for row, word in enumerate(query) if word in identity.initials]
    if last_begun and query[-1] not in identity.initials:
        asked.append((len(query) - 1, query[-1]))
    if not initials and not asked:
        return
    eligible = (np.maximum.reduceat(per_token.max(axis=0), first) > 0)[owner]
    for row, word in asked:
        begun = np.fromiter((len(t) > len(word) and t.startswith(word) for t in unique), dtype=bool)
        columns = np.flatnonzero(begun[flat_index] & eligible)
        per_token[row, columns] = np.maximum(per_token[row, columns], INITIAL_CREDIT)
    for u in initials:
        rows = np.fromiter(
            (row for row, word in enumerate(query) if len(word) > 1 and word[0] == unique[u]),
            dtype=np.intp,
        )
        if len(rows):
            standing = [
                c
                for c in np.flatnonzero((flat_index == u) & eligible).tolist()
                if unique[u] in names[owner[c]].initials
            ]
            block = np.ix_(rows, np.asarray(standing, dtype=np.intp))
            per_token[block] = np.maximum(per_token[block], INITIAL_CREDIT)


def _is_initial(word: str) -> bool:
    return len(word) == 1 and word.isalpha() and not is_cjk_word(word)


def _credit_infixes(sims: NDArray[np.float64], left: Sequence[str], right: Sequence[str]) -> None:
    """Raise `sims` (`left` word x `right` word) to the infix credit of each pair of Han or
    kana words of which one stands inside the other (`is_unspaced_word`)."""
    inner = [(row, word) for row, word in enumerate(left) if is_unspaced_word(word)]
    if not inner:
        return
    outer = [(column, word) for column, word in enumerate(right) if is_unspaced_word(word)]
    for row, word in inner:
        for column, other in outer:
            if word != other and (word in other or other in word):
                shorter, longer = sorted((len(word), len(other)))
                credit = INFIX_CREDIT + INFIX_SPAN * shorter / longer
                sims[row, column] = max(sims[row, column], credit)


def string_similarities(
    query: str, candidates: Sequence[str], *, open_end: bool = False
) -> NDArray[np.float64]:
    """`string_similarity(query, c)` for every candidate `c`, computed in batches.

    Each distinct normalised candidate is scored once. With `open_end`, the
    query's last identifying word may be unfinished: a candidate word it begins
    counts as a match worth less than the whole word (so no longer symmetric).
    """
    return compare_names(query, candidates, open_end=open_end).similarity


class NameComparison(NamedTuple):
    """The query against each candidate: `similarity` (`string_similarities`), and how
    much of the query each candidate explains (`query_share`) and of each candidate
    the query does (`candidate_share`), on 0..1: the share of one side's identifying
    letters that the other's words match, each word at its likeness (the query's
    unfinished last word, with `open_end`, at its credit), or the joined-word
    likeness; both 1.0 for a candidate equal to the query once normalised,
    canonically or reordered. `Port Aldmere` is wholly in `software company in
    Port Aldmere` (candidate share 1.0) but explains under half of it."""

    similarity: NDArray[np.float64]
    query_share: NDArray[np.float64]
    candidate_share: NDArray[np.float64]


def compare_names(
    query: str, candidates: Sequence[str], *, open_end: bool = False
) -> NameComparison:
    """`query` against every candidate (`NameComparison`), each distinct normalised
    candidate compared once; a candidate's comparison is the same whichever others it is
    compared with."""
    empty = np.zeros(0, dtype=np.float64)
    if not candidates:
        return NameComparison(empty, empty, empty)
    q = normalize_name(query)
    normalized = list(map(normalize_name, candidates))
    position: dict[str, int] = {}
    where = np.fromiter(
        (position.setdefault(n, len(position)) for n in normalized),
        dtype=np.intp,
        count=len(normalized),
    )
    names = list(position)
    unique = np.zeros(len(names), dtype=np.float64)
    query_share = np.zeros(len(names), dtype=np.float64)
    name_share = np.zeros(len(names), dtype=np.float64)
    equal = position.get(q)
    present = [i for i, n in enumerate(names) if n] if q else []
    if present:
        query_identity = _identity(q, MAX_QUERY_WORDS)
        identities = [_identity(names[i]) for i in present]
        score, query_cover, name_cover = _word_scores(query_identity, identities, open_end)
        canonical = np.fromiter(
            (i.canonical == query_identity.canonical for i in identities), dtype=bool
        )
        score[canonical] = np.maximum(score[canonical], CANONICAL_MATCH)
        reordered = np.fromiter((i.words == query_identity.words for i in identities), dtype=bool)
        score[reordered] = BELOW_EXACT
        query_cover[canonical | reordered] = name_cover[canonical | reordered] = 1.0
        unique[present] = score
        query_share[present] = query_cover
        name_share[present] = name_cover
    if equal is not None:
        unique[equal] = query_share[equal] = name_share[equal] = 1.0
    return NameComparison(unique[where], query_share[where], name_share[where])


def string_similarity(a: str, b: str) -> float:
    """How alike two names are, on 0..1 (see the module docstring for the contract)."""
    return float(string_similarities(a, [b])[0])
