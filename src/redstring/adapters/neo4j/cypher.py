"""Every Cypher statement redstring runs, in one place.

Model: `(:Entity {tenant_id, id, ...})`, one `(e)-[:LOOKUP_KEY {tenant_id, key,
entity_id}]->(e)` loop on an entity per lookup key it has,
`(:Entity)-[:RELATES {tenant_id, id, relationship_type, ...}]->(:Entity)`, and
vectors on their own nodes `(:<label> {tenant_id, entity_id, entity_type,
embedding})` so that the vector store stands apart from the graph store. Ids
are stored as lower-case UUID strings, so `ORDER BY id` is the domain's
tie-break order.

A statement sees other transactions' commits as they land (read committed): a node
deleted after a read found it has no properties left. A read that filters such rows
out does it on a value read once (`WITH v.entity_id AS entity_id WHERE entity_id IS
NOT NULL`), never by reading the property a second time, and before any `LIMIT`; the
decoders skip the maps and rows the others answer for them (`records.whole_entities`).
"""

from __future__ import annotations

import functools
import re

# --- graph store schema ------------------------------------------------------

# A block is the `LOOKUP_KEY` loops of one `(tenant_id, key)`: the range index on
# `(tenant_id, key, entity_id)` finds them and hands them over in id order, so a
# capped block reads only its first `limit` members.
GRAPH_SCHEMA = (
    "CREATE CONSTRAINT redstring_entity_identity IF NOT EXISTS "
    "FOR (e:Entity) REQUIRE (e.tenant_id, e.id) IS UNIQUE",
    "CREATE INDEX redstring_lookup_key IF NOT EXISTS "
    "FOR ()-[k:LOOKUP_KEY]-() ON (k.tenant_id, k.key, k.entity_id)",
    "CREATE CONSTRAINT redstring_relationship_identity IF NOT EXISTS "
    "FOR ()-[r:RELATES]-() REQUIRE (r.tenant_id, r.id) IS UNIQUE",
)

# --- the server's start -------------------------------------------------------

# When the Java process of the server answering started (ms since the epoch). A
# database's `lastStartTime` (`SHOW DATABASE`) is not it: a server restarted keeps it.
SERVER_START = """
CALL dbms.queryJmx('java.lang:type=Runtime') YIELD attributes
RETURN attributes.StartTime.value AS started
"""

# --- graph store -------------------------------------------------------------

# The loops of an entity `e` whose keys were `old_keys` and are now `row.lookup_keys`.
_KEY_LOOPS = """
WITH e, row,
     [k IN old_keys WHERE NOT k IN row.lookup_keys] AS stale_keys,
     [k IN row.lookup_keys WHERE NOT k IN old_keys] AS new_keys
CALL (e, stale_keys) {
    UNWIND stale_keys AS key
    MATCH (e)-[entry:LOOKUP_KEY {key: key}]->(e)
    DELETE entry
}
CALL (e, row, new_keys) {
    UNWIND new_keys AS key
    CREATE (e)-[:LOOKUP_KEY {tenant_id: row.tenant_id, key: key, entity_id: row.id}]->(e)
}
"""

# `SET e.name` first takes the entity's write lock, so the keys read next are the
# latest committed ones even when another transaction upserts the same entity: a
# `LOOKUP_KEY` loop is then created for exactly the lookup keys the entity did not
# have, and removed for those it no longer has. Type keys (`t:`) get no loop: no query
# asks for them, and their block would be every entity of the type. No node is shared
# between entities, so concurrent upserts of different entities take no common lock.
UPSERT_ENTITIES = (
    """
UNWIND $rows AS row
MERGE (e:Entity {tenant_id: row.tenant_id, id: row.id})
SET e.name = row.name
WITH e, row, coalesce(e.blocking_keys, []) AS old_keys
SET e.entity_type = row.entity_type,
    e.description = row.description,
    e.normalized_name = row.normalized_name,
    e.blocking_keys = row.blocking_keys,
    e.properties = row.properties"""
    + _KEY_LOOPS
)

