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
The tenant comes from the command line, never from a line.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from redstring.api.arguments import json_properties
from redstring.api.errors import describe_validation_error
from redstring.domain.entity import Entity
from redstring.domain.errors import InvalidInputError
from redstring.domain.ids import EntityId, TenantId, entity_id_for, relationship_id_for
from redstring.domain.relationship import Relationship

Record = Entity | Relationship

# Domain field names as the file spells them, for error messages.
_FILE_NAMES = {"source_entity_id": "source_id", "target_entity_id": "target_id"}


class LineError(InvalidInputError):
    """A line of the file that cannot be loaded, and why."""

    def __init__(self, line_number: int, reason: str) -> None:
        super().__init__(f"line {line_number}: {reason}")
        self.line_number = line_number
        self.reason = reason


class EndpointName(BaseModel):
    """A relationship end named by the entity's name and type."""

    model_config = ConfigDict(extra="forbid")

    name: str
    type: str

    def entity_id(self, tenant_id: TenantId) -> EntityId:
        return entity_id_for(tenant_id, self.type, self.name)


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

    def to_domain(self, tenant_id: TenantId) -> Entity:
        return Entity.model_validate(
            {
                "id": self.id or entity_id_for(tenant_id, self.entity_type, self.name),
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
    confidence: float = 1.0
    properties: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_name_per_end(self) -> Self:
        for end in ("source", "target"):
            by_id, by_name = getattr(self, f"{end}_id"), getattr(self, end)
            if (by_id is None) == (by_name is None):
                raise ValueError(f"give exactly one of {end}_id and {end} (name and type)")
        return self

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


def parse_line(text: str, line_number: int, tenant_id: TenantId) -> Record | None:
    """The record on one line of the file, `None` for a blank line.

    Raises `LineError` saying what is wrong, prefixed with `line_number`.
    """
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LineError(line_number, f"not valid JSON ({exc.msg}, column {exc.colno})") from None
    if not isinstance(data, dict):
        raise LineError(line_number, "a line must be a JSON object")
    kind = data.get("kind")
    model = _LINE_MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise LineError(line_number, f"kind must be 'entity' or 'relationship', got {kind!r}")
    try:
        return model.model_validate(data).to_domain(tenant_id)
    except ValidationError as exc:
        raise LineError(line_number, describe_validation_error(exc, "", _FILE_NAMES)) from None
    except InvalidInputError as exc:
        raise LineError(line_number, str(exc)) from None
