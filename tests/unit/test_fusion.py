"""Reciprocal rank fusion: explicit cases and Hypothesis properties."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from redstring import EntityId
from redstring.domain.fusion import RRF_K, reciprocal_rank_fusion
from redstring.domain.ids import id_order_key


def _ids(n: int) -> list[EntityId]:
    return [EntityId(uuid.uuid4()) for _ in range(n)]


def test_constant_is_sixty() -> None:
    assert RRF_K == 60


def test_sum_of_reciprocals() -> None:
    a, b, c = _ids(3)
    fused = dict(reciprocal_rank_fusion([[a, b], [b, c]]))
    assert fused[a] == 1 / 61
    assert fused[b] == 1 / 62 + 1 / 61
    assert fused[c] == 1 / 62


def test_equal_fused_scores_tie_by_id() -> None:
    """`high` is 1st then 3rd, `low` 3rd then 1st: equal sums, so the smaller id wins,
    whichever ranking listed it first."""
    low, high = sorted(_ids(2), key=id_order_key)
    filler = _ids(2)
    fused = reciprocal_rank_fusion([[high, filler[0], low], [low, filler[1], high]])
    assert fused[0][1] == fused[1][1]
    assert [fused[0][0], fused[1][0]] == [low, high]


def test_sum_beats_max() -> None:
    """b at ranks 2 and 2 beats a at ranks 1 and absent: sum, not max."""
    a, b, x = _ids(3)
    fused = reciprocal_rank_fusion([[a, b], [x, b]])
    assert fused[0][0] == b


def test_repeated_id_counts_once_at_best_rank() -> None:
    a, b = _ids(2)
    fused = dict(reciprocal_rank_fusion([[a, b, a, a]]))
    assert fused == {a: 1 / 61, b: 1 / 62}


def test_empty() -> None:
    assert reciprocal_rank_fusion([]) == []
    assert reciprocal_rank_fusion([[], []]) == []


POOL = _ids(12)
rankings = st.lists(st.lists(st.sampled_from(POOL), max_size=12), max_size=4)


@given(rankings)
def test_order_is_total_and_independent_of_ranking_order(rs: list[list[EntityId]]) -> None:
    fused = reciprocal_rank_fusion(rs)
    assert fused == reciprocal_rank_fusion(list(reversed(rs)))
    keys = [(-score, id_order_key(e)) for e, score in fused]
    assert keys == sorted(keys)
    assert len({e for e, _ in fused}) == len(fused)


@given(rankings)
def test_score_is_sum_over_rankings_at_best_rank(rs: list[list[EntityId]]) -> None:
    fused = dict(reciprocal_rank_fusion(rs))
    for entity_id, score in fused.items():
        expected = sum(1 / (RRF_K + 1 + r.index(entity_id)) for r in rs if entity_id in r)
        assert abs(score - expected) < 1e-12
    assert set(fused) == {e for r in rs for e in r}


@given(st.lists(st.uuids(), min_size=2, max_size=50))
def test_id_order_key_orders_as_the_id_strings_do(ids: list[uuid.UUID]) -> None:
    """The tie-break is documented (and done in Cypher) as ascending `str(id).lower()`."""
    assert sorted(ids, key=id_order_key) == sorted(ids, key=lambda i: str(i).lower())