# An entity's keys derived afresh (`rewrite_keys`), if nothing they are derived from, nor
# they, changed since the read. Writing a property takes the node's write lock, held to
# the commit, so the checks after it read what a concurrent upsert committed, and no
# upsert can land between them and the rewrite.
REWRITE_KEYS = (
    """
UNWIND $rows AS row
MATCH (e:Entity {tenant_id: row.tenant_id, id: row.id})
SET e.redstring_rekey = true
REMOVE e.redstring_rekey
WITH e, row, e.blocking_keys AS old_keys
WHERE e.name = row.name AND e.entity_type = row.entity_type
  AND e.normalized_name = row.read_normalized_name
  AND old_keys = row.read_blocking_keys
SET e.normalized_name = row.normalized_name, e.blocking_keys = row.blocking_keys"""
    + _KEY_LOOPS
    + "RETURN count(e) AS rewritten\n"
)

# The tenants with an entity, in id order (their canonical strings sort as the ids do).
TENANTS = """
MATCH (e:Entity)
WITH DISTINCT e.tenant_id AS tenant_id
WHERE tenant_id IS NOT NULL
RETURN tenant_id ORDER BY tenant_id
"""

# A page of a tenant's entities in id order: a range seek on the identity constraint's
# index, which hands them over in that order (`$after` "" for the first page), in one
# record (`_MATCHES` says why). A node deleted after the seek found it reads as a map
# without an id: it is left out before the `LIMIT`, so a page falls short of `$limit`
# only at the tenant's end.
ENTITY_PAGE = """
MATCH (e:Entity)
WHERE e.tenant_id = $tenant_id AND e.id > $after
WITH e, e {.*} AS entity
WHERE entity.id IS NOT NULL
WITH entity ORDER BY e.tenant_id, e.id LIMIT $limit
RETURN collect(entity) AS entities
"""

# Each entity type of a tenant after `$after` (every type when null) with its count, in
# one record of `[type, count]` pairs (`_MATCHES` says why): every type holding a
# character beyond U+FFFF, then the first `$limit` of the others in the server's order
# (all of them when `$limit` is null), from which the adapter keeps the first `limit` in
# Python's order (`in_type_order`). `$after` is a bound the server compares as Python
# does, or one below it and `$limit` null (`string_order.server_bound`). The
# server's order is Python's only on types without such a character: it compares strings
# by UTF-8 bytes (code points, as Python) or, as Java strings, by UTF-16 code units,
# which put a surrogate pair before U+E000 to U+FFFF; the two agree where there is no
# pair. So those with one (a regular expression over code points, `(?s)` so that a line
# break does not end it) all come, whatever their place. A range seek on the identity
# constraint's index, `tenant_id` equal and `id` only required to exist, then each
# entity's type read from its node: a scan of the tenant, whose time grows with its
# entities (docs/neo4j.md, "Listing a tenant's entity types"). A node deleted after the
# seek found it reads a null type, left out.
ENTITY_TYPES = r"""
MATCH (e:Entity)
WHERE e.tenant_id = $tenant_id AND e.id IS NOT NULL
WITH e.entity_type AS entity_type
WHERE entity_type IS NOT NULL
WITH entity_type, count(*) AS entities
WHERE $after IS NULL OR entity_type > $after
WITH entity_type, entities
ORDER BY entity_type
WITH collect([entity_type, entities]) AS types
WITH [t IN types WHERE t[0] =~ '(?s).*[\\x{10000}-\\x{10FFFF}].*'] AS beyond,
     [t IN types WHERE NOT t[0] =~ '(?s).*[\\x{10000}-\\x{10FFFF}].*'] AS others
RETURN beyond + others[..coalesce($limit, size(others))] AS types
"""

GET_ENTITIES = """
UNWIND $ids AS id
MATCH (e:Entity {tenant_id: $tenant_id, id: id})
RETURN collect(e {.*}) AS entities
"""

