"""`within_margin`: the head of a ranking a channel believes; `semantic_votes`: when the
semantic channel has no vote."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redstring import EntityId
from redstring.domain.lexical import INITIALS_MATCH, LONE_BEGINNING
from redstring.domain.ranking import (
    LEXICAL_VOTE_MARGIN,
    SHORT_QUERY_LEXICAL_FLOOR,
    rank_by_score,
    semantic_votes,
    within_margin,
)


def _ids(n: int) -> list[EntityId]:
    return [EntityId(uuid.uuid4()) for _ in range(n)]


def test_keeps_the_scores_within_the_margin_of_the_best_in_order() -> None:
    a, b, c, d = _ids(4)
    ranked = [(a, 0.9), (b, 0.86), (c, 0.85), (d, 0.7)]
    assert within_margin(ranked, margin=0.05) == [(a, 0.9), (b, 0.86), (c, 0.85)]
    assert within_margin(ranked, margin=0.0) == [(a, 0.9)]
    assert within_margin(ranked, margin=1.0) == ranked


def test_a_floor_drops_even_the_best() -> None:
    a, b = _ids(2)
    assert within_margin([(a, 0.6), (b, 0.58)], margin=0.05, floor=0.59) == [(a, 0.6)]
    assert within_margin([(a, 0.6), (b, 0.58)], margin=0.05, floor=0.7) == []


def test_nothing_ranked_keeps_nothing() -> None:
    assert within_margin([], margin=0.05) == []


def test_the_lexical_margin_is_a_twentieth() -> None:
    assert LEXICAL_VOTE_MARGIN == 0.05


@given(
    st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=20),
    st.floats(min_value=0.0, max_value=1.0),
)
def test_a_prefix_of_the_ranking_holding_the_best(scores: list[float], margin: float) -> None:
    ranked = rank_by_score(zip(_ids(len(scores)), scores, strict=True))
    kept = within_margin(ranked, margin=margin)
    assert kept == ranked[: len(kept)]
    assert bool(kept) == bool(ranked)
    assert all(score >= ranked[0][1] - margin for _, score in kept)
    assert all(score < ranked[0][1] - margin for _, score in ranked[len(kept) :])


@pytest.mark.parametrize(
    ("query", "lexical_best", "votes"),
    [
        ("ac", 0.43, False),  # first letters a name begins
        ("Gla", 0.9, False),
        ("ABF", INITIALS_MATCH, False),
        ("AT&T", INITIALS_MATCH, False),  # one word as the seek reads it, `att`
        ("S & P", LONE_BEGINNING, False),
        ("ac", None, True),  # the lexical channel ranks nothing
        ("tea", 0.015, True),  # a name that only sounds alike
        ("東京", 0.79, True),  # Han: two characters are a whole name
        ("Acme", 1.0, True),  # four letters
        ("a b", 0.5, True),  # two words
    ],
)
def test_the_semantic_channel_votes_but_for_a_short_word_a_name_answers(
    query: str, lexical_best: float | None, votes: bool
) -> None:
    assert semantic_votes(query, lexical_best) is votes


def test_the_short_query_floor_is_the_lone_beginnings() -> None:
    assert SHORT_QUERY_LEXICAL_FLOOR == LONE_BEGINNING
