"""Retriever behaviour, row by row of the spec, each against a plausible wrong version."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import uuid
from collections.abc import Sequence
from typing import Any

import pytest

from redstring import (
    Candidates,
    DimensionMismatchError,
    Entity,
    EntityId,
    GraphStore,
    HashingEmbeddingProvider,
    InMemoryGraphStore,
    InMemoryVectorStore,
    InvalidInputError,
    Redstring,
    RetrievalMode,
    Retriever,
    StoreUnavailableError,
    TenantId,
    VectorMatch,
    VectorRecord,
    VectorStore,
    build_graph,
)
from redstring.composition.candidates import SeparateReads
from redstring.domain.ids import id_order_key
from redstring.domain.lexical import EXACT_PROPERTY, LexicalCandidate, lexical_scores
from redstring.domain.similarity import string_similarity
from redstring.testing import CountingGraphStore, make_entity, new_tenant

from .doubles import CountingEmbeddings, RebuildingGraphStore

DIM = 64


async def _retriever(
    entities: Sequence[Entity], graph: GraphStore | None = None
) -> tuple[Retriever, CountingEmbeddings]:
    embeddings = CountingEmbeddings(DIM)
    vectors = InMemoryVectorStore(DIM)
    graph = graph or InMemoryGraphStore()
    await build_graph(entities, embeddings=embeddings, vectors=vectors, graph=graph)
    return Retriever(embeddings=embeddings, vectors=vectors, graph=graph), embeddings


async def _with_query_vectors(
    entities: Sequence[Entity],
    query: str,
    toward: Sequence[Entity] = (),
    away: Sequence[Entity] = (),
) -> Retriever:
    """A retriever over `entities` whose only vectors are `query`'s own (hashing
    provider) for `toward` and its opposite for `away`."""
    graph = InMemoryGraphStore()
    await graph.upsert_entities(entities)
    embeddings = HashingEmbeddingProvider(DIM)
    [query_vector] = await embeddings.embed_query([query])
    vectors = InMemoryVectorStore(DIM)
    records = [(e, 1.0) for e in toward] + [(e, -1.0) for e in away]
    await vectors.upsert(
        [
            VectorRecord(
                entity_id=e.id,
                tenant_id=e.tenant_id,
                vector=tuple(sign * x for x in query_vector),
                entity_type=e.entity_type,
            )
            for e, sign in records
        ]
    )
    return Retriever(embeddings=embeddings, vectors=vectors, graph=graph)


def _names(result: object) -> list[str]:
    return [m.entity.name for m in result.matches]  # type: ignore[attr-defined]


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
@pytest.mark.parametrize("mode", [RetrievalMode.LEXICAL, RetrievalMode.HYBRID])
async def test_acme_corporation_finds_acme_corp_first_whatever_the_ids(
    order: tuple[int, ...], mode: RetrievalMode
) -> None:
    tenant = new_tenant()
    ids = sorted((uuid.uuid4() for _ in range(3)), key=str)
    names = ["Acme Corp", "Apex Corporation", "Acme Widgets"]
    entities = [
        make_entity(tenant, name, "org", entity_id=ids[i])
        for name, i in zip(names, order, strict=True)
    ]
    retriever, _ = await _retriever(entities)
    result = await retriever.retrieve("ACME Corporation", tenant, k=3, mode=mode)
    assert _names(result)[0] == "Acme Corp"


@pytest.mark.parametrize("mcu_first", [True, False])
async def test_an_alias_equal_to_the_query_ranks_first_in_lexical_mode(mcu_first: bool) -> None:
    """`Corvid` names the entity whose alias is `Corvid` before one whose name begins
    with it, whichever has the lower id (the tie-break)."""
    tenant = new_tenant()
    ids = sorted((uuid.uuid4() for _ in range(2)), key=id_order_key)
    mcu_id, corvid_id = ids if mcu_first else ids[::-1]
    corvid = make_entity(
        tenant,
        "Corvid Semiconductors",
        "org",
        entity_id=corvid_id,
        properties={"aliases": ("Corvid",)},
    )
    entities = [
        make_entity(tenant, "Corvid Lowpower MCU", "product", entity_id=mcu_id),
        corvid,
        make_entity(tenant, "Corvid Edge NPU", "product"),
    ]
    retriever, _ = await _retriever(entities)
    result = await retriever.retrieve("Corvid", tenant, k=3, mode=RetrievalMode.LEXICAL)
    assert _names(result)[0] == "Corvid Semiconductors"
    assert result.matches[0].lexical == EXACT_PROPERTY


@pytest.mark.parametrize(
    ("query", "expected"), [("Acme", "Acme Corp"), ("Lovelace", "Ada Lovelace")]
)
async def test_one_word_query_finds_names_holding_the_word(query: str, expected: str) -> None:
    tenant = new_tenant()
    entities = [make_entity(tenant, n) for n in ("Acme Corp", "Ada Lovelace", "Charles Babbage")]
    retriever, embeddings = await _retriever(entities)
    result = await retriever.retrieve(query, tenant, k=5, mode=RetrievalMode.LEXICAL)
    assert expected in _names(result)
    assert embeddings.queries == 0  # LEXICAL mode never embeds


async def test_a_search_boxs_first_letters_find_the_names_they_begin() -> None:
    """`a` and `ac` alone are sought by prefix (`lone_beginning`): the names a word of
    which they begin rank lexically, a name beginning with them first; `GE` is still
    General Electric's initials first."""
    tenant = new_tenant()
    names = (
        "Acme Corp",
        "Zephyr Acoustics",
        "Charles Babbage",
        "General Electric",
        "Gemini Labs",
        "Orbital Geodesy",
    )
    entities = [make_entity(tenant, n) for n in names]
    retriever, _ = await _retriever(entities)
    for query, expected in [
        ("ac", ["Acme Corp", "Zephyr Acoustics"]),
        ("A", ["Acme Corp", "Zephyr Acoustics"]),
        ("GE", ["General Electric", "Gemini Labs", "Orbital Geodesy"]),
    ]:
        result = await retriever.retrieve(query, tenant, k=6, mode=RetrievalMode.LEXICAL)
        assert _names(result) == expected, query
        hybrid = await retriever.retrieve(query, tenant, k=6, mode=RetrievalMode.HYBRID)
        assert expected[0] in [m.entity.name for m in hybrid.matches if m.lexical], query


@pytest.mark.parametrize(
    ("query", "expected"), [("Lodz", "Łódź"), ("Naestved", "Næstved"), ("koge", "Køge")]
)
async def test_a_name_is_found_typed_without_its_special_latin_letters(
    query: str, expected: str
) -> None:
    """`ł`, `æ`, `ø` are no base letter with a mark: folded to ASCII all the same, so the
    name typed without them scores as the name itself does."""
    tenant = new_tenant()
    names = ("Łódź", "Næstved", "Køge", "Lodi", "Kogel", "Nastola")
    retriever, _ = await _retriever([make_entity(tenant, n, "city") for n in names])
    result = await retriever.retrieve(query, tenant, k=3, mode=RetrievalMode.LEXICAL)
    assert _names(result)[0] == expected
    assert result.matches[0].lexical == 1.0


@pytest.mark.parametrize(
    ("query", "expected"),
    [("King", "Kingsreach"), ("The", "Thermo Fisher"), ("Spa", "Sparrow Labs"), ("Sir", "Sirius")],
)
async def test_a_name_begun_by_a_title_stopword_or_legal_form_is_found_as_it_is_typed(
    query: str, expected: str
) -> None:
    """`King`, `The`, `Spa` and `Sir` are no identifying words once finished, so they
    were not sought as beginnings: a search box found Kingsreach at `Kin` and `Kings`,
    and nothing at `King`."""
    tenant = new_tenant()
    names = ("Kingsreach", "Thermo Fisher", "Sparrow Labs", "Sirius", "Acme Corp")
    retriever, _ = await _retriever([make_entity(tenant, n) for n in names])
    result = await retriever.retrieve(query, tenant, k=3, mode=RetrievalMode.LEXICAL)
    assert _names(result)[:1] == [expected]