# The fields `embedding_text` is made of, `[id, name, entity_type, description,
# properties]` an entity, in one record: no keys, no tenant. One deleted while the
# statement read it comes back without its properties, or without some, and is left
# out when its id, name or type is gone (`whole_entities`' rule, on the fields read).
EMBEDDING_TEXTS = """
UNWIND $ids AS id
MATCH (e:Entity {tenant_id: $tenant_id, id: id})
WITH e.id AS id, e.name AS name, e.entity_type AS entity_type, e.description AS description,
     e.properties AS properties
WHERE id IS NOT NULL AND name IS NOT NULL AND entity_type IS NOT NULL
RETURN collect([id, name, entity_type, description, properties]) AS found
"""

# Each key's block members `e`, of the asked types, capped in id order. The index seek
# on `(tenant_id, key, entity_id)` yields a block's loops in id order (hence `ORDER BY`
# the three: the planner then keeps the index order and sorts nothing), so `LIMIT`
# stops after the first `$limit` members. The type filter comes before the cap, so a
# rare type keeps its members of a large block.
_BLOCK_MEMBERS = """
UNWIND $keys AS key
CALL (key) {
    MATCH (e:Entity)-[entry:LOOKUP_KEY]->(e)
    WHERE entry.tenant_id = $tenant_id AND entry.key = key AND entry.entity_id IS NOT NULL
      AND ($types IS NULL OR e.entity_type IN $types)
    RETURN e ORDER BY entry.tenant_id, entry.key, entry.entity_id LIMIT $limit
}"""

# The members `e` of the blocks whose keys begin with each prefix, of the asked types,
# the first `$prefix_limit` in `(key, entity_id)` order: `STARTS WITH` after the tenant's
# equality is a range seek on the same index, which hands the loops over in that order.
_PREFIX_MEMBERS = """
UNWIND $prefixes AS prefix
CALL (prefix) {
    MATCH (e:Entity)-[entry:LOOKUP_KEY]->(e)
    WHERE entry.tenant_id = $tenant_id AND entry.key STARTS WITH prefix
      AND entry.entity_id IS NOT NULL
      AND ($types IS NULL OR e.entity_type IN $types)
    RETURN e ORDER BY entry.tenant_id, entry.key, entry.entity_id LIMIT $prefix_limit
}"""

# What the lexical channel reads: the members of the blocks and those of the prefix
# seeks, each once, with only the columns it scores (no description or keys), as
# parallel columns in one record (columns decode faster than one map per entity, and
# list comprehensions keep nulls aligned, where collect() would drop them).
FIND_LEXICAL_CANDIDATES = (
    "CALL () {"
    + _BLOCK_MEMBERS
    + "\n    RETURN e\n    UNION\n"
    + _PREFIX_MEMBERS
    + """
    RETURN e
}
WITH DISTINCT e
WITH collect(e) AS entities
RETURN [e IN entities | e.id] AS ids,
       [e IN entities | e.entity_type] AS entity_types,
       [e IN entities | e.name] AS names,
       [e IN entities | e.normalized_name] AS normalized_names,
       [e IN entities | e.properties] AS properties
"""
)

# Each asked entity `e`'s relationships `r`, of the asked types, after the place
# `($after_type, $after_id)` of the order (all when `$after_type` is null; every one of
# `$after_type` too when `$after_id` is null), the first `$limit` by type then id, with
# `other`, the entity at the far end of each. The adapter passes an `$after_type` the
# server compares as Python does, or one below it and no cap (`string_order`); ids are
# lower-case UUID strings, whose order is the same in both.
_EACH_ENTITYS_RELATIONSHIPS = """
UNWIND $ids AS id
MATCH (e:Entity {tenant_id: $tenant_id, id: id})
CALL (e) {
    MATCH (e)PATTERN(other:Entity)
    WHERE ($types IS NULL OR r.relationship_type IN $types)
      AND ($after_type IS NULL OR r.relationship_type > $after_type
           OR (r.relationship_type = $after_type AND r.id > $after_id))
    RETURN r, other, startNode(r).id AS source, endNode(r).id AS target
    ORDER BY r.relationship_type, r.id
    LIMIT $limit
}
"""
_EACH_AS_MAPS = "collect(r {.*, source: source, target: target}) AS relationships"
_PATTERNS = {"OUT": "-[r:RELATES]->", "IN": "<-[r:RELATES]-", "BOTH": "-[r:RELATES]-"}

