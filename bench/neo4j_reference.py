"""A yardstick for `bench.retrieval_neo4j --reference`: hybrid search done inside Neo4j.

Neo4j-native hybrid retrievers answer in one statement: the vector index's top
k beside a full-text (Lucene BM25) index's top k, each channel's scores divided
by that channel's best, an entity's best score kept, the best k returned with
their entities. This is that shape, written here for the bench's data (tenant
filter inside both indexes, entities read in the same statement). It is not
redstring's lexical channel: BM25 over short names cannot tell `Corporation`
from `Corp` (docs/adr/0003). It shows what the issue 3 ratio costs when all
the work is the server's, on the same machine, data and bare query.
"""

from __future__ import annotations

import functools
import random
import re
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence

import neo4j

from redstring import Entity, Retriever
from redstring.adapters.neo4j import cypher
from redstring.domain.ids import EntityId, TenantId

INDEX = f"bench_reference_names_{uuid.uuid4().hex[:8]}"  # the run's own

_CREATE = (
    f"CREATE FULLTEXT INDEX {INDEX} IF NOT EXISTS FOR (e:Entity) ON EACH [e.name, e.tenant_id]"
)
_DROP = f"DROP INDEX {INDEX} IF EXISTS"

# Characters the Lucene query parser reads as syntax.
_SYNTAX = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')


def fulltext_query(tenant_id: TenantId, text: str) -> str:
    """A Lucene query for `text` among `tenant_id`'s names. Lower-cased, so that a name
    holding `AND`, `OR` or `NOT` is not read as an operator (the analyser lower-cases
    the indexed names anyway)."""
    words = _SYNTAX.sub(r"\\\1", text.lower())
    return f'tenant_id:"{tenant_id}" AND name:({words})'


def _scaled(found: str) -> str:
    """Rows of `found` (`[id, score]` pairs) with each score divided by the best."""
    return f"""WITH collect({found}) AS found
    WITH found, reduce(best = 0.0, f IN found | CASE WHEN f[1] > best THEN f[1] ELSE best END)
         AS best
    UNWIND found AS f
    RETURN f[0] AS id, CASE WHEN best > 0 THEN f[1] / best ELSE 0.0 END AS score"""


@functools.cache
def statement(label: str) -> str:
    """The reference search for the vectors under `label`, built once a label."""
    return f"""
CYPHER 25
CALL () {{
    MATCH (v:{cypher.vector_label(label)})
      SEARCH v IN (
        VECTOR INDEX {cypher.vector_index_name(label)}
        FOR $vector
        WHERE v.tenant_id = $tenant_id
        LIMIT $k
      ) SCORE AS score
    {_scaled("[v.entity_id, score]")}
  UNION ALL
    CALL db.index.fulltext.queryNodes('{INDEX}', $text, {{limit: $k}}) YIELD node, score
    {_scaled("[node.id, score]")}
}}
WITH id, max(score) AS score
ORDER BY score DESC, id
LIMIT $k
MATCH (e:Entity {{tenant_id: $tenant_id, id: id}})
RETURN collect([e {{.*}}, score]) AS matches
"""


async def create_index(driver: neo4j.AsyncDriver) -> float:
    """Create the full-text index over every entity's name and tenant; seconds taken."""
    start = time.perf_counter()
    async with driver.session() as session:
        await (await session.run(_CREATE)).consume()
        await (await session.run(cypher.AWAIT_INDEXES, seconds=600)).consume()
    return time.perf_counter() - start


async def drop_index(driver: neo4j.AsyncDriver) -> None:
    async with driver.session() as session:
        await (await session.run(_DROP)).consume()


async def ranked_ids(
    driver: neo4j.AsyncDriver, label: str, tenant_id: TenantId, query: str, vector: object
) -> list[EntityId]:
    """The reference's best 10 for `query` (whose embedding `vector` is, as sent)."""
    async with driver.session() as session:
        result = await session.run(
            statement(label),
            vector=vector,
            tenant_id=str(tenant_id),
            text=fulltext_query(tenant_id, query),
            k=10,
        )
        [record] = [r async for r in result]
    return [EntityId(uuid.UUID(entity["id"])) for entity, _ in record["matches"]]


def search(
    driver: neo4j.AsyncDriver,
    label: str,
    tenant_id: TenantId,
    queries: list[str],
    vectors: list[object],
) -> Callable[[], Awaitable[object]]:
    """One reference search per call, walking `queries` (and their `vectors`) in turn."""
    cursor = iter(range(10**9))

    async def run() -> object:
        i = next(cursor) % len(queries)
        return await ranked_ids(driver, label, tenant_id, queries[i], vectors[i])

    return run


def misspelt(corpus: Sequence[Entity], count: int, seed: int) -> list[tuple[str, Entity]]:
    """`count` names, each with one inner letter dropped from a word of five letters or
    more, paired with the entity they name. Only names no other entity of `corpus`
    holds, so that the entity meant is the one right answer."""
    holders = Counter(e.name for e in corpus)
    eligible = [
        e for e in corpus if holders[e.name] == 1 and any(len(w) >= 5 for w in e.name.split())
    ]
    if not eligible:
        raise ValueError("no name in the corpus is unique and has a word of five letters")
    rng = random.Random(seed)
    picked: list[tuple[str, Entity]] = []
    while len(picked) < count:
        entity = rng.choice(eligible)
        words = entity.name.split()
        long = [i for i, word in enumerate(words) if len(word) >= 5]
        i = rng.choice(long)
        cut = rng.randrange(1, len(words[i]) - 1)
        words[i] = words[i][:cut] + words[i][cut + 1 :]
        picked.append((" ".join(words), entity))
    return picked


async def compare_quality(
    driver: neo4j.AsyncDriver,
    label: str,
    retriever: Retriever,
    tenant_id: TenantId,
    queries: list[tuple[str, Entity]],
    vectors: list[object],
) -> dict[str, tuple[float, float]]:
    """For redstring's hybrid `retrieve` and the reference: the share of `queries`
    whose entity came first, and the share that had it in the best 10."""
    first = {"redstring": 0, "reference": 0}
    top = {"redstring": 0, "reference": 0}
    for (query, entity), vector in zip(queries, vectors, strict=True):
        found = {
            "redstring": [
                m.entity.id for m in (await retriever.retrieve(query, tenant_id, k=10)).matches
            ],
            "reference": await ranked_ids(driver, label, tenant_id, query, vector),
        }
        for name, ids in found.items():
            first[name] += ids[:1] == [entity.id]
            top[name] += entity.id in ids
    return {name: (first[name] / len(queries), top[name] / len(queries)) for name in first}