async def test_two_characters_of_an_unspaced_cjk_name_find_it() -> None:
    tenant = new_tenant()
    names = ("腾讯控股有限公司", "阿里巴巴集团", "腾飞科技", "トヨタ自動車", "삼성전자")
    retriever, _ = await _retriever([make_entity(tenant, n) for n in names])
    pairs = [("腾讯", "腾讯控股有限公司"), ("トヨ", "トヨタ自動車"), ("삼성", "삼성전자")]
    for query, expected in pairs:
        result = await retriever.retrieve(query, tenant, k=3, mode=RetrievalMode.LEXICAL)
        assert _names(result)[0] == expected


async def test_a_han_or_kana_word_finds_the_unspaced_names_it_stands_inside() -> None:
    """`ソニー` finds `株式会社ソニー`, `控股` each holding company, though no word of
    theirs begins with it (`query_infixes`, `x:` keys), names and aliases alike."""
    tenant = new_tenant()
    names = ("腾讯控股有限公司", "阿里巴巴集团控股有限公司", "トヨタ自動車", "腾飞科技")
    entities = [make_entity(tenant, n) for n in names]
    entities.append(make_entity(tenant, "Sony", properties={"aliases": ["株式会社ソニー"]}))
    retriever, _ = await _retriever(entities)
    pairs = [
        ("控股", {"腾讯控股有限公司", "阿里巴巴集团控股有限公司"}),
        ("自動車", {"トヨタ自動車"}),
        ("ソニー", {"Sony"}),
    ]
    for query, expected in pairs:
        result = await retriever.retrieve(query, tenant, k=3, mode=RetrievalMode.LEXICAL)
        assert set(_names(result)) == expected, query


async def test_a_name_s_first_words_typed_without_spaces_find_it() -> None:
    """`walmart` and `kettlecreek` rank the name as `wal mart` and `kettle creek` do,
    above a name that only begins alike; highlighted where they matched."""
    tenant = new_tenant()
    names = ("Kettle Creek Outfitters", "Kettle Store Brand Coffee", "Wal-Mart Stores", "Walton")
    retriever, _ = await _retriever([make_entity(tenant, n) for n in names])
    for joined, spaced, expected in [
        ("kettlecreek", "kettle creek", "Kettle Creek Outfitters"),
        ("walmart", "wal mart", "Wal-Mart Stores"),
    ]:
        found = await retriever.retrieve(joined, tenant, k=2, mode=RetrievalMode.LEXICAL)
        as_spaced = await retriever.retrieve(spaced, tenant, k=2, mode=RetrievalMode.LEXICAL)
        assert _names(found)[0] == expected
        assert found.matches[0].lexical == pytest.approx(as_spaced.matches[0].lexical)


async def test_channel_scores_are_kept_and_none_differs_from_zero() -> None:
    tenant = new_tenant()
    found = make_entity(tenant, "Ada Lovelace", "person")
    opposite = make_entity(tenant, "Zyx", "person")
    retriever = await _with_query_vectors([found, opposite], "Lovelace", away=[opposite])
    result = await retriever.retrieve("Lovelace", tenant, k=5)
    by_name = {m.entity.name: m for m in result.matches}
    assert by_name["Zyx"].semantic is not None
    assert by_name["Zyx"].semantic == pytest.approx(0.0, abs=1e-6)
    assert by_name["Zyx"].lexical is None
    assert by_name["Ada Lovelace"].semantic is None
    assert by_name["Ada Lovelace"].lexical == pytest.approx(
        string_similarity("Lovelace", "Ada Lovelace")
    )
    assert by_name["Ada Lovelace"].score == pytest.approx(1 / 61)
    # The text behind the lexical score comes with it, and is absent where it is.
    assert (by_name["Ada Lovelace"].matched_text, by_name["Ada Lovelace"].matched_property) == (
        "Ada Lovelace",
        None,
    )
    assert (by_name["Zyx"].matched_text, by_name["Zyx"].matched_property) == (None, None)


@pytest.mark.parametrize("mode", [RetrievalMode.HYBRID, RetrievalMode.LEXICAL])
async def test_a_match_says_which_of_its_texts_the_query_matched(mode: RetrievalMode) -> None:
    tenant = new_tenant()
    renamed = make_entity(
        tenant, "Meta Platforms", "company", properties={"aliases": ["Facebook", "FB"]}
    )
    # Its name shares a key with the query; the value the query equals scores more.
    fans = make_entity(tenant, "Facebook Fan Club", "group", properties={"nickname": "facebok"})
    retriever, _ = await _retriever([renamed, fans])
    result = await retriever.retrieve("Facebok", tenant, k=5, mode=mode)
    assert {m.entity.name: (m.matched_text, m.matched_property) for m in result.matches} == {
        "Meta Platforms": ("Facebook", "aliases"),
        "Facebook Fan Club": ("facebok", "nickname"),
    }


@pytest.mark.parametrize("mode", [RetrievalMode.HYBRID, RetrievalMode.LEXICAL])
async def test_hybrid_gives_no_lexical_vote_to_a_name_the_query_merely_mentions(
    mode: RetrievalMode,
) -> None:
    """`software company in Port Aldmere` describes a company: the city it mentions is
    the lexical channel's best, but no vote in HYBRID (docs/adr/0003), where it would
    add its lexical first place to its semantic second and outrank the company."""
    tenant = new_tenant()
    low, middle, high = sorted((uuid.uuid4() for _ in range(3)), key=id_order_key)
    city = make_entity(tenant, "Port Aldmere", "city", entity_id=low)
    industry = make_entity(tenant, "Software", "industry", entity_id=middle)
    company = make_entity(tenant, "Glasswing", "company", entity_id=high)
    query = "software company in Port Aldmere"
    retriever = await _with_query_vectors(
        [city, industry, company], query, toward=[company], away=[city]
    )
    result = await retriever.retrieve(query, tenant, k=3, mode=mode)
    if mode is RetrievalMode.HYBRID:
        assert _names(result) == ["Glasswing", "Port Aldmere"]
        # The city keeps its lexical score, though it did not vote.
        assert result.matches[1].lexical == pytest.approx(string_similarity(query, city.name))
        assert result.matches[1].score == pytest.approx(1 / 62)
    else:
        assert _names(result) == ["Port Aldmere", "Software"]


async def test_hybrid_keeps_the_lexical_vote_of_the_one_name_a_longer_query_holds() -> None:
    """`Greater Port Aldmere metropolitan area` holds one name: it may be a longer form of
    it, so the city votes, and its lexical first place outranks the semantic first."""
    tenant = new_tenant()
    low, high = sorted((uuid.uuid4() for _ in range(2)), key=id_order_key)
    city = make_entity(tenant, "Port Aldmere", "city", entity_id=high)
    other = make_entity(tenant, "Glasswing", "company", entity_id=low)
    query = "Greater Port Aldmere metropolitan area"
    retriever = await _with_query_vectors([city, other], query, toward=[other], away=[city])
    result = await retriever.retrieve(query, tenant, k=2)
    assert _names(result) == ["Port Aldmere", "Glasswing"]


async def test_k_at_zero_one_and_above_the_corpus() -> None:
    tenant = new_tenant()
    entities = [make_entity(tenant, n) for n in ("Acme Corp", "Acme Widgets", "Acme Labs")]
    retriever, _ = await _retriever(entities)
    assert (await retriever.retrieve("Acme", tenant, k=0)).matches == ()
    assert len((await retriever.retrieve("Acme", tenant, k=1)).matches) == 1
    assert len((await retriever.retrieve("Acme", tenant, k=100)).matches) == 3


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
async def test_blank_query_is_refused(query: str) -> None:
    retriever, _ = await _retriever([])
    with pytest.raises(ValueError, match="blank"):
        await retriever.retrieve(query, new_tenant())


