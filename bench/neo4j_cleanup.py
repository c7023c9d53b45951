"""The removal of what a bench run wrote into Neo4j, run at its end.

A bench may run against a user's own server, which must be left as the run found
it. A bench records what it writes in a `Written`, used as `async with` (or calls
`remove` in a `finally`), after its timings, so that a failed run is cleaned up too:

- the nodes of each tenant it wrote: entities (with their `LOOKUP_KEY` loops
  and `RELATES` edges) and their vectors under each label it wrote to;
- then the constraints and indexes of each of those labels that no node is
  left in, so a label of the bench's own goes with its vector index. The
  default vector label (`EntityVector`) keeps its schema, as does the graph
  store: redstring's adapters create that schema with `IF NOT EXISTS` for
  every user of the server, who may be writing beside the run.

`drop_labels` removes whole labels instead (nodes, constraints, indexes), for a
run whose labels carry the run's id. `schema_as_found` wraps a whole run: the
shared schema (`SHARED_SCHEMA`) the run added is dropped at its end where no node
or relationship of its labels is left, so a server that had no redstring schema (a
later user's vector index of another dimension, say) gets none from a bench. Other
schema is left to whoever made it: a bench's own labels (and their schema) carry
the run's id, and another client may be making schema of its own meanwhile.
Deletes go `IN TRANSACTIONS` of `BATCH_ROWS` nodes, so a full-size run's cleanup
stays within the server's transaction memory.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Self

import neo4j

from redstring import TenantId
from redstring.adapters.neo4j import Neo4jVectorStore, cypher

BATCH_ROWS = 5000
# The label of `Neo4jVectorStore`'s nodes unless it is given another: shared schema.
DEFAULT_VECTOR_LABEL: str = inspect.signature(Neo4jVectorStore).parameters["label"].default
# The constraints and indexes every user of redstring on a server shares: the graph
# store's, and those of the default vector label.
SHARED_SCHEMA = frozenset(
    [
        *(re.findall(r"(?:CONSTRAINT|INDEX) (\w+) IF NOT EXISTS", " ".join(cypher.GRAPH_SCHEMA))),
        cypher.vector_index_name(DEFAULT_VECTOR_LABEL),
        cypher.vector_constraint_name(DEFAULT_VECTOR_LABEL),
    ]
)


@dataclass
class Written:
    """The tenants a run wrote and the vector labels it wrote them under."""

    driver: neo4j.AsyncDriver
    vector_labels: tuple[str, ...] = (DEFAULT_VECTOR_LABEL,)
    tenants: list[TenantId] = field(default_factory=list)

    def tenant(self, tenant: TenantId) -> TenantId:
        """`tenant`, recorded as written (before anything is written, so a failure
        half-way through a load still has it removed)."""
        self.tenants.append(tenant)
        return tenant

    async def remove(self) -> None:
        await delete_tenants(self.driver, self.tenants, self.vector_labels)
        self.tenants.clear()
        own = [label for label in self.vector_labels if label != DEFAULT_VECTOR_LABEL]
        await drop_schema_of_empty(self.driver, own)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """`remove`, however the block ends."""
        await self.remove()


async def delete_tenants(
    driver: neo4j.AsyncDriver, tenants: Iterable[TenantId], vector_labels: Iterable[str]
) -> None:
    """Every entity of `tenants` with its edges, and their vectors under `vector_labels`.
    Each label is read through its identity constraint's index (`tenant_id` first,
    the id only required to exist)."""
    named = [str(tenant) for tenant in tenants]
    if not named:
        return
    keys = [("Entity", "id")] + [(cypher.vector_label(v), "entity_id") for v in vector_labels]
    async with driver.session() as session:
        for label, key in keys:
            result = await session.run(
                f"MATCH (n:`{label}`) WHERE n.tenant_id IN $tenants AND n.{key} IS NOT NULL "
                f"CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF {BATCH_ROWS} ROWS",
                tenants=named,
            )
            await result.consume()


async def drop_schema_of_empty(driver: neo4j.AsyncDriver, labels: Iterable[str]) -> None:
    """The constraints and indexes on each of `labels` that has no node left."""
    async with driver.session() as session:
        empty = set()
        for label in labels:
            result = await session.run(
                f"MATCH (n:`{cypher.vector_label(label)}`) RETURN count(n) AS n"
            )
            record = await result.single()
            if record is not None and record["n"] == 0:
                empty.add(cypher.vector_label(label))
        await _drop_schema(session, empty.__contains__)


async def drop_labels(driver: neo4j.AsyncDriver, wanted: Callable[[str], bool]) -> None:
    """Every node of a label `wanted` accepts, then the constraints and indexes on such
    labels."""
    async with driver.session() as session:
        labels = [r["label"] for r in await (await session.run("CALL db.labels()")).data()]
        for label in filter(wanted, labels):
            result = await session.run(
                f"MATCH (n:`{label}`) CALL (n) {{ DETACH DELETE n }} "
                f"IN TRANSACTIONS OF {BATCH_ROWS} ROWS"
            )
            await result.consume()
        await _drop_schema(session, wanted)


async def _drop_schema(session: neo4j.AsyncSession, wanted: Callable[[str], bool]) -> None:
    """Constraints first: they own their indexes."""
    for kind, plural in (("CONSTRAINT", "CONSTRAINTS"), ("INDEX", "INDEXES")):
        shown = await session.run(f"SHOW {plural} YIELD name, labelsOrTypes")
        for row in await shown.data():
            if any(wanted(label) for label in row["labelsOrTypes"] or []):
                await (await session.run(f"DROP {kind} `{row['name']}` IF EXISTS")).consume()


@contextmanager
def schema_as_found(when: bool = True) -> Iterator[None]:
    """Around a whole bench run against `NEO4J_URI` (nothing without it, or unless
    `when`): the shared constraints and indexes (`SHARED_SCHEMA`) that were not there
    before and whose labels or relationship types hold nothing at the end are dropped,
    constraints first (they own their indexes)."""
    uri = os.environ.get("NEO4J_URI")
    if not uri or not when:
        yield
        return
    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", ""))
    with neo4j.GraphDatabase.driver(uri, auth=auth) as driver:
        before = {name for name, _, _ in _schema(driver)}
        try:
            yield
        finally:
            drop_unused_schema(driver, lambda name: name in SHARED_SCHEMA - before)


def drop_unused_schema(driver: neo4j.Driver, wanted: Callable[[str], bool]) -> None:
    """The constraints and indexes whose name `wanted` accepts and whose labels or
    relationship types hold nothing, constraints first (they own their indexes)."""
    for name, kind, targets in _schema(driver):
        if wanted(name) and targets and all(_empty(driver, t) for t in targets):
            driver.execute_query(f"DROP {kind} `{name}` IF EXISTS")


def _schema(driver: neo4j.Driver) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """Each constraint, then each index, with what it is on: (entity type, label or type)."""
    found = []
    for kind, plural in (("CONSTRAINT", "CONSTRAINTS"), ("INDEX", "INDEXES")):
        records = driver.execute_query(
            f"SHOW {plural} YIELD name, entityType, labelsOrTypes"
        ).records
        for record in records:
            targets = [(record["entityType"], t) for t in record["labelsOrTypes"] or []]
            found.append((record["name"], kind, targets))
    return found


def _empty(driver: neo4j.Driver, target: tuple[str, str]) -> bool:
    entity_type, name = target
    pattern = f"(n:`{name}`)" if entity_type == "NODE" else f"()-[n:`{name}`]->()"
    [record] = driver.execute_query(f"MATCH {pattern} RETURN count(n) AS n").records
    return bool(record["n"] == 0)
