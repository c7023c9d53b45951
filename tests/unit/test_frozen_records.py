"""Records and results are immutable, and say so in redstring's own error: assigning to or
deleting a field raises `FrozenRecordError`, an `AttributeError`, never pydantic's
`ValidationError`; the record is unchanged."""

from __future__ import annotations

import pickle
import uuid

import pytest
from pydantic import BaseModel, ValidationError

from redstring import (
    FrozenRecordError,
    RedstringError,
    RetrievalResult,
    ScoredEntity,
    VectorMatch,
    VectorRecord,
)
from redstring.testing import make_entity, make_relationship, new_tenant

TENANT = new_tenant()
ACME = make_entity(TENANT, "Acme Corp", "org")
GLOBEX = make_entity(TENANT, "Globex", "org")
SCORED = ScoredEntity(entity=ACME, score=0.5, semantic=0.9, lexical=None)

# Each record type, one of it, and a field with a value of the right type for it.
RECORDS: list[tuple[BaseModel, str, object]] = [
    (ACME, "name", "Initech"),
    (make_relationship(ACME, GLOBEX), "confidence", 0.5),
    (
        VectorRecord(entity_id=ACME.id, tenant_id=TENANT, vector=(1.0, 0.0), entity_type="org"),
        "vector",
        (0.0, 1.0),
    ),
    (SCORED, "score", 1.0),
    (RetrievalResult(query="acme", matches=(SCORED,)), "query", "globex"),
    (VectorMatch(entity_id=ACME.id, score=0.5), "entity_id", uuid.uuid4()),
]
IDS = [type(record).__name__ for record, _, _ in RECORDS]


@pytest.mark.parametrize(("record", "field", "value"), RECORDS, ids=IDS)
def test_assigning_a_field_is_refused_in_redstrings_own_words(
    record: BaseModel, field: str, value: object
) -> None:
    before = record.model_dump()
    kind = type(record).__name__
    with pytest.raises(FrozenRecordError) as raised:
        setattr(record, field, value)
    error = raised.value
    assert isinstance(error, AttributeError)
    assert isinstance(error, RedstringError)
    assert not isinstance(error, ValidationError)
    assert str(error) == f"{kind} is immutable: cannot set {field!r}; build a new {kind} instead"
    assert (error.record, error.name, error.obj) == (kind, field, record)
    assert error.__cause__ is None  # no pydantic error behind it, nor shown with it
    assert error.__suppress_context__
    assert record.model_dump() == before


@pytest.mark.parametrize(("record", "field", "value"), RECORDS, ids=IDS)
def test_deleting_a_field_or_setting_an_unknown_one_is_refused_alike(
    record: BaseModel, field: str, value: object
) -> None:
    before = record.model_dump()
    kind = type(record).__name__
    with pytest.raises(FrozenRecordError, match=rf"^{kind} is immutable: cannot delete '{field}';"):
        delattr(record, field)
    with pytest.raises(FrozenRecordError, match=rf"^{kind} is immutable: cannot set 'nmae';"):
        record.nmae = value  # type: ignore[attr-defined]
    assert record.model_dump() == before
    assert not hasattr(record, "nmae")


@pytest.mark.parametrize("deleting", [False, True])
def test_the_error_crosses_a_process_boundary_whole(deleting: bool) -> None:
    error = FrozenRecordError(ACME, "name", deleting=deleting)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is FrozenRecordError
    assert (str(copy), copy.record, copy.name, copy.obj) == (str(error), "Entity", "name", ACME)


def test_a_changed_copy_is_still_built_by_model_copy() -> None:
    """The refusal is of changes in place: a changed copy is still made by `model_copy`."""
    relationship = make_relationship(ACME, GLOBEX)
    changed = relationship.model_copy(update={"confidence": 0.25})
    assert (changed.confidence, relationship.confidence) == (0.25, 1.0)


@pytest.mark.parametrize(
    ("result", "update"),
    [
        (VectorMatch(entity_id=ACME.id, score=0.5), {"score": 5}),
        (VectorMatch(entity_id=ACME.id, score=0.5), {"entity_id": "not-a-uuid"}),
        (SCORED, {"semantic": "x"}),
        (RetrievalResult(query="acme", matches=(SCORED,)), {"matches": "garbage"}),
    ],
)
def test_a_result_copied_with_changes_is_checked_as_its_constructor_checks(
    result: BaseModel, update: dict[str, object]
) -> None:
    with pytest.raises(ValidationError):
        type(result)(**{**dict(result), **update})
    with pytest.raises(ValidationError):
        result.model_copy(update=update)
    assert result.model_copy(update={}) == result


def test_a_result_copied_with_a_valid_change_has_it() -> None:
    assert SCORED.model_copy(update={"lexical": 0.25}).lexical == 0.25