@pytest.mark.parametrize(
    ("query", "said"),
    [("acme\ud800", "lone surrogate at position 4"), ("ac\x00me", "NUL character")],
)
async def test_a_query_no_store_or_provider_can_take_is_refused(query: str, said: str) -> None:
    """An HTTP provider cannot encode a lone surrogate (`UnicodeEncodeError`), and Neo4j
    takes neither: refused before anything is asked, in every mode."""
    retriever, embeddings = await _retriever([])
    for mode in RetrievalMode:
        with pytest.raises(InvalidInputError, match=f"^query contains a {said}"):
            await retriever.retrieve(query, new_tenant(), mode=mode)
    assert embeddings.queries == 0


@pytest.mark.parametrize(("query", "kind"), [(5, "int"), (b"Acme", "bytes"), (None, "NoneType")])
async def test_a_query_that_is_no_string_is_refused_as_such(query: object, kind: str) -> None:
    retriever, _ = await _retriever([])
    with pytest.raises(InvalidInputError, match=f"^query must be a string, got {kind}$"):
        await retriever.retrieve(query, new_tenant())  # type: ignore[arg-type]


@pytest.mark.parametrize("given", [0, 2])
async def test_a_provider_answering_a_query_with_no_or_two_vectors_is_said_so(given: int) -> None:
    class Miscounting(HashingEmbeddingProvider):
        async def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
            return [[1.0] * self.dimension] * given

    retriever = Retriever(
        embeddings=Miscounting(DIM), vectors=InMemoryVectorStore(DIM), graph=InMemoryGraphStore()
    )
    with pytest.raises(ValueError, match=f"returned {given} vectors for 1 texts"):
        await retriever.retrieve("Acme", new_tenant())


async def test_negative_k_is_refused() -> None:
    retriever, _ = await _retriever([])
    with pytest.raises(ValueError, match="negative"):
        await retriever.retrieve("Acme", new_tenant(), k=-1)


async def test_empty_type_filter_gives_no_matches() -> None:
    tenant = new_tenant()
    retriever, embeddings = await _retriever([make_entity(tenant, "Acme")])
    assert (await retriever.retrieve("Acme", tenant, entity_types=[])).matches == ()
    assert embeddings.queries == 0


async def test_type_filter_applies_before_k_in_both_channels() -> None:
    tenant = new_tenant()
    orgs = [make_entity(tenant, name, "org") for name in ("Acme", "ACME", "acme.")]
    person = make_entity(tenant, "Acme Smith", "person")
    retriever, _ = await _retriever([*orgs, person])
    for mode in RetrievalMode:
        result = await retriever.retrieve("Acme", tenant, k=1, entity_types=["person"], mode=mode)
        assert _names(result) == ["Acme Smith"], mode
        unfiltered = await retriever.retrieve("Acme", tenant, k=1, mode=mode)
        assert _names(unfiltered) != ["Acme Smith"], mode


async def test_tenants_with_colliding_ids_never_mix() -> None:
    tenant_a, tenant_b = new_tenant(), new_tenant()
    shared = uuid.uuid4()
    retriever, _ = await _retriever(
        [
            make_entity(tenant_a, "Acme Corp", entity_id=shared),
            make_entity(tenant_b, "Acme Rockets", entity_id=shared),
        ]
    )
    result_a = await retriever.retrieve("Acme", tenant_a, k=5)
    result_b = await retriever.retrieve("Acme", tenant_b, k=5)
    assert _names(result_a) == ["Acme Corp"]
    assert _names(result_b) == ["Acme Rockets"]
    assert (await retriever.retrieve("Acme", new_tenant(), k=5)).matches == ()


async def test_equal_entities_tie_by_id() -> None:
    tenant = new_tenant()
    twins = [make_entity(tenant, "Acme Corp", "org") for _ in range(4)]
    retriever, _ = await _retriever(twins)
    result = await retriever.retrieve("Acme Corp", tenant, k=4)
    assert [m.entity.id for m in result.matches] == sorted((t.id for t in twins), key=id_order_key)
    # Equal channel scores still take distinct ranks, in id order, in each channel.
    scores = [m.score for m in result.matches]
    assert scores == sorted(scores, reverse=True)
    assert len(set(scores)) == 4


@pytest.mark.parametrize("mode", [RetrievalMode.LEXICAL, RetrievalMode.HYBRID])
async def test_more_equal_lexical_candidates_than_fetched_keep_the_lowest_ids(
    mode: RetrievalMode,
) -> None:
    # 40 equal names, 5 asked: the channel asks for 15 and must keep the 15 lowest ids,
    # however many more share the best score.
    tenant = new_tenant()
    twins = [make_entity(tenant, "Acme Corp", "org") for _ in range(40)]
    retriever, _ = await _retriever(twins)
    result = await retriever.retrieve("Acme Corp", tenant, k=5, mode=mode)
    lowest = sorted((t.id for t in twins), key=id_order_key)[:5]
    if mode is RetrievalMode.LEXICAL:
        assert [m.entity.id for m in result.matches] == lowest
    else:  # the semantic channel ties too, and fusion breaks the tie by id
        assert len(result.matches) == 5
        assert all(m.lexical == 1.0 for m in result.matches)


async def test_a_store_that_rebuilds_entities_gives_the_same_result() -> None:
    tenant = new_tenant()
    entities = [
        make_entity(tenant, n, t)
        for n, t in [("Acme Corp", "org"), ("Acme Widgets", "org"), ("Ada Lovelace", "person")]
    ]
    plain, _ = await _retriever(entities)
    rebuilding, _ = await _retriever(entities, RebuildingGraphStore())
    for query in ("ACME Corporation", "Acme", "Lovelace"):
        expected = await plain.retrieve(query, tenant, k=3)
        assert await rebuilding.retrieve(query, tenant, k=3) == expected


async def test_mutating_a_result_does_not_change_a_later_retrieve() -> None:
    tenant = new_tenant()
    entity = make_entity(tenant, "Acme Corp", properties={"aliases": ("ACME",)})
    retriever, _ = await _retriever([entity])
    first = await retriever.retrieve("Acme", tenant, k=5)
    snapshot = first.model_dump()
    with contextlib.suppress(AttributeError, TypeError):
        first.matches.clear()  # type: ignore[attr-defined]
    with contextlib.suppress(AttributeError, TypeError):
        first.matches[0].entity.properties["aliases"] = ("changed",)  # type: ignore[index]
    with contextlib.suppress(AttributeError, TypeError):
        first.matches[0].entity.name = "changed"  # type: ignore[misc]
    second = await retriever.retrieve("Acme", tenant, k=5)
    assert second.model_dump() == snapshot


class _FixedVectors:
    """A vector store double answering a fixed ranking, recording the k it is asked for."""

    def __init__(self, ranking: list[tuple[EntityId, float]], dimension: int = DIM) -> None:
        self.ranking = ranking
        self.dimension = dimension
        self.asked_k: list[int] = []

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        raise NotImplementedError

    async def search(
        self,
        vector: Sequence[float],
        tenant_id: TenantId,
        *,
        k: int,
        entity_types: Sequence[str] | None = None,
    ) -> list[VectorMatch]:
        self.asked_k.append(k)
        return [VectorMatch(entity_id=e, score=s) for e, s in self.ranking[:k]]

    async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        raise NotImplementedError


async def test_overfetch_lets_a_runner_up_in_both_channels_win() -> None:
    tenant = new_tenant()
    semantic_only = make_entity(tenant, "Zzyzx")
    lexical_best = make_entity(tenant, "Acme Widgets")
    both_second = make_entity(tenant, "Widgets Acme")  # 0.99: within the lexical margin
    graph = InMemoryGraphStore()
    await graph.upsert_entities([semantic_only, lexical_best, both_second])
    vectors = _FixedVectors([(semantic_only.id, 0.9), (both_second.id, 0.8)])
    embeddings = HashingEmbeddingProvider(DIM)
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    result = await retriever.retrieve("Acme Widgets", tenant, k=1)
    assert _names(result) == ["Widgets Acme"]
    assert vectors.asked_k == [3]
    blind = Retriever(embeddings=embeddings, vectors=vectors, graph=graph, overfetch=1)
    assert _names(await blind.retrieve("Acme Widgets", tenant, k=1)) != ["Widgets Acme"]


