"""Entity, Relationship and VectorRecord validation: what is derived, what is refused."""

from __future__ import annotations

import json
import pickle
import re
import uuid
from collections.abc import Callable

import pytest
from pydantic import BaseModel, ValidationError

from redstring import (
    Entity,
    EntityId,
    InvalidFieldsError,
    InvalidInputError,
    Relationship,
    RelationshipId,
    TenantId,
    VectorRecord,
)
from redstring.domain.blocking import MAX_KEYED_ALIASES, blocking_keys_for
from redstring.domain.ids import entity_id_for, relationship_id_for
from redstring.domain.properties import MAX_PROPERTIES_BYTES, alias_names, properties_size
from redstring.domain.text import MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH, MAX_TYPE_LENGTH
from redstring.testing import make_entity, make_relationship, new_tenant


def test_derived_fields() -> None:
    entity = make_entity(new_tenant(), "  ACME Corp. ", "Org")
    assert entity.name == "ACME Corp."
    assert entity.normalized_name == "acme corp"
    assert entity.blocking_keys == blocking_keys_for("ACME Corp.", "Org")
    assert entity.blocking_keys[:3] == ("p:acme", "s:A252", "w:acme")


@pytest.mark.parametrize(
    ("aliases", "keyed"),
    [
        (["IBM", "Big Blue"], ["IBM", "Big Blue"]),
        ("IBM", ["IBM"]),  # one alias as a string
        ([], []),
    ],
)
def test_blocking_keys_are_derived_from_the_aliases_too(aliases: object, keyed: list[str]) -> None:
    entity = make_entity(
        new_tenant(),
        "International Business Machines",
        "org",
        properties={"aliases": aliases, "city": "Armonk"},
    )
    assert entity.blocking_keys == blocking_keys_for(
        "International Business Machines", "org", keyed
    )
    assert "w:armonk" not in entity.blocking_keys  # other properties add no keys


def test_an_entity_type_longer_than_a_label_is_refused_by_entity_and_vector_record() -> None:
    tenant = new_tenant()
    assert make_entity(tenant, "Acme", "T" * MAX_TYPE_LENGTH).entity_type
    message = rf"entity_type must be at most {MAX_TYPE_LENGTH} characters, got 40000$"
    with pytest.raises(InvalidFieldsError, match=message):
        make_entity(tenant, "Acme", "T" * 40_000)
    with pytest.raises(InvalidFieldsError, match=message):
        VectorRecord(
            entity_id=uuid.uuid4(), tenant_id=tenant, vector=(1.0,), entity_type="T" * 40_000
        )


def test_a_relationship_type_longer_than_a_label_is_refused() -> None:
    """The cap of an entity type, counted as it is, after stripping; the same however the
    relationship is made (a copy with changes too)."""
    tenant = new_tenant()
    a, b = make_entity(tenant, "A"), make_entity(tenant, "B")
    longest = "\U0001f600" * MAX_TYPE_LENGTH
    assert make_relationship(a, b, f" {longest}\n").relationship_type == longest
    made = Relationship.create(tenant, a.id, longest, b.id)
    message = rf"relationship_type must be at most {MAX_TYPE_LENGTH} characters, got 201$"
    with pytest.raises(InvalidFieldsError, match=message):
        make_relationship(a, b, longest + "x")
    with pytest.raises(InvalidFieldsError, match=message):
        Relationship.create(tenant, a.id, "R" * 201, b.id)
    with pytest.raises(InvalidFieldsError, match=message):
        made.model_copy(update={"relationship_type": "R" * 201})


