"""Ordering scored ids: by score descending, then by the one tie-break rule."""

from __future__ import annotations

from collections.abc import Iterable

from redstring.domain.blocking import is_cjk_word, query_words
from redstring.domain.ids import EntityId, id_order_key


def rank_by_score(scored: Iterable[tuple[EntityId, float]]) -> list[tuple[EntityId, float]]:
    """Each id once, at its best score, ordered by score then `id_order_key`.

    The order is total, so it is the same whatever order the input came in.
    """
    # Keyed by `id_order_key`, an int: a UUID hashes in Python code, an int does not.
    best: dict[int, tuple[float, EntityId]] = {}
    for entity_id, score in scored:
        key = id_order_key(entity_id)
        kept = best.get(key)
        if kept is None or score > kept[0]:
            best[key] = (score, entity_id)
    # Decorated so the sort compares plain floats and ints; the keys are distinct.
    ordered = sorted([(-score, key) for key, (score, _) in best.items()])
    return [(best[key][1], -negated) for negated, key in ordered]


# The lexical channel votes in fusion only for the candidates scoring within this of its
# best: a candidate far below merely shares a common word or a deletion key with the
# query (docs/adr/0003, "What the lexical channel votes for").
LEXICAL_VOTE_MARGIN = 0.05


# A query of one word of at most this many letters once normalised (`ac`, `Gla`, `ABF`,
# `AT&T`) is a search box's first letters or initials, in which the semantic channel
# reads little: it does not vote in fusion where the lexical channel's best match
# scores `SHORT_QUERY_LEXICAL_FLOOR` or more (docs/adr/0003, "What the semantic channel
# votes for"). Han and kana are no letters here: two or three of them are a whole name
# (`東京`), whose meaning the semantic channel may read.
MAX_SHORT_QUERY_LENGTH = 3
# A name such a query begins (`domain/lexical.py` `LONE_BEGINNING`), an initials match,
# a word equal to it: a match the semantic channel has nothing to add to; a name that
# only sounds as the query does (0.01 to 0.02) is none.
SHORT_QUERY_LEXICAL_FLOOR = 0.4


def semantic_votes(query: str, lexical_best: float | None) -> bool:
    """Whether the semantic channel votes in fusion for `query` beside a lexical channel
    whose best match scores `lexical_best` (None: it ranks nothing): not for one word of
    `MAX_SHORT_QUERY_LENGTH` letters or fewer, read as the prefix seek reads it (`&`
    groups joined), when that best is `SHORT_QUERY_LEXICAL_FLOOR` or more."""
    if lexical_best is None or lexical_best < SHORT_QUERY_LEXICAL_FLOOR:
        return True
    tokens = query_words(query)
    if len(tokens) != 1 or len(tokens[0]) > MAX_SHORT_QUERY_LENGTH:
        return True
    return is_cjk_word(tokens[0])


def lexical_first(
    lexical: list[tuple[EntityId, float]], semantic: list[tuple[EntityId, float]]
) -> list[EntityId]:
    """HYBRID's one ranking for a query the semantic channel has no vote on
    (`semantic_votes`): the names the lexical channel scores `SHORT_QUERY_LEXICAL_FLOOR`
    or more (the query begins, abbreviates or is them), in its order, then the semantic
    channel's ranking of the rest, where names that only sound as the query does would
    have filled the places left."""
    head = [entity_id for entity_id, score in lexical if score >= SHORT_QUERY_LEXICAL_FLOOR]
    named = set(head)
    return head + [entity_id for entity_id, _ in semantic if entity_id not in named]


def within_margin(
    ranked: list[tuple[EntityId, float]], *, margin: float, floor: float = 0.0
) -> list[tuple[EntityId, float]]:
    """The head of a best-first ranking a channel believes: the entries scoring at
    least `floor` and within `margin` of the best score (docs/adr/0003)."""
    if not ranked:
        return ranked
    bar = max(floor, ranked[0][1] - margin)
    return [(entity_id, score) for entity_id, score in ranked if score >= bar]