async def test_hybrid_fuses_only_the_lexical_candidates_within_the_margin() -> None:
    """A name the semantic channel misses, which the lexical channel ranks first, is not
    outvoted by a weak lexical candidate that the semantic channel also lists."""
    tenant = new_tenant()
    target = make_entity(tenant, "Acme")  # lexical 1.0 for "Acme"
    weak = make_entity(tenant, "Acme Widgets")  # lexical 0.81: past the margin
    other = make_entity(tenant, "Zzyzx")
    graph = InMemoryGraphStore()
    await graph.upsert_entities([target, weak, other])
    vectors = _FixedVectors([(other.id, 0.9), (weak.id, 0.8)])  # blind to the target
    retriever = Retriever(embeddings=HashingEmbeddingProvider(DIM), vectors=vectors, graph=graph)
    hybrid = await retriever.retrieve("Acme", tenant, k=3)
    assert _names(hybrid)[-1] == "Acme Widgets"  # one vote (1/62) under two firsts (1/61)
    weak_match = next(m for m in hybrid.matches if m.entity.name == "Acme Widgets")
    assert weak_match.lexical == pytest.approx(string_similarity("Acme", "Acme Widgets"))
    lexical = await retriever.retrieve("Acme", tenant, k=3, mode=RetrievalMode.LEXICAL)
    assert _names(lexical) == ["Acme", "Acme Widgets"]  # alone, the channel ranks them all


async def test_dangling_match_is_skipped_without_backfill() -> None:
    """A bad row (no entity) before good rows: skip it and go on, but do not refill to k."""
    tenant = new_tenant()
    good, third = make_entity(tenant, "Good"), make_entity(tenant, "Third")
    graph = InMemoryGraphStore()
    await graph.upsert_entities([good, third])
    ghost = EntityId(uuid.uuid4())
    vectors = _FixedVectors([(ghost, 0.9), (good.id, 0.8), (third.id, 0.7)])
    retriever = Retriever(embeddings=HashingEmbeddingProvider(DIM), vectors=vectors, graph=graph)
    result = await retriever.retrieve("anything", tenant, k=2, mode=RetrievalMode.SEMANTIC)
    assert _names(result) == ["Good"]
    assert result.matches[0].semantic == 0.8


async def test_store_calls_are_batched() -> None:
    tenant = new_tenant()
    graph = CountingGraphStore(InMemoryGraphStore())
    entities = [make_entity(tenant, f"Acme {i}") for i in range(30)]
    retriever, embeddings = await _retriever(entities, graph)
    graph.calls.clear()
    await retriever.retrieve("Acme", tenant, k=10)
    # Whole lexical candidates are reused; the rest are fetched in one call.
    assert graph.calls["find_lexical_candidates"] == 1
    assert graph.calls["get_entities"] <= 1
    assert embeddings.queries == 1


async def test_dimension_mismatch_is_refused_before_any_embedding() -> None:
    embeddings = CountingEmbeddings(DIM)
    with pytest.raises(DimensionMismatchError):
        await build_graph(
            [make_entity(new_tenant(), "A")],
            embeddings=embeddings,
            vectors=InMemoryVectorStore(DIM + 1),
            graph=InMemoryGraphStore(),
        )
    assert embeddings.documents == 0
    with pytest.raises(DimensionMismatchError):
        Retriever(embeddings=embeddings, vectors=InMemoryVectorStore(8), graph=InMemoryGraphStore())


async def test_build_graph_embeds_in_batches_and_writes_relationships() -> None:
    tenant = new_tenant()
    entities = [make_entity(tenant, f"E{i}") for i in range(10)]
    embeddings = CountingEmbeddings(DIM)
    graph = InMemoryGraphStore()
    from redstring.testing import make_relationship

    rel = make_relationship(entities[9], entities[0])
    await build_graph(
        entities,
        [rel],
        embeddings=embeddings,
        vectors=InMemoryVectorStore(DIM),
        graph=graph,
        batch_size=4,
    )
    assert embeddings.documents == 3
    found = await graph.relationships_of([entities[0].id], tenant)
    assert [r.id for r in found[entities[0].id]] == [rel.id]


async def test_build_graph_embeds_only_entities_whose_text_changed() -> None:
    tenant = new_tenant()
    entities = [make_entity(tenant, f"E{i}") for i in range(4)]
    embeddings = CountingEmbeddings(DIM)
    vectors, graph = InMemoryVectorStore(DIM), InMemoryGraphStore()
    await build_graph(entities, embeddings=embeddings, vectors=vectors, graph=graph)
    described = entities[1].model_copy(update={"description": "now a bakery"})
    dated = entities[2].model_copy(update={"properties": {"founded": 1999}})
    embeddings.document_texts.clear()
    again = [entities[0], described, dated, entities[3]]
    await build_graph(again, embeddings=embeddings, vectors=vectors, graph=graph, batch_size=2)
    assert embeddings.document_texts == [described.embedding_text()]
    assert await graph.get_entities([dated.id], tenant) == [dated]
    [probe] = await embeddings.embed_documents([described.embedding_text()])
    [match] = await vectors.search(probe, tenant, k=1)
    assert (match.entity_id, round(match.score, 6)) == (described.id, 1.0)


async def test_an_entity_without_direction_is_embedded_once_a_write_not_again_by_the_read_back() -> (
    None
):
    """It has no vector, so no source: each write embeds it again (it may have changed),
    but the read-back after the write leaves it alone."""
    tenant = new_tenant()
    embeddings = CountingEmbeddings(DIM)
    vectors, graph = InMemoryVectorStore(DIM), InMemoryGraphStore()
    acme, bare = make_entity(tenant, "Acme"), make_entity(tenant, "!!!", "???")
    await build_graph([acme, bare], embeddings=embeddings, vectors=vectors, graph=graph)
    embeddings.document_texts.clear()
    await build_graph([acme, bare], embeddings=embeddings, vectors=vectors, graph=graph)
    assert embeddings.document_texts == [bare.embedding_text()]


class _SlowVectors(InMemoryVectorStore):
    """Vector writes that end turns of the loop after they start, as a server's would."""

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        await asyncio.sleep(0.01)
        await super().upsert(records)


async def test_build_graph_embeds_an_entity_the_batch_before_is_writing_the_vector_of() -> None:
    # Batch 2 reads the sources while batch 1's vector of the same entity is written: it
    # reads the old source, the one its own text would give.
    tenant = new_tenant()
    entity = make_entity(tenant, "E0")
    embeddings = CountingEmbeddings(DIM)
    vectors, graph = _SlowVectors(DIM), InMemoryGraphStore()
    await build_graph([entity], embeddings=embeddings, vectors=vectors, graph=graph)
    renamed = entity.model_copy(update={"description": "now a bakery"})
    await build_graph(
        [renamed, entity], embeddings=embeddings, vectors=vectors, graph=graph, batch_size=1
    )
    [probe] = await embeddings.embed_documents([entity.embedding_text()])
    [match] = await vectors.search(probe, tenant, k=1)
    assert (match.entity_id, round(match.score, 6)) == (entity.id, 1.0)


async def test_a_candidate_the_lexical_score_finds_nothing_alike_in_is_no_lexical_match() -> None:
    tenant = new_tenant()
    embeddings = CountingEmbeddings(DIM)
    vectors, graph = InMemoryVectorStore(DIM), InMemoryGraphStore()
    entity = make_entity(tenant, "Acme Corp")
    await build_graph([entity], embeddings=embeddings, vectors=vectors, graph=graph)
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    query = "Acme" * 200  # one word: its prefix finds the candidate, its length scores it 0
    assert lexical_scores(query, [entity]) == [0.0]
    lexical = await retriever.retrieve(query, tenant, k=5, mode=RetrievalMode.LEXICAL)
    assert lexical.matches == ()
    hybrid = await retriever.retrieve(query, tenant, k=5)
    assert [(m.entity.id, m.lexical) for m in hybrid.matches] == [(entity.id, None)]