_RELATIONSHIPS_OF = (
    _EACH_ENTITYS_RELATIONSHIPS
    + f"""WITH id, {_EACH_AS_MAPS}
RETURN collect([id, relationships]) AS found
"""
)
RELATIONSHIPS_OF = {
    direction: _RELATIONSHIPS_OF.replace("PATTERN", pattern)
    for direction, pattern in _PATTERNS.items()
}

# `RELATIONSHIPS_OF`'s `found`, and `ends`: each far-end entity once, however many of
# the relationships lead to it (a hub next to every asked entity is sent once).
_RELATIONSHIPS_WITH_ENDS = (
    _EACH_ENTITYS_RELATIONSHIPS
    + f"""WITH id, {_EACH_AS_MAPS}, collect(other) AS others
WITH collect([id, relationships]) AS found, collect(others) AS others_of_each
CALL (others_of_each) {{
    UNWIND others_of_each AS others
    UNWIND others AS other
    WITH DISTINCT other
    RETURN collect(other {{.*}}) AS ends
}}
RETURN found, ends
"""
)
RELATIONSHIPS_WITH_ENDS = {
    direction: _RELATIONSHIPS_WITH_ENDS.replace("PATTERN", pattern)
    for direction, pattern in _PATTERNS.items()
}

# How many relationships each asked entity has in a direction (`PATTERN`), as
# `[id, count]` pairs in one record: without types, the node's degree, which the server
# reads without following each edge; with `$types`, each edge's type is read. Every
# `RELATES` edge joins two `Entity` nodes of one tenant, as `RELATIONSHIPS_OF` asks.
_RELATIONSHIP_COUNTS = """
UNWIND $ids AS id
MATCH (e:Entity {tenant_id: $tenant_id, id: id})
RETURN collect([id, COUNT { (e)PATTERN()TYPED }]) AS counts
"""
RELATIONSHIP_COUNTS = {
    direction: _RELATIONSHIP_COUNTS.replace("PATTERN", pattern).replace("TYPED", "")
    for direction, pattern in _PATTERNS.items()
}
TYPED_RELATIONSHIP_COUNTS = {
    direction: _RELATIONSHIP_COUNTS.replace("PATTERN", pattern).replace(
        "TYPED", " WHERE r.relationship_type IN $types"
    )
    for direction, pattern in _PATTERNS.items()
}

MISSING_ENDPOINTS = """
UNWIND $rows AS row
UNWIND [row.source, row.target] AS end_id
WITH DISTINCT row.tenant_id AS tenant_id, end_id
OPTIONAL MATCH (e:Entity {tenant_id: tenant_id, id: end_id})
WITH end_id, e
WHERE e IS NULL
RETURN end_id
"""

# A row whose endpoint is missing creates nothing, so `written` falls short of the
# rows; the adapter then names the missing ids (`MISSING_ENDPOINTS`) and fails the
# transaction, which undoes the whole batch, the replaced edges' deletion included.
UPSERT_RELATIONSHIPS = """
UNWIND $rows AS row
CALL (row) {
    MATCH ()-[old:RELATES {tenant_id: row.tenant_id, id: row.id}]->()
    DELETE old
}
WITH row
MATCH (s:Entity {tenant_id: row.tenant_id, id: row.source})
MATCH (t:Entity {tenant_id: row.tenant_id, id: row.target})
CREATE (s)-[r:RELATES {tenant_id: row.tenant_id, id: row.id}]->(t)
SET r.relationship_type = row.relationship_type,
    r.confidence = row.confidence,
    r.properties = row.properties
RETURN count(r) AS written
"""

