"""An entity of a tenant's knowledge graph."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Self, cast

from pydantic import ConfigDict, Field, field_validator, model_validator

from redstring.domain.blocking import MAX_KEYED_ALIASES, blocking_keys_for
from redstring.domain.embedded_text import embedded_text
from redstring.domain.errors import InvalidFieldsError
from redstring.domain.ids import entity_id_for, tenant_id_of
from redstring.domain.normalization import normalize_name, romanised
from redstring.domain.properties import (
    ALIASES,
    Properties,
    PropertyValue,
    alias_names,
    no_properties,
    string_values,
)
from redstring.domain.record import EntityIdField, Record, TenantIdField
from redstring.domain.text import check_description, check_name, check_storable, check_type

# The fields an entity derives, and those it derives them from.
_DERIVED = frozenset({"normalized_name", "blocking_keys"})
_DERIVED_FROM = frozenset({"name", "entity_type", "properties"})


class Entity(Record):
    """A named thing of one tenant. Identity is `(tenant_id, id)`.

    `normalized_name` and `blocking_keys` are derived from the name, type and
    aliases (the `aliases` property) when not given, so every store indexes the
    same keys. Immutable: results
    can be shared without copying.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: EntityIdField
    tenant_id: TenantIdField
    name: str
    entity_type: str
    description: str | None = None
    properties: Properties = Field(default_factory=no_properties)
    normalized_name: str = ""
    blocking_keys: tuple[str, ...] = ()

    @classmethod
    def create(cls, tenant_id: uuid.UUID | str, name: str, entity_type: str, **fields: Any) -> Self:
        """The entity with the id the API derives for it (`entity_id_for`), unless `fields`
        give an `id`; `fields` are the other fields (`description`, `properties`).

        `tenant_id` is read by `tenant_id_of`'s rule (a UUID's string is accepted)."""
        tenant = tenant_id_of(tenant_id)
        derived = "id" not in fields and isinstance(name, str) and isinstance(entity_type, str)
        if derived:
            fields["id"] = entity_id_for(tenant, entity_type, name)
        try:
            return cls(tenant_id=tenant, name=name, entity_type=entity_type, **fields)
        except InvalidFieldsError as exc:
            if derived or "id" in fields:
                raise
            # No id could be derived from a name or type that is not a string: say only
            # what is wrong with those, not that the id is missing.
            problems = [problem for problem in exc.problems if problem[0] != ("id",)]
            raise InvalidFieldsError(exc.record, problems) from exc.__cause__

    def _fields_changed_by(self, update: Mapping[str, Any]) -> dict[str, Any]:
        """A copy's fields: those derived from a changed name, type or properties are
        derived again, unless `update` gives them."""
        fields = super()._fields_changed_by(update)
        if _DERIVED_FROM & update.keys():
            for derived in _DERIVED.difference(update):
                del fields[derived]
        return fields

    @field_validator("name")
    @classmethod
    def _nonblank(cls, value: str) -> str:
        return check_name(value, "name")

    @field_validator("entity_type")
    @classmethod
    def _type(cls, value: str) -> str:
        return check_type(value, "entity_type")

    @field_validator("description")
    @classmethod
    def _description(cls, value: str | None) -> str | None:
        return None if value is None else check_description(value, "description")

    @field_validator("properties")
    @classmethod
    def _aliases_are_names(cls, value: Mapping[str, PropertyValue]) -> Mapping[str, PropertyValue]:
        aliases = value.get(ALIASES)
        names = isinstance(aliases, str) or (
            isinstance(aliases, tuple) and all(isinstance(a, str) for a in aliases)
        )
        if aliases is not None and not names:
            raise ValueError(f"{ALIASES} must be a string or a list of strings")
        for alias in alias_names(value):
            check_name(alias, ALIASES)
        return value

    @model_validator(mode="before")
    @classmethod
    def _derive(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        derived = dict(data)
        name, entity_type = derived.get("name"), derived.get("entity_type")
        if isinstance(name, str) and isinstance(entity_type, str):
            if not derived.get("normalized_name"):
                derived["normalized_name"] = normalize_name(name)
            if not derived.get("blocking_keys"):
                aliases = alias_names(derived.get("properties"))
                derived["blocking_keys"] = blocking_keys_for(name, entity_type, aliases)
        return derived

    @field_validator("normalized_name")
    @classmethod
    def _normalized_storable(cls, value: str) -> str:
        return check_storable(value, "normalized_name")

    def __hash__(self) -> int:
        return hash((self.tenant_id, self.id))

    def rekeyed(self) -> Self | None:
        """This entity with its normalised name and blocking keys derived afresh from its
        name, type and aliases, as this version stores it; None when they are those it
        has. An entity stored by an earlier version, whose rules derived other keys,
        differs in those two fields (`redstring rekey` rewrites them)."""
        normalized = normalize_name(self.name)
        keys = blocking_keys_for(self.name, self.entity_type, alias_names(self.properties))
        if (normalized, keys) == (self.normalized_name, self.blocking_keys):
            return None
        # Derived as the constructor derives them, but not checked again: a stored entity
        # a later version would refuse (an `aliases` of no names) is still re-keyed.
        fields: dict[str, Any] = {name: getattr(self, name) for name in type(self).model_fields}
        fresh = type(self).model_construct(
            **{**fields, "normalized_name": normalized, "blocking_keys": keys}
        )
        return cast(Self, fresh)  # the pydantic plugin types it as the class it is called on

    def has_current_keys(self) -> bool:
        """Whether the normalised name and blocking keys are those this version derives."""
        return self.rekeyed() is None

    def property_strings(self) -> list[str]:
        """Every string property value, list items included."""
        return string_values(self.properties)

    def embedding_text(self) -> str:
        """What the semantic channel embeds for this entity: name, then its keyed aliases
        in brackets, type, description (`IBM (International Business Machines).
        company`); a name in a script `romanised` reads is followed by its romanised form
        in the brackets first (`Москва (Moskva). city`). Cut as `embedded_text` cuts a
        text (at most `MAX_EMBEDDED_CHARACTERS`), so that a vector's `vector_source` is
        of what was embedded."""
        return embedding_text_of(self.name, self.entity_type, self.description, self.properties)


def embedding_text_of(
    name: str, entity_type: str, description: str | None, properties: Mapping[str, object]
) -> str:
    """`Entity.embedding_text` of an entity with these fields: what a store that reads
    only them (`TextReads`) answers, the same as the entity's own."""
    written = romanised(name)
    aliases = ([written] if written else []) + alias_names(properties)[:MAX_KEYED_ALIASES]
    named = f"{name} ({', '.join(aliases)})" if aliases else name
    parts = [named, entity_type]
    if description:
        parts.append(description)
    return embedded_text(". ".join(parts))