class _GatedGraph(InMemoryGraphStore):
    """A view of `shared` whose entity writes wait for `gate`, as a writer's round trip
    that another writer's whole upsert overtakes."""

    def __init__(self, shared: InMemoryGraphStore, gate: asyncio.Event) -> None:
        super().__init__()
        self.shared, self.gate = shared, gate

    async def get_entities(self, ids: Sequence[EntityId], tenant_id: TenantId) -> list[Entity]:
        return await self.shared.get_entities(ids, tenant_id)

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        await self.gate.wait()
        await self.shared.upsert_entities(entities)


class _GatedVectors(InMemoryVectorStore):
    """A view of `shared` whose vector writes wait for `gate`."""

    def __init__(self, shared: InMemoryVectorStore, gate: asyncio.Event) -> None:
        super().__init__(shared.dimension)
        self.shared, self.gate = shared, gate

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        await self.gate.wait()
        await self.shared.upsert(records)

    async def sources(
        self, entity_ids: Sequence[EntityId], tenant_id: TenantId
    ) -> dict[EntityId, str | None]:
        return await self.shared.sources(entity_ids, tenant_id)

    async def search(self, *args: Any, **kwargs: Any) -> list[VectorMatch]:
        return await self.shared.search(*args, **kwargs)

    async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        await self.shared.delete(entity_ids, tenant_id)


async def _vector_text(
    embeddings: HashingEmbeddingProvider, vectors: InMemoryVectorStore, entity: Entity
) -> bool:
    """Whether `vectors` holds `entity`'s vector as of its present text."""
    [probe] = await embeddings.embed_documents([entity.embedding_text()])
    [match] = await vectors.search(probe, entity.tenant_id, k=1)
    return (match.entity_id, round(match.score, 6)) == (entity.id, 1.0)


@pytest.mark.parametrize("overtaken", ["graph write", "vector write"])
async def test_two_upserts_of_one_entity_end_with_the_vector_of_the_text_stored(
    overtaken: str,
) -> None:
    """Writer A's round trip is overtaken by writer B's whole upsert: B's graph write
    before A's (A's text kept, A's vector not written: A read it as current), or B's
    vector write before A's (B's text kept, A's vector written over it)."""
    tenant = new_tenant()
    embeddings = HashingEmbeddingProvider(DIM)
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(DIM)
    stored = make_entity(tenant, "Apex Corporation", "org")
    await build_graph([stored], embeddings=embeddings, vectors=vectors, graph=graph)
    renamed = stored.model_copy(update={"name": "Zenith Holdings"})
    gate = asyncio.Event()
    if overtaken == "graph write":
        a_writes, b_writes = stored, renamed
        a_stores = {"graph": _GatedGraph(graph, gate), "vectors": vectors}
    else:
        a_writes, b_writes = renamed, stored
        a_stores = {"graph": graph, "vectors": _GatedVectors(vectors, gate)}
    a = asyncio.ensure_future(build_graph([a_writes], embeddings=embeddings, **a_stores))
    await asyncio.sleep(0.01)  # A has read the sources and waits at its gated write
    await build_graph([b_writes], embeddings=embeddings, vectors=vectors, graph=graph)
    gate.set()
    await a
    [final] = await graph.get_entities([stored.id], tenant)
    assert await _vector_text(embeddings, vectors, final)


async def test_a_delete_between_an_upsert_s_two_writes_leaves_no_vector() -> None:
    """The upsert writes the entity; a whole delete (vector, then entity) runs; then the
    upsert's vector write lands. Its read-back finds no entity: it deletes that vector,
    which would otherwise take a place of the semantic channel's `k` for ever."""
    tenant = new_tenant()
    embeddings = HashingEmbeddingProvider(DIM)
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(DIM)
    entity = make_entity(tenant, "Gamma Widgets", "org")
    gate = asyncio.Event()
    upsert = asyncio.ensure_future(
        build_graph(
            [entity], embeddings=embeddings, vectors=_GatedVectors(vectors, gate), graph=graph
        )
    )
    await asyncio.sleep(0.01)  # the entity is written, its vector waits at the gate
    assert await graph.get_entities([entity.id], tenant) == [entity]
    client = Redstring(embeddings=embeddings, vectors=vectors, graph=graph)
    assert await client.delete([entity.id], tenant) == 1
    gate.set()
    await upsert
    assert await graph.get_entities([entity.id], tenant) == []
    assert await vectors.sources([entity.id], tenant) == {}


class _FailingVectorWrites(_GatedVectors):
    """A view of `shared` whose vector writes wait for `gate`, then fail."""

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        await self.gate.wait()
        raise StoreUnavailableError("the vector store went away")


@pytest.mark.parametrize("ending", ["failure", "cancellation"])
async def test_a_rename_whose_vector_write_never_lands_leaves_no_vector_of_the_old_text(
    ending: str,
) -> None:
    """The entity is written renamed (and retyped), then its vector write fails or the
    upsert is cancelled: the entity is left without a vector, found lexically, never
    with its old text's vector, which the semantic channel (and its type filter, which
    reads the vector's type) would still find by the old name."""
    tenant = new_tenant()
    embeddings = HashingEmbeddingProvider(DIM)
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(DIM)
    acme = make_entity(tenant, "Acme Corp", "org")
    await build_graph([acme], embeddings=embeddings, vectors=vectors, graph=graph)
    renamed = make_entity(tenant, "Zephyr Holdings", "person", entity_id=acme.id)
    gate = asyncio.Event()
    view = (_FailingVectorWrites if ending == "failure" else _GatedVectors)(vectors, gate)
    rename = asyncio.ensure_future(
        build_graph([renamed], embeddings=embeddings, vectors=view, graph=graph)
    )
    await asyncio.sleep(0.01)  # the entity is written, its vector waits at the gate
    assert await graph.get_entities([acme.id], tenant) == [renamed]
    if ending == "failure":
        gate.set()
    else:
        rename.cancel()
    with pytest.raises(StoreUnavailableError if ending == "failure" else asyncio.CancelledError):
        await rename
    assert await vectors.sources([acme.id], tenant) == {}
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph)
    semantic = await retriever.retrieve(
        "Acme Corp", tenant, k=3, entity_types=["org"], mode=RetrievalMode.SEMANTIC
    )
    assert semantic.matches == ()
    lexical = await retriever.retrieve("Zephyr Holdings", tenant, k=3, mode=RetrievalMode.LEXICAL)
    assert [m.entity for m in lexical.matches] == [renamed]


class _SlowVectorsFailingAt(InMemoryVectorStore):
    """Vector writes that end turns of the loop after they start; the `fail_at`-th raises."""

    def __init__(self, fail_at: int | None = None) -> None:
        super().__init__(DIM)
        self.fail_at, self.calls = fail_at, 0

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        self.calls += 1
        await asyncio.sleep(0.01)
        if self.calls == self.fail_at:
            raise StoreUnavailableError("the vector store went away")
        await super().upsert(records)


async def test_an_entity_renamed_in_two_batches_whose_second_vector_write_fails_has_no_vector() -> (
    None
):
    """Batch 1 renames the entity and writes its vector while batch 2 renames it again and
    writes it; batch 2's vector write fails. Batch 1's vector, of a text the entity no
    longer has, must be gone: deleted once batch 1's write has landed, not before."""
    tenant = new_tenant()
    embeddings = HashingEmbeddingProvider(DIM)
    graph, vectors = InMemoryGraphStore(), _SlowVectorsFailingAt()
    acme = make_entity(tenant, "Acme Corp", "org")
    await build_graph([acme], embeddings=embeddings, vectors=vectors, graph=graph)
    apex = make_entity(tenant, "Apex Holdings", "org", entity_id=acme.id)
    zephyr = make_entity(tenant, "Zephyr Holdings", "person", entity_id=acme.id)
    vectors.fail_at = vectors.calls + 2
    with pytest.raises(StoreUnavailableError):
        await build_graph(
            [apex, zephyr], embeddings=embeddings, vectors=vectors, graph=graph, batch_size=1
        )
    assert await graph.get_entities([acme.id], tenant) == [zephyr]
    assert await vectors.sources([acme.id], tenant) == {}