# Counts only the entities this statement deletes. A delete that found an entity
# another one then deletes waits for that one's lock and finds it gone: `DETACH DELETE`
# of it does nothing and raises nothing, so both would count it. Writing a property
# takes the node's lock first (Cypher has no lock clause; the manual's "lost updates"
# way), and once it is held, a node deleted meanwhile reads without properties.
DELETE_ENTITIES = """
UNWIND $ids AS id
MATCH (e:Entity {tenant_id: $tenant_id, id: id})
SET e.redstring_delete = true
WITH e
WHERE e.id IS NOT NULL
DETACH DELETE e
RETURN count(*) AS deleted
"""


# --- vector store ------------------------------------------------------------

_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")


def vector_label(label: str) -> str:
    """`label` if it is a plain identifier, safe to splice into Cypher; else `ValueError`."""
    if not _LABEL.match(label):
        raise ValueError(f"vector label must be a plain identifier, got {label!r}")
    return label


def vector_index_name(label: str) -> str:
    return f"redstring_{vector_label(label).lower()}_embedding"


def vector_constraint_name(label: str) -> str:
    """The identity constraint of `label`'s vector nodes (`vector_schema`)."""
    return f"redstring_{vector_label(label).lower()}_identity"


def vector_schema(
    label: str, dimension: int, *, hnsw_m: int, hnsw_ef_construction: int
) -> tuple[str, ...]:
    """Identity constraint and the cosine vector index with filter properties and the
    HNSW graph's `vector.hnsw.m` and `vector.hnsw.ef_construction`.

    No index on `tenant_id` alone: the identity constraint's index on
    `(tenant_id, entity_id)` serves tenant-scoped reads that also ask for
    `entity_id IS NOT NULL`, and one index fewer to maintain made vector
    upserts about 10% faster."""
    lab, index = vector_label(label), vector_index_name(label)
    return (
        f"CREATE CONSTRAINT {vector_constraint_name(label)} IF NOT EXISTS "
        f"FOR (v:{lab}) REQUIRE (v.tenant_id, v.entity_id) IS UNIQUE",
        f"CYPHER 25 CREATE VECTOR INDEX {index} IF NOT EXISTS FOR (v:{lab}) ON v.embedding "
        f"WITH [v.tenant_id, v.entity_type] "
        f"OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dimension)}, "
        f"`vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false, "
        f"`vector.hnsw.m`: {int(hnsw_m)}, "
        f"`vector.hnsw.ef_construction`: {int(hnsw_ef_construction)}}}}}",
    )


# What `vector_schema` declares, as an existing index reports it.
VECTOR_INDEX_SHAPE = """
SHOW VECTOR INDEXES YIELD name, labelsOrTypes, properties, options
WHERE name = $name
RETURN labelsOrTypes AS labels, properties, options.indexConfig AS config
"""

AWAIT_INDEXES = "CALL db.awaitIndexes($seconds)"


def upsert_vectors(label: str) -> str:
    return f"""
UNWIND $rows AS row
MERGE (v:{vector_label(label)} {{tenant_id: row.tenant_id, entity_id: row.entity_id}})
SET v.entity_type = row.entity_type, v.source = row.source
WITH v, row
CALL db.create.setNodeVectorProperty(v, 'embedding', row.vector)
"""


def delete_vector_rows(label: str) -> str:
    """Delete the vector of each `$rows` entry's `(tenant_id, entity_id)`, if any."""
    return f"""
UNWIND $rows AS row
MATCH (v:{vector_label(label)} {{tenant_id: row.tenant_id, entity_id: row.entity_id}})
DELETE v
"""


def vector_sources(label: str) -> str:
    """The `[entity_id, source]` of the vector of each of `$ids` in `$tenant_id` that has
    one, in one record (`_MATCHES` says why: 5,000 rows took 400 ms, one record 40); not
    of one deleted after the statement found it, which reads without an id."""
    return f"""
UNWIND $ids AS id
MATCH (v:{vector_label(label)} {{tenant_id: $tenant_id, entity_id: id}})
WITH v.entity_id AS entity_id, v.source AS source
WHERE entity_id IS NOT NULL
RETURN collect([entity_id, source]) AS found
"""