def test_properties_past_their_bound_as_json_and_long_descriptions_are_refused() -> None:
    """What a store reads with every entity a query reads is bounded where a record is
    made: properties by the UTF-8 bytes of their JSON, a description by characters."""
    tenant = new_tenant()
    # `{"b":"..."}` is 8 bytes around the value; `é` is two bytes.
    fits = {"b": "é" * ((MAX_PROPERTIES_BYTES - 8) // 2)}
    assert properties_size(fits) == MAX_PROPERTIES_BYTES
    assert make_entity(tenant, "Acme", "org", properties=fits).properties == fits
    over = {"b": "x" * (MAX_PROPERTIES_BYTES - 7)}
    message = r"properties must be at most 16,384 bytes as JSON, got 16,385: a long"
    with pytest.raises(InvalidFieldsError, match=message):
        make_entity(tenant, "Acme", "org", properties=over)
    with pytest.raises(InvalidFieldsError, match=message):
        make_entity(tenant, "Acme", "org").model_copy(update={"properties": over})
    a, b = make_entity(tenant, "A", "org"), make_entity(tenant, "B", "org")
    assert make_relationship(a, b, "R", properties=fits).properties == fits
    with pytest.raises(InvalidFieldsError, match=message):
        make_relationship(a, b, "R", properties=over)
    longest = "d" * MAX_DESCRIPTION_LENGTH
    assert make_entity(tenant, "Acme", "org", description=longest).description == longest
    with pytest.raises(InvalidFieldsError, match=r"description must be at most 10,000 characters"):
        make_entity(tenant, "Acme", "org", description=longest + "d")


def test_a_name_or_alias_longer_than_a_name_is_refused() -> None:
    tenant = new_tenant()
    longest = "Acme " + "x" * (MAX_NAME_LENGTH - 5)
    assert make_entity(tenant, longest, "org", properties={"aliases": [longest]}).name == longest
    with pytest.raises(InvalidFieldsError, match=r"name must be at most 500 characters, got 501$"):
        make_entity(tenant, longest + "x", "org")
    message = r"aliases must be at most 500 characters, got 9000$"
    for aliases in ("a" * 9000, ["IBM", "a" * 9000]):
        with pytest.raises(InvalidFieldsError, match=message):
            make_entity(tenant, "Acme", "org", properties={"aliases": aliases})


@pytest.mark.parametrize("aliases", ["", [" "], ["IBM", ""]])
def test_a_blank_alias_is_refused(aliases: object) -> None:
    with pytest.raises(InvalidFieldsError, match=r"aliases must not be blank$"):
        make_entity(new_tenant(), "Acme", "org", properties={"aliases": aliases})


@pytest.mark.parametrize("aliases", [7, True, ["IBM", 7, True]])
def test_aliases_that_are_not_names_are_refused(aliases: object) -> None:
    with pytest.raises(
        InvalidFieldsError,
        match=r"^Entity\.properties: aliases must be a string or a list of strings$",
    ):
        make_entity(new_tenant(), "International Business Machines", "org",
                    properties={"aliases": aliases})  # fmt: skip
    assert alias_names({"aliases": ["IBM", 7, True]}) == ["IBM"]  # raw input: strings only


@pytest.mark.parametrize(
    ("fields", "text"),
    [
        ({}, "Acme Corp. org"),
        ({"description": "A maker of anvils"}, "Acme Corp. org. A maker of anvils"),
        (
            {"properties": {"aliases": ["ACME", "Acme Anvils"]}},
            "Acme Corp (ACME, Acme Anvils). org",
        ),
        ({"properties": {"aliases": "ACME", "city": "Armonk"}}, "Acme Corp (ACME). org"),
        ({"properties": {"aliases": []}}, "Acme Corp. org"),
    ],
)
def test_embedding_text_is_the_name_its_aliases_type_and_description(
    fields: dict[str, object], text: str
) -> None:
    assert make_entity(new_tenant(), "Acme Corp", "org", **fields).embedding_text() == text


def test_embedding_text_holds_the_keyed_aliases_only() -> None:
    aliases = [f"Alias {i}" for i in range(MAX_KEYED_ALIASES + 2)]
    entity = make_entity(new_tenant(), "Acme", "org", properties={"aliases": aliases})
    shown = ", ".join(aliases[:MAX_KEYED_ALIASES])
    assert entity.embedding_text() == f"Acme ({shown}). org"


def test_embedding_text_reads_a_name_of_another_script_in_latin_letters_too() -> None:
    tenant = new_tenant()
    assert make_entity(tenant, "Москва", "city").embedding_text() == "Москва (Moskva). city"
    aliased = make_entity(tenant, "Αθήνα", "city", properties={"aliases": ["Athens"]})
    assert aliased.embedding_text() == "Αθήνα (Athina, Athens). city"
    assert make_entity(tenant, "Łódź", "city").embedding_text() == "Łódź. city"


def test_given_derived_fields_are_kept() -> None:
    entity = Entity(
        id=EntityId(uuid.uuid4()),
        tenant_id=new_tenant(),
        name="X",
        entity_type="t",
        normalized_name="custom",
        blocking_keys=("p:custom",),
    )
    assert (entity.normalized_name, entity.blocking_keys) == ("custom", ("p:custom",))


@pytest.mark.parametrize("name", ["", "   ", "\t\n"])
def test_blank_name_is_refused(name: str) -> None:
    with pytest.raises(InvalidFieldsError, match="name must not be blank"):
        make_entity(new_tenant(), name)


@pytest.mark.parametrize(
    ("name", "description"),
    [("bad\x00name", None), ("lone \ud800 surrogate", None), ("ok", "nul\x00")],
)
def test_unstorable_text_is_refused(name: str, description: str | None) -> None:
    with pytest.raises(InvalidFieldsError, match="cannot be stored"):
        make_entity(new_tenant(), name, description=description)


def test_unstorable_property_is_refused() -> None:
    with pytest.raises(InvalidFieldsError, match="cannot be stored"):
        make_entity(new_tenant(), "ok", properties={"alias": "a\x00b"})
    with pytest.raises(InvalidFieldsError, match="finite"):
        make_entity(new_tenant(), "ok", properties={"x": float("nan")})


def test_properties_are_read_only() -> None:
    entity = make_entity(new_tenant(), "ok", properties={"a": 1})
    with pytest.raises(TypeError):
        entity.properties["a"] = 2  # type: ignore[index]
    assert entity.model_dump()["properties"] == {"a": 1}


def test_default_properties_are_read_only_too() -> None:
    tenant = new_tenant()
    entity = Entity(
        id=entity_id_for(tenant, "thing", "ok"), tenant_id=tenant, name="ok", entity_type="thing"
    )
    relationship = Relationship(
        id=RelationshipId(uuid.uuid4()),
        tenant_id=tenant,
        source_entity_id=entity.id,
        target_entity_id=entity_id_for(tenant, "thing", "other"),
        relationship_type="RELATED_TO",
    )
    for value in (entity, relationship):
        assert value.properties == {}
        with pytest.raises(TypeError):
            value.properties["a"] = 2  # type: ignore[index]


def test_properties_compare_as_their_items() -> None:
    entity = make_entity(new_tenant(), "ok", properties={"a": 1, "tags": ("x",)})
    assert entity.properties == {"a": 1, "tags": ("x",)}
    assert {"a": 1, "tags": ("x",)} == entity.properties  # noqa: SIM300 (dict on the left)
    assert entity.properties != {"a": 1}
    assert dict(entity.properties) == {"a": 1, "tags": ("x",)}
    assert entity.properties.get("missing", 0) == 0


def test_entities_and_relationships_pickle() -> None:
    """They cross process boundaries (worker processes, pickling caches) unchanged."""
    tenant = new_tenant()
    source = make_entity(tenant, "Acme Corp", properties={"aliases": ("ACME",), "rank": 1})
    target = make_entity(tenant, "Globex")
    relationship = make_relationship(source, target, properties={"since": 1999})
    for value in (source, target, relationship):
        copy = pickle.loads(pickle.dumps(value))
        assert copy == value
        assert copy.model_dump() == value.model_dump()
        with pytest.raises(TypeError):
            copy.properties["new"] = 1  # type: ignore[index]


def test_entity_is_hashable_by_identity() -> None:
    entity = make_entity(new_tenant(), "ok", properties={"tags": ("x", "y")})
    assert hash(entity) == hash(entity.model_copy())


def test_deterministic_ids() -> None:
    tenant = new_tenant()
    assert entity_id_for(tenant, "org", "ACME Corp.") == entity_id_for(tenant, "Org", "acme corp")
    assert entity_id_for(tenant, "org", "Acme") != entity_id_for(tenant, "person", "Acme")
    assert entity_id_for(tenant, "org", "Acme") != entity_id_for(new_tenant(), "org", "Acme")


def test_derived_ids_are_pinned() -> None:
    """Stored data is keyed by these ids: deriving them differently re-keys every store."""
    tenant = TenantId(uuid.UUID("00000000-0000-4000-8000-00000000002a"))
    acme = entity_id_for(tenant, "company", "  ACME Corp.")
    ada = entity_id_for(tenant, "Person", "Ada Blöm")
    assert str(acme) == "00d049bb-69bf-5375-b856-07b52874941e"
    assert str(ada) == "1bce0231-3751-56e5-9180-435e9462678f"
    assert str(entity_id_for(tenant, "city", "東京")) == "6e7ea678-04b0-53dc-9903-f0d847db26e2"
    # Letters names are compared without (`normalize_name`) stay in the id (`id_form`).
    assert str(entity_id_for(tenant, "city", "Łódź")) == "1bfd75c7-5aed-5f90-99d4-7631980685d2"
    assert entity_id_for(tenant, "city", "Łódź") != entity_id_for(tenant, "city", "Lodz")
    assert (
        str(entity_id_for(tenant, "Straße", "Sønderborg Æblegård"))
        == "17e26005-95bc-536c-82fd-61c99e85e700"
    )
    works_at = relationship_id_for(tenant, acme, " WORKS_AT ", ada)
    assert str(works_at) == "8af7d1f6-3695-5adb-b329-f5b54b52b567"
    assert (
        str(relationship_id_for(tenant, ada, "x", acme)) == "59a8e480-b542-5734-8b09-5d06370294c9"
    )
    assert (works_at.version, works_at.variant) == (5, uuid.RFC_4122)
    assert type(works_at) is uuid.UUID
    assert type(acme) is uuid.UUID


def test_relationship_rules() -> None:
    tenant = new_tenant()
    a, b = make_entity(tenant, "A"), make_entity(tenant, "B")
    assert make_relationship(a, b, confidence=0.0).confidence == 0.0
    with pytest.raises(InvalidFieldsError, match="itself"):
        make_relationship(a, a)
    for bad in (-0.1, 1.01, float("nan")):
        with pytest.raises(InvalidFieldsError):
            make_relationship(a, b, confidence=bad)
    with pytest.raises(InvalidFieldsError, match="blank"):
        Relationship(
            id=RelationshipId(uuid.uuid4()),
            tenant_id=tenant,
            source_entity_id=a.id,
            target_entity_id=b.id,
            relationship_type=" ",
        )


TENANT = TenantId(uuid.UUID("6f1c1f3e-2b0a-4d7e-9a57-1e2d3c4b5a69"))
OTHER = EntityId(uuid.UUID("0b8f1c55-7d1e-4c8e-a0f2-3c9d5e7a1b24"))
GOOD_ENTITY: dict[str, object] = {
    "id": OTHER,
    "tenant_id": TENANT,
    "name": "Acme Corp",
    "entity_type": "company",
}
GOOD_RELATIONSHIP: dict[str, object] = {
    "id": RelationshipId(OTHER),
    "tenant_id": TENANT,
    "source_entity_id": OTHER,
    "target_entity_id": EntityId(TENANT),
    "relationship_type": "WORKS_AT",
}
GOOD_VECTOR: dict[str, object] = {
    "entity_id": OTHER,
    "tenant_id": TENANT,
    "vector": (1.0, 0.0),
    "entity_type": "company",
}
RAW_UUID = TENANT.bytes  # pydantic's UUID type would take these; the ids rule does not


@pytest.mark.parametrize(
    ("record", "good", "field", "wrong", "message"),
    [
        (Entity, GOOD_ENTITY, "id", "not-a-uuid", "Entity.id: must be a UUID"),
        (Entity, GOOD_ENTITY, "id", RAW_UUID, "Entity.id: must be a UUID"),
        (Entity, GOOD_ENTITY, "tenant_id", 5, "Entity.tenant_id: must be a UUID"),
        (Entity, GOOD_ENTITY, "tenant_id", None, "Entity.tenant_id: must be a UUID"),
        (Entity, GOOD_ENTITY, "name", 5, "Entity.name: Input should be a valid string"),
        (Entity, GOOD_ENTITY, "name", "", "Entity.name: name must not be blank"),
        (Entity, GOOD_ENTITY, "entity_type", None, "Entity.entity_type: Input should be a"),
        (Entity, GOOD_ENTITY, "properties", [1], "Entity.properties: Input should be"),
        (Entity, GOOD_ENTITY, "size", 3, "Entity.size: Extra inputs are not permitted"),
        (
            Relationship,
            GOOD_RELATIONSHIP,
            "source_entity_id",
            RAW_UUID,
            "Relationship.source_entity_id: must be a UUID",
        ),
        (
            Relationship,
            GOOD_RELATIONSHIP,
            "target_entity_id",
            "x",
            "Relationship.target_entity_id: must be a UUID",
        ),
        (Relationship, GOOD_RELATIONSHIP, "id", 1.5, "Relationship.id: must be a UUID"),
        (
            Relationship,
            GOOD_RELATIONSHIP,
            "confidence",
            "high",
            "Relationship.confidence: Input should be a valid number",
        ),
        (
            Relationship,
            GOOD_RELATIONSHIP,
            "target_entity_id",
            OTHER,
            "Relationship: a relationship cannot connect an entity to itself",
        ),
        (VectorRecord, GOOD_VECTOR, "vector", "abc", "VectorRecord.vector: Input should be a"),
        (VectorRecord, GOOD_VECTOR, "vector", (1.0, "x"), r"VectorRecord.vector.1: Input should"),
        (VectorRecord, GOOD_VECTOR, "entity_id", b"", "VectorRecord.entity_id: must be a UUID"),
    ],
)
def test_a_wrong_field_is_invalid_input_naming_it(
    record: type[BaseModel], good: dict[str, object], field: str, wrong: object, message: str
) -> None:
    """Whichever way a record is built: by keywords, from a dict, from JSON."""
    fields = {**good, field: wrong}
    builds: list[Callable[[], object]] = [
        lambda: record(**fields),
        lambda: record.model_validate(fields),
    ]
    if not isinstance(wrong, bytes):
        builds.append(lambda: record.model_validate_json(json.dumps(fields, default=str)))
    for build in builds:
        with pytest.raises(InvalidFieldsError, match=f"^{re.escape(message)}") as caught:
            build()
        error = caught.value
        assert isinstance(error, InvalidInputError)
        assert isinstance(error, ValueError)  # callers catching ValueError keep working
        assert isinstance(error.__cause__, ValidationError)
        assert error.record == record.__name__


def test_every_problem_is_named_and_can_be_renamed() -> None:
    with pytest.raises(InvalidFieldsError) as caught:
        Relationship(**{**GOOD_RELATIONSHIP, "source_entity_id": "x", "relationship_type": 7})
    error = caught.value
    assert str(error) == (
        "Relationship.source_entity_id: must be a UUID; "
        "Relationship.relationship_type: Input should be a valid string"
    )
    assert [path for path, _ in error.problems] == [("source_entity_id",), ("relationship_type",)]
    assert error.describe("edges[2]", {"source_entity_id": "sourceId"}) == (
        "edges[2].sourceId: must be a UUID; edges[2].relationship_type: Input should be a valid string"
    )


def test_ids_are_uuids_or_their_strings() -> None:
    entity = Entity(**{**GOOD_ENTITY, "id": str(OTHER).upper(), "tenant_id": TENANT.hex})
    assert (entity.id, entity.tenant_id) == (OTHER, TENANT)
    assert type(entity.id) is uuid.UUID
    assert Entity.model_validate_json(entity.model_dump_json()) == entity
    record = VectorRecord(**{**GOOD_VECTOR, "entity_id": str(OTHER)})
    assert record.entity_id == OTHER


@pytest.mark.parametrize(
    ("name", "entity_type", "fields"),
    [(123, "org", ["name"]), ("Acme", 5, ["entity_type"]), (None, None, ["name", "entity_type"])],
)
def test_create_names_only_the_fields_that_are_wrong(
    name: object, entity_type: object, fields: list[str]
) -> None:
    with pytest.raises(InvalidFieldsError) as raised:
        Entity.create(new_tenant(), name, entity_type)  # type: ignore[arg-type]
    assert [path for path, _ in raised.value.problems] == [(field,) for field in fields]
    assert isinstance(raised.value.__cause__, ValidationError)


def test_a_copy_with_changes_is_checked_and_derives_again() -> None:
    """`model_copy(update=...)` checks the changes as the constructor does (pydantic's own
    copy does not), and derives the name's fields again from a changed source."""
    acme = make_entity(new_tenant(), "Acme Corp", "org", description="makes anvils")
    renamed = acme.model_copy(update={"name": "Globex Inc"})
    fresh = Entity(id=acme.id, tenant_id=acme.tenant_id, name="Globex Inc", entity_type="org")
    assert (renamed.normalized_name, renamed.blocking_keys) == (
        fresh.normalized_name,
        fresh.blocking_keys,
    )
    assert (renamed.id, renamed.description) == (acme.id, "makes anvils")
    aliased = acme.model_copy(update={"properties": {"aliases": ["Roadrunner Supply"]}})
    assert aliased.blocking_keys == blocking_keys_for("Acme Corp", "org", ["Roadrunner Supply"])
    retyped = acme.model_copy(update={"entity_type": "Person"})
    assert retyped.blocking_keys == blocking_keys_for("Acme Corp", "Person")
    described = acme.model_copy(update={"description": "sells anvils"})
    assert described.blocking_keys == acme.blocking_keys
    assert acme.model_copy(deep=True) == acme
    with pytest.raises(InvalidFieldsError, match=r"^Entity\.name: name must not be blank$"):
        acme.model_copy(update={"name": " "})
    with pytest.raises(InvalidFieldsError, match=r"^Entity\.nmae: Extra inputs"):
        acme.model_copy(update={"nmae": "Globex"})
    record = VectorRecord(
        entity_id=acme.id, tenant_id=acme.tenant_id, vector=(1.0, 0.0), entity_type="org"
    )
    with pytest.raises(InvalidFieldsError, match=r"^VectorRecord\.vector: "):
        record.model_copy(update={"vector": (float("nan"), 0.0)})
    relationship = make_relationship(acme, make_entity(acme.tenant_id, "Initech", "org"))
    with pytest.raises(InvalidFieldsError, match=r"^Relationship\.confidence: "):
        relationship.model_copy(update={"confidence": 2.0})


@pytest.mark.parametrize("value", [{"b": 1}, None, [[1]], [1, None]], ids=str)
def test_a_property_value_of_no_storable_kind_is_named_once(value: object) -> None:
    """One plain line naming the property, where pydantic listed each member of the value
    union it tried (`Entity.properties.a.bool: Input should be a valid boolean; ...`)."""
    message = (
        r"^Entity\.properties: property 'a' must be a string, number, boolean or a list of them$"
    )
    with pytest.raises(InvalidFieldsError, match=message):
        Entity.create(new_tenant(), "Acme", "org", properties={"a": value})
    relationship = r"^Relationship\.properties: property 'a' must be"
    a, b = make_entity(new_tenant(), "A", "org"), make_entity(new_tenant(), "B", "org")
    with pytest.raises(InvalidFieldsError, match=relationship):
        Relationship.create(a.tenant_id, a.id, "R", b.id, properties={"a": value})