async def test_a_rename_waiting_for_the_batch_before_is_cancelled_without_cutting_it_short() -> (
    None
):
    """Batch 2 renames an entity of batch 1, so its delete waits for batch 1's vector
    write; cancelled there, it leaves that write to finish: batch 1 is written whole."""
    tenant = new_tenant()
    embeddings = HashingEmbeddingProvider(DIM)
    graph, vectors = InMemoryGraphStore(), InMemoryVectorStore(DIM)
    acme = make_entity(tenant, "Acme Corp", "org")
    await build_graph([acme], embeddings=embeddings, vectors=vectors, graph=graph)
    apex = make_entity(tenant, "Apex Holdings", "org", entity_id=acme.id)
    zephyr = make_entity(tenant, "Zephyr Holdings", "person", entity_id=acme.id)
    gate = asyncio.Event()
    writes = asyncio.ensure_future(
        build_graph(
            [apex, zephyr],
            embeddings=embeddings,
            vectors=_GatedVectors(vectors, gate),
            graph=graph,
            batch_size=1,
        )
    )
    await asyncio.sleep(0.01)  # batch 1's vector waits at the gate, batch 2 waits for it
    writes.cancel()
    await asyncio.sleep(0.01)
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await writes
    assert await graph.get_entities([acme.id], tenant) == [apex]
    assert await _vector_text(embeddings, vectors, apex)


class _CountingDeletes(InMemoryVectorStore):
    """Keeps the number of ids of each `delete` call."""

    def __init__(self) -> None:
        super().__init__(DIM)
        self.deleted: list[int] = []

    async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        self.deleted.append(len(entity_ids))
        await super().delete(entity_ids, tenant_id)


async def test_only_an_entity_whose_vector_is_of_another_text_costs_a_delete() -> None:
    tenant = new_tenant()
    embeddings = HashingEmbeddingProvider(DIM)
    graph, vectors = InMemoryGraphStore(), _CountingDeletes()
    entities = [make_entity(tenant, f"E{i}") for i in range(5)]
    await build_graph(entities, embeddings=embeddings, vectors=vectors, graph=graph, batch_size=2)
    await build_graph(entities, embeddings=embeddings, vectors=vectors, graph=graph, batch_size=2)
    assert vectors.deleted == []  # new, then unchanged
    renamed = [e.model_copy(update={"description": "renamed"}) for e in entities]
    again = [renamed[0], entities[1], entities[2], renamed[3], renamed[4]]
    await build_graph(again, embeddings=embeddings, vectors=vectors, graph=graph, batch_size=2)
    assert vectors.deleted == [1, 1, 1]  # one call a batch, for the renamed alone
    for entity in again:
        assert await _vector_text(embeddings, vectors, entity)


@pytest.mark.parametrize(
    ("query", "answer"), [("ABF", "Alder Birchwood Foods"), ("gla", "Glasswing Software")]
)
async def test_a_short_word_alone_is_ranked_by_the_lexical_channel_in_hybrid(
    query: str, answer: str
) -> None:
    """Initials and first letters: the semantic channel, whose vector here points
    straight at another entity, has no vote on the first places while the lexical
    channel ranks a name the query begins or abbreviates; its ranking fills the places
    after them, its score shown."""
    tenant = new_tenant()
    found, semantic_pick = make_entity(tenant, answer), make_entity(tenant, "Zephyr Labs")
    retriever = await _with_query_vectors([found, semantic_pick], query, toward=[semantic_pick])
    result = await retriever.retrieve(query, tenant, k=5, mode=RetrievalMode.HYBRID)
    assert [(m.entity.name, m.semantic) for m in result.matches] == [
        (answer, None),
        ("Zephyr Labs", pytest.approx(1.0)),
    ]
    assert result.matches[1].lexical is None
    # Four letters are heard: both channels vote.
    longer = await _with_query_vectors([found, semantic_pick], "Glas", toward=[semantic_pick])
    both = await longer.retrieve("Glas", tenant, k=5, mode=RetrievalMode.HYBRID)
    assert "Zephyr Labs" in _names(both)


async def test_a_short_word_alone_has_no_name_that_only_sounds_like_it_after_its_names() -> None:
    """`IBM` abbreviates International Business Machines and sounds a little like `iPhone
    14` (0.012): that lexical candidate is no name the query begins or abbreviates, and
    the places after the names it does are the semantic channel's, not such a candidate's."""
    tenant = new_tenant()
    ibm, iphone, zephyr = (
        make_entity(tenant, name)
        for name in ("International Business Machines", "iPhone 14", "Zephyr Labs")
    )
    retriever = await _with_query_vectors([ibm, iphone, zephyr], "IBM", toward=[zephyr])
    lexical = await retriever.retrieve("IBM", tenant, k=5, mode=RetrievalMode.LEXICAL)
    assert _names(lexical) == ["International Business Machines", "iPhone 14"]
    hybrid = await retriever.retrieve("IBM", tenant, k=5, mode=RetrievalMode.HYBRID)
    assert _names(hybrid)[:2] == ["International Business Machines", "Zephyr Labs"]
    assert "iPhone 14" not in _names(hybrid)[:2]
    assert [m.score for m in hybrid.matches] == sorted(
        (m.score for m in hybrid.matches), reverse=True
    )


@pytest.mark.parametrize(
    ("query", "lexical_only"), [("tea", "Tao"), ("東京", "東京電力")], ids=["sounds", "han"]
)
async def test_a_short_word_a_name_only_sounds_like_or_of_han_is_heard(
    query: str, lexical_only: str
) -> None:
    """`tea` sounds as `Tao` does (0.01-0.02), which says nothing of what it means; `東京`
    is a whole name the semantic channel may read (`Tokyo`): both channels vote."""
    tenant = new_tenant()
    answer, sounded = make_entity(tenant, "Darjeeling Estates"), make_entity(tenant, lexical_only)
    retriever = await _with_query_vectors([answer, sounded], query, toward=[answer])
    result = await retriever.retrieve(query, tenant, k=5, mode=RetrievalMode.HYBRID)
    assert {m.entity.name for m in result.matches} == {"Darjeeling Estates", lexical_only}


async def test_a_short_word_alone_that_the_lexical_channel_ranks_nothing_for_is_heard() -> None:
    tenant = new_tenant()
    entities = [make_entity(tenant, "Zephyr Labs"), make_entity(tenant, "Acme Corp")]
    retriever = await _with_query_vectors(entities, "QX", toward=entities[:1])
    result = await retriever.retrieve("QX", tenant, k=5, mode=RetrievalMode.HYBRID)
    assert _names(result) == ["Zephyr Labs"]
    assert result.matches[0].semantic == pytest.approx(1.0)


async def test_a_name_that_sounds_as_the_query_does_ranks_after_those_a_word_matches() -> None:
    """`Brushy Creek` shares only its soundex with `Brashi Krik` (the `s:` key reads it):
    a lexical match, after `Brashi Falls`, whose word matches."""
    tenant = new_tenant()
    entities = [make_entity(tenant, n) for n in ("Brushy Creek", "Brashi Falls", "Acme Corp")]
    retriever, _ = await _retriever(entities)
    result = await retriever.retrieve("Brashi Krik", tenant, k=5, mode=RetrievalMode.LEXICAL)
    assert _names(result) == ["Brashi Falls", "Brushy Creek"]


