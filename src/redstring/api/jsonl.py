"""The JSONL format `redstring load` reads: one entity or relationship per line.

    {"kind": "entity", "name": "Acme Corp", "entity_type": "company",
     "description": "...", "properties": {"founded": 1948}, "id": "<uuid, optional>"}
    {"kind": "relationship", "relationship_type": "WORKS_AT",
     "source": {"name": "Ada Blom", "type": "person"}, "target_id": "<uuid>",
     "confidence": 0.9, "properties": {}, "id": "<uuid, optional>"}

Each end of a relationship is named either by id (`source_id`, `target_id`)
or by name and type (`source`, `target`), resolved through the same
deterministic id an `EntityInput` without id gets. Absent ids are derived the
same way, so loading a file twice writes nothing new. Blank lines are skipped.
Values are taken as GraphQL takes the mutations' arguments, not coerced:
`confidence` is a JSON number (an integer too, as GraphQL's `Float` takes
one), never a string nor `true`. A key given twice in one object (`"name":
"A", "name": "B"`) refuses its line rather than keeping the last value.
The tenant comes from the command line, never from a line. `numbered_records`
reads a file's lines lazily, turning each bad line into an `InvalidLine`
instead of stopping, so the loader decides what a bad line does.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from redstring.api.arguments import json_properties
from redstring.api.errors import describe_validation_error
from redstring.api.repeated_keys import UNIQUE_KEYS, RepeatedKeyError
from redstring.composition.ingest import InvalidLine, LoadRecord, NamedRelationship, NumberedLine
from redstring.domain.entity import Entity
from redstring.domain.errors import InvalidFieldsError, InvalidInputError
from redstring.domain.ids import (
    EntityId,
    TenantId,
    entity_id_for,
    relationship_id_for,
    uuid_of_text,
)
from redstring.domain.relationship import Relationship

# Domain field names as the file spells them, for error messages.
_FILE_NAMES = {"source_entity_id": "source_id", "target_entity_id": "target_id"}


class InvalidLineError(InvalidInputError):
    """A line of the file that cannot be loaded, and why; for an entity's line, the id
    its entity would have had (`entity_id`), when the line names one."""

    def __init__(self, line_number: int, reason: str, entity_id: EntityId | None = None) -> None:
        super().__init__(f"line {line_number}: {reason}")
        self.line_number = line_number
        self.reason = reason
        self.entity_id = entity_id

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the arguments that build it (`args` holds only the message)."""
        return (type(self), (self.line_number, self.reason, self.entity_id), self.__dict__)


# Names a file is likely to use again soon (entities just loaded, hubs): about 4 MB at most.
ENTITY_ID_CACHE_SIZE = 16_384


@lru_cache(maxsize=ENTITY_ID_CACHE_SIZE)
def _entity_id(tenant_id: TenantId, entity_type: str, name: str) -> EntityId:
    """`entity_id_for`, remembered for recent names: a file names the same entities again
    and again, and deriving a UUID v5 costs more than the rest of a relationship line."""
    return entity_id_for(tenant_id, entity_type, name)


class EndpointName(BaseModel):
    """A relationship end named by the entity's name and type."""

    model_config = ConfigDict(extra="forbid")

    name: str
    type: str

    def entity_id(self, tenant_id: TenantId) -> EntityId:
        return _entity_id(tenant_id, self.type, self.name)


def _end_id(by_id: uuid.UUID | None, by_name: EndpointName | None, tenant_id: TenantId) -> EntityId:
    if by_id is not None:
        return EntityId(by_id)
    if by_name is None:  # excluded by RelationshipLine's validator
        raise ValueError("a relationship end needs an id or a name and type")
    return by_name.entity_id(tenant_id)


class EntityLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["entity"]
    id: uuid.UUID | None = None
    name: str
    entity_type: str
    description: str | None = None
    properties: dict[str, Any] | None = None

    def entity_id(self, tenant_id: TenantId) -> EntityId:
        """The id of the line's entity: its `id`, else the one its name and type derive."""
        return EntityId(self.id) if self.id else _entity_id(tenant_id, self.entity_type, self.name)

    def to_domain(self, tenant_id: TenantId) -> Entity:
        return Entity.model_validate(
            {
                "id": self.entity_id(tenant_id),
                "tenant_id": tenant_id,
                "name": self.name,
                "entity_type": self.entity_type,
                "description": self.description,
                "properties": json_properties(self.properties, ""),
            }
        )


class RelationshipLine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["relationship"]
    id: uuid.UUID | None = None
    relationship_type: str
    source_id: uuid.UUID | None = None
    source: EndpointName | None = None
    target_id: uuid.UUID | None = None
    target: EndpointName | None = None
    # Strict, as GraphQL's `Float!`: a number (an integer too), never "0.5" nor true.
    confidence: float = Field(1.0, strict=True)
    properties: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_name_per_end(self) -> Self:
        for end in ("source", "target"):
            by_id, by_name = getattr(self, f"{end}_id"), getattr(self, end)
            if (by_id is None) == (by_name is None):
                raise ValueError(f"give exactly one of {end}_id and {end} (name and type)")
        return self

    def to_record(self, tenant_id: TenantId) -> NamedRelationship:
        """The relationship, with its ends as this line named them (name and type, or id)."""
        source, target = self.source, self.target
        return NamedRelationship(
            self.to_domain(tenant_id),
            None if source is None else (source.name, source.type),
            None if target is None else (target.name, target.type),
        )

    def to_domain(self, tenant_id: TenantId) -> Relationship:
        source = _end_id(self.source_id, self.source, tenant_id)
        target = _end_id(self.target_id, self.target, tenant_id)
        return Relationship.model_validate(
            {
                "id": self.id
                or relationship_id_for(tenant_id, source, self.relationship_type, target),
                "tenant_id": tenant_id,
                "source_entity_id": source,
                "target_entity_id": target,
                "relationship_type": self.relationship_type,
                "confidence": self.confidence,
                "properties": json_properties(self.properties, ""),
            }
        )


