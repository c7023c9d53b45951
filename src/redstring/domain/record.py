"""The base of the records a caller builds (`Entity`, `Relationship`, `VectorRecord`),
the type of their id fields, and the base of every immutable model of the domain.

Records and results are immutable: assigning to or deleting one of their fields
raises `FrozenRecordError` (an `AttributeError`), not pydantic's `ValidationError`.

pydantic checks their fields; a record built with a wrong-typed or malformed field
raises `InvalidFieldsError` (an `InvalidInputError`, so a `ValueError`) naming each
field and what is wrong, with pydantic's `ValidationError` as its `__cause__`: bad
input is one kind of error everywhere, whether a record is built by its constructor
or by `model_validate`, `model_validate_json` or `model_validate_strings`, or copied
with changes by `model_copy(update=...)` (which pydantic itself leaves unchecked). A
result's `model_copy(update=...)` is checked too, and refused as its constructor refuses
(pydantic's `ValidationError`).

An id field takes what `redstring.domain.ids.tenant_id_of` takes, a `uuid.UUID` or a
string that spells one, and refuses the rest, bytes included (which pydantic's own
UUID type would read as a UUID), checked by pydantic alone so that it costs a record
nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, ValidationError
from pydantic_core import CoreSchema, core_schema

from redstring.domain.errors import FieldPath, FrozenRecordError, InvalidFieldsError
from redstring.domain.ids import EntityId, RelationshipId, TenantId


class _UuidOrItsString:
    """A UUID as it is, or a string (only) parsed as one; else `must be a UUID`."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.union_schema(
            [
                core_schema.uuid_schema(strict=True),
                core_schema.chain_schema(
                    [core_schema.str_schema(strict=True), core_schema.uuid_schema()]
                ),
            ],
            mode="left_to_right",
            custom_error_type="uuid_expected",
            custom_error_message="must be a UUID",
            serialization=core_schema.to_string_ser_schema(when_used="json"),
        )


EntityIdField = Annotated[EntityId, _UuidOrItsString]
RelationshipIdField = Annotated[RelationshipId, _UuidOrItsString]
TenantIdField = Annotated[TenantId, _UuidOrItsString]


def problems_of(error: ValidationError) -> list[tuple[FieldPath, str]]:
    """Each problem of a pydantic error as its field path and message, without pydantic's
    `Value error, ` prefix on the messages of this project's own validators."""
    return [
        (tuple(problem["loc"]), problem["msg"].removeprefix("Value error, "))
        for problem in error.errors(include_url=False)
    ]


def _invalid(record: type[BaseModel], error: ValidationError) -> InvalidFieldsError:
    return InvalidFieldsError(record.__name__, problems_of(error))


class FrozenModel(BaseModel):
    """A frozen pydantic model: assigning to or deleting a field, or any other public
    attribute, raises `FrozenRecordError` (an `AttributeError`, as a frozen dataclass's
    refusal is); underscored names stay pydantic's (private attributes).

    Subclasses stay frozen: pydantic's refusal, which is translated here, is then the
    only `ValidationError` a change can raise.
    """

    model_config = ConfigDict(frozen=True)

    def __setattr__(self, name: str, value: Any) -> None:
        try:
            super().__setattr__(name, value)
        except ValidationError:
            raise FrozenRecordError(self, name) from None

    def __delattr__(self, name: str) -> None:
        try:
            super().__delattr__(name)
        except ValidationError:
            raise FrozenRecordError(self, name, deleting=True) from None

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy, with `update`'s fields checked as the constructor checks them: pydantic's
        own copy sets them unchecked, so a copy could hold what no record or result may (a
        blank name, a score above 1, a stale derived field). An unknown field is refused
        by a record and ignored by a result, as their constructors do.
        `model_construct` stays the way to build one unchecked on purpose."""
        copy = super().model_copy(deep=deep)
        if not update:
            return copy
        return type(self)(**copy._fields_changed_by(update))

    def _fields_changed_by(self, update: Mapping[str, Any]) -> dict[str, Any]:
        """This record's fields with `update`'s in their place (a subclass drops those
        it derives from a changed field)."""
        return {**{name: getattr(self, name) for name in type(self).model_fields}, **update}


class Record(FrozenModel):
    """A frozen pydantic model whose validation failures are `InvalidFieldsError`."""

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _invalid(type(self), exc) from exc

    # pydantic's mark of an `__init__` that only validates (RootModel's carries it too):
    # without it, pydantic would call this `__init__` from `model_validate` and from the
    # models that hold a record, which would wrap this error in a `ValidationError`.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        try:
            return super().model_validate(obj, *args, **kwargs)
        except ValidationError as exc:
            raise _invalid(cls, exc) from exc

    @classmethod
    def model_validate_json(
        cls, json_data: str | bytes | bytearray, *args: Any, **kwargs: Any
    ) -> Self:
        try:
            return super().model_validate_json(json_data, *args, **kwargs)
        except ValidationError as exc:
            raise _invalid(cls, exc) from exc

    @classmethod
    def model_validate_strings(cls, obj: Any, *args: Any, **kwargs: Any) -> Self:
        try:
            return super().model_validate_strings(obj, *args, **kwargs)
        except ValidationError as exc:
            raise _invalid(cls, exc) from exc