class _Recorded:
    """Stores that log when each write starts and ends, one loop turn apart."""

    def __init__(self, log: list[str], fail_at: str | None = None) -> None:
        self.log, self.fail_at = log, fail_at

    async def step(self, name: str) -> None:
        self.log.append(name + " start")
        await asyncio.sleep(0.01)
        if name == self.fail_at:
            raise StoreUnavailableError(name)
        self.log.append(name + " end")


class _RecordedGraph(InMemoryGraphStore):
    def __init__(self, recorded: _Recorded) -> None:
        super().__init__()
        self.recorded = recorded

    async def upsert_entities(self, entities: Sequence[Entity]) -> None:
        await self.recorded.step(f"entities {entities[0].name}")
        await super().upsert_entities(entities)


class _RecordedVectors(InMemoryVectorStore):
    def __init__(self, recorded: _Recorded) -> None:
        super().__init__(DIM)
        self.recorded = recorded

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        await self.recorded.step(f"vectors {len(records)}")
        await super().upsert(records)


async def test_build_graph_writes_a_batch_s_vectors_beside_the_next_batch_s_entities() -> None:
    tenant = new_tenant()
    entities = [make_entity(tenant, f"E{i}") for i in range(5)]
    log: list[str] = []
    recorded = _Recorded(log)
    vectors = _RecordedVectors(recorded)
    await build_graph(
        entities,
        embeddings=HashingEmbeddingProvider(DIM),
        vectors=vectors,
        graph=_RecordedGraph(recorded),
        batch_size=2,
    )
    assert log == [
        "entities E0 start", "entities E0 end",
        "vectors 2 start", "entities E2 start", "vectors 2 end", "entities E2 end",
        "vectors 2 start", "entities E4 start", "vectors 2 end", "entities E4 end",
        "vectors 1 start", "vectors 1 end",
    ]  # fmt: skip
    [probe] = await HashingEmbeddingProvider(DIM).embed_query(["E0"])
    assert len(await vectors.search(probe, tenant, k=10)) == 5


async def test_build_graph_never_writes_vectors_of_entities_it_failed_to_write() -> None:
    tenant = new_tenant()
    entities = [make_entity(tenant, f"E{i}") for i in range(6)]
    log: list[str] = []
    recorded = _Recorded(log, fail_at="entities E2")
    graph = _RecordedGraph(recorded)
    with pytest.raises(StoreUnavailableError):
        await build_graph(
            entities,
            embeddings=HashingEmbeddingProvider(DIM),
            vectors=_RecordedVectors(recorded),
            graph=graph,
            batch_size=2,
        )
    # The first batch's vectors finished beside the failed write; nothing after it started.
    assert log == ["entities E0 start", "entities E0 end", "vectors 2 start", "entities E2 start", "vectors 2 end"]  # fmt: skip


class _RecordedDeletes(_RecordedVectors):
    async def delete(self, entity_ids: Sequence[EntityId], tenant_id: TenantId) -> None:
        await self.recorded.step(f"delete {len(entity_ids)}")
        await super().delete(entity_ids, tenant_id)


async def test_renamed_batches_delete_their_old_vectors_beside_the_batch_before_s_vectors() -> None:
    """A rename's extra delete comes before its entity write, after its embedding, and
    beside the vector write of the batch before: the overlap of two stores is kept."""
    tenant = new_tenant()
    entities = [make_entity(tenant, f"E{i}") for i in range(5)]
    log: list[str] = []
    recorded = _Recorded(log)
    vectors, graph = _RecordedDeletes(recorded), _RecordedGraph(recorded)
    embeddings = HashingEmbeddingProvider(DIM)
    await build_graph(entities, embeddings=embeddings, vectors=vectors, graph=graph)
    log.clear()
    renamed = [e.model_copy(update={"description": "renamed"}) for e in entities]
    await build_graph(renamed, embeddings=embeddings, vectors=vectors, graph=graph, batch_size=2)
    assert log == [
        "delete 2 start", "delete 2 end", "entities E0 start", "entities E0 end",
        "vectors 2 start", "delete 2 start", "vectors 2 end", "delete 2 end",
        "entities E2 start", "entities E2 end",
        "vectors 2 start", "delete 1 start", "vectors 2 end", "delete 1 end",
        "entities E4 start", "entities E4 end",
        "vectors 1 start", "vectors 1 end",
    ]  # fmt: skip
    for entity in renamed:
        assert await _vector_text(embeddings, vectors, entity)


async def test_a_type_filter_reaches_past_the_block_cap() -> None:
    """The rare type's entity sorts after the cap of its block: the filter must come
    before the cap for the lexical channel to find it."""
    tenant = new_tenant()
    common = [make_entity(tenant, f"Common {i}", "org") for i in range(8)]
    last = max(id_order_key(e.id) for e in common)
    rare = make_entity(tenant, "Common Rare", "person", entity_id=uuid.UUID(int=last + 1))
    embeddings = CountingEmbeddings(DIM)
    vectors, graph = InMemoryVectorStore(DIM), InMemoryGraphStore()
    await build_graph([*common, rare], embeddings=embeddings, vectors=vectors, graph=graph)
    retriever = Retriever(embeddings=embeddings, vectors=vectors, graph=graph, max_block_size=3)
    result = await retriever.retrieve(
        "Common", tenant, k=5, entity_types=["person"], mode=RetrievalMode.LEXICAL
    )
    assert _names(result) == ["Common Rare"]