def sample_vector_sources(label: str) -> str:
    """The `[tenant_id, entity_id, source]` of up to `$limit` vectors of `label`, in one
    record (`_MATCHES` says why), read through the identity constraint's index on
    `(tenant_id, entity_id)` without scanning the label. Each of `$probes`, a pair of
    strings, picks the first tenant at or after its first (the lowest tenant when
    none is: the order wraps around), then that tenant's first `$each` vectors at or
    after its second, in id order; random pairs spread the sample over tenants and
    over each tenant's ids. The label's first `$limit` come after the probes', so that
    a label holding `$limit` vectors answers that many. A vector deleted after a seek
    found it reads without ids, and is left out before the `LIMIT`."""
    lab = vector_label(label)
    first_tenant = f"""MATCH (first:{lab})
        WHERE first.tenant_id >= {{start}} AND first.entity_id IS NOT NULL
        WITH first ORDER BY first.tenant_id, first.entity_id LIMIT 1
        RETURN collect(first.tenant_id) AS {{found}}"""
    return f"""
CALL () {{
    CALL () {{
        {first_tenant.format(start="''", found="lowest")}
    }}
    UNWIND $probes AS probe
    CALL (probe) {{
        {first_tenant.format(start="probe[0]", found="after")}
    }}
    WITH probe, coalesce(after[0], lowest[0]) AS tenant
    CALL (tenant, probe) {{
        MATCH (v:{lab})
        WHERE v.tenant_id = tenant AND v.entity_id >= probe[1]
        RETURN v ORDER BY v.tenant_id, v.entity_id LIMIT $each
    }}
    RETURN v, 0 AS pass
    UNION ALL
    MATCH (v:{lab})
    WHERE v.tenant_id >= '' AND v.entity_id IS NOT NULL
    RETURN v, 1 AS pass ORDER BY v.tenant_id, v.entity_id LIMIT $limit
}}
WITH v, min(pass) AS pass
WITH v.tenant_id AS tenant_id, v.entity_id AS entity_id, v.source AS source, pass
WHERE tenant_id IS NOT NULL AND entity_id IS NOT NULL
WITH tenant_id, entity_id, source ORDER BY pass LIMIT $limit
RETURN collect([tenant_id, entity_id, source]) AS found
"""


def delete_vectors(label: str) -> str:
    return f"""
UNWIND $ids AS id
MATCH (v:{vector_label(label)} {{tenant_id: $tenant_id, entity_id: id}})
DELETE v
"""


def _index_body(label: str, typed: bool) -> str:
    """The index's nearest `$index_k` under the filters, of which the best `$k` are kept:
    the index walks its graph wider the more it is asked for (`$index_k` is `$k` times
    the store's `search_ratio`), so the best `$k` of more are nearer the exact ones. A
    vector deleted after the index answered it reads without an id, and is left out
    before the `LIMIT`."""
    type_filter = " AND v.entity_type IN $types" if typed else ""
    return f"""MATCH (v:{vector_label(label)})
      SEARCH v IN (
        VECTOR INDEX {vector_index_name(label)}
        FOR $vector
        WHERE v.tenant_id = $tenant_id{type_filter}
        LIMIT $index_k
      ) SCORE AS score
    WITH v.entity_id AS entity_id, score
    WHERE entity_id IS NOT NULL
    WITH entity_id, score ORDER BY score DESC, entity_id ASC LIMIT $k
    RETURN entity_id, score"""


def search_vectors_in_index(label: str, typed: bool) -> str:
    """The vector index alone, filters inside it: the bare query benchmarks compare with."""
    return "CYPHER 25\n" + _index_body(label, typed)


# The searches answer in one record of `[entity_id, score]` pairs: the async driver's
# cost per record is more than the pair itself costs.
_MATCHES = "collect([entity_id, score]) AS matches"