_LINE_MODELS: dict[str, type[EntityLine] | type[RelationshipLine]] = {
    "entity": EntityLine,
    "relationship": RelationshipLine,
}
# Parses and validates a well-formed line in one call, without a dict in between.
_ANY_LINE: TypeAdapter[EntityLine | RelationshipLine] = TypeAdapter(
    Annotated[EntityLine | RelationshipLine, Field(discriminator="kind")]
)


def _given_twice(
    error: RepeatedKeyError, line_number: int, entity_id: EntityId | None
) -> InvalidLineError:
    return InvalidLineError(line_number, str(error), entity_id)


def _to_record(
    line: EntityLine | RelationshipLine, line_number: int, tenant_id: TenantId
) -> Entity | NamedRelationship:
    try:
        if isinstance(line, RelationshipLine):
            return line.to_record(tenant_id)
        return line.to_domain(tenant_id)
    except InvalidInputError as exc:
        reason = exc.describe("", _FILE_NAMES) if isinstance(exc, InvalidFieldsError) else str(exc)
        entity_id = None if isinstance(line, RelationshipLine) else line.entity_id(tenant_id)
        raise InvalidLineError(line_number, reason, entity_id) from None


def _entity_id_named(fields: Mapping[str, Any], tenant_id: TenantId) -> EntityId | None:
    """The id of the entity an entity line that does not validate names (`fields`, the
    line's JSON): its `id` when that is a UUID, else the one its name and type derive
    (`EntityLine.entity_id`); None when it names none."""
    given, name, entity_type = fields.get("id"), fields.get("name"), fields.get("entity_type")
    if given is not None:
        read = uuid_of_text(given) if isinstance(given, str) else None
        return None if read is None else EntityId(read)
    if isinstance(name, str) and isinstance(entity_type, str):
        return _entity_id(tenant_id, entity_type, name)
    return None


def parse_line(
    text: str | bytes, line_number: int, tenant_id: TenantId
) -> Entity | Relationship | None:
    """The record on one line of the file (text, or UTF-8 bytes), `None` for a blank line.

    Raises `InvalidLineError` saying what is wrong, prefixed with `line_number`.
    """
    record = _parsed(text, line_number, tenant_id)
    return record.relationship if isinstance(record, NamedRelationship) else record


def _parsed(text: str | bytes, line_number: int, tenant_id: TenantId) -> LoadRecord | None:
    """`parse_line`, with a relationship's ends as the line named them."""
    try:
        line = _ANY_LINE.validate_json(text)
    except ValidationError:
        pass  # blank, or not a good line: the checks below say which, in the file's terms
    else:
        # pydantic keeps a repeated key's last value: the line is read again to refuse one
        # (about 3 us a line, of some 100 us a line parsed).
        try:
            UNIQUE_KEYS.decode(text.decode() if isinstance(text, bytes) else text)
        except RepeatedKeyError as exc:
            entity_id = line.entity_id(tenant_id) if isinstance(line, EntityLine) else None
            raise _given_twice(exc, line_number, entity_id) from None
        return _to_record(line, line_number, tenant_id)
    if isinstance(text, bytes):
        text = _decoded(text, line_number)
    if not text.strip():
        return None
    try:
        # Without its line break: `json` would place an error at the end of the line on
        # a next line, column 1. A line holds no other line break, so columns count
        # characters from the start of this line (after a first line's byte-order mark).
        data = UNIQUE_KEYS.decode(text.rstrip("\r\n"))
    except json.JSONDecodeError as exc:
        raise InvalidLineError(
            line_number, f"not valid JSON ({exc.msg}, column {exc.colno})"
        ) from None
    except RepeatedKeyError as exc:
        raise _given_twice(exc, line_number, None) from None
    except ValueError:  # `json` lets Python's limit on an integer's digits out as it is
        raise InvalidLineError(
            line_number, f"holds an integer of more than {sys.get_int_max_str_digits()} digits"
        ) from None
    if not isinstance(data, dict):
        raise InvalidLineError(line_number, "a line must be a JSON object")
    kind = data.get("kind")
    model = _LINE_MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise InvalidLineError(
            line_number, f"kind must be 'entity' or 'relationship', got {kind!r}"
        )
    try:
        checked = model.model_validate(data)
    except ValidationError as exc:
        entity_id = _entity_id_named(data, tenant_id) if model is EntityLine else None
        raise InvalidLineError(
            line_number, describe_validation_error(exc, "", _FILE_NAMES), entity_id
        ) from None
    return _to_record(checked, line_number, tenant_id)


def _decoded(raw: bytes, line_number: int) -> str:
    try:
        # A byte-order mark may start the file; it is not part of the first record.
        return raw.decode("utf-8-sig" if line_number == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidLineError(
            line_number, f"not valid UTF-8 (byte {exc.start + 1} of the line)"
        ) from None


def numbered_records(lines: Iterable[bytes], tenant_id: TenantId) -> Iterator[NumberedLine]:
    """Each non-blank line's record, or an `InvalidLine` saying why it is none, numbered from 1.

    Lazy: one line is read per record asked for, so a file of any size is
    read in constant memory.
    """
    for number, raw in enumerate(lines, start=1):
        try:
            record = _parsed(raw, number, tenant_id)
        except InvalidLineError as exc:
            yield number, InvalidLine(exc.line_number, exc.reason, exc.entity_id)
            continue
        if record is not None:
            yield number, record