class _ReadCounting(InMemoryGraphStore):
    """Remembers how many lexical candidates each read handed out."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[int] = []

    async def find_lexical_candidates(
        self,
        keys: Sequence[str],
        tenant_id: TenantId,
        *,
        prefixes: Sequence[str] = (),
        limit_per_key: int | None = None,
        limit_per_prefix: int | None = None,
        entity_types: Sequence[str] | None = None,
    ) -> list[LexicalCandidate]:
        found = await super().find_lexical_candidates(
            keys,
            tenant_id,
            prefixes=prefixes,
            limit_per_key=limit_per_key,
            limit_per_prefix=limit_per_prefix,
            entity_types=entity_types,
        )
        self.read.append(len(found))
        return found


async def test_a_common_word_reads_300_members_as_a_key_and_100_as_a_prefix() -> None:
    """By default a block is read to 300 members and a prefix seek to 100 rows: a
    common last word, sought as a prefix, no longer brings hundreds of names that
    share nothing else with the query, and a rare word still finds its name past
    both cuts (docs/adr/0003)."""
    tenant = new_tenant()
    letters = "bdfghjklmnpqrst"  # first words that share no other key with the queries
    words = ["".join(t) + "o" for t in itertools.product(letters, repeat=3)][:400]
    common = [make_entity(tenant, f"{word} City", "place") for word in words]
    last = max(id_order_key(e.id) for e in common)
    rare = make_entity(tenant, "Zyxwv City", "place", entity_id=uuid.UUID(int=last + 1))
    graph = _ReadCounting()
    retriever, _ = await _retriever([*common, rare], graph)
    found = {}
    for query in ("City", "City ", "Zyxwv City", "Zyxwv City "):
        result = await retriever.retrieve(query, tenant, k=3, mode=RetrievalMode.LEXICAL)
        found[query] = (graph.read[-1], _names(result)[:1])
    assert found["City"][0] == 100  # the prefix seek's cut of w:city
    assert found["City "][0] == 300  # w:city as a key, cut at the block cap
    assert found["Zyxwv City"] == (101, ["Zyxwv City"])
    assert found["Zyxwv City "] == (301, ["Zyxwv City"])
    whole = Retriever(
        embeddings=HashingEmbeddingProvider(DIM),
        vectors=InMemoryVectorStore(DIM),
        graph=graph,
        max_block_size=None,
        max_prefix_size=None,
    )
    await whole.retrieve("City", tenant, k=3, mode=RetrievalMode.LEXICAL)
    assert graph.read[-1] == 401


class _LightCandidates(InMemoryGraphStore):
    """Hands out lexical candidates that are not whole entities, as the Neo4j store does."""

    async def find_lexical_candidates(
        self,
        keys: Sequence[str],
        tenant_id: TenantId,
        *,
        prefixes: Sequence[str] = (),
        limit_per_key: int | None = None,
        limit_per_prefix: int | None = None,
        entity_types: Sequence[str] | None = None,
    ) -> list[LexicalCandidate]:
        found = await super().find_lexical_candidates(
            keys,
            tenant_id,
            prefixes=prefixes,
            limit_per_key=limit_per_key,
            limit_per_prefix=limit_per_prefix,
            entity_types=entity_types,
        )
        return [_Light(e) for e in found]  # type: ignore[arg-type]


class _Light:
    def __init__(self, entity: Entity) -> None:
        self.id, self.tenant_id, self.entity_type = entity.id, entity.tenant_id, entity.entity_type
        self.name, self.normalized_name = entity.name, entity.normalized_name
        self.properties = entity.properties
        self._strings = entity.property_strings()

    def property_strings(self) -> list[str]:
        return self._strings


@pytest.mark.parametrize("mode", list(RetrievalMode))
async def test_whole_entities_come_in_one_fetch_after_the_channels(
    mode: RetrievalMode,
) -> None:
    """Matches that came as light lexical candidates or from the vector store are
    fetched whole after the channels, in one call; a dangling one is skipped."""
    tenant = new_tenant()
    acme, acme_co = make_entity(tenant, "Acme", description="a"), make_entity(tenant, "Acme Co")
    other = make_entity(tenant, "Zzyzx")
    graph = CountingGraphStore(_LightCandidates())
    await graph.upsert_entities([acme, acme_co, other])
    ghost = EntityId(uuid.uuid4())
    vectors = _FixedVectors([(ghost, 0.95), (other.id, 0.9), (acme_co.id, 0.8)])
    retriever = Retriever(embeddings=HashingEmbeddingProvider(DIM), vectors=vectors, graph=graph)
    graph.calls.clear()
    result = await retriever.retrieve("Acme", tenant, k=3, mode=mode)
    assert all(isinstance(m.entity, Entity) for m in result.matches)
    assert ghost not in {m.entity.id for m in result.matches}
    if mode is not RetrievalMode.SEMANTIC:
        assert next(m.entity for m in result.matches if m.entity.id == acme.id) == acme
    assert graph.calls["get_entities"] == 1


class _ReaderWithEntities:
    """A `CandidateReader` over two stores that also hands over the whole entities of
    `whole` (all of them: any entity of the tenant may come along)."""

    def __init__(self, vectors: VectorStore, graph: GraphStore, whole: list[Entity]) -> None:
        self._apart = SeparateReads(vectors, graph)
        self._whole = {e.id: e for e in whole}

    async def find_candidates(self, tenant_id: TenantId, **query: Any) -> Candidates:
        found = await self._apart.find_candidates(tenant_id, **query)
        return Candidates(semantic=found.semantic, lexical=found.lexical, entities=self._whole)


@pytest.mark.parametrize("mode", list(RetrievalMode))
async def test_entities_the_reader_brings_are_not_fetched_again(mode: RetrievalMode) -> None:
    tenant = new_tenant()
    acme, acme_co = make_entity(tenant, "Acme", description="a"), make_entity(tenant, "Acme Co")
    graph = CountingGraphStore(_LightCandidates())
    await graph.upsert_entities([acme, acme_co])
    vectors = _FixedVectors([(acme.id, 0.9), (acme_co.id, 0.8)])
    embeddings = HashingEmbeddingProvider(DIM)
    brings_one = _ReaderWithEntities(vectors, graph.inner, [acme])
    retriever = Retriever(
        embeddings=embeddings, vectors=vectors, graph=graph, candidates=brings_one
    )
    result = await retriever.retrieve("Acme", tenant, k=2, mode=mode)
    assert {m.entity.id for m in result.matches} == {acme.id, acme_co.id}
    assert graph.calls["get_entities"] == 1  # for Acme Co alone
    brings_all = _ReaderWithEntities(vectors, graph.inner, [acme, acme_co])
    retriever = Retriever(
        embeddings=embeddings, vectors=vectors, graph=graph, candidates=brings_all
    )
    graph.calls.clear()
    again = await retriever.retrieve("Acme", tenant, k=2, mode=mode)
    assert again == result
    assert graph.calls["get_entities"] == 0


class _HangingVectors(_FixedVectors):
    """A vector search that waits until cancelled, and says whether it was."""

    def __init__(self) -> None:
        super().__init__([])
        self.started = asyncio.Event()
        self.cancelled = False

    async def search(
        self,
        vector: Sequence[float],
        tenant_id: TenantId,
        *,
        k: int,
        entity_types: Sequence[str] | None = None,
    ) -> list[VectorMatch]:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return []


class _DownGraph(InMemoryGraphStore):
    def __init__(self, vectors: _HangingVectors) -> None:
        super().__init__()
        self.vectors = vectors

    async def find_lexical_candidates(
        self,
        keys: Sequence[str],
        tenant_id: TenantId,
        *,
        prefixes: Sequence[str] = (),
        limit_per_key: int | None = None,
        limit_per_prefix: int | None = None,
        entity_types: Sequence[str] | None = None,
    ) -> list[LexicalCandidate]:
        await self.vectors.started.wait()
        raise StoreUnavailableError("graph store down")


async def test_a_failed_channel_cancels_the_other_and_raises_its_own_error() -> None:
    vectors = _HangingVectors()
    retriever = Retriever(
        embeddings=HashingEmbeddingProvider(DIM), vectors=vectors, graph=_DownGraph(vectors)
    )
    with pytest.raises(StoreUnavailableError, match="graph store down"):
        await asyncio.wait_for(retriever.retrieve("Acme", new_tenant(), k=3), timeout=10)
    assert vectors.cancelled


@pytest.mark.parametrize("query", ["IBM", "Big Blu"])
async def test_an_alias_unlike_the_name_finds_its_entity_in_lexical_mode(query: str) -> None:
    tenant = new_tenant()
    ibm = make_entity(
        tenant,
        "International Business Machines",
        "org",
        properties={"aliases": ["IBM", "Big Blue"]},
    )
    entities = [
        ibm,
        make_entity(tenant, "Ibex Bank", "org"),
        make_entity(tenant, "Blue Ridge", "org"),
    ]
    retriever, _ = await _retriever(entities)
    result = await retriever.retrieve(query, tenant, k=3, mode=RetrievalMode.LEXICAL)
    assert _names(result)[0] == "International Business Machines"


async def test_a_query_of_another_script_is_embedded_with_its_latin_letters() -> None:
    """So that a model that reads Latin letters relates `Москва` to `Moskva`; a query in
    Latin letters is embedded as it is."""
    tenant = new_tenant()
    retriever, embeddings = await _retriever([make_entity(tenant, "Moskva Energy")])
    await retriever.retrieve("Москва", tenant, mode=RetrievalMode.SEMANTIC)
    await retriever.retrieve("Moskva", tenant, mode=RetrievalMode.SEMANTIC)
    assert embeddings.query_texts == ["Москва (Moskva)", "Moskva"]


@pytest.mark.parametrize(("query", "name"), [("Moskva", "Москва"), ("Москва", "Moskva")])
async def test_the_semantic_channel_finds_a_name_across_scripts(query: str, name: str) -> None:
    """The default provider, through the client: each side embeds the romanised form."""
    tenant = new_tenant()
    others = ["Minsk", "Warsaw", "Moss", "Kursk", "Omsk", "Mostar", "Kaunas", "Moscow Mills"]
    async with Redstring.in_memory() as client:
        await client.upsert([make_entity(tenant, n, "city") for n in [name, *others]])
        result = await client.retrieve(query, tenant, k=1, mode=RetrievalMode.SEMANTIC)
    assert [match.entity.name for match in result.matches] == [name]