def _nearest(label: str, typed: bool) -> str:
    """Nearest `$k` under the filters as rows `entity_id, score`, in one statement.

    When more than `$exact_below` records pass the filters, the vector index
    answers with the filters applied inside it (Cypher 25 `SEARCH ... WHERE`);
    otherwise those few records are scanned exactly. The branch is a
    conditional subquery (`WHEN ... THEN ... ELSE`) because under a `UNION`
    of two `FILTER`ed arms the planner placed the exact arm's filter above
    its tenant scan, so every indexed search also read the whole tenant.
    """
    lab = vector_label(label)
    return f"""CALL () {{
    MATCH (v:{lab} {{tenant_id: $tenant_id}})
    WHERE v.entity_id IS NOT NULL AND ($types IS NULL OR v.entity_type IN $types)
    WITH v LIMIT $exact_below + 1
    RETURN count(v) AS matching
}}
CALL (matching) {{
    WHEN matching > $exact_below THEN {{
      {_index_body(label, typed)}
    }}
    ELSE {{
      {_EXACT_BODY.format(lab=lab)}
    }}
}}
"""


@functools.cache
def search_vectors(label: str, typed: bool) -> str:
    """Nearest `$k` under the filters, in one statement (`_nearest`), in one record."""
    return f"CYPHER 25\n{_nearest(label, typed)}RETURN {_MATCHES}\n"


# `vector.similarity.cosine` fails the whole statement on an all-zero vector, and
# a database written before zero vectors were kept out may hold some: they are
# skipped (the vector index never holds them either). A vector deleted after the scan
# found it reads without an id or embedding (a null score, which would sort first), and
# is left out before the `LIMIT`.
_EXACT_BODY = """MATCH (v:{lab} {{tenant_id: $tenant_id}})
    WHERE v.entity_id IS NOT NULL AND ($types IS NULL OR v.entity_type IN $types)
      AND any(x IN v.embedding WHERE x <> 0.0)
    WITH v.entity_id AS entity_id, vector.similarity.cosine(v.embedding, $vector) AS score
    WHERE entity_id IS NOT NULL AND score IS NOT NULL
    WITH entity_id, score ORDER BY score DESC, entity_id ASC LIMIT $k
    RETURN entity_id, score"""


@functools.cache
def search_vectors_exact(label: str) -> str:
    """Exact nearest `$k` by a tenant-scoped scan, the fallback without in-index filters."""
    return f"""
CALL () {{
    {_EXACT_BODY.format(lab=vector_label(label))}
}}
RETURN {_MATCHES}
"""


def _exact_nearest(label: str) -> str:
    return f"CALL () {{\n    {_EXACT_BODY.format(lab=vector_label(label))}\n}}\n"


# The lexical candidates' columns, and the semantic matches' whole entities.
_LEXICAL_COLUMNS = ("ids", "entity_types", "names", "normalized_names", "properties")


@functools.cache
def find_candidates(label: str, nearest: str | None, lexical: bool) -> str:
    """Both channels' candidates in one statement and one record: `matches`, the
    `[entity_id, score]` pairs of the vector search (`nearest`: "index", "typed"
    (the index with a type filter), "exact" or None for none), the columns of
    `FIND_LEXICAL_CANDIDATES` (when `lexical`), and `entities`, the whole
    entities of the matches."""
    parts = ["CYPHER 25"]
    if nearest is None:
        parts.append("WITH [] AS matches")
    else:
        body = (
            _exact_nearest(label)
            if nearest == "exact"
            else _nearest(label, typed=nearest == "typed")
        )
        parts.append(f"CALL () {{\n{body}RETURN {_MATCHES}\n}}")
    if lexical:
        parts.append(f"CALL () {{\n{FIND_LEXICAL_CANDIDATES}}}")
    parts.append(
        """CALL (matches) {
    UNWIND matches AS match
    MATCH (e:Entity {tenant_id: $tenant_id, id: match[0]})
    RETURN collect(e {.*}) AS entities
}"""
    )
    columns = ", ".join(c if lexical else f"[] AS {c}" for c in _LEXICAL_COLUMNS)
    parts.append(f"RETURN matches, {columns}, entities")
    return "\n".join(parts) + "\n"
